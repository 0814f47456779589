/** Subscription line rules (src/domain/subscriptions.ts). */
import { describe, expect, it } from "vitest";
import { FieldErrorCollector } from "../../src/domain/errors.js";
import { checkSubscriptionPlans, type SubscriptionLinePlan } from "../../src/domain/subscriptions.js";
import { validationErrorOf } from "../helpers/errors.js";

const plan = (id: string, over: Partial<SubscriptionLinePlan> = {}): SubscriptionLinePlan => ({ id, currencyId: "CLP", frequency: "monthly", status: "active", ...over });

function fieldsOf(plans: (SubscriptionLinePlan | null)[]) {
  const errors = new FieldErrorCollector();
  checkSubscriptionPlans(plans, errors);
  return errors.empty ? {} : validationErrorOf(() => errors.throwIfAny()).fields;
}

describe("subscription lines", () => {
  it("accept plans of one currency and frequency", () => {
    expect(fieldsOf([plan("pla_a"), plan("pla_b")])).toEqual({});
  });
  it("refuse mixed currencies and frequencies, naming the line", () => {
    expect(fieldsOf([plan("pla_a"), plan("pla_b", { currencyId: "USD" }), plan("pla_c", { frequency: "yearly" })])).toEqual({
      "lines.1.plan": ["plan pla_b is in USD; every line must be in CLP like pla_a"],
      "lines.2.plan": ["plan pla_c bills yearly; every line must bill monthly like pla_a"],
    });
  });
  it("refuse archived plans and an empty subscription; unknown plans (null) are reported by the caller", () => {
    expect(fieldsOf([plan("pla_a", { status: "archived" })])).toEqual({ "lines.0.plan": ["plan pla_a is archived; new subscriptions use active plans"] });
    expect(fieldsOf([])).toEqual({ lines: ["a subscription needs at least one line"] });
    expect(fieldsOf([null, plan("pla_b")])).toEqual({});
  });
});
