/**
 * Products and plans (spec "Product", the plan object of "Subscription"; docs/catalogue.md): node
 * types, the `products` and `plans` connections, and create/update/delete mutations. Rules live
 * in services/products.ts and domain/pricing.ts.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createPlan, createProduct, deletePlan, deleteProduct, updatePlan, updateProduct, type PlanInput as PlanInputValue } from "../../services/products.js";
import { FREQUENCIES, USAGE_AGGREGATIONS, describeFrequency } from "../../domain/catalogue.js";
import type { Tier } from "../../domain/pricing.js";
import "./reference.js";

const FREQUENCY_LIST = Object.keys(FREQUENCIES).join(", ");

export const CatalogueDeletePayload = builder.objectRef<{ id: string; deleted: boolean; archived: boolean }>("CatalogueDeletePayload").implement({
  description: "Result of deleting a product, plan, addon or coupon: removed (deleted) or, when something uses it, archived.",
  fields: (t) => ({
    deletedId: t.exposeID("id", { description: "id of the deleted or archived object (Relay's deletedId convention)" }),
    id: t.exposeString("id", { description: "id of the deleted or archived object", deprecationReason: "Use deletedId: an id field holding another type's id breaks Relay's store. Removed in the next release." }),
    deleted: t.exposeBoolean("deleted", { description: "true: removed" }),
    archived: t.exposeBoolean("archived", { description: "true: kept and archived because a subscription (or invoice) uses it" }),
  }),
});

/** `archived: true|false` of a list filter: archivedAt set or not. */
export function archivedCondition(archived: boolean | null | undefined) {
  return archived === true ? [{ archivedAt: { not: null } }] : archived === false ? [{ archivedAt: null }] : [];
}

const PlanTier = builder.objectRef<Tier>("PlanTier").implement({
  description: "A price tier: units up to upTo (inclusive; null: the last, open tier) at unitAmount each, plus flatAmount once reached.",
  fields: (t) => ({
    upTo: t.field({ type: "Decimal", nullable: true, resolve: (tier) => tier.up_to }),
    unitAmount: t.field({ type: "Decimal", resolve: (tier) => tier.unit_amount }),
    flatAmount: t.field({ type: "Decimal", resolve: (tier) => tier.flat_amount }),
  }),
});

const PlanFrequency = builder.objectRef<ReturnType<typeof describeFrequency>>("PlanFrequency").implement({
  description: "A billing frequency: id (daily, weekly, monthly, quarterly, yearly), name, and the interval it bills every.",
  fields: (t) => ({
    id: t.exposeString("id"),
    name: t.exposeString("name"),
    interval: t.exposeString("interval", { nullable: true, description: "day | week | month | year" }),
    intervalCount: t.exposeInt("intervalCount", { nullable: true, description: "number of intervals per cycle (3 months for quarterly)" }),
  }),
});

export const Plan = builder.prismaNode("Plan", {
  id: { field: "id", description: "`pla_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A price of a product: amount per unit (or tiers) every frequency, in a currency (docs/catalogue.md, docs/pricing.md).",
  fields: (t) => ({
    product: t.relation("product"),
    sku: t.exposeString("sku", { nullable: true }),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    amount: t.expose("amount", { type: "Decimal", description: "unit price (without tiers; 0 when tiers price the units)" }),
    currency: t.relation("currency"),
    frequency: t.field({ type: PlanFrequency, select: { frequency: true }, resolve: (plan) => describeFrequency(plan.frequency) }),
    usageScheme: t.exposeString("usageScheme", { description: "licensed (quantity on the subscription) | metered (reported usage)" }),
    usageAggregation: t.exposeString("usageAggregation", { description: `how metered usage adds up: ${USAGE_AGGREGATIONS.join(", ")}` }),
    tiersMode: t.exposeString("tiersMode", { nullable: true, description: "graduated | volume; null: flat per unit" }),
    tiers: t.field({ type: [PlanTier], select: { tiers: true }, resolve: (plan) => (plan.tiers ?? []) as unknown as Tier[] }),
    exempt: t.exposeBoolean("exempt", { description: "invoice lines of this plan are not taxed" }),
    status: t.exposeString("status", { description: "active | archived" }),
    archived: t.expose("archivedAt", { type: "DateTime", nullable: true }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const Product = builder.prismaNode("Product", {
  id: { field: "id", description: "`pro_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "Something sold by subscription, with its plans (prices).",
  fields: (t) => ({
    name: t.exposeString("name"),
    unitLabel: t.exposeString("unitLabel", { nullable: true, description: "what a unit is called (seat, GB, ...)" }),
    plans: t.relation("plans", { query: { orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] } }),
    status: t.exposeString("status", { description: "active | archived" }),
    testMode: t.exposeBoolean("testMode"),
    archived: t.expose("archivedAt", { type: "DateTime", nullable: true, description: "when it was archived (a delete of a product in use)" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const PlanTierInput = builder.inputType("PlanTierInput", {
  fields: (t) => ({
    upTo: t.field({ type: "Decimal", description: "inclusive upper bound; null for the last tier" }),
    unitAmount: t.field({ type: "Decimal", description: "price per unit in the tier, not negative" }),
    flatAmount: t.field({ type: "Decimal", description: "price of the tier once reached (default 0)" }),
  }),
});

const PlanInput = builder.inputType("PlanInput", {
  description: "Plan fields. On update only given fields change (pricing fields only while no subscription uses the plan).",
  fields: (t) => ({
    product: t.id({ description: "product id (createPlan; leave out in createProduct's plans)" }),
    sku: t.string(),
    name: t.string({ description: "default: the product's name" }),
    description: t.string(),
    amount: t.field({ type: "Decimal", description: "unit price, not negative; required without tiers" }),
    currency: t.string({ description: "ISO 4217 code (required)" }),
    frequency: t.string({ description: `${FREQUENCY_LIST} (default monthly)` }),
    usageScheme: t.string({ description: "licensed (default) | metered" }),
    usageAggregation: t.string({ description: `${USAGE_AGGREGATIONS.join(", ")} (default sum)` }),
    tiersMode: t.string({ description: "graduated | volume; null: flat per unit" }),
    tiers: t.field({ type: [PlanTierInput], description: "ascending; the last with upTo null" }),
    exempt: t.boolean(),
    metadata: t.field({ type: "JSONObject" }),
  }),
});

const ProductInput = builder.inputType("ProductInput", {
  description: "Product fields. On update only given fields change; plans only on create.",
  fields: (t) => ({
    name: t.string({ description: "required on create" }),
    unitLabel: t.string(),
    metadata: t.field({ type: "JSONObject" }),
    plans: t.field({ type: [PlanInput], description: "createProduct: the product's plans, created with it" }),
  }),
});

type PlanInputArg = Omit<PlanInputValue, "tiers"> & { tiers?: { upTo?: string | null; unitAmount?: string | null; flatAmount?: string | null }[] | null };

/** GraphQL plan input -> service input (tiers as the domain's snake_case). */
function planInput(input: PlanInputArg): PlanInputValue {
  const { tiers, ...rest } = input;
  return {
    ...rest,
    ...(tiers !== undefined ? { tiers: tiers?.map((tier) => ({ up_to: tier.upTo, unit_amount: tier.unitAmount, flat_amount: tier.flatAmount })) ?? null } : {}),
  };
}

const ProductWhere = builder.inputType("ProductWhere", {
  fields: (t) => ({
    name: t.field({ type: StringFilter }),
    status: t.field({ type: StringFilter, description: "active | archived" }),
    archived: t.boolean({ description: "true: archived; false: not" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

const PlanWhere = builder.inputType("PlanWhere", {
  fields: (t) => ({
    product: t.field({ type: StringFilter, description: "product id" }),
    name: t.field({ type: StringFilter }),
    status: t.field({ type: StringFilter }),
    currency: t.field({ type: StringFilter }),
    frequency: t.field({ type: StringFilter }),
    archived: t.boolean(),
    created: t.field({ type: DateTimeFilter }),
  }),
});

builder.queryFields((t) => ({
  products: t.connection({
    type: Product,
    description: "Products of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: ProductWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      const where = {
        ...tenant(ctx),
        AND: [...stringConditions("name", w.name), ...stringConditions("status", w.status), ...archivedCondition(w.archived), ...dateTimeConditions("createdAt", w.created)],
      };
      return prismaConnection(ctx, info, ctx.prisma.product, args, { where, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    },
  }),
  plans: t.connection({
    type: Plan,
    description: "Plans of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: PlanWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      const where = {
        ...tenant(ctx),
        AND: [
          ...stringConditions("productId", w.product),
          ...stringConditions("name", w.name),
          ...stringConditions("status", w.status),
          ...stringConditions("currencyId", w.currency, { uppercase: true }),
          ...stringConditions("frequency", w.frequency),
          ...archivedCondition(w.archived),
          ...dateTimeConditions("createdAt", w.created),
        ],
      };
      return prismaConnection(ctx, info, ctx.prisma.plan, args, { where, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    },
  }),
}));

builder.mutationFields((t) => ({
  createProduct: t.prismaField({
    type: "Product",
    description: "Creates a product with its plans, in one transaction. Errors: validation_error (fields `plans.N.x` for plans).",
    args: { input: t.arg({ type: ProductInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { plans, ...rest } = args.input;
      const created = await createProduct(ctx, { ...rest, plans: plans?.map(planInput) });
      return ctx.prisma.product.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateProduct: t.prismaField({
    type: "Product",
    description: "Updates name, unitLabel, metadata. Errors: not_found, validation_error (also for plans: use createPlan/updatePlan).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ProductInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { plans, ...rest } = args.input;
      const updated = await updateProduct(ctx, String(args.id), { ...rest, plans: plans?.map(planInput) });
      return ctx.prisma.product.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteProduct: t.field({
    type: CatalogueDeletePayload,
    description: "Deletes a product and its plans; when a subscription or invoice line uses one of its plans, archives them instead. Errors: not_found.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteProduct(ctx, String(args.id)),
  }),
  createPlan: t.prismaField({
    type: "Plan",
    description: "Adds a plan to a product. Errors: validation_error, invalid_state (archived product).",
    args: { input: t.arg({ type: PlanInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createPlan(ctx, planInput(args.input));
      return ctx.prisma.plan.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updatePlan: t.prismaField({
    type: "Plan",
    description: "Updates a plan. Errors: not_found, validation_error, invalid_state (pricing of a plan subscriptions use).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: PlanInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updatePlan(ctx, String(args.id), planInput(args.input));
      return ctx.prisma.plan.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deletePlan: t.field({
    type: CatalogueDeletePayload,
    description: "Deletes a plan; archives it instead when a subscription or invoice line uses it. Errors: not_found.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deletePlan(ctx, String(args.id)),
  }),
}));
