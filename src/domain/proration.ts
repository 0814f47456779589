/**
 * Proration of mid-cycle subscription changes (docs/recurring-billing.md "Proration by day":
 * `proration_behavior`, `at_period_end`; docs/proration.md). Pure rules; the service
 * (services/subscriptions.ts) reads and writes the rows.
 *
 * - A change of a line's plan or quantity during a billed cycle [S, E) on date D (default today,
 *   clamped to [S, E]) credits the unused part of the old line and charges the remaining part of
 *   the new one, by whole days (billing-periods.ts prorationLines / splitByDays). Lines pair by
 *   position: line i of the new list replaces line i of the old one; an added line is only
 *   charged, a removed one only credited, an unchanged one (same plan and quantity) prorates
 *   nothing.
 * - Prorations use list prices (quantity x unit price, or the plan's tiers), before coupons.
 * - What happens to the prorations follows `proration_behavior`:
 *   `create_prorations` (default) stores them as pending items for the next cycle invoice,
 *   `none` drops them (the new lines bill from the next cycle), `always_invoice` bills their net
 *   now (netForInvoicing: an invoice for a net charge, a credit note for a net credit).
 * - `at_period_end: true` stores the new lines as pending changes, applied at the start of the
 *   next cycle (linesAtCycle); nothing is prorated.
 */
import { billingPeriod, prorationLines } from "./billing-periods.js";
import type { Frequency } from "./catalogue.js";
import { ValidationError } from "./errors.js";
import { Decimal, roundMoney, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

export const PRORATION_BEHAVIORS = ["create_prorations", "none", "always_invoice"] as const;
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

/** `value` as a proration behavior; null/undefined is `create_prorations`. 400 on `field` otherwise. */
export function prorationBehavior(value: string | null | undefined, field = "proration_behavior"): ProrationBehavior {
  if (value === null || value === undefined) return "create_prorations";
  if (!(PRORATION_BEHAVIORS as readonly string[]).includes(value))
    throw ValidationError.field(field, `must be one of ${PRORATION_BEHAVIORS.join(", ")}`);
  return value as ProrationBehavior;
}

/**
 * The billed period a change falls in and the day it is prorated from: the period of the last
 * billed cycle (`nextBillingCycle - 1`), and `requested` (a `proration_date`, which must lie in
 * that period: 400 on `proration_date` otherwise) or else `today` clamped to the period (a change
 * after the renewal date, before the billing run has billed the next cycle, prorates nothing).
 */
export function prorationPoint(input: {
  anchor: string;
  frequency: Frequency;
  nextBillingCycle: number;
  today: string;
  requested?: string | null;
}): { period: { start: string; end: string }; date: string } {
  if (input.nextBillingCycle < 2) throw new Error("no cycle has been billed: nothing to prorate");
  const period = billingPeriod(input.anchor, input.frequency, input.nextBillingCycle - 1);
  if (input.requested) {
    if (input.requested < period.start || input.requested > period.end) {
      throw ValidationError.field(
        "proration_date",
        `must be within the current period ${period.start} to ${period.end}`,
      );
    }
    return { period, date: input.requested };
  }
  const date = input.today < period.start ? period.start : input.today > period.end ? period.end : input.today;
  return { period, date };
}

/** A subscription line as proration sees it: its plan, quantity and its list price for a whole period. */
export interface ProratedLine {
  /** plan id: same plan and quantity is no change */
  plan: string;
  /** printed plan name, e.g. "Pro" */
  name: string;
  quantity: DecimalInput;
  /** quantity x unit price (or tiers) for one whole period, before coupons */
  periodAmount: DecimalInput;
  exempt: boolean;
}

/** A pending invoice item: billed as `quantity x amount` on the next cycle invoice. Negative amount: a credit. */
export interface PendingItemDraft {
  name: string;
  /** signed unit amount in the subscription's currency */
  amount: Decimal;
  quantity: Decimal;
  periodStart: string;
  periodEnd: string;
  exempt: boolean;
}

const label = (line: ProratedLine) => `${toDecimal(line.quantity).toFixed()} x ${line.name}`;
const sameLine = (a: ProratedLine, b: ProratedLine) =>
  a.plan === b.plan && toDecimal(a.quantity).eq(toDecimal(b.quantity));

/**
 * The proration items of replacing `before` with `after` (paired by position) on `date` of
 * `period`. Per changed position: "Unused time on <q> x <plan> (<D> - <E>)" (negative) and
 * "Remaining time on <q> x <plan> (<D> - <E>)" (positive), each quantity 1. Nothing on the
 * renewal date; the whole period on its first day.
 *
 * Worked example: 2 x Pro (10 000) -> 3 x Pro on Nov 21 of Nov 1 - Dec 1: -6 667 and +10 000.
 */
export function changeProrations(change: {
  before: readonly ProratedLine[];
  after: readonly ProratedLine[];
  period: { start: string; end: string };
  date: string;
  currency: CurrencyUnit;
}): PendingItemDraft[] {
  const items: PendingItemDraft[] = [];
  const n = Math.max(change.before.length, change.after.length);
  for (let i = 0; i < n; i++) {
    const old = change.before[i];
    const next = change.after[i];
    if (old && next && sameLine(old, next)) continue;
    const lines = prorationLines({
      oldName: old ? label(old) : "",
      oldAmount: old ? old.periodAmount : 0,
      newName: next ? label(next) : "",
      newAmount: next ? next.periodAmount : 0,
      period: change.period,
      date: change.date,
      currency: change.currency,
    });
    for (const line of lines) {
      const source = line.amount.isNegative() ? old! : next!;
      items.push({
        name: line.name,
        amount: line.amount,
        quantity: new Decimal(1),
        periodStart: line.periodStart,
        periodEnd: line.periodEnd,
        exempt: source.exempt,
      });
    }
  }
  return items;
}

/** The net of some proration items of one tax class (exempt or taxable), for `always_invoice`. */
export interface NetProration {
  exempt: boolean;
  /** sum of round(quantity x amount); positive: to invoice, negative: to credit */
  net: Decimal;
  /** one line name for the net, e.g. "Proration (Nov 21 - Dec 1)" */
  name: string;
  /** the items it nets, "name: amount" joined by "; " */
  description: string;
}

/**
 * `always_invoice`: the items netted per tax class (taxable, exempt; a document cannot mix signs
 * in our invoices, whose lines are never negative). Each class with a non-zero net gives one
 * NetProration: positive nets go on an invoice issued now, negative ones on a credit note against
 * the current cycle's invoice. Classes that net to zero give nothing.
 *
 * Worked example: -6 667 and +10 000 (taxable) -> one net of +3 334 to invoice.
 */
export function netForInvoicing(items: readonly PendingItemDraft[], currency: CurrencyUnit): NetProration[] {
  const out: NetProration[] = [];
  for (const exempt of [false, true]) {
    const mine = items.filter((i) => i.exempt === exempt);
    if (mine.length === 0) continue;
    const net = mine.reduce((acc, i) => acc.plus(roundMoney(i.quantity.times(i.amount), currency)), new Decimal(0));
    if (net.isZero()) continue;
    const starts = mine.map((i) => i.periodStart).sort();
    const ends = mine.map((i) => i.periodEnd).sort();
    const range = mine[0].name.match(/\(([^()]*)\)$/)?.[1] ?? `${starts[0]} - ${ends[ends.length - 1]}`;
    out.push({
      exempt,
      net,
      name: `Proration${exempt ? " (exempt)" : ""} (${range})`,
      description: mine
        .map((i) => `${i.name}: ${roundMoney(i.quantity.times(i.amount), currency).toFixed()}`)
        .join("; "),
    });
  }
  return out;
}

/** A subscription line as stored in `pendingChanges.lines`: `id` kept for a position that stays. */
export interface PendingLine {
  id: string;
  plan: string;
  quantity: string;
  coupon: string | null;
}

/** `Subscription.pendingChanges`: lines that replace the current ones from cycle `cycle` on. */
export interface PendingChanges {
  cycle: number;
  lines: PendingLine[];
  /** ISO 8601 time the change was requested */
  requested: string;
}

/** Reads a stored `pendingChanges` Json (null when none or not in the expected shape). */
export function parsePendingChanges(value: unknown): PendingChanges | null {
  if (!value || typeof value !== "object") return null;
  const v = value as Partial<PendingChanges>;
  if (typeof v.cycle !== "number" || !Array.isArray(v.lines)) return null;
  return { cycle: v.cycle, lines: v.lines, requested: String(v.requested ?? "") };
}

/**
 * The lines cycle `cycle` bills: the pending lines when a change scheduled `at_period_end` takes
 * effect at or before that cycle, else null (the stored lines stand). The billing run applies them
 * (services/subscriptions.ts applyPendingChanges) when it starts that cycle; the upcoming invoice
 * shows them.
 */
export function linesAtCycle(pending: PendingChanges | null, cycle: number): PendingLine[] | null {
  return pending && pending.cycle <= cycle ? pending.lines : null;
}
