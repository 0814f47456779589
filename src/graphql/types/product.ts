/**
 * Products and plans (spec "Product", the plan object of "Subscription"; docs/catalogue.md): node
 * types, the `products` and `plans` connections, and create/update/delete mutations. Rules live
 * in services/products.ts and domain/pricing.ts.
 */
import { builder } from "../builder.js";
import {
  DateTimeFilter,
  StringFilter,
  dateTimeConditions,
  enumConditions,
  enumFilter,
  stringConditions,
} from "../filters.js";
import { CatalogueStatus, CatalogueStatusFilter, type DescribedValues } from "../enums.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import {
  createPlan,
  createProduct,
  deletePlan,
  deleteProduct,
  updatePlan,
  updateProduct,
  type PlanInput as PlanInputValue,
} from "../../services/products.js";
import {
  FREQUENCIES,
  describeFrequency,
  type CatalogueStatus as CatalogueStatusValue,
  type Frequency,
  type USAGE_AGGREGATIONS,
  type USAGE_SCHEMES,
} from "../../domain/catalogue.js";
import type { Tier, TIERS_MODES } from "../../domain/pricing.js";
import "./reference.js";

type UsageSchemeValue = (typeof USAGE_SCHEMES)[number];
type UsageAggregationValue = (typeof USAGE_AGGREGATIONS)[number];
type TiersModeValue = (typeof TIERS_MODES)[number];
type IntervalValue = (typeof FREQUENCIES)[Frequency]["interval"];

// The value sets below are checked against the domain's lists (domain/catalogue.ts, domain/pricing.ts)
// by `satisfies`: a value added there fails the typecheck here until it is described.

export const BillingFrequency = builder.enumType("BillingFrequency", {
  description: 'How often a plan bills (docs/catalogue.md "Frequencies"): one cycle of the subscription per frequency.',
  values: {
    daily: { value: "daily", description: "every day" },
    weekly: { value: "weekly", description: "every 7 days" },
    monthly: { value: "monthly", description: "every calendar month" },
    quarterly: { value: "quarterly", description: "every 3 calendar months" },
    yearly: { value: "yearly", description: "every calendar year" },
  } as const satisfies DescribedValues<Frequency>,
});

export const BillingFrequencyFilter = enumFilter(BillingFrequency, "BillingFrequency");

export const BillingInterval = builder.enumType("BillingInterval", {
  description: "The calendar unit a frequency counts in (PlanFrequency.intervalCount of them per cycle).",
  values: {
    day: { value: "day", description: "a day" },
    week: { value: "week", description: "7 days" },
    month: { value: "month", description: "a calendar month" },
    year: { value: "year", description: "a calendar year" },
  } as const satisfies DescribedValues<IntervalValue>,
});

export const PlanUsageScheme = builder.enumType("PlanUsageScheme", {
  description: "How a plan counts the units it bills (docs/catalogue.md, docs/pricing.md).",
  values: {
    licensed: {
      value: "licensed",
      description: "the subscription line's quantity, billed in advance at each cycle's start",
    },
    metered: {
      value: "metered",
      description:
        "usage reported with createUsage (quantity 1 on the line), billed in arrears with the next cycle's invoice",
    },
  } as const satisfies DescribedValues<UsageSchemeValue>,
});

export const PlanUsageAggregation = builder.enumType("PlanUsageAggregation", {
  description:
    'How a metered plan adds up the usage records of a period into the billed quantity (spec "Usages"; ' +
    "docs/pricing.md).",
  values: {
    sum: { value: "sum", description: "the sum of the period's quantities" },
    max: { value: "max", description: "the largest quantity of the period" },
    last_during_period: { value: "last_during_period", description: "the quantity of the latest record in the period" },
    last_ever: {
      value: "last_ever",
      description: "the quantity of the latest record before the period's end, even from an earlier period",
    },
  } as const satisfies DescribedValues<UsageAggregationValue>,
});

export const PlanTiersMode = builder.enumType("PlanTiersMode", {
  description: "How tiers price a quantity (docs/pricing.md).",
  values: {
    graduated: {
      value: "graduated",
      description: "each unit at the price of the tier it falls in, plus the flatAmount of every tier reached",
    },
    volume: {
      value: "volume",
      description: "every unit at the price of the tier the whole quantity falls in, plus that tier's flatAmount",
    },
  } as const satisfies DescribedValues<TiersModeValue>,
});

export const CatalogueDeletePayload = builder
  .objectRef<{ id: string; deleted: boolean; archived: boolean }>("CatalogueDeletePayload")
  .implement({
    description:
      "Result of deleting a product, plan, addon or coupon: removed (deleted) or, when something uses it, archived.",
    fields: (t) => ({
      deletedId: t.exposeID("id", {
        description: "id of the deleted or archived object (Relay's deletedId convention)",
      }),
      id: t.exposeString("id", {
        description: "id of the deleted or archived object",
        deprecationReason:
          "Use deletedId: an id field holding another type's id breaks Relay's store. Removed in the next release.",
      }),
      deleted: t.exposeBoolean("deleted", { description: "true: removed" }),
      archived: t.exposeBoolean("archived", {
        description: "true: kept and archived because a subscription (or invoice) uses it",
      }),
    }),
  });

/** `archived: true|false` of a list filter: archivedAt set or not. */
export function archivedCondition(archived: boolean | null | undefined) {
  return archived === true ? [{ archivedAt: { not: null } }] : archived === false ? [{ archivedAt: null }] : [];
}

const PlanTier = builder.objectRef<Tier>("PlanTier").implement({
  description:
    "A price tier of a plan (docs/pricing.md): units up to upTo (inclusive; null: the last, open tier) at unitAmount " +
    "each, plus flatAmount once reached. " +
    "Amounts in the plan's currency.",
  fields: (t) => ({
    upTo: t.field({
      type: "Decimal",
      nullable: true,
      description: "last unit of the tier, inclusive (a quantity, decimals allowed); null for the last, open tier",
      resolve: (tier) => tier.up_to,
    }),
    unitAmount: t.field({
      type: "Decimal",
      description: "price per unit in the tier, in the plan's currency, not negative",
      resolve: (tier) => tier.unit_amount,
    }),
    flatAmount: t.field({
      type: "Decimal",
      description: "price added once the tier is reached, in the plan's currency (0: none)",
      resolve: (tier) => tier.flat_amount,
    }),
  }),
});

const PlanFrequency = builder.objectRef<ReturnType<typeof describeFrequency>>("PlanFrequency").implement({
  description:
    "A plan's billing frequency as the spec's plan object prints it (`{id, name}`), with the interval it bills every.",
  fields: (t) => ({
    id: t.exposeString("id", {
      description: "the frequency: one of BillingFrequency's values (daily, weekly, monthly, quarterly, yearly)",
    }),
    name: t.exposeString("name", { description: "English name, e.g. Quarterly" }),
    interval: t.field({
      type: BillingInterval,
      nullable: true,
      description: "the calendar unit of a cycle; null only for a frequency this version does not know",
      resolve: (f) => f.interval,
    }),
    intervalCount: t.exposeInt("intervalCount", {
      nullable: true,
      description: "number of intervals per cycle (3 months for quarterly); null like interval",
    }),
  }),
});

export const Plan = builder.prismaNode("Plan", {
  id: { field: "id", description: "`pla_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "A price of a product: amount per unit (or tiers) every frequency, in a currency (docs/catalogue.md, " +
    "docs/pricing.md).",
  fields: (t) => ({
    product: t.relation("product", { description: "the product it prices" }),
    sku: t.exposeString("sku", {
      nullable: true,
      description: "the organization's stock-keeping code; null when not set",
    }),
    name: t.exposeString("name", { description: "printed on invoice lines (default: the product's name)" }),
    description: t.exposeString("description", { nullable: true, description: "free text; null when not set" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "unit price in the plan's currency, at most 6 decimals (0 when tiers price the units)",
    }),
    currency: t.relation("currency", { description: "the currency of every amount of the plan" }),
    frequency: t.field({
      type: PlanFrequency,
      select: { frequency: true },
      description: "how often it bills",
      resolve: (plan) => describeFrequency(plan.frequency),
    }),
    usageScheme: t.field({
      type: PlanUsageScheme,
      description: "how the billed quantity is counted",
      select: { usageScheme: true },
      resolve: (plan) => plan.usageScheme as UsageSchemeValue,
    }),
    usageAggregation: t.field({
      type: PlanUsageAggregation,
      description: "how metered usage adds up over a period (stored for licensed plans too, unused there)",
      select: { usageAggregation: true },
      resolve: (plan) => plan.usageAggregation as UsageAggregationValue,
    }),
    tiersMode: t.field({
      type: PlanTiersMode,
      nullable: true,
      description: "how tiers price the quantity; null: flat amount per unit, no tiers",
      select: { tiersMode: true },
      resolve: (plan) => plan.tiersMode as TiersModeValue | null,
    }),
    tiers: t.field({
      type: [PlanTier],
      select: { tiers: true },
      description: "price tiers, ascending by upTo; empty without tiersMode",
      resolve: (plan) => (plan.tiers ?? []) as unknown as Tier[],
    }),
    exempt: t.exposeBoolean("exempt", { description: "invoice lines of this plan are not taxed (exempt amount)" }),
    status: t.field({
      type: CatalogueStatus,
      description: "archived plans bill the subscriptions that have them but take no new ones",
      select: { status: true },
      resolve: (plan) => plan.status as CatalogueStatusValue,
    }),
    archived: t.expose("archivedAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was archived (a delete of a plan in use); null while active",
    }),
    metadata: t.expose("metadata", { type: "JSONObject", description: "the organization's key-value pairs (strings)" }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time, ISO 8601" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "last change, ISO 8601" }),
  }),
});

export const Product = builder.prismaNode("Product", {
  id: { field: "id", description: "`pro_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: 'Something sold by subscription, with its plans (prices) (spec "Product"; docs/catalogue.md).',
  fields: (t) => ({
    name: t.exposeString("name", { description: "at most 200 characters" }),
    unitLabel: t.exposeString("unitLabel", {
      nullable: true,
      description: "what a unit is called (seat, GB, ...), at most 40 characters; null when not set",
    }),
    plans: t.relation("plans", {
      description: "its plans, in the order given at create, then as added",
      query: { orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] },
    }),
    status: t.field({
      type: CatalogueStatus,
      description: "archived products take no new subscriptions",
      select: { status: true },
      resolve: (product) => product.status as CatalogueStatusValue,
    }),
    testMode: t.exposeBoolean("testMode", { description: "true: created with a test key, seen only in test mode" }),
    archived: t.expose("archivedAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was archived (a delete of a product in use); null while active",
    }),
    metadata: t.expose("metadata", { type: "JSONObject", description: "the organization's key-value pairs (strings)" }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time, ISO 8601" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "last change, ISO 8601" }),
  }),
});

const PlanTierInput = builder.inputType("PlanTierInput", {
  description: "A price tier (docs/pricing.md). Amounts in the plan's currency, at most 6 decimals.",
  fields: (t) => ({
    upTo: t.field({ type: "Decimal", description: "inclusive upper bound (a quantity); null for the last tier" }),
    unitAmount: t.field({ type: "Decimal", description: "price per unit in the tier, not negative" }),
    flatAmount: t.field({ type: "Decimal", description: "price of the tier once reached (default 0)" }),
  }),
});

const PlanInput = builder.inputType("PlanInput", {
  description:
    "Plan fields. On update only given fields change (pricing fields only while no subscription uses the plan).",
  fields: (t) => ({
    product: t.id({
      description: "`pro_` id of the product (required in createPlan; leave out in createProduct's plans)",
    }),
    sku: t.string({ description: "stock-keeping code" }),
    name: t.string({ description: "default: the product's name" }),
    description: t.string({ description: "free text" }),
    amount: t.field({
      type: "Decimal",
      description: "unit price in the plan's currency, not negative, at most 6 decimals; required without tiers",
    }),
    currency: t.string({ description: "ISO 4217 code, e.g. CLP (required)" }),
    frequency: t.field({ type: BillingFrequency, description: "default monthly" }),
    usageScheme: t.field({ type: PlanUsageScheme, description: "default licensed" }),
    usageAggregation: t.field({ type: PlanUsageAggregation, description: "default sum" }),
    tiersMode: t.field({ type: PlanTiersMode, description: "required with tiers; null: flat per unit" }),
    tiers: t.field({ type: [PlanTierInput], description: "ascending; the last with upTo null; requires tiersMode" }),
    exempt: t.boolean({ description: "true: invoice lines of the plan are not taxed (default false)" }),
    metadata: t.field({
      type: "JSONObject",
      description: "key-value pairs (strings); merged on update, an empty value removes a key",
    }),
  }),
});

const ProductInput = builder.inputType("ProductInput", {
  description: "Product fields. On update only given fields change; plans only on create.",
  fields: (t) => ({
    name: t.string({ description: "at most 200 characters; required on create" }),
    unitLabel: t.string({ description: "what a unit is called (seat, GB, ...), at most 40 characters" }),
    metadata: t.field({
      type: "JSONObject",
      description: "key-value pairs (strings); merged on update, an empty value removes a key",
    }),
    plans: t.field({
      type: [PlanInput],
      description:
        "createProduct: the product's plans, created with it (updateProduct: refused, use createPlan/updatePlan)",
    }),
  }),
});

type PlanInputArg = Omit<PlanInputValue, "tiers"> & {
  tiers?: { upTo?: string | null; unitAmount?: string | null; flatAmount?: string | null }[] | null;
};

/** GraphQL plan input -> service input (tiers as the domain's snake_case). */
function planInput(input: PlanInputArg): PlanInputValue {
  const { tiers, ...rest } = input;
  return {
    ...rest,
    ...(tiers !== undefined
      ? {
          tiers:
            tiers?.map((tier) => ({ up_to: tier.upTo, unit_amount: tier.unitAmount, flat_amount: tier.flatAmount })) ??
            null,
        }
      : {}),
  };
}

const ProductWhere = builder.inputType("ProductWhere", {
  description: "Filter of `products`; every given field must match.",
  fields: (t) => ({
    name: t.field({ type: StringFilter, description: "the product's name" }),
    status: t.field({ type: CatalogueStatusFilter, description: "active or archived" }),
    archived: t.boolean({ description: "true: archived; false: not" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  }),
});

const PlanWhere = builder.inputType("PlanWhere", {
  description: "Filter of `plans`; every given field must match.",
  fields: (t) => ({
    product: t.field({ type: StringFilter, description: "`pro_` id of the product" }),
    name: t.field({ type: StringFilter, description: "the plan's name" }),
    status: t.field({ type: CatalogueStatusFilter, description: "active or archived" }),
    currency: t.field({ type: StringFilter, description: "ISO 4217 code (case-insensitive)" }),
    frequency: t.field({ type: BillingFrequencyFilter, description: "billing frequency" }),
    archived: t.boolean({ description: "true: archived; false: not" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  }),
});

builder.queryFields((t) => ({
  products: t.connection(
    {
      type: Product,
      description: "Products of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: ProductWhere, description: "filter; all products when absent" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const where = {
          ...tenant(ctx),
          AND: [
            ...stringConditions("name", w.name),
            ...enumConditions("status", w.status),
            ...archivedCondition(w.archived),
            ...dateTimeConditions("createdAt", w.created),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.product, args, {
          where,
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of products, newest first." },
    { description: "A product in a page of products." },
  ),
  plans: t.connection(
    {
      type: Plan,
      description: "Plans of the caller's organization and mode, newest first.",
      args: { where: t.arg({ type: PlanWhere, description: "filter; all plans when absent" }), offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const where = {
          ...tenant(ctx),
          AND: [
            ...stringConditions("productId", w.product),
            ...stringConditions("name", w.name),
            ...enumConditions("status", w.status),
            ...stringConditions("currencyId", w.currency, { uppercase: true }),
            ...enumConditions("frequency", w.frequency),
            ...archivedCondition(w.archived),
            ...dateTimeConditions("createdAt", w.created),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.plan, args, {
          where,
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of plans, newest first." },
    { description: "A plan in a page of plans." },
  ),
}));

builder.mutationFields((t) => ({
  createProduct: t.prismaField({
    type: "Product",
    description:
      "Creates a product with its plans, in one transaction (nothing is stored on an error). " +
      "Errors: validation_error (name missing or too long, a plan's currency unknown, amount negative or missing " +
      "without tiers, tiers without tiersMode; plan fields named `plans.N.field`).",
    args: { input: t.arg({ type: ProductInput, required: true, description: "the product and its plans" }) },
    resolve: async (query, _root, args, ctx) => {
      const { plans, ...rest } = args.input;
      const created = await createProduct(ctx, { ...rest, plans: plans?.map(planInput) });
      return ctx.prisma.product.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateProduct: t.prismaField({
    type: "Product",
    description:
      "Updates name, unitLabel, metadata. Errors: not_found (unknown id, or of another organization or mode), " +
      "validation_error (also when plans are given: use createPlan/updatePlan).",
    args: {
      id: t.arg.id({ required: true, description: "`pro_` id" }),
      input: t.arg({ type: ProductInput, required: true, description: "the fields to change" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const { plans, ...rest } = args.input;
      const updated = await updateProduct(ctx, String(args.id), { ...rest, plans: plans?.map(planInput) });
      return ctx.prisma.product.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteProduct: t.field({
    type: CatalogueDeletePayload,
    description:
      "Deletes a product and its plans; when a subscription or invoice line uses one of its plans, archives them " +
      "instead (archived: true). Errors: not_found.",
    args: { id: t.arg.id({ required: true, description: "`pro_` id" }) },
    resolve: (_root, args, ctx) => deleteProduct(ctx, String(args.id)),
  }),
  createPlan: t.prismaField({
    type: "Plan",
    description:
      "Adds a plan to a product. Errors: validation_error (product missing or unknown, currency unknown, amount " +
      "negative or missing without tiers, tiers and tiersMode inconsistent), invalid_state (archived product).",
    args: { input: t.arg({ type: PlanInput, required: true, description: "the plan; product and currency required" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createPlan(ctx, planInput(args.input));
      return ctx.prisma.plan.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updatePlan: t.prismaField({
    type: "Plan",
    description:
      "Updates a plan. Errors: not_found, validation_error (as createPlan), invalid_state (a pricing field: amount, " +
      "currency, frequency, usageScheme, usageAggregation, tiersMode, tiers or exempt, of a plan subscriptions use; " +
      "create a new plan instead).",
    args: {
      id: t.arg.id({ required: true, description: "`pla_` id" }),
      input: t.arg({ type: PlanInput, required: true, description: "the fields to change" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updatePlan(ctx, String(args.id), planInput(args.input));
      return ctx.prisma.plan.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deletePlan: t.field({
    type: CatalogueDeletePayload,
    description:
      "Deletes a plan; archives it instead when a subscription or invoice line uses it (archived: true). Errors: " +
      "not_found.",
    args: { id: t.arg.id({ required: true, description: "`pla_` id" }) },
    resolve: (_root, args, ctx) => deletePlan(ctx, String(args.id)),
  }),
}));
