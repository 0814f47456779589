/**
 * Billing periods and proration (docs/recurring-billing.md "Periods"; docs/proration.md).
 * Pure calendar arithmetic on `yyyy-mm-dd` dates: a subscription's cycle N covers
 * [start of N, start of N+1), starting from its anchor date, by its plans' frequency.
 *
 * Months keep the anchor's day and clamp it to shorter months: an anchor of Jan 31 bills on
 * Feb 28 (29 in leap years), Mar 31, Apr 30, ... (Stripe's rule), never drifting to the 28th.
 */
import { BoundedMemo } from "./bounded-memo.js";
import { ValidationError } from "./errors.js";
import { roundMoney, toDecimal, type CurrencyUnit, type Decimal, type DecimalInput } from "./money.js";
import { FREQUENCIES, type Frequency } from "./catalogue.js";

const DAY_MS = 86_400_000;

const YMD = /^(\d{4})-(\d{2})-(\d{2})$/;

function parse(date: string): { y: number; m: number; d: number } {
  const match = YMD.exec(date);
  if (!match) throw new Error(`not a yyyy-mm-dd date: ${date}`);
  return { y: Number(match[1]), m: Number(match[2]), d: Number(match[3]) };
}

function format(y: number, m: number, d: number): string {
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** `date` plus `days` calendar days (negative goes back). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (`to` excluded): daysBetween("2026-11-01", "2026-12-01") = 30. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** `anchor` plus `months` months, keeping the anchor's day, clamped to the month's last day. */
export function addMonthsClamped(anchor: string, months: number): string {
  const { y, m, d } = parse(anchor);
  const index = y * 12 + (m - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  return format(year, month, Math.min(d, daysInMonth(year, month)));
}

/**
 * Start of cycle `cycle` (1-based) of a subscription anchored at `anchor`, stepping by the
 * frequency's interval (domain/catalogue.ts FREQUENCIES: quarterly is 3 months).
 */
export function cycleStart(anchor: string, frequency: Frequency, cycle: number): string {
  if (!Number.isInteger(cycle) || cycle < 1) throw new Error(`cycle must be a positive integer, got ${cycle}`);
  const { interval, intervalCount } = FREQUENCIES[frequency];
  const steps = (cycle - 1) * intervalCount;
  switch (interval) {
    case "day":
      return addDays(anchor, steps);
    case "week":
      return addDays(anchor, 7 * steps);
    case "month":
      return addMonthsClamped(anchor, steps);
    case "year":
      return addMonthsClamped(anchor, 12 * steps);
  }
}

/** billingPeriod's dates by anchor, frequency and cycle. */
const periods = new BoundedMemo<string, { start: string; end: string }>(10_000);

/**
 * `[start, end)` of cycle `cycle`; `end` is the next cycle's start (the renewal date). A new object
 * on every call; the dates are memoized (the billing run asks for one cycle's period several times).
 */
export function billingPeriod(anchor: string, frequency: Frequency, cycle: number): { start: string; end: string } {
  const period = periods.get(`${anchor} ${frequency} ${cycle}`, () => ({
    start: cycleStart(anchor, frequency, cycle),
    end: cycleStart(anchor, frequency, cycle + 1),
  }));
  return { start: period.start, end: period.end };
}

/**
 * Splits `amount` between the days of a period before `date` (used) and from `date` on (unused),
 * by whole days, so that used + unused is exactly `amount`: the unused part is rounded to the
 * currency's unit and the used part is the rest. `date` must lie in `[start, end]`.
 *
 * Worked example: 30 000 CLP for Nov 1 - Dec 1 (30 days), changed on Nov 21: unused 10 days =
 * round(30 000 x 10 / 30) = 10 000, used 20 000.
 */
export function splitByDays(
  amount: DecimalInput,
  period: { start: string; end: string },
  date: string,
  currency: CurrencyUnit,
): { used: Decimal; unused: Decimal } {
  const total = daysBetween(period.start, period.end);
  const remaining = daysBetween(date, period.end);
  if (total <= 0) throw new Error(`empty period ${period.start}..${period.end}`);
  if (remaining < 0 || remaining > total)
    throw ValidationError.field("date", `must be within the period ${period.start} to ${period.end}`);
  const whole = toDecimal(amount);
  const unused = roundMoney(whole.times(remaining).dividedBy(total), currency);
  return { used: whole.minus(unused), unused };
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "Nov 21" for 2026-11-21 (proration line names). */
export function shortDate(date: string): string {
  const { m, d } = parse(date);
  return `${MONTHS[m - 1]} ${d}`;
}

export interface ProrationLine {
  name: string;
  /** negative: a credit */
  amount: Decimal;
  periodStart: string;
  periodEnd: string;
}

/**
 * The two invoice lines of a mid-cycle change (Stripe's `create_prorations`): a credit for the
 * unused time of the old price and a charge for the remaining time of the new one, each prorated by
 * day (splitByDays) and named so a customer can read them. Old and new are line totals for the
 * period (quantity x price, or tiers). A change on the period's start credits and charges the
 * whole period; a change on its end prorates nothing (no lines).
 *
 * Names end with the prorated days as "(Nov 21 - Dec 1)": from the change to the renewal date
 * (periodEnd, exclusive, as invoices print periods).
 *
 * Worked example: 2 seats x 10 000 -> 3 seats x 10 000 on Nov 21 of Nov 1 - Dec 1:
 *   "Unused time on 2 x Pro (Nov 21 - Dec 1)"      -6 667   (round(20 000 x 10/30))
 *   "Remaining time on 3 x Pro (Nov 21 - Dec 1)"   10 000   (round(30 000 x 10/30))
 */
export function prorationLines(change: {
  oldName: string;
  oldAmount: DecimalInput;
  newName: string;
  newAmount: DecimalInput;
  period: { start: string; end: string };
  date: string;
  currency: CurrencyUnit;
}): ProrationLine[] {
  if (daysBetween(change.date, change.period.end) === 0) {
    splitByDays(0, change.period, change.date, change.currency); // validates the date
    return [];
  }
  const old = splitByDays(change.oldAmount, change.period, change.date, change.currency);
  const next = splitByDays(change.newAmount, change.period, change.date, change.currency);
  const lines: ProrationLine[] = [];
  const days = `(${shortDate(change.date)} - ${shortDate(change.period.end)})`;
  if (!old.unused.isZero()) {
    lines.push({
      name: `Unused time on ${change.oldName} ${days}`,
      amount: old.unused.negated(),
      periodStart: change.date,
      periodEnd: change.period.end,
    });
  }
  if (!next.unused.isZero()) {
    lines.push({
      name: `Remaining time on ${change.newName} ${days}`,
      amount: next.unused,
      periodStart: change.date,
      periodEnd: change.period.end,
    });
  }
  return lines;
}
