/**
 * Addons (the addon object of spec "Subscription"; REST /v1/addons/, GraphQL createAddon, ...;
 * docs/catalogue.md): extra charges added to subscriptions.
 *
 * - `apply_scheme` `one_time` (billed once) or `recurring` (every cycle; `duration_times` cycles,
 *   null: while the subscription lasts). `duration_times` belongs to recurring addons only.
 * - `rates` split a one-time addon's amount over given cycles: `[{cycle, percent}]` (summing to
 *   100) or `[{cycle, amount}]` (summing to the amount); domain/pricing.ts validateAddonRates.
 * - Pricing fields of an addon a subscription uses cannot change (409); delete archives an addon
 *   a subscription uses and removes one nothing uses.
 */
import type { Addon, Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { NotFoundError } from "../domain/errors.js";
import { APPLY_SCHEMES, checkPricingUnfrozen } from "../domain/catalogue.js";
import { validateAddonRates, type AddonRate, type AddonRateInput } from "../domain/pricing.js";
import type { DecimalInput } from "../domain/money.js";
import { atomically, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { deleteOrArchive, Fields, type DeleteResult } from "./catalogue.js";

export interface AddonInput {
  applyScheme?: string | null;
  durationTimes?: number | null;
  sku?: string | null;
  name?: string | null;
  description?: string | null;
  amount?: DecimalInput | null;
  currency?: string | null;
  rates?: AddonRateInput[] | null;
  metadata?: Record<string, unknown> | null;
}

const PRICING_FIELDS = ["applyScheme", "durationTimes", "amount", "currency", "rates"] as const;

async function addonColumns(f: Fields, input: AddonInput, current: Addon | null) {
  const name = f.text("name", input.name, current?.name, { required: true });
  const sku = f.text("sku", input.sku, current?.sku, { max: 100 });
  const description = f.text("description", input.description, current?.description, { max: 1000 });
  const applyScheme = f.choice("apply_scheme", APPLY_SCHEMES, input.applyScheme, current?.applyScheme, "one_time");
  const durationTimes = f.count("duration_times", input.durationTimes, current?.durationTimes);
  if (durationTimes !== null && applyScheme === "one_time")
    f.errors.add("duration_times", "applies to recurring addons only (a one-time addon is billed once)");
  const amount = f.amount("amount", input.amount, current?.amount.toString());
  const currency = await f.currency("currency", input.currency, current?.currencyId);
  const rateInputs =
    input.rates !== undefined ? (input.rates ?? []) : ((current?.rates ?? []) as unknown as AddonRateInput[]);
  let rates: AddonRate[] = [];
  if (rateInputs.length > 0 && applyScheme !== "one_time")
    f.errors.add("rates", "split a one-time addon; a recurring addon bills its whole amount every cycle");
  else if (amount && currency) {
    f.errors.collect(() => {
      rates = validateAddonRates(rateInputs, amount, currency);
    });
  }
  const metadata = f.metadata("metadata", input.metadata, current?.metadata);
  return {
    name: name ?? "",
    sku,
    description,
    applyScheme,
    durationTimes,
    amount: (amount ?? 0).toString(),
    currencyId: currency?.id ?? "",
    rates: rates as unknown as Prisma.InputJsonValue,
    metadata,
  };
}

/** Rates as comparable text (JSONB reorders object keys). */
function rateValues(rates: unknown): string {
  return JSON.stringify(
    ((rates ?? []) as AddonRate[]).map((r) =>
      "percent" in r ? [r.cycle, "percent", r.percent] : [r.cycle, "amount", r.amount],
    ),
  );
}

async function loadAddon(ctx: ServiceContext, id: string): Promise<Addon> {
  await lockTenantRow(ctx.prisma, ctx, "Addon", id);
  const addon = await ctx.prisma.addon.findFirst({ where: { id, ...tenant(ctx) } });
  if (!addon) throw new NotFoundError("addon", id);
  return addon;
}

/** Creates an addon; 400 naming every bad field, nothing written then. */
export async function createAddon(ctx: ServiceContext, input: AddonInput): Promise<Addon> {
  const f = new Fields(ctx);
  const data = await addonColumns(f, input, null);
  f.errors.throwIfAny("Invalid addon");
  return ctx.prisma.addon.create({ data: { id: newId("add"), ...tenant(ctx), status: "active", ...data } });
}

/** Updates the given fields; pricing fields of an addon a subscription uses: 409. 404 for another tenant's addon. */
export async function updateAddon(ctx: ServiceContext, id: string, input: AddonInput): Promise<Addon> {
  return atomically(ctx, async (tx) => {
    const current = await loadAddon(tx, id);
    const f = new Fields(tx);
    const data = await addonColumns(f, input, current);
    f.errors.throwIfAny("Invalid addon");
    const changed = PRICING_FIELDS.filter((field) => {
      if (input[field] === undefined) return false;
      if (field === "amount") return !current.amount.eq(data.amount);
      if (field === "currency") return data.currencyId !== current.currencyId;
      if (field === "rates") return rateValues(data.rates) !== rateValues(current.rates);
      return data[field] !== current[field];
    });
    // counted only when the pricing changes
    const uses = changed.length ? await tx.prisma.subscriptionAddon.count({ where: { addonId: current.id } }) : 0;
    checkPricingUnfrozen("Addon", current.id, changed, uses);
    return tx.prisma.addon.update({ where: { id: current.id }, data });
  });
}

/** Deletes an addon no subscription uses; archives one that is used. 404 for another tenant's addon. */
export async function deleteAddon(ctx: ServiceContext, id: string): Promise<DeleteResult> {
  return atomically(ctx, async (tx) => {
    const addon = await loadAddon(tx, id);
    return deleteOrArchive(tx, id, {
      uses: () => tx.prisma.subscriptionAddon.count({ where: { addonId: addon.id } }),
      archive: (data) => tx.prisma.addon.updateMany({ where: { id: addon.id, archivedAt: null }, data }),
      remove: () => tx.prisma.addon.delete({ where: { id: addon.id } }),
    });
  });
}
