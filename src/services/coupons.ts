/**
 * Coupons (the coupon object of spec "Subscription"; REST /v1/coupons/, GraphQL createCoupon, ...;
 * docs/catalogue.md): discounts on subscriptions.
 *
 * - `discount_scheme` `%` (amount is a percent, more than 0 and at most 100) or `$` (a fixed
 *   amount in `currency`, which it then requires, in the currency's unit).
 * - `duration_scheme` `once`, `limited` (`duration_times` cycles, required) or `forever`;
 *   `duration_times` belongs to `limited` only.
 * - `valid_until`: last moment it can be redeemed (in the future when set); `apply_on` `invoice`
 *   (the document discount) or `line` (each subscription line).
 * - Pricing fields of a coupon a subscription uses cannot change (409); delete archives a used one.
 */
import type { Coupon } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { NotFoundError } from "../domain/errors.js";
import type { CouponTerms } from "../domain/coupons.js";
import { APPLY_ON, checkPricingUnfrozen, DISCOUNT_SCHEMES, DURATION_SCHEMES } from "../domain/catalogue.js";
import { roundMoney, type DecimalInput } from "../domain/money.js";
import { atomically, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { deleteOrArchive, Fields, type DeleteResult } from "./catalogue.js";

export interface CouponInput {
  discountScheme?: string | null;
  durationScheme?: string | null;
  durationTimes?: number | null;
  name?: string | null;
  amount?: DecimalInput | null;
  /** ISO 8601 timestamp (or a Date from GraphQL's DateTime) */
  validUntil?: string | Date | null;
  applyOn?: string | null;
  currency?: string | null;
  metadata?: Record<string, unknown> | null;
}

const PRICING_FIELDS = ["discountScheme", "durationScheme", "durationTimes", "amount", "currency", "applyOn"] as const;

async function couponColumns(f: Fields, input: CouponInput, current: Coupon | null, now: Date) {
  const name = f.text("name", input.name, current?.name, { required: true });
  const discountScheme = f.choice(
    "discount_scheme",
    DISCOUNT_SCHEMES,
    input.discountScheme,
    current?.discountScheme,
    "%",
  );
  const durationScheme = f.choice(
    "duration_scheme",
    DURATION_SCHEMES,
    input.durationScheme,
    current?.durationScheme,
    "once",
  );
  const durationTimes = f.count("duration_times", input.durationTimes, current?.durationTimes);
  if (durationScheme === "limited" && durationTimes === null)
    f.errors.add("duration_times", "is required when duration_scheme is limited (number of cycles)");
  if (durationScheme !== "limited" && durationTimes !== null)
    f.errors.add("duration_times", "applies to duration_scheme limited only");
  const applyOn = f.choice("apply_on", APPLY_ON, input.applyOn, current?.applyOn, "invoice");
  const amount = f.amount("amount", input.amount, current?.amount.toString(), { positive: true });
  const currency = await f.currency("currency", input.currency, current?.currencyId, {
    required: discountScheme === "$",
  });
  if (amount && discountScheme === "%" && amount.gt(100))
    f.errors.add("amount", "a percent discount must be at most 100");
  if (amount && discountScheme === "$" && currency && !roundMoney(amount, currency).eq(amount))
    f.errors.add("amount", `must be in the unit of ${currency.id}`);

  let validUntil = current?.validUntil ?? null;
  if (input.validUntil !== undefined) {
    validUntil = input.validUntil === null || input.validUntil === "" ? null : new Date(input.validUntil);
    if (validUntil && Number.isNaN(validUntil.getTime())) f.errors.add("valid_until", "must be an ISO 8601 timestamp");
    else if (validUntil && validUntil <= now) f.errors.add("valid_until", "must be in the future");
  }
  const metadata = f.metadata("metadata", input.metadata, current?.metadata);
  return {
    name: name ?? "",
    discountScheme,
    durationScheme,
    durationTimes,
    applyOn,
    amount: (amount ?? 0).toString(),
    currencyId: currency?.id ?? null,
    validUntil,
    metadata,
  };
}

async function loadCoupon(ctx: ServiceContext, id: string): Promise<Coupon> {
  await lockTenantRow(ctx.prisma, ctx, "Coupon", id);
  const coupon = await ctx.prisma.coupon.findFirst({ where: { id, ...tenant(ctx) } });
  if (!coupon) throw new NotFoundError("coupon", id);
  return coupon;
}

async function couponUses(ctx: ServiceContext, id: string): Promise<number> {
  // sequential: called inside transactions, whose one connection takes one query at a time
  const subscriptions = await ctx.prisma.subscription.count({ where: { couponId: id } });
  const lines = await ctx.prisma.subscriptionLine.count({ where: { couponId: id } });
  return subscriptions + lines;
}

/** Creates a coupon; 400 naming every bad field, nothing written then. */
export async function createCoupon(ctx: ServiceContext, input: CouponInput): Promise<Coupon> {
  const f = new Fields(ctx);
  const data = await couponColumns(f, input, null, ctx.now());
  f.errors.throwIfAny("Invalid coupon");
  return ctx.prisma.coupon.create({ data: { id: newId("cou"), ...tenant(ctx), status: "active", ...data } });
}

/** Updates the given fields; pricing fields of a coupon a subscription uses: 409. 404 for another tenant's coupon. */
export async function updateCoupon(ctx: ServiceContext, id: string, input: CouponInput): Promise<Coupon> {
  return atomically(ctx, async (tx) => {
    const current = await loadCoupon(tx, id);
    const f = new Fields(tx);
    const data = await couponColumns(f, input, current, tx.now());
    f.errors.throwIfAny("Invalid coupon");
    const changed = PRICING_FIELDS.filter((field) => {
      if (input[field] === undefined) return false;
      if (field === "amount") return !current.amount.eq(data.amount);
      if (field === "currency") return data.currencyId !== current.currencyId;
      return data[field] !== current[field];
    });
    checkPricingUnfrozen("Coupon", current.id, changed, changed.length ? await couponUses(tx, current.id) : 0);
    return tx.prisma.coupon.update({ where: { id: current.id }, data });
  });
}

/** Deletes a coupon no subscription uses; archives one that is used. 404 for another tenant's coupon. */
export async function deleteCoupon(ctx: ServiceContext, id: string): Promise<DeleteResult> {
  return atomically(ctx, async (tx) => {
    const coupon = await loadCoupon(tx, id);
    return deleteOrArchive(tx, id, {
      uses: () => couponUses(tx, coupon.id),
      archive: (data) => tx.prisma.coupon.updateMany({ where: { id: coupon.id, archivedAt: null }, data }),
      remove: () => tx.prisma.coupon.delete({ where: { id: coupon.id } }),
    });
  });
}

/** A coupon row as the domain's coupon terms. */
export function couponTerms(c: Coupon): CouponTerms {
  return {
    discountScheme: c.discountScheme as CouponTerms["discountScheme"],
    amount: c.amount.toString(),
    durationScheme: c.durationScheme as CouponTerms["durationScheme"],
    durationTimes: c.durationTimes,
    applyOn: c.applyOn as CouponTerms["applyOn"],
    validUntil: c.validUntil,
  };
}
