/**
 * Dunning campaigns (docs/dunning.md): the checks of a campaign's fields. Pure; services/dunning-campaigns.ts
 * looks up currencies and the organization's other campaigns and writes the rows.
 *
 * - `code`: 1-100 characters, a letter or digit first, then letters, digits, `_`, `-` or `.`; unique per
 *   organization and mode (checked by the service).
 * - `thresholds`: at least one `{currency, amount}`, one per currency; the amount not negative and in the
 *   currency's unit (CLP whole, USD cents). The campaign acts on a customer once their overdue amount in that
 *   currency reaches it (0: any overdue amount); a currency without a threshold is not dunned by the campaign.
 * - `days_between_attempts` 1-60, `max_attempts` 1-20 (whole numbers).
 * - `final_action`: one of FINAL_ACTIONS.
 * - `bcc_emails`: at most MAX_BCC_EMAILS e-mail addresses.
 *
 * Worked example: thresholds `[{currency: "CLP", amount: "50000"}, {currency: "USD", amount: "60.50"}]`,
 * 3 days between attempts, 5 attempts: valid. `[{currency: "CLP", amount: "100.5"}]` is refused on
 * `thresholds.0.amount` (CLP has no decimals); two CLP thresholds on `thresholds.1.currency`.
 */
import { isEmailAddress } from "./formats.js";
import type { FieldErrorCollector } from "./errors.js";
import { roundMoney, toDecimal, type CurrencyUnit, type Decimal } from "./money.js";

/** What happens after a customer's last attempt when invoices are still unpaid (issue 33, docs/dunning.md). */
export const FINAL_ACTIONS = ["none", "pause_subscriptions", "cancel_subscriptions", "mark_uncollectible"] as const;
export type FinalAction = (typeof FINAL_ACTIONS)[number];

/** The range of `days_between_attempts`. */
export const DAYS_BETWEEN_ATTEMPTS = { min: 1, max: 60 } as const;
/** The range of `max_attempts`. */
export const MAX_ATTEMPTS = { min: 1, max: 20 } as const;
/** Most `bcc_emails` of one campaign. */
export const MAX_BCC_EMAILS = 10;
/** Most thresholds of one campaign (one per currency). */
export const MAX_THRESHOLDS = 50;
/** Longest `code`. */
export const CODE_MAX_LENGTH = 100;

const CODE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Why `code` is not a campaign code, or null. */
export function campaignCodeProblem(code: string): string | null {
  if (code.length > CODE_MAX_LENGTH) return `must have at most ${CODE_MAX_LENGTH} characters`;
  if (!CODE.test(code)) return "must start with a letter or digit and hold only letters, digits, _, - and .";
  return null;
}

/** Adds an error on `path` unless `value` is a whole number within `range`. */
export function checkWholeInRange(
  errors: FieldErrorCollector,
  path: string,
  value: number | null,
  range: { min: number; max: number },
): void {
  if (value === null) errors.add(path, "is required");
  else if (!Number.isInteger(value) || value < range.min || value > range.max)
    errors.add(path, `must be a whole number from ${range.min} to ${range.max}`);
}

/** Adds an error on `bcc_emails` (or one of its items) for more than MAX_BCC_EMAILS or an address that is none. */
export function checkBccEmails(errors: FieldErrorCollector, emails: readonly string[]): void {
  if (emails.length > MAX_BCC_EMAILS) errors.add("bcc_emails", `at most ${MAX_BCC_EMAILS} addresses`);
  emails.forEach((email, i) => {
    if (!isEmailAddress(email)) errors.add(`bcc_emails.${i}`, "must be an e-mail address");
  });
}

/** A threshold as the service resolved it: its currency (null when unknown: already reported) and its amount. */
export interface ResolvedThreshold {
  currency: CurrencyUnit | null;
  /** null when the amount was missing or no decimal (already reported) */
  amount: Decimal | null;
}

/**
 * Adds the errors of a campaign's thresholds beyond each field's own form: none at all, too many, a currency
 * given twice (on the second), an amount not in its currency's unit.
 */
export function checkThresholds(errors: FieldErrorCollector, thresholds: readonly ResolvedThreshold[]): void {
  if (thresholds.length === 0)
    errors.add("thresholds", "needs at least one {currency, amount}: the campaign acts on no other currency");
  if (thresholds.length > MAX_THRESHOLDS) errors.add("thresholds", `at most ${MAX_THRESHOLDS} (one per currency)`);
  const seen = new Set<string>();
  thresholds.forEach(({ currency, amount }, i) => {
    if (!currency) return;
    if (seen.has(currency.id)) errors.add(`thresholds.${i}.currency`, `${currency.id} has a threshold already`);
    seen.add(currency.id);
    if (amount && !roundMoney(amount, currency).eq(amount))
      errors.add(`thresholds.${i}.amount`, `must be in the unit of ${currency.id}`);
  });
}

/**
 * Whether a finalized invoice whose due date has passed is **overdue** (docs/dunning.md "Overdue invoices"):
 * something is still due (`amountDue`, in the invoice's currency, from services/invoice-balances.ts) and it was
 * not marked uncollectible (`markedUncollectible`; the organization wrote it off). The date rule (the due date
 * is before today, in the organization's time zone or the customer's test clock) is the caller's: the sweep
 * asks only about invoices past their due date.
 *
 * Worked example (CLP, total 2916, due 2026-12-10; the sweep of 2026-12-11): nothing paid, `amountDue` 2916:
 * overdue. 1000 paid, `amountDue` 1916: overdue. 2916 paid (or credited), `amountDue` 0: not overdue. Marked
 * uncollectible with 1916 due: not overdue.
 */
export function isPaymentOverdue(amountDue: Decimal, markedUncollectible: boolean): boolean {
  return amountDue.greaterThan(0) && !markedUncollectible;
}

/** A dunning run's status (docs/dunning.md "Attempts"): attempting, ended with nothing due, ended after the last. */
export type DunningRunStatus = "active" | "paid" | "finished";
/** What was still due after an attempt on its invoices: nothing (`paid`) or something (`unpaid`). */
export type AttemptOutcome = "paid" | "unpaid";
/** What an attempt did with the card for one invoice. */
export type AttemptCharge = "succeeded" | "declined" | "not_attempted";

/**
 * One invoice of an attempt, as stored in `DunningAttempt.invoices` and printed (REST `invoices`): the invoice,
 * what was due on it when the attempt began, the attempt's payment of it and how its charge went.
 */
export interface AttemptInvoice {
  invoice: string;
  /** decimal text in the currency's unit, before the attempt's charge */
  amount_due: string;
  payment: string | null;
  charge: AttemptCharge;
  failure_code: string | null;
  decline_kind: "hard" | "soft" | null;
}

/**
 * Whether a customer's overdue amount in a currency (`overdue`: the sum of `amount_due` of their overdue
 * invoices in it) makes their campaign act (docs/dunning.md "Attempts"): something is overdue and it reaches
 * the campaign's threshold in that currency; `threshold` null (the campaign has none in that currency): never.
 * services/dunning-attempts.ts `enterRuns` checks the same rule in its SQL (a customer whose campaign has no
 * threshold in the currency is not joined at all): a change here is a change there.
 *
 * Worked example (CLP): overdue 11900, threshold 0: yes. 11900 and 50000: no. 50000 and 50000: yes. 0 and 0:
 * no (nothing is overdue). 11900 and no CLP threshold (null): no.
 */
export function thresholdReached(overdue: Decimal, threshold: Decimal | null): boolean {
  return threshold !== null && overdue.greaterThan(0) && overdue.greaterThanOrEqualTo(threshold);
}

/** Milliseconds in a day: attempts are `days_between_attempts` whole days of 24 hours apart. */
const DAY_MS = 86_400_000;

/**
 * When a run's next attempt is due: `daysBetween` days of 24 hours after the attempt made at `attemptAt` (the
 * customer's time then: its test clock's, else the wall clock).
 *
 * Worked example: an attempt at 2026-03-02T12:00:00Z, 3 days between attempts: the next is due at
 * 2026-03-05T12:00:00Z, then (made then) 2026-03-08T12:00:00Z.
 */
export function nextAttemptAt(attemptAt: Date, daysBetween: number): Date {
  return new Date(attemptAt.getTime() + daysBetween * DAY_MS);
}

/**
 * An attempt's outcome from what is still due on its invoices after it (`amountDue`, their sum): `paid` when
 * nothing is, else `unpaid`.
 *
 * Worked example (CLP): 0 left: `paid`. 11900 left: `unpaid`.
 */
export function attemptOutcome(amountDue: Decimal): AttemptOutcome {
  return amountDue.greaterThan(0) ? "unpaid" : "paid";
}

/**
 * How a run stands after attempt `number` of a campaign of `maxAttempts` with `outcome`: `paid` (it ends, nothing
 * left due), `finished` (the last attempt was made with something due: the final action applies), or `active`
 * (another attempt follows).
 *
 * Worked example (max 3): attempt 1 unpaid: `active`; attempt 2 paid: `paid`; attempt 3 unpaid: `finished`;
 * attempt 3 paid: `paid`.
 */
export function runAfterAttempt(number: number, maxAttempts: number, outcome: AttemptOutcome): DunningRunStatus {
  if (outcome === "paid") return "paid";
  return number >= maxAttempts ? "finished" : "active";
}

/** An invoice of the last attempt as the final action sees it after the attempt. */
export interface FinalActionInvoice {
  id: string;
  /** decimal text: what is still due on it */
  due: string;
  markedUncollectible: boolean;
  /** its subscription (null: not a subscription's invoice) and that subscription's status now */
  subscriptionId: string | null;
  subscriptionStatus: string | null;
}

/**
 * What a campaign's `final_action` applies to after the last attempt, of that attempt's invoices still unpaid
 * (something due): `pause_subscriptions` their subscriptions that can be paused (`active`, `past_due`),
 * `cancel_subscriptions` those not cancelled yet (`active`, `past_due`, `paused`), `mark_uncollectible` the
 * invoices not marked yet; `none` nothing. Each id once, in the order of the invoices.
 *
 * Worked example: invoices A (due 11900, subscription S active) and B (due 0, subscription T active):
 * `cancel_subscriptions` applies to [S]; `mark_uncollectible` to invoices [A]; `pause_subscriptions` to [S]; with
 * S already paused, `pause_subscriptions` applies to [] and `cancel_subscriptions` to [S].
 */
export function finalActionTargets(
  action: FinalAction,
  invoices: readonly FinalActionInvoice[],
): { subscriptions: string[]; invoices: string[] } {
  const unpaid = invoices.filter((i) => toDecimal(i.due).greaterThan(0));
  if (action === "mark_uncollectible")
    return { subscriptions: [], invoices: unpaid.filter((i) => !i.markedUncollectible).map((i) => i.id) };
  if (action === "none") return { subscriptions: [], invoices: [] };
  const allowed = action === "pause_subscriptions" ? ["active", "past_due"] : ["active", "past_due", "paused"];
  const subscriptions: string[] = [];
  for (const i of unpaid)
    if (i.subscriptionId && allowed.includes(i.subscriptionStatus ?? "") && !subscriptions.includes(i.subscriptionId))
      subscriptions.push(i.subscriptionId);
  return { subscriptions, invoices: [] };
}
