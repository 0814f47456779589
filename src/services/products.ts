/**
 * Products and their plans (spec "Product" and the plan object of "Subscription"; REST
 * /v1/products/ and /v1/plans/, GraphQL createProduct, createPlan, ...; docs/catalogue.md).
 *
 * - A product is created with its `plans` (nested) in one statement; nothing is written when any
 *   field of the product or of a plan is bad (400 naming `plans.N.field`).
 * - Plans: `amount` (the unit price, required without tiers), `currency`, `frequency`,
 *   `usage_scheme`, `usage_aggregation`, `tiers_mode` and `tiers` (domain/pricing.ts), `exempt`.
 * - The pricing fields of a plan that a subscription line uses cannot change any more (409): what
 *   a customer subscribed to stays what is billed. Names, description, sku and metadata can.
 * - Delete removes a product (with its plans) or a plan nothing uses; one used by a subscription
 *   line or an invoice line is archived instead (status `archived`, `archived` set), so history
 *   stays readable. Archived plans (and the plans of archived products) are not for new
 *   subscriptions; archived products take no new plans (409).
 */
import type { Plan, Prisma, Product } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { InvalidStateError, NotFoundError } from "../domain/errors.js";
import {
  checkPricingUnfrozen,
  FREQUENCIES,
  USAGE_AGGREGATIONS,
  USAGE_SCHEMES,
  type Frequency,
} from "../domain/catalogue.js";
import { TIERS_MODES, validateTiers, type Tier, type TierInput } from "../domain/pricing.js";
import type { DecimalInput } from "../domain/money.js";
import { atomically, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { deleteOrArchive, Fields, type DeleteResult } from "./catalogue.js";

export interface PlanInput {
  /** product id (create through /v1/plans/ only; nested plans belong to their product) */
  product?: string | null;
  sku?: string | null;
  name?: string | null;
  description?: string | null;
  /** unit price; required without tiers */
  amount?: DecimalInput | null;
  currency?: string | null;
  frequency?: string | null;
  usageScheme?: string | null;
  usageAggregation?: string | null;
  tiersMode?: string | null;
  tiers?: TierInput[] | null;
  exempt?: boolean | null;
  metadata?: Record<string, unknown> | null;
}

export interface ProductInput {
  name?: string | null;
  unitLabel?: string | null;
  metadata?: Record<string, unknown> | null;
  /** create only: the product's plans */
  plans?: PlanInput[] | null;
}

/** At most this many plans in one product create. */
export const MAX_NESTED_PLANS = 50;

/** Plan columns a subscription's billing depends on: frozen once a subscription line uses the plan. */
const PLAN_PRICING_FIELDS = [
  "amount",
  "currency",
  "frequency",
  "usageScheme",
  "usageAggregation",
  "tiersMode",
  "tiers",
  "exempt",
] as const;

type PlanColumns = Omit<
  Prisma.PlanUncheckedCreateInput,
  "id" | "organizationId" | "testMode" | "productId" | "position"
>;

/** Validates a plan (merged over `current` on update); field errors under `prefix` (`plans.0.`). */
async function planColumns(
  f: Fields,
  input: PlanInput,
  current: Plan | null,
  prefix: string,
  defaultName: string | null,
): Promise<PlanColumns> {
  const name = f.text(`${prefix}name`, input.name === undefined && !current ? defaultName : input.name, current?.name, {
    required: true,
  });
  const sku = f.text(`${prefix}sku`, input.sku, current?.sku, { max: 100 });
  const description = f.text(`${prefix}description`, input.description, current?.description, { max: 1000 });
  const currency = await f.currency(`${prefix}currency`, input.currency, current?.currencyId);
  const frequency = f.choice(
    `${prefix}frequency`,
    Object.keys(FREQUENCIES) as Frequency[],
    input.frequency,
    current?.frequency,
    "monthly",
  );
  const usageScheme = f.choice(
    `${prefix}usage_scheme`,
    USAGE_SCHEMES,
    input.usageScheme,
    current?.usageScheme,
    "licensed",
  );
  const usageAggregation = f.choice(
    `${prefix}usage_aggregation`,
    USAGE_AGGREGATIONS,
    input.usageAggregation,
    current?.usageAggregation,
    "sum",
  );

  const tiersMode = input.tiersMode !== undefined ? input.tiersMode || null : (current?.tiersMode ?? null);
  if (tiersMode !== null && !(TIERS_MODES as readonly string[]).includes(tiersMode))
    f.errors.add(`${prefix}tiers_mode`, `must be one of ${TIERS_MODES.join(", ")} (or null: flat per unit)`);
  const tierInputs =
    input.tiers !== undefined ? (input.tiers ?? []) : ((current?.tiers ?? []) as unknown as TierInput[]);
  let tiers: Tier[] = [];
  if (tiersMode) {
    f.errors.collect(() => {
      tiers = validateTiers(tierInputs, `${prefix}tiers`);
    });
  } else if (tierInputs.length > 0) {
    f.errors.add(`${prefix}tiers_mode`, "is required with tiers (graduated or volume)");
  }
  // with tiers the tiers price every unit; `amount` is then optional (default 0)
  const amount = f.amount(`${prefix}amount`, input.amount, current?.amount.toString(), { required: !tiersMode }) ?? "0";
  const metadata = f.metadata(`${prefix}metadata`, input.metadata, current?.metadata);
  return {
    name: name ?? "",
    sku,
    description,
    currencyId: currency?.id ?? "",
    frequency,
    usageScheme,
    usageAggregation,
    tiersMode,
    tiers: tiers as unknown as Prisma.InputJsonValue,
    amount: amount.toString(),
    exempt: input.exempt ?? current?.exempt ?? false,
    metadata,
  };
}

function productColumns(f: Fields, input: ProductInput, current: Product | null) {
  return {
    name: f.text("name", input.name, current?.name, { required: true }) ?? "",
    unitLabel: f.text("unit_label", input.unitLabel, current?.unitLabel, { max: 40 }),
    metadata: f.metadata("metadata", input.metadata, current?.metadata),
  };
}

async function loadProduct(ctx: ServiceContext, id: string, { lock = false } = {}): Promise<Product> {
  if (lock) await lockTenantRow(ctx.prisma, ctx, "Product", id);
  const product = await ctx.prisma.product.findFirst({ where: { id, ...tenant(ctx) } });
  if (!product) throw new NotFoundError("product", id);
  return product;
}

async function loadPlan(ctx: ServiceContext, id: string, { lock = false } = {}): Promise<Plan> {
  if (lock) await lockTenantRow(ctx.prisma, ctx, "Plan", id);
  const plan = await ctx.prisma.plan.findFirst({ where: { id, ...tenant(ctx) } });
  if (!plan) throw new NotFoundError("plan", id);
  return plan;
}

/** Creates a product with its plans, in one statement. 400 naming every bad field; nothing written then. */
export async function createProduct(ctx: ServiceContext, input: ProductInput): Promise<Product> {
  const f = new Fields(ctx);
  const product = productColumns(f, input, null);
  const plans = input.plans ?? [];
  if (plans.length > MAX_NESTED_PLANS)
    f.errors.add("plans", `at most ${MAX_NESTED_PLANS} plans per request; add more with POST /v1/plans/`);
  const planRows = [];
  for (const [i, plan] of plans.entries()) {
    if (plan.product !== undefined && plan.product !== null)
      f.errors.add(`plans.${i}.product`, "is the product being created; leave it out");
    planRows.push(await planColumns(f, plan, null, `plans.${i}.`, product.name || null));
  }
  f.errors.throwIfAny("Invalid product");
  return ctx.prisma.product.create({
    data: {
      id: newId("pro"),
      ...tenant(ctx),
      ...product,
      status: "active",
      plans: {
        create: planRows.map((columns, position) => ({ id: newId("pla"), ...tenant(ctx), position, ...columns })),
      },
    },
  });
}

/**
 * Updates name, unit_label and metadata. Plans change through their own paths (400 on `plans`). 404 for another
 * tenant's product.
 */
export async function updateProduct(ctx: ServiceContext, id: string, input: ProductInput): Promise<Product> {
  return atomically(ctx, async (tx) => {
    const current = await loadProduct(tx, id, { lock: true });
    const f = new Fields(tx);
    if (input.plans !== undefined && input.plans !== null)
      f.errors.add(
        "plans",
        "plans are added with POST /v1/plans/ (createPlan) and changed with PATCH /v1/plans/{id}/ (updatePlan)",
      );
    const data = productColumns(f, input, current);
    f.errors.throwIfAny("Invalid product");
    return tx.prisma.product.update({ where: { id: current.id }, data });
  });
}

/** Lines (subscription or invoice) that use any of `planIds`. */
async function planUses(ctx: ServiceContext, where: Prisma.PlanWhereInput): Promise<number> {
  // sequential: called inside transactions, whose one connection takes one query at a time
  const subscriptions = await ctx.prisma.subscriptionLine.count({ where: { plan: where } });
  const invoices = await ctx.prisma.invoiceLine.count({ where: { plan: where } });
  return subscriptions + invoices;
}

/**
 * Deletes a product and its plans when no subscription line or invoice line uses any of them;
 * otherwise archives the product and its plans (status `archived`, `archived` set; already
 * archived: unchanged). 404 for another tenant's product.
 */
export async function deleteProduct(ctx: ServiceContext, id: string): Promise<DeleteResult> {
  return atomically(ctx, async (tx) => {
    const product = await loadProduct(tx, id, { lock: true });
    return deleteOrArchive(tx, id, {
      uses: () => planUses(tx, { productId: product.id }),
      archive: async (data) => {
        await tx.prisma.plan.updateMany({ where: { productId: product.id, archivedAt: null }, data });
        await tx.prisma.product.updateMany({ where: { id: product.id, archivedAt: null }, data });
      },
      remove: async () => {
        await tx.prisma.plan.deleteMany({ where: { productId: product.id } });
        await tx.prisma.product.delete({ where: { id: product.id } });
      },
    });
  });
}

/** Adds a plan to a product (`product` required, of the caller's organization; not archived: 409). */
export async function createPlan(ctx: ServiceContext, input: PlanInput): Promise<Plan> {
  return atomically(ctx, async (tx) => {
    const f = new Fields(tx);
    let product: Product | null = null;
    if (!input.product) f.errors.add("product", "is required (a product id)");
    else {
      await lockTenantRow(tx.prisma, ctx, "Product", input.product);
      product = await tx.prisma.product.findFirst({ where: { id: input.product, ...tenant(ctx) } });
      if (!product) f.errors.add("product", `unknown product ${input.product}`);
    }
    const columns = await planColumns(f, input, null, "", product?.name ?? null);
    f.errors.throwIfAny("Invalid plan");
    if (product!.archivedAt) throw new InvalidStateError(`Product ${product!.id} is archived; it takes no new plans`);
    const last = await tx.prisma.plan.aggregate({ where: { productId: product!.id }, _max: { position: true } });
    return tx.prisma.plan.create({
      data: {
        id: newId("pla"),
        ...tenant(ctx),
        productId: product!.id,
        position: (last._max.position ?? -1) + 1,
        ...columns,
      },
    });
  });
}

/**
 * Updates the given fields of a plan. Pricing fields (amount, currency, frequency, usage scheme
 * and aggregation, tiers, exempt) of a plan a subscription line uses: 409. `product` cannot
 * change (400). 404 for another tenant's plan.
 */
export async function updatePlan(ctx: ServiceContext, id: string, input: PlanInput): Promise<Plan> {
  return atomically(ctx, async (tx) => {
    const current = await loadPlan(tx, id, { lock: true });
    const f = new Fields(tx);
    if (input.product !== undefined && input.product !== null && input.product !== current.productId)
      f.errors.add("product", "a plan cannot move to another product");
    const data = await planColumns(f, input, current, "", null);
    f.errors.throwIfAny("Invalid plan");
    const changed = PLAN_PRICING_FIELDS.filter(
      (field) => input[field] !== undefined && !samePricing(field, data, current),
    );
    // counted only when the pricing changes
    const uses = changed.length ? await tx.prisma.subscriptionLine.count({ where: { planId: current.id } }) : 0;
    checkPricingUnfrozen("Plan", current.id, changed, uses);
    return tx.prisma.plan.update({ where: { id: current.id }, data });
  });
}

function samePricing(field: (typeof PLAN_PRICING_FIELDS)[number], data: PlanColumns, current: Plan): boolean {
  switch (field) {
    case "amount":
      return current.amount.eq(String(data.amount));
    case "currency":
      return data.currencyId === current.currencyId;
    case "tiers": {
      // JSONB reorders object keys: compare the values, tier by tier
      const values = (tiers: unknown) =>
        JSON.stringify(((tiers ?? []) as Tier[]).map((t) => [t.up_to, t.unit_amount, t.flat_amount]));
      return values(data.tiers) === values(current.tiers);
    }
    default:
      return data[field] === current[field];
  }
}

/** Deletes a plan nothing uses; archives one a subscription or invoice line uses. 404 for another tenant's plan. */
export async function deletePlan(ctx: ServiceContext, id: string): Promise<DeleteResult> {
  return atomically(ctx, async (tx) => {
    const plan = await loadPlan(tx, id, { lock: true });
    return deleteOrArchive(tx, id, {
      uses: () => planUses(tx, { id: plan.id }),
      archive: (data) => tx.prisma.plan.updateMany({ where: { id: plan.id, archivedAt: null }, data }),
      remove: () => tx.prisma.plan.delete({ where: { id: plan.id } }),
    });
  });
}
