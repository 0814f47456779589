/**
 * A subscription cycle's invoice, as a pure function (issue "The billing run": the billing run
 * and the upcoming-invoice preview must both use it, so a preview and the finalized invoice agree
 * line for line). Rules, each in docs/recurring-billing.md:
 *
 * - Cycle N is issued on the start of its period [start(N), start(N+1)) (domain/billing-periods.ts).
 * - Licensed lines are billed in advance for period N: quantity x unit price, or one line priced by
 *   the plan's tiers (domain/pricing.ts priceQuantity).
 * - Metered lines are billed in arrears: usage of period N-1, aggregated by the plan's
 *   `usage_aggregation` (domain/usage.ts), then priced; cycle 1 has no earlier period, so no
 *   metered charge.
 * - Addons: `one_time` ones bill their shares in the cycles their rates name (no rates: all in
 *   cycle 1); `recurring` ones bill every cycle while fewer than `duration_times` have been billed
 *   (null: always). Amount x quantity.
 * - Coupons (domain/coupons.ts): a line's own coupon discounts that line; the subscription's
 *   coupon discounts the invoice (`apply_on: invoice`) or every line without its own coupon
 *   (`apply_on: line`), while its duration lasts. The result says which coupons were redeemed.
 * - Exempt plans give exempt lines; totals and tax follow the document type (domain/totals.ts).
 * - Pending items (prorations of mid-cycle changes, domain/proration.ts; credits carried from an
 *   earlier invoice) follow, after coupons, undiscounted by line coupons: charges first, then
 *   credits (negative amounts). A credit never takes its tax class (taxable or exempt lines)
 *   below zero: the part that does not fit is cut from the line and returned as `carriedCredits`,
 *   which the billing run stores as a pending item of the next cycle (like Stripe's customer
 *   balance). So the total is never negative. An invoice coupon discounts the taxable net after
 *   credits.
 */
import type { Frequency } from "./catalogue.js";
import { billingPeriod } from "./billing-periods.js";
import { couponApplies, couponDiscounts, type CouponTerms } from "./coupons.js";
import { Decimal, roundMoney, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";
import { addonRateShares, priceQuantity, type AddonRate, type PricedPlan } from "./pricing.js";
import { computeDocumentTotals, type DiscountScheme, type DocumentTotals, type TotalsInput } from "./totals.js";
import { aggregateUsage, type UsageAggregation, type UsageRecord } from "./usage.js";

export interface CycleCoupon extends CouponTerms {
  id: string;
  name: string;
  /** invoices it has discounted so far */
  redemptions: number;
}

export interface CycleLine {
  id: string;
  /** printed name, e.g. "Pro (Acme Cloud)" */
  name: string;
  plan: PricedPlan & { usageScheme: "licensed" | "metered" | string; usageAggregation: UsageAggregation; exempt: boolean };
  /** licensed quantity (ignored for metered lines) */
  quantity: DecimalInput;
  coupon: CycleCoupon | null;
  /** metered lines: their usage records (any period; the function picks the right one) */
  usages?: readonly UsageRecord[];
}

export interface CycleAddon {
  id: string;
  name: string;
  applyScheme: "one_time" | "recurring" | string;
  durationTimes: number | null;
  amount: DecimalInput;
  quantity: number;
  rates: readonly AddonRate[];
  /** cycles it has been billed in so far (recurring addons) */
  redemptions: number;
}

/** An item waiting for the next cycle invoice (PendingInvoiceItem): `quantity x amount`, negative amount a credit. */
export interface CyclePendingItem {
  id: string;
  name: string;
  quantity: DecimalInput;
  /** signed unit amount */
  amount: DecimalInput;
  exempt: boolean;
  periodStart: string;
  periodEnd: string;
}

export interface CycleInput {
  cycle: number;
  /** subscription start (`yyyy-mm-dd`), the anchor of its periods */
  anchor: string;
  frequency: Frequency;
  /** the time zone's midnight of a `yyyy-mm-dd` date, to compare usage timestamps with periods */
  dayStart: (date: string) => Date;
  currency: CurrencyUnit;
  taxRules: Pick<TotalsInput, "taxPercent" | "hasTaxes" | "pricesIncludeTax">;
  lines: readonly CycleLine[];
  addons: readonly CycleAddon[];
  coupon: CycleCoupon | null;
  /** pending items (prorations, carried credits), billed whole on this invoice */
  pendingItems?: readonly CyclePendingItem[];
}

export interface CycleInvoiceLine {
  name: string;
  description: string;
  quantity: string;
  /** unit price */
  amount: string;
  discount: string;
  discountScheme: DiscountScheme;
  exempt: boolean;
  periodStart: string;
  periodEnd: string;
  /** the subscription line or addon it bills */
  source: { kind: "line" | "addon" | "pending_item"; id: string };
}

export interface CycleInvoice {
  periodStart: string;
  periodEnd: string;
  lines: CycleInvoiceLine[];
  discount: string;
  discountScheme: DiscountScheme;
  totals: DocumentTotals;
  /** coupons that discounted this invoice (their redemptions go up by one) */
  redeemedCoupons: string[];
  /** addons billed in this cycle */
  billedAddons: string[];
  /** subscription lines whose own coupon discounted this invoice (each line's redemptions go up by one) */
  redeemedLineCoupons: string[];
  /** whether the subscription's coupon discounted this invoice (its redemptions go up by one) */
  subscriptionCouponRedeemed: boolean;
  /** pending items this invoice bills (all of the input's; a credit cut by carriedCredits included) */
  billedPendingItems: string[];
  /** credit that did not fit (a negative amount per tax class), for a pending item of the next cycle */
  carriedCredits: { name: string; amount: Decimal; exempt: boolean; periodStart: string; periodEnd: string }[];
}

const plain = (d: Decimal) => d.toFixed();

/** The invoice of `input.cycle`. Throws ValidationError (400) only for inconsistent input (negative quantities). */
export function cycleInvoice(input: CycleInput): CycleInvoice {
  const period = billingPeriod(input.anchor, input.frequency, input.cycle);
  const previous = input.cycle > 1 ? billingPeriod(input.anchor, input.frequency, input.cycle - 1) : null;
  const lines: CycleInvoiceLine[] = [];
  const lineCoupons: (CycleCoupon | null)[] = [];

  for (const line of input.lines) {
    const metered = line.plan.usageScheme === "metered";
    const billed = metered ? previous : period;
    if (!billed) continue;
    const quantity = metered
      ? aggregateUsage(line.usages ?? [], line.plan.usageAggregation, { start: input.dayStart(billed.start), end: input.dayStart(billed.end) })
      : toDecimal(line.quantity);
    const tiered = !!line.plan.tiersMode;
    const total = priceQuantity(line.plan, quantity, input.currency);
    const range = `${billed.start} to ${billed.end}`;
    lines.push({
      name: line.name,
      description: tiered ? `${plain(quantity)} units, ${line.plan.tiersMode} tiers, ${range}` : metered ? `usage ${range}` : range,
      quantity: tiered ? "1" : plain(quantity),
      amount: tiered ? plain(total) : plain(toDecimal(line.plan.amount)),
      discount: "0",
      discountScheme: "%",
      exempt: line.plan.exempt,
      periodStart: billed.start,
      periodEnd: billed.end,
      source: { kind: "line", id: line.id },
    });
    lineCoupons.push(line.coupon && couponApplies(line.coupon, line.coupon.redemptions) ? line.coupon : null);
  }

  const billedAddons: string[] = [];
  for (const addon of input.addons) {
    let unit: Decimal | null = null;
    let label = "";
    if (addon.applyScheme === "one_time") {
      const shares = addonRateShares(addon.amount, addon.rates, input.currency);
      const share = shares.find((s) => s.cycle === input.cycle);
      if (share) {
        unit = share.amount;
        label = shares.length > 1 ? ` (share ${shares.indexOf(share) + 1} of ${shares.length})` : "";
      }
    } else if (addon.durationTimes === null || addon.redemptions < addon.durationTimes) {
      unit = toDecimal(addon.amount);
    }
    if (!unit) continue;
    billedAddons.push(addon.id);
    lines.push({
      name: `${addon.name}${label}`,
      description: `${addon.applyScheme === "one_time" ? "one-time" : "recurring"} addon, ${period.start} to ${period.end}`,
      quantity: String(addon.quantity),
      amount: plain(unit),
      discount: "0",
      discountScheme: "%",
      exempt: false,
      periodStart: period.start,
      periodEnd: period.end,
      source: { kind: "addon", id: addon.id },
    });
    lineCoupons.push(null);
  }

  const redeemed = new Set<string>();
  const redeemedLineCoupons: string[] = [];
  let subscriptionCouponRedeemed = false;
  const subscriptionCoupon = input.coupon && couponApplies(input.coupon, input.coupon.redemptions) ? input.coupon : null;
  let discount = { discount: "0", discountScheme: "%" as DiscountScheme };
  lines.forEach((line, i) => {
    const coupon = lineCoupons[i] ?? (subscriptionCoupon?.applyOn === "line" ? subscriptionCoupon : null);
    if (!coupon) return;
    if (lineCoupons[i]) redeemedLineCoupons.push(line.source.id);
    else subscriptionCouponRedeemed = true;
    const gross = roundMoney(toDecimal(line.quantity).times(line.amount), input.currency);
    const [lineDiscount] = couponDiscounts({ ...coupon, applyOn: "line" }, [{ gross }]).lines;
    line.discount = lineDiscount.discount;
    line.discountScheme = lineDiscount.discountScheme;
    redeemed.add(coupon.id);
  });

  const totalsOf = (documentDiscount: typeof discount) =>
    computeDocumentTotals({
      lines: lines.map((l) => ({ quantity: l.quantity, amount: l.amount, discount: l.discount, discountScheme: l.discountScheme, exempt: l.exempt })),
      discount: documentDiscount.discount,
      discountScheme: documentDiscount.discountScheme,
      ...input.taxRules,
      currency: input.currency,
      allowCredits: true,
    });

  // pending items: charges, then credits capped at what is left of their tax class
  const billedPendingItems: string[] = [];
  const carriedCredits: CycleInvoice["carriedCredits"] = [];
  const items = input.pendingItems ?? [];
  if (items.length > 0) {
    const base = totalsOf({ discount: "0", discountScheme: "%" });
    const exemptOf = (flag: boolean) => !input.taxRules.hasTaxes || flag;
    const room = new Map<boolean, Decimal>([
      [false, new Decimal(0)],
      [true, new Decimal(0)],
    ]);
    base.lines.forEach((l) => room.set(l.exempt, room.get(l.exempt)!.plus(l.total)));
    const totalOf = (item: CyclePendingItem) => roundMoney(toDecimal(item.quantity).times(item.amount), input.currency);
    const ordered = [...items.filter((i) => !totalOf(i).isNegative()), ...items.filter((i) => totalOf(i).isNegative())];
    for (const item of ordered) {
      const exempt = exemptOf(item.exempt);
      const total = totalOf(item);
      let quantity = toDecimal(item.quantity);
      let amount = toDecimal(item.amount);
      billedPendingItems.push(item.id);
      if (total.isNegative() && total.abs().gt(room.get(exempt)!)) {
        const fits = room.get(exempt)!;
        carriedCredits.push({ name: item.name, amount: total.plus(fits), exempt: item.exempt, periodStart: item.periodStart, periodEnd: item.periodEnd });
        if (fits.isZero()) continue;
        quantity = new Decimal(1);
        amount = fits.negated();
      }
      room.set(exempt, room.get(exempt)!.plus(roundMoney(quantity.times(amount), input.currency)));
      lines.push({
        name: item.name,
        description: `${total.isNegative() ? "credit" : "charge"}, ${item.periodStart} to ${item.periodEnd}${amount.eq(item.amount) ? "" : ` (${total.toFixed()}; the rest is carried to the next invoice)`}`,
        quantity: plain(quantity),
        amount: plain(amount),
        discount: "0",
        discountScheme: "%",
        exempt: item.exempt,
        periodStart: item.periodStart,
        periodEnd: item.periodEnd,
        source: { kind: "pending_item", id: item.id },
      });
    }
  }
  if (subscriptionCoupon?.applyOn === "invoice" && lines.length > 0) {
    discount = couponDiscounts(subscriptionCoupon, []).document!;
    if (discount.discountScheme === "$") {
      // a $ coupon takes at most the taxable amount it discounts (gross of tax on boletas)
      const before = totalsOf({ discount: "0", discountScheme: "%" });
      const base = input.taxRules.pricesIncludeTax ? before.amount.plus(before.tax) : before.amount;
      discount = { discount: Decimal.min(toDecimal(discount.discount), base).toFixed(), discountScheme: "$" };
    }
    redeemed.add(subscriptionCoupon.id);
    subscriptionCouponRedeemed = true;
  }
  const totals = totalsOf(discount);
  return {
    periodStart: period.start,
    periodEnd: period.end,
    lines,
    ...discount,
    totals,
    redeemedCoupons: [...redeemed],
    billedAddons,
    redeemedLineCoupons,
    subscriptionCouponRedeemed,
    billedPendingItems,
    carriedCredits,
  };
}
