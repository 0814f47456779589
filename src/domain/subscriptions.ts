/**
 * Subscription rules that need no database (issue "Subscriptions"): the lines of a subscription
 * share one currency and one frequency, and use active plans. Field paths `lines.N.plan`.
 */
import { FieldErrorCollector } from "./errors.js";

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
export function checkSubscriptionPlans(plans: readonly (SubscriptionLinePlan | null)[], errors: FieldErrorCollector): void {
  if (plans.length === 0) {
    errors.add("lines", "a subscription needs at least one line");
    return;
  }
  const first = plans.find((p): p is SubscriptionLinePlan => p !== null);
  plans.forEach((plan, i) => {
    if (!plan || !first) return;
    if (plan.status !== "active") errors.add(`lines.${i}.plan`, `plan ${plan.id} is ${plan.status}; new subscriptions use active plans`);
    if (plan.currencyId !== first.currencyId) errors.add(`lines.${i}.plan`, `plan ${plan.id} is in ${plan.currencyId}; every line must be in ${first.currencyId} like ${first.id}`);
    if (plan.frequency !== first.frequency) errors.add(`lines.${i}.plan`, `plan ${plan.id} bills ${plan.frequency}; every line must bill ${first.frequency} like ${first.id}`);
  });
}
