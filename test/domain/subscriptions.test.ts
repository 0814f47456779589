/** Subscription line rules (src/domain/subscriptions.ts). */
import { describe, expect, it } from "vitest";
import { FieldErrorCollector } from "../../src/domain/errors.js";
import { checkSubscriptionPlans, type SubscriptionLinePlan } from "../../src/domain/subscriptions.js";
import { validationErrorOf } from "../helpers/errors.js";

const plan = (id: string, over: Partial<SubscriptionLinePlan> = {}): SubscriptionLinePlan => ({
  id,
  currencyId: "CLP",
  frequency: "monthly",
  status: "active",
  ...over,
});

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
    expect(
      fieldsOf([plan("pla_a"), plan("pla_b", { currencyId: "USD" }), plan("pla_c", { frequency: "yearly" })]),
    ).toEqual({
      "lines.1.plan": ["plan pla_b is in USD; every line must be in CLP like pla_a"],
      "lines.2.plan": ["plan pla_c bills yearly; every line must bill monthly like pla_a"],
    });
  });
  it("refuse archived plans and an empty subscription; unknown plans (null) are reported by the caller", () => {
    expect(fieldsOf([plan("pla_a", { status: "archived" })])).toEqual({
      "lines.0.plan": ["plan pla_a is archived; new subscriptions use active plans"],
    });
    expect(fieldsOf([])).toEqual({ lines: ["a subscription needs at least one line"] });
    expect(fieldsOf([null, plan("pla_b")])).toEqual({});
  });
});

import { InvalidStateError, ValidationError } from "../../src/domain/errors.js";
import {
  SUBSCRIPTION_MOVES,
  isBilledStatus,
  normalizeReason,
  pastDueMove,
  subscriptionEndDate,
  subscriptionTransition,
} from "../../src/domain/subscriptions.js";

describe("subscription status machine", () => {
  const allowed: [string, Parameters<typeof subscriptionTransition>[1], string][] = [
    ["active", "update", "active"],
    ["active", "cancel", "cancelled"],
    ["active", "cancel_at_period_end", "active"],
    ["active", "pause", "paused"],
    ["past_due", "update", "past_due"],
    ["past_due", "cancel", "cancelled"],
    ["past_due", "cancel_at_period_end", "past_due"],
    ["past_due", "pause", "paused"],
    ["paused", "update", "paused"],
    ["paused", "cancel", "cancelled"],
    ["paused", "cancel_at_period_end", "paused"],
    ["paused", "resume", "active"],
  ];
  it.each(allowed)("%s --%s--> %s", (status, action, next) => {
    expect(subscriptionTransition(status, action)).toBe(next);
  });

  const refused: [string, Parameters<typeof subscriptionTransition>[1]][] = [
    ["active", "resume"],
    ["past_due", "resume"],
    ["paused", "pause"],
    ["cancelled", "update"],
    ["cancelled", "cancel"],
    ["cancelled", "cancel_at_period_end"],
    ["cancelled", "pause"],
    ["cancelled", "resume"],
    ["unknown", "update"],
  ];
  it.each(refused)("%s refuses %s (409)", (status, action) => {
    expect(() => subscriptionTransition(status, action)).toThrow(InvalidStateError);
  });

  it("refuses scheduling the cancel at period end twice", () => {
    expect(() => subscriptionTransition("active", "cancel_at_period_end", true)).toThrow(/already set to cancel/);
    expect(subscriptionTransition("active", "cancel", true)).toBe("cancelled");
  });

  it("lists every move in one table (the tests above cover each entry)", () => {
    const moves = Object.entries(SUBSCRIPTION_MOVES).flatMap(([from, actions]) =>
      Object.entries(actions).map(([action, to]) => [from, action, to]),
    );
    expect(moves).toEqual(allowed);
  });
});

describe("subscription dates and reasons", () => {
  it("end_date is the start of cycle billing_cycles + 1; null cycles: no end", () => {
    expect(subscriptionEndDate("2026-01-31", "monthly", 1)).toBe("2026-02-28");
    expect(subscriptionEndDate("2026-11-22", "monthly", 12)).toBe("2027-11-22");
    expect(subscriptionEndDate("2026-11-22", "quarterly", 2)).toBe("2027-05-22");
    expect(subscriptionEndDate("2026-11-22", "weekly", 3)).toBe("2026-12-13");
    expect(subscriptionEndDate("2026-11-22", "yearly", null)).toBeNull();
  });
  it("reasons default, trim, and are at most 255 characters", () => {
    expect(normalizeReason(undefined, "cancel_reason", "requested_by_customer")).toBe("requested_by_customer");
    expect(normalizeReason("  no_card ", "cancel_reason", "x")).toBe("no_card");
    expect(normalizeReason("", "reason", null)).toBeNull();
    expect(() => normalizeReason("x".repeat(256), "cancel_reason", null)).toThrow(ValidationError);
  });
});

describe('past due (docs/dunning.md "Past-due subscriptions", the worked example)', () => {
  it("active becomes past_due when its latest cycle invoice is owed, and active again when it is settled", () => {
    expect(pastDueMove("active", true)).toBe("past_due");
    expect(pastDueMove("past_due", false)).toBe("active");
  });
  it("nothing else moves: past_due stays while owed, active stays when paid, paused and cancelled keep theirs", () => {
    expect(pastDueMove("past_due", true)).toBeNull();
    expect(pastDueMove("active", false)).toBeNull();
    for (const status of ["paused", "cancelled"]) {
      expect(pastDueMove(status, true)).toBeNull();
      expect(pastDueMove(status, false)).toBeNull();
    }
  });
  it("the billing run renews active and past-due subscriptions only", () => {
    expect(["active", "past_due", "paused", "cancelled"].filter(isBilledStatus)).toEqual(["active", "past_due"]);
  });
});
