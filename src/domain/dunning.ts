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
import { roundMoney, type CurrencyUnit, type Decimal } from "./money.js";

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
