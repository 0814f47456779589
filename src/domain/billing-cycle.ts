/**
 * A subscription cycle's invoice, as a pure function (docs/billing-run.md: the billing run
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
 * - A final invoice (`final`, a subscription that ends) bills only metered usage of the last
 *   period and pending items, and is empty unless one of its lines is not zero.
 *
 * The second half of the module says when a cycle is billed and when a subscription ends instead
 * (cycleDecision, the no-card rule) and which usage a period bills (periodUsages): the one source
 * of the cycle rules for the billing run and the upcoming-invoice preview (docs/billing-run.md).
 */
import type { Frequency } from "./catalogue.js";
import { billingPeriod } from "./billing-periods.js";
import { couponApplies, couponDiscounts, type CouponTerms } from "./coupons.js";
import { Decimal, roundMoney, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";
import { addonRateShares, priceQuantity, type AddonRate, type PricedPlan } from "./pricing.js";
import { computeDocumentTotals, type DiscountScheme, type DocumentTotals, type TotalsInput } from "./totals.js";
import { isBilledStatus } from "./subscriptions.js";
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
  plan: PricedPlan & {
    usageScheme: "licensed" | "metered" | string;
    usageAggregation: UsageAggregation;
    exempt: boolean;
  };
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
  /**
   * the final invoice of a subscription that ends at the start of `cycle` (cycleDecision's
   * `finalInvoice`): only what the ended period still owes, i.e. metered usage of the last period
   * and pending items; no licensed lines or addons for a period that is not served
   */
  final?: boolean;
}

export interface CycleInvoiceLine {
  name: string;
  description: string;
  quantity: string;
  /** unit price */
  amount: string;
  discount: string;
  discountScheme: DiscountScheme;
  /** exempt from tax: an exempt plan or pending item, or any line of a document type without taxes */
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

/** The document discount of an invoice: none ("0" %), or the subscription coupon's (% or $). */
type DocumentDiscount = { discount: string; discountScheme: DiscountScheme };

const NO_DISCOUNT: DocumentDiscount = { discount: "0", discountScheme: "%" };

/** An invoice line before coupons (no discount), billing `source` over `period`. */
function undiscountedLine(
  line: Pick<CycleInvoiceLine, "name" | "description" | "quantity" | "amount" | "exempt" | "source">,
  period: { start: string; end: string },
): CycleInvoiceLine {
  const { name, description, quantity, amount, exempt, source } = line;
  return {
    name,
    description,
    quantity,
    amount,
    discount: "0",
    discountScheme: "%",
    exempt,
    periodStart: period.start,
    periodEnd: period.end,
    source,
  };
}

/**
 * The lines of the subscription's plan lines, with the coupon of each that still applies
 * (docs/recurring-billing.md): licensed lines bill `period` in advance (quantity x unit price, or
 * one line priced by the plan's tiers), metered lines the usage of `previous` (the period before;
 * none in cycle 1), aggregated by the plan's `usage_aggregation`. A final invoice has no licensed
 * lines. Amounts in `input.currency`.
 */
function planLines(
  input: CycleInput,
  period: { start: string; end: string },
  previous: { start: string; end: string } | null,
): { lines: CycleInvoiceLine[]; lineCoupons: (CycleCoupon | null)[] } {
  const lines: CycleInvoiceLine[] = [];
  const lineCoupons: (CycleCoupon | null)[] = [];
  for (const line of input.lines) {
    const metered = line.plan.usageScheme === "metered";
    const billed = metered ? previous : input.final ? null : period;
    if (!billed) continue;
    const quantity = metered
      ? aggregateUsage(line.usages ?? [], line.plan.usageAggregation, {
          start: input.dayStart(billed.start),
          end: input.dayStart(billed.end),
        })
      : toDecimal(line.quantity);
    const tiered = !!line.plan.tiersMode;
    const total = priceQuantity(line.plan, quantity, input.currency);
    const range = `${billed.start} to ${billed.end}`;
    const description = tiered
      ? `${plain(quantity)} units, ${line.plan.tiersMode} tiers, ${range}`
      : metered
        ? `usage ${range}`
        : range;
    const quantityText = tiered ? "1" : plain(quantity);
    const amount = tiered ? plain(total) : plain(toDecimal(line.plan.amount));
    const source = { kind: "line" as const, id: line.id };
    lines.push(
      undiscountedLine(
        { name: line.name, description, quantity: quantityText, amount, exempt: line.plan.exempt, source },
        billed,
      ),
    );
    lineCoupons.push(line.coupon && couponApplies(line.coupon, line.coupon.redemptions) ? line.coupon : null);
  }
  return { lines, lineCoupons };
}

/**
 * An addon's unit amount in cycle `input.cycle`, or null when it bills nothing then: a `one_time`
 * addon its share of that cycle (its rates; `label` numbers the share when there are several), a
 * `recurring` one its amount while fewer than `durationTimes` cycles have billed it (null: always).
 */
function addonUnit(input: CycleInput, addon: CycleAddon): { unit: Decimal; label: string } | null {
  if (addon.applyScheme === "one_time") {
    const shares = addonRateShares(addon.amount, addon.rates, input.currency);
    const share = shares.find((s) => s.cycle === input.cycle);
    if (!share) return null;
    return {
      unit: share.amount,
      label: shares.length > 1 ? ` (share ${shares.indexOf(share) + 1} of ${shares.length})` : "",
    };
  }
  if (addon.durationTimes === null || addon.redemptions < addon.durationTimes)
    return { unit: toDecimal(addon.amount), label: "" };
  return null;
}

/** The lines of the addons billed in this cycle (none on a final invoice): unit x quantity over `period`. */
function addonLines(
  input: CycleInput,
  period: { start: string; end: string },
): { lines: CycleInvoiceLine[]; billedAddons: string[] } {
  const lines: CycleInvoiceLine[] = [];
  const billedAddons: string[] = [];
  for (const addon of input.final ? [] : input.addons) {
    const billed = addonUnit(input, addon);
    if (!billed) continue;
    billedAddons.push(addon.id);
    const kind = addon.applyScheme === "one_time" ? "one-time" : "recurring";
    lines.push(
      undiscountedLine(
        {
          name: `${addon.name}${billed.label}`,
          description: `${kind} addon, ${period.start} ` + `to ${period.end}`,
          quantity: String(addon.quantity),
          amount: plain(billed.unit),
          exempt: false,
          source: { kind: "addon", id: addon.id },
        },
        period,
      ),
    );
  }
  return { lines, billedAddons };
}

/** Which coupons discounted an invoice (CycleInvoice's fields of the same names). */
interface Redemptions {
  /** coupon ids */
  redeemed: Set<string>;
  /** subscription line ids */
  redeemedLineCoupons: string[];
  subscriptionCouponRedeemed: boolean;
}

/**
 * Discounts each line by its own coupon, or else by the subscription's coupon when it applies
 * `on: line` (domain/coupons.ts `couponDiscounts` on the line's gross, rounded in
 * `input.currency`); sets the lines' `discount` and `discountScheme` and returns what was redeemed.
 */
function applyLineCoupons(
  input: CycleInput,
  lines: CycleInvoiceLine[],
  lineCoupons: (CycleCoupon | null)[],
  subscriptionCoupon: CycleCoupon | null,
): Redemptions {
  const redemptions: Redemptions = { redeemed: new Set(), redeemedLineCoupons: [], subscriptionCouponRedeemed: false };
  lines.forEach((line, i) => {
    const coupon = lineCoupons[i] ?? (subscriptionCoupon?.applyOn === "line" ? subscriptionCoupon : null);
    if (!coupon) return;
    if (lineCoupons[i]) redemptions.redeemedLineCoupons.push(line.source.id);
    else redemptions.subscriptionCouponRedeemed = true;
    const gross = roundMoney(toDecimal(line.quantity).times(line.amount), input.currency);
    const [lineDiscount] = couponDiscounts({ ...coupon, applyOn: "line" }, [{ gross }]).lines;
    line.discount = lineDiscount.discount;
    line.discountScheme = lineDiscount.discountScheme;
    redemptions.redeemed.add(coupon.id);
  });
  return redemptions;
}

/**
 * The totals (totals.ts) of `lines` with `documentDiscount`, by the input's tax rules and currency;
 * credits allowed.
 */
function cycleTotals(input: CycleInput, lines: CycleInvoiceLine[], documentDiscount: DocumentDiscount): DocumentTotals {
  return computeDocumentTotals({
    lines: lines.map((l) => ({
      quantity: l.quantity,
      amount: l.amount,
      discount: l.discount,
      discountScheme: l.discountScheme,
      exempt: l.exempt,
    })),
    discount: documentDiscount.discount,
    discountScheme: documentDiscount.discountScheme,
    ...input.taxRules,
    currency: input.currency,
    allowCredits: true,
  });
}

/** What the pending items add to an invoice (CycleInvoice's fields of the same names). */
interface PendingItemsBilled {
  /** the pending items' lines, after the invoice's other lines */
  lines: CycleInvoiceLine[];
  billedPendingItems: string[];
  carriedCredits: CycleInvoice["carriedCredits"];
}

/** A pending item's line: a charge or credit of `quantity` x `amount` (signed), noting a credit cut to what fits. */
function pendingItemLine(item: CyclePendingItem, quantity: Decimal, amount: Decimal, total: Decimal): CycleInvoiceLine {
  return undiscountedLine(
    {
      name: item.name,
      description:
        `${total.isNegative() ? "credit" : "charge"}, ${item.periodStart} ` +
        `to ${item.periodEnd}${
          amount.eq(item.amount) ? "" : ` (${total.toFixed()}; the rest is carried to the ` + `next invoice)`
        }`,
      quantity: plain(quantity),
      amount: plain(amount),
      exempt: item.exempt,
      source: { kind: "pending_item", id: item.id },
    },
    { start: item.periodStart, end: item.periodEnd },
  );
}

/**
 * The lines of the pending items (docs/recurring-billing.md): charges first, then credits, each
 * credit capped at what is left of its tax class (taxable or exempt, every line exempt on a type
 * without taxes) after `lines` (already discounted by line coupons) and the items before it; the
 * part that does not fit is a carried credit (a negative amount) and a credit that does not fit
 * at all gets no line.
 */
function pendingItemLines(input: CycleInput, lines: CycleInvoiceLine[]): PendingItemsBilled {
  const billed: PendingItemsBilled = { lines: [], billedPendingItems: [], carriedCredits: [] };
  const items = input.pendingItems ?? [];
  if (items.length === 0) return billed;
  const base = cycleTotals(input, lines, NO_DISCOUNT);
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
    billed.billedPendingItems.push(item.id);
    if (total.isNegative() && total.abs().gt(room.get(exempt)!)) {
      const fits = room.get(exempt)!;
      billed.carriedCredits.push({
        name: item.name,
        amount: total.plus(fits),
        exempt: item.exempt,
        periodStart: item.periodStart,
        periodEnd: item.periodEnd,
      });
      if (fits.isZero()) continue;
      quantity = new Decimal(1);
      amount = fits.negated();
    }
    room.set(exempt, room.get(exempt)!.plus(roundMoney(quantity.times(amount), input.currency)));
    billed.lines.push(pendingItemLine(item, quantity, amount, total));
  }
  return billed;
}

/**
 * The subscription coupon's document discount when it applies `on: invoice` (and the invoice has
 * lines), else none. A $ coupon takes at most the taxable amount it discounts (gross of tax on
 * boletas); a % one discounts the taxable net after credits (totals.ts).
 */
function invoiceCouponDiscount(
  input: CycleInput,
  lines: CycleInvoiceLine[],
  subscriptionCoupon: CycleCoupon | null,
): DocumentDiscount | null {
  if (subscriptionCoupon?.applyOn !== "invoice" || lines.length === 0) return null;
  const discount = couponDiscounts(subscriptionCoupon, []).document!;
  if (discount.discountScheme !== "$") return discount;
  const before = cycleTotals(input, lines, NO_DISCOUNT);
  const base = input.taxRules.pricesIncludeTax ? before.amount.plus(before.tax) : before.amount;
  return { discount: Decimal.min(toDecimal(discount.discount), base).toFixed(), discountScheme: "$" };
}

/** A final invoice that bills nothing: no lines, zero totals, nothing redeemed or billed (the run issues none). */
function emptyInvoice(input: CycleInput, period: { start: string; end: string }): CycleInvoice {
  return {
    periodStart: period.start,
    periodEnd: period.end,
    lines: [],
    discount: "0",
    discountScheme: "%",
    totals: cycleTotals(input, [], NO_DISCOUNT),
    redeemedCoupons: [],
    billedAddons: [],
    redeemedLineCoupons: [],
    subscriptionCouponRedeemed: false,
    billedPendingItems: [],
    carriedCredits: [],
  };
}

/**
 * The invoice of `input.cycle`, in the steps of docs/recurring-billing.md: plan lines, addons, line
 * coupons, pending items, the invoice coupon, totals. Throws ValidationError (400) only for
 * inconsistent input (negative quantities).
 */
export function cycleInvoice(input: CycleInput): CycleInvoice {
  const period = billingPeriod(input.anchor, input.frequency, input.cycle);
  const previous = meteredPeriod(input.anchor, input.frequency, input.cycle);
  const plan = planLines(input, period, previous);
  const addons = addonLines(input, period);
  const lines = [...plan.lines, ...addons.lines];
  const lineCoupons = [...plan.lineCoupons, ...addons.lines.map(() => null)];
  const subscriptionCoupon =
    input.coupon && couponApplies(input.coupon, input.coupon.redemptions) ? input.coupon : null;
  const redemptions = applyLineCoupons(input, lines, lineCoupons, subscriptionCoupon);
  const pending = pendingItemLines(input, lines);
  lines.push(...pending.lines);
  const invoiceDiscount = invoiceCouponDiscount(input, lines, subscriptionCoupon);
  if (invoiceDiscount) {
    redemptions.redeemed.add(subscriptionCoupon!.id);
    redemptions.subscriptionCouponRedeemed = true;
  }
  // a final invoice is issued only when it bills something (usage, a flat tier fee, a pending item)
  if (input.final && !lines.some((l) => !toDecimal(l.quantity).times(l.amount).isZero()))
    return emptyInvoice(input, period);
  const discount = invoiceDiscount ?? NO_DISCOUNT;
  const totals = cycleTotals(input, lines, discount);
  // a final invoice covers the period whose usage it bills
  const covered = input.final ? (previous ?? period) : period;
  // the invoice's lines say what the totals made of them: every line is exempt on a document
  // type without taxes (CL34, CL41), whatever its plan says
  lines.forEach((l, i) => (l.exempt = totals.lines[i].exempt));
  return {
    periodStart: covered.start,
    periodEnd: covered.end,
    lines,
    ...discount,
    totals,
    redeemedCoupons: [...redemptions.redeemed],
    billedAddons: addons.billedAddons,
    redeemedLineCoupons: redemptions.redeemedLineCoupons,
    subscriptionCouponRedeemed: redemptions.subscriptionCouponRedeemed,
    billedPendingItems: pending.billedPendingItems,
    carriedCredits: pending.carriedCredits,
  };
}

// ---------------------------------------------------------------------------------------------
// When a cycle is billed and when a subscription ends (docs/billing-run.md "What is due"). The
// billing run (services/billing-run.ts) and the upcoming-invoice preview
// (services/upcoming-invoice.ts) both decide with cycleDecision, so the preview shows an invoice
// exactly when the run will create one.

/** `cancel_reason` of a subscription that reached its `billing_cycles` or `end_date`. */
export const ENDED_REASON = "ended";
/** `cancel_reason` of a subscription cancelled by the no-card rule (spec: value `no_card` occurs). */
export const NO_CARD_REASON = "no_card";

/** What cycleDecision reads of a subscription (its stored fields; dates `yyyy-mm-dd`). */
export interface CycleSubscription {
  /** `active`, `paused` or `cancelled` */
  status: string;
  /** `next_billing_cycle`: the cycle to decide on */
  cycle: number;
  /** `next_billing`: the day that cycle starts and is billed */
  date: string;
  cancelAtPeriodEnd: boolean;
  /** the stored reason (set when a cancel at period end was scheduled) */
  cancelReason: string | null;
  /** null: until cancelled */
  billingCycles: number | null;
  /** null: no end date */
  endDate: string | null;
}

/** Why a subscription ends at the start of a cycle instead of billing it. */
export type CycleEnd = "cancel_at_period_end" | "billing_cycles" | "end_date" | "no_card";

export type CycleDecision =
  /** bill cycle `cycle`, dated `date` */
  | { action: "bill"; cycle: number; date: string }
  /**
   * cancel the subscription instead of billing cycle `cycle`: `cancelReason` is stored;
   * `cancelledAt`: `cycle_start` (midnight of `date` in the organization's zone) or `now`
   * (no card: the moment the run found the invoice unpaid); `finalInvoice`: the run first issues
   * the final invoice of cycle `cycle` (cycleInvoice with `final`: the last period's usage and the
   * pending items, when not zero); not for `no_card`, which stops billing an unpaying customer
   */
  | {
      action: "end";
      cycle: number;
      date: string;
      end: CycleEnd;
      cancelReason: string | null;
      cancelledAt: "cycle_start" | "now";
      finalInvoice: boolean;
    }
  /** nothing happens while the subscription is paused or cancelled */
  | { action: "none"; status: string };

/**
 * What happens at the start of the subscription's next cycle (`sub.cycle` on `sub.date`), in this
 * order: neither active nor past due (isBilledStatus) -> nothing; `cancel_at_period_end` -> ends
 * with its stored reason; cycle past `billing_cycles` or `date` on or after `end_date` -> ends
 * with `ended`; `noCard` (noCardEnds over the cycle before) -> ends with `no_card`; else the cycle
 * is billed.
 *
 * Worked examples (docs/billing-run.md): `billing_cycles` 2 from 2026-07-01 bills Jul 1 and Aug 1
 * and ends on Sep 1 (cycle 3); `end_date` 2026-08-15 from 2026-07-01 bills Jul 1 and Aug 1 (Aug 1
 * is before the end date: the whole period is billed) and ends on Sep 1; `cancel_at_period_end`
 * set during cycle 1 ends on the start of cycle 2.
 */
export function cycleDecision(sub: CycleSubscription, noCard = false): CycleDecision {
  if (!isBilledStatus(sub.status)) return { action: "none", status: sub.status };
  const ends = (
    end: CycleEnd,
    cancelReason: string | null,
    cancelledAt: "cycle_start" | "now" = "cycle_start",
  ): CycleDecision => ({
    action: "end",
    cycle: sub.cycle,
    date: sub.date,
    end,
    cancelReason,
    cancelledAt,
    finalInvoice: end !== "no_card",
  });
  if (sub.cancelAtPeriodEnd) return ends("cancel_at_period_end", sub.cancelReason);
  if (sub.billingCycles !== null && sub.cycle > sub.billingCycles) return ends("billing_cycles", ENDED_REASON);
  if (sub.endDate !== null && sub.endDate <= sub.date) return ends("end_date", ENDED_REASON);
  if (noCard) return ends("no_card", NO_CARD_REASON, "now");
  return { action: "bill", cycle: sub.cycle, date: sub.date };
}

/** The invoice of the cycle before, as the no-card rule reads it. */
export interface PreviousCycleInvoice {
  status: string;
  /** `yyyy-mm-dd`, null: none */
  dueDate: string | null;
}

/**
 * Whether the no-card rule has to look at the balance and the customer's sources for cycle
 * `cycle` starting on `date`: there is a cycle before, it has an invoice (`previous`) that is
 * issued (draft within the run's transaction, or finalized), and its due date is before `date`.
 */
export function noCardCheckNeeded(cycle: number, previous: PreviousCycleInvoice | null, date: string): boolean {
  return (
    cycle > 1 &&
    previous !== null &&
    ["draft", "finalized"].includes(previous.status) &&
    previous.dueDate !== null &&
    previous.dueDate < date
  );
}

/**
 * The no-card rule (docs/billing-run.md "Collection and the no-card rule"): the subscription ends
 * with `no_card` at the start of cycle `cycle` when noCardCheckNeeded holds, the invoice of the
 * cycle before still has an amount due (`amountDue` > 0), and the customer has no usable reusable
 * source. Example: a cycle-1 invoice due May 13 with 11 900 due on Jun 3 and no card: ends.
 */
export function noCardEnds(check: {
  cycle: number;
  date: string;
  previous: PreviousCycleInvoice | null;
  amountDue: DecimalInput;
  hasUsableSource: boolean;
}): boolean {
  return (
    noCardCheckNeeded(check.cycle, check.previous, check.date) &&
    toDecimal(check.amountDue).greaterThan(0) &&
    !check.hasUsableSource
  );
}

/** A usage record as periodUsages reads it (`invoiceId` null: not billed yet). */
export interface StoredUsage extends UsageRecord {
  createdAt: Date;
  invoiceId: string | null;
}

/**
 * Which usage records of one metered line the invoice of `period` (`[start, end)`, the previous
 * cycle's period, compared as instants) prices and which it bills (marks with its id):
 *
 * - `billed`: the period's records not billed yet, by time then creation; each is billed once;
 * - `priced`: what aggregateUsage reads: for `last_ever` the latest record before the period's
 *   end, billed or not (it carries over from earlier periods); for the other aggregations the
 *   billed records.
 *
 * A record at `end` belongs to the next period; a record billed by another invoice is never
 * counted again. Example: `sum` over Oct 5 30 (unbilled), Oct 10 7 (billed), Oct 31 12, Nov 1 500
 * for October: priced and billed 30 and 12 (42).
 */
export function periodUsages<T extends StoredUsage>(
  records: readonly T[],
  aggregation: UsageAggregation,
  period: { start: Date; end: Date },
): { priced: T[]; billed: T[] } {
  const byTime = (a: T, b: T) =>
    a.dateTime.getTime() - b.dateTime.getTime() || a.createdAt.getTime() - b.createdAt.getTime();
  const before = records.filter((u) => u.dateTime.getTime() < period.end.getTime());
  const billed = before
    .filter((u) => u.dateTime.getTime() >= period.start.getTime() && u.invoiceId === null)
    .sort(byTime);
  const priced = aggregation === "last_ever" ? [...before].sort(byTime).slice(-1) : billed;
  return { priced, billed };
}

/**
 * The period whose usage metered lines bill in cycle `cycle` (in arrears: the cycle before's
 * period), null for cycle 1.
 */
export function meteredPeriod(
  anchor: string,
  frequency: Frequency,
  cycle: number,
): { start: string; end: string } | null {
  return cycle > 1 ? billingPeriod(anchor, frequency, cycle - 1) : null;
}

/**
 * The id of the billing run's payment of invoice `invoiceId`: `pay_` and the invoice id's random
 * part (`inv_X` → `pay_X`). Known in advance, so that a sweep finds the payment a process created
 * and never charged, and a second one for the invoice cannot be created (the primary key).
 */
export function collectionPaymentId(invoiceId: string): string {
  return `pay_${invoiceId.slice(invoiceId.indexOf("_") + 1)}`;
}
