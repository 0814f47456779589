/**
 * Coupons on recurring invoices (docs/recurring-billing.md "Coupons": `%` or `$`, `duration_scheme`
 * once/limited/forever with `duration_times`, `valid_until`, `apply_on` invoice or line). Pure.
 *
 * - A coupon can be attached while `valid_until` has not passed; once attached it keeps applying
 *   for its duration (Stripe's redeem-by rule): `once` to the first invoice, `limited` to the
 *   first `duration_times` invoices, `forever` to every one. Each invoice it discounts counts one
 *   redemption.
 * - `apply_on: invoice` becomes the invoice's document discount (applied to taxable lines only,
 *   domain/totals.ts); `apply_on: line` becomes each line's discount. A `$` coupon is capped at what
 *   it discounts, so a total never goes negative.
 */
import { ValidationError } from "./errors.js";
import { Decimal, toDecimal, type DecimalInput } from "./money.js";

export type CouponDuration = "once" | "limited" | "forever";

export interface CouponTerms {
  discountScheme: "%" | "$";
  amount: DecimalInput;
  durationScheme: CouponDuration;
  durationTimes: number | null;
  applyOn: "invoice" | "line";
  validUntil: Date | null;
}

/** 400 on `coupon` when the coupon cannot be attached at `now` (past `valid_until`). */
export function assertCouponAttachable(coupon: CouponTerms, now: Date, field = "coupon"): void {
  if (coupon.validUntil && coupon.validUntil.getTime() < now.getTime()) {
    throw ValidationError.field(field, `the coupon expired on ${coupon.validUntil.toISOString()}`);
  }
}

/** Whether the coupon discounts the next invoice after `redemptions` earlier ones. */
export function couponApplies(coupon: CouponTerms, redemptions: number): boolean {
  switch (coupon.durationScheme) {
    case "once":
      return redemptions < 1;
    case "limited":
      return redemptions < (coupon.durationTimes ?? 0);
    case "forever":
      return true;
  }
}

export interface DiscountableLine {
  /** line amount before the coupon, in the invoice currency */
  gross: DecimalInput;
}

/**
 * The discounts a coupon puts on an invoice: `{document}` for `apply_on: invoice`, `{lines}` (one
 * per line, same order) for `apply_on: line`, in the invoice's discount fields (`%` or `$`). A `$`
 * line discount is capped at the line's gross.
 */
export function couponDiscounts(
  coupon: CouponTerms,
  lines: readonly DiscountableLine[],
): {
  document: { discount: string; discountScheme: "%" | "$" } | null;
  lines: { discount: string; discountScheme: "%" | "$" }[];
} {
  const amount = toDecimal(coupon.amount);
  if (coupon.applyOn === "invoice") {
    return {
      document: { discount: amount.toString(), discountScheme: coupon.discountScheme },
      lines: lines.map(() => ({ discount: "0", discountScheme: "%" })),
    };
  }
  return {
    document: null,
    lines: lines.map((line) => ({
      discount:
        coupon.discountScheme === "%" ? amount.toString() : Decimal.min(amount, toDecimal(line.gross)).toString(),
      discountScheme: coupon.discountScheme,
    })),
  };
}
