/**
 * Revenue analytics (docs/analytics.md): the monthly figures of an organization in one currency, as its owner and
 * its accountant read them. Pure rules over what the service reads from the database:
 *
 * - `analyticsMonths`: the calendar months asked for, and the month before the first (MRR movements compare a
 *   month's end with the previous month's end).
 * - `MRR_FREQUENCY_FACTORS`: how a plan's price per period becomes a monthly amount (a yearly plan divided by 12).
 * - `mrrMovement`: how a customer's MRR change between two month ends is classified (new, expansion, contraction,
 *   churned). The service computes it in SQL for every customer at once and names this function beside it.
 * - `monthlyFigures`: invoiced, credit and debit notes, IVA (débito fiscal), collected, outstanding and overdue per
 *   month, from the money flows grouped by month (the service's one aggregate query).
 *
 * Amounts are decimal strings in the currency asked for; nothing is converted between currencies.
 */
import { ValidationError } from "./errors.js";
import { isIsoDate } from "./formats.js";
import { Decimal, roundMoney, toDecimal, type CurrencyUnit } from "./money.js";
import type { Frequency } from "./catalogue.js";

/** The most months one request may cover (ten years). */
export const MAX_ANALYTICS_MONTHS = 120;

/** A calendar month: its first and last day, yyyy-mm-dd. */
export interface AnalyticsMonth {
  start: string;
  last: string;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The month `index` (years * 12 + month - 1) as its first and last day. */
function monthAt(index: number): AnalyticsMonth {
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { start: `${year}-${pad(month)}-01`, last: `${year}-${pad(month)}-${pad(days)}` };
}

/** The month index (years * 12 + month - 1) of a yyyy-mm-dd date. */
export function monthIndex(date: string): number {
  return Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1;
}

/**
 * The calendar months from the month of `from` to the month of `to`, both included, and the month before the
 * first (`previous`). Errors (400): `from` or `to` not a date yyyy-mm-dd, `to` before `from`, more than
 * MAX_ANALYTICS_MONTHS months.
 *
 * Example: analyticsMonths("2026-01-15", "2026-03-01") covers 2026-01-01..2026-01-31, 2026-02-01..2026-02-28 and
 * 2026-03-01..2026-03-31, and `previous` is 2025-12-01..2025-12-31.
 */
export function analyticsMonths(from: string, to: string): { previous: AnalyticsMonth; months: AnalyticsMonth[] } {
  if (!isIsoDate(from)) throw ValidationError.field("from", `must be a date yyyy-mm-dd, got ${from}`);
  if (!isIsoDate(to)) throw ValidationError.field("to", `must be a date yyyy-mm-dd, got ${to}`);
  const first = monthIndex(from);
  const count = monthIndex(to) - first + 1;
  if (count < 1) throw ValidationError.field("to", `must not be before from (${from}), got ${to}`);
  if (count > MAX_ANALYTICS_MONTHS)
    throw ValidationError.field("to", `covers ${count} months from ${from}; at most ${MAX_ANALYTICS_MONTHS}`);
  return {
    previous: monthAt(first - 1),
    months: Array.from({ length: count }, (_, k) => monthAt(first + k)),
  };
}

/**
 * A plan's price per billing period times numerator / denominator is its monthly recurring revenue: a yearly plan
 * divided by 12, a quarterly one by 3, a weekly one times 52/12, a daily one times 365/12 (Stripe's and
 * ChartMogul's normalization).
 */
export const MRR_FREQUENCY_FACTORS: Record<Frequency, { numerator: number; denominator: number }> = {
  daily: { numerator: 365, denominator: 12 },
  weekly: { numerator: 52, denominator: 12 },
  monthly: { numerator: 1, denominator: 1 },
  quarterly: { numerator: 1, denominator: 3 },
  yearly: { numerator: 1, denominator: 12 },
};

/** A customer's MRR change between two month ends, split as docs/analytics.md "MRR movements" defines it. */
export interface MrrMovement {
  new: Decimal;
  expansion: Decimal;
  contraction: Decimal;
  churned: Decimal;
}

/**
 * How a customer's MRR at the previous month end (`previous`) and at this month end (`current`) count: from 0 to
 * more is **new**; up from more than 0 is **expansion** (the increase); down to more than 0 is **contraction**
 * (the decrease); from more than 0 to 0 is **churned** (all of `previous`). Always
 * current = previous + new + expansion - contraction - churned.
 *
 * Example: 0 -> 10,000 is new 10,000; 10,000 -> 25,000 expansion 15,000; 25,000 -> 20,000 contraction 5,000;
 * 20,000 -> 0 churned 20,000. services/revenue-analytics.ts computes the same in SQL (`MOVEMENTS`).
 */
export function mrrMovement(previous: Decimal, current: Decimal): MrrMovement {
  const zero = new Decimal(0);
  const movement: MrrMovement = { new: zero, expansion: zero, contraction: zero, churned: zero };
  if (previous.isZero() && current.greaterThan(0)) movement.new = current;
  else if (previous.greaterThan(0) && current.isZero()) movement.churned = previous;
  else if (current.greaterThan(previous)) movement.expansion = current.minus(previous);
  else if (current.lessThan(previous)) movement.contraction = previous.minus(current);
  return movement;
}

/**
 * What moves money, grouped by month (docs/analytics.md "Documents and money"): `month` and `dueMonth` are indexes
 * into the analysis' months (0 = the month before the first, and everything earlier; n = the n-th month), or null
 * (`dueMonth` of an invoice without a due date, of a payment not for an invoice). Amounts are decimal strings.
 */
export interface MoneyFlow {
  kind: "invoice" | "credit_note" | "debit_note" | "payment";
  month: number;
  dueMonth: number | null;
  /** true: a payment for an invoice (it lowers what is outstanding); false: a payment on account */
  forInvoice: boolean;
  /** the documents' totals, or the payments' amounts */
  total: string;
  /** the documents' tax (IVA); 0 for payments */
  tax: string;
}

/** One month's document and money figures (docs/analytics.md), decimal strings in the analysis' currency. */
export interface MonthlyMoney {
  invoiced: string;
  creditNotes: string;
  debitNotes: string;
  iva: string;
  collected: string;
  outstanding: string;
  overdue: string;
}

/**
 * The document and money figures of months 1..`count` from `flows`:
 * - invoiced, credit notes, debit notes: the totals of the finalized documents dated in the month;
 * - iva (débito fiscal): the tax of those invoices and debit notes less the tax of those credit notes;
 * - collected: the succeeded payments dated in the month (for an invoice or on account);
 * - outstanding at month end: the totals of the finalized invoices dated up to the month's last day, plus their
 *   debit notes, less their credit notes and their succeeded payments dated up to that day;
 * - overdue at month end: the part of outstanding on invoices due on or before the month's last day.
 * Every figure rounded to `currency`'s unit.
 */
export function monthlyFigures(flows: readonly MoneyFlow[], count: number, currency: CurrencyUnit): MonthlyMoney[] {
  const blank = () => Array.from({ length: count + 1 }, () => new Decimal(0));
  const dated = { invoice: blank(), credit_note: blank(), debit_note: blank(), payment: blank() };
  const iva = blank();
  const balance = blank(); // what the flows of month m add to (or take from) invoices' balances
  const dueBy = Array.from({ length: count + 1 }, blank); // dueBy[m][d]: the same, of invoices due in month d
  for (const flow of flows) {
    const total = toDecimal(flow.total);
    dated[flow.kind][flow.month] = dated[flow.kind][flow.month].plus(total);
    if (flow.kind !== "payment") {
      const tax = toDecimal(flow.tax);
      iva[flow.month] = flow.kind === "credit_note" ? iva[flow.month].minus(tax) : iva[flow.month].plus(tax);
    }
    if (flow.kind === "payment" && !flow.forInvoice) continue;
    const change = flow.kind === "invoice" || flow.kind === "debit_note" ? total : total.negated();
    balance[flow.month] = balance[flow.month].plus(change);
    if (flow.dueMonth !== null && flow.dueMonth <= count)
      dueBy[flow.month][flow.dueMonth] = dueBy[flow.month][flow.dueMonth].plus(change);
  }
  const round = (value: Decimal) => roundMoney(value, currency).toFixed();
  const figures: MonthlyMoney[] = [];
  let outstanding = balance[0];
  for (let m = 1; m <= count; m++) {
    outstanding = outstanding.plus(balance[m]);
    let overdue = new Decimal(0);
    for (let flowMonth = 0; flowMonth <= m; flowMonth++)
      for (let dueMonth = 0; dueMonth <= m; dueMonth++) overdue = overdue.plus(dueBy[flowMonth][dueMonth]);
    figures.push({
      invoiced: round(dated.invoice[m]),
      creditNotes: round(dated.credit_note[m]),
      debitNotes: round(dated.debit_note[m]),
      iva: round(iva[m]),
      collected: round(dated.payment[m]),
      outstanding: round(outstanding),
      overdue: round(overdue),
    });
  }
  return figures;
}
