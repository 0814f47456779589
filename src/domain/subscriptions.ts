/**
 * Subscription rules that need no database (docs/subscriptions.md): the lines of a subscription
 * share one currency and one frequency, and use active plans. Field paths `lines.N.plan`.
 */
import { FieldErrorCollector, InvalidStateError, ValidationError } from "./errors.js";
import { cycleStart } from "./billing-periods.js";
import type { Frequency } from "./catalogue.js";

export interface SubscriptionLinePlan {
  /** `pla_` id */
  id: string;
  currencyId: string;
  frequency: string;
  /** `active`, or `archived` (the plan or its product was archived) */
  status: string;
}

/**
 * Checks the plans of a subscription's lines: at least one line; every plan active; every plan
 * in the first line's currency and frequency. Adds errors to `errors` (400 when thrown).
 */
export function checkSubscriptionPlans(
  plans: readonly (SubscriptionLinePlan | null)[],
  errors: FieldErrorCollector,
): void {
  if (plans.length === 0) {
    errors.add("lines", "a subscription needs at least one line");
    return;
  }
  const first = plans.find((p): p is SubscriptionLinePlan => p !== null);
  plans.forEach((plan, i) => {
    if (!plan || !first) return;
    if (plan.status !== "active")
      errors.add(`lines.${i}.plan`, `plan ${plan.id} is ${plan.status}; new subscriptions use active plans`);
    if (plan.currencyId !== first.currencyId)
      errors.add(
        `lines.${i}.plan`,
        `plan ${plan.id} is in ${plan.currencyId}; every line must be in ${first.currencyId} like ${first.id}`,
      );
    if (plan.frequency !== first.frequency)
      errors.add(
        `lines.${i}.plan`,
        `plan ${plan.id} bills ${plan.frequency}; every line must bill ${first.frequency} like ${first.id}`,
      );
  });
}

// ---------------------------------------------------------------------------------------------
// Status machine and dates (docs/subscriptions.md)

/**
 * `active` (billed every cycle), `past_due` (billed every cycle, its latest cycle invoice overdue or its renewal
 * charge declined: docs/dunning.md "Past-due subscriptions"), `paused` (not billed until resumed), `cancelled`
 * (final).
 */
export const SUBSCRIPTION_STATUSES = ["active", "past_due", "paused", "cancelled"] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** The statuses the billing run renews: `active` and `past_due` (a past-due subscription keeps its cycles). */
export const BILLED_STATUSES: readonly string[] = ["active", "past_due"];

/** Whether the billing run renews a subscription in `status` (BILLED_STATUSES). */
export function isBilledStatus(status: string): boolean {
  return BILLED_STATUSES.includes(status);
}

/**
 * The status a subscription in `status` moves to when its latest cycle invoice's payment state changes
 * (docs/dunning.md "Past-due subscriptions"), or null when it stays: `owing` is true when that invoice became
 * overdue (the overdue sweep) or its renewal charge was declined, false when it was paid (nothing left due) or
 * marked uncollectible. Only `active` becomes `past_due` and only `past_due` becomes `active`: a paused or
 * cancelled subscription keeps its status.
 *
 * Worked example: a monthly subscription renews on 2026-03-01, its card declines: `active` -> `past_due`. The
 * customer pays the invoice in the portal on 2026-03-04: `past_due` -> `active`. Its 2026-04-01 invoice is paid
 * by card: it stays `active`.
 */
export function pastDueMove(status: string, owing: boolean): SubscriptionStatus | null {
  if (owing && status === "active") return "past_due";
  if (!owing && status === "past_due") return "active";
  return null;
}

/** What can be done to a subscription. `cancel_at_period_end` schedules the end; the billing run ends it. */
export type SubscriptionAction = "update" | "cancel" | "cancel_at_period_end" | "pause" | "resume";

/**
 * The moves: status x action -> next status. A missing entry is a 409 (`invalid_state`).
 * Cancelled is final: no update, pause, resume or second cancel.
 */
export const SUBSCRIPTION_MOVES: Record<SubscriptionStatus, Partial<Record<SubscriptionAction, SubscriptionStatus>>> = {
  active: { update: "active", cancel: "cancelled", cancel_at_period_end: "active", pause: "paused" },
  past_due: { update: "past_due", cancel: "cancelled", cancel_at_period_end: "past_due", pause: "paused" },
  paused: { update: "paused", cancel: "cancelled", cancel_at_period_end: "paused", resume: "active" },
  cancelled: {},
};

const ACTION_WORDS: Record<SubscriptionAction, string> = {
  update: "updated",
  cancel: "cancelled",
  cancel_at_period_end: "cancelled at period end",
  pause: "paused",
  resume: "resumed",
};

/**
 * The status after `action` on a subscription in `status` (and with `cancelAtPeriodEnd` already
 * scheduled or not); InvalidStateError (409) when the move is not allowed.
 */
export function subscriptionTransition(
  status: string,
  action: SubscriptionAction,
  cancelAtPeriodEnd = false,
): SubscriptionStatus {
  const next = SUBSCRIPTION_MOVES[status as SubscriptionStatus]?.[action];
  if (!next) throw new InvalidStateError(`A ${status} subscription cannot be ${ACTION_WORDS[action]}`);
  if (action === "cancel_at_period_end" && cancelAtPeriodEnd)
    throw new InvalidStateError("The subscription is already set to cancel at the end of its period");
  return next;
}

/** Default `cancel_reason`. Any text of 1 to 255 characters is accepted (e.g. `no_card`). */
export const DEFAULT_CANCEL_REASON = "requested_by_customer";
export const MAX_REASON_LENGTH = 255;

/** The cancel or pause reason to store: default when absent, 400 on `field` when too long. */
export function normalizeReason(
  reason: string | null | undefined,
  field: string,
  fallback: string | null,
): string | null {
  const value = reason === undefined || reason === null || reason.trim() === "" ? fallback : reason.trim();
  if (value && value.length > MAX_REASON_LENGTH)
    throw ValidationError.field(field, `must have at most ${MAX_REASON_LENGTH} characters`);
  return value;
}

/**
 * `end_date` of a subscription of `billingCycles` cycles started on `dateStart`: the start of cycle
 * `billingCycles + 1` (the day after the last billed cycle ends). Null: runs until cancelled.
 */
export function subscriptionEndDate(
  dateStart: string,
  frequency: Frequency,
  billingCycles: number | null,
): string | null {
  return billingCycles === null ? null : cycleStart(dateStart, frequency, billingCycles + 1);
}
