/** The checks of a dunning campaign's fields (src/domain/dunning.ts), with docs/dunning.md's worked examples. */
import { describe, expect, it } from "vitest";
import { FieldErrorCollector } from "../../src/domain/errors.js";
import {
  campaignCodeProblem,
  checkBccEmails,
  checkThresholds,
  checkWholeInRange,
  DAYS_BETWEEN_ATTEMPTS,
  FINAL_ACTIONS,
  MAX_ATTEMPTS,
  MAX_BCC_EMAILS,
  type ResolvedThreshold,
  isPaymentOverdue,
  thresholdReached,
  nextAttemptAt,
  attemptOutcome,
  runAfterAttempt,
  finalActionTargets,
  type FinalActionInvoice,
} from "../../src/domain/dunning.js";
import { Decimal } from "../../src/domain/money.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };
const CLF = { id: "CLF", rounded: false, decimals: 4 };

const collected = (check: (errors: FieldErrorCollector) => void) => {
  const errors = new FieldErrorCollector();
  check(errors);
  return errors.collected();
};

const threshold = (currency: ResolvedThreshold["currency"], amount: string | null): ResolvedThreshold => ({
  currency,
  amount: amount === null ? null : new Decimal(amount),
});

describe("thresholds", () => {
  it("the worked example: CLP 50000 and USD 60.50 are valid", () => {
    expect(collected((e) => checkThresholds(e, [threshold(CLP, "50000"), threshold(USD, "60.50")]))).toEqual({});
  });

  it("an amount must be in its currency's unit: CLP whole, USD cents, CLF four decimals", () => {
    expect(collected((e) => checkThresholds(e, [threshold(CLP, "100.5")]))).toEqual({
      "thresholds.0.amount": ["must be in the unit of CLP"],
    });
    expect(collected((e) => checkThresholds(e, [threshold(USD, "0.001")]))).toEqual({
      "thresholds.0.amount": ["must be in the unit of USD"],
    });
    expect(collected((e) => checkThresholds(e, [threshold(CLF, "1.2345")]))).toEqual({});
    // 0: any overdue amount starts the campaign
    expect(collected((e) => checkThresholds(e, [threshold(CLP, "0")]))).toEqual({});
  });

  it("one threshold per currency: the second is refused on its currency", () => {
    expect(
      collected((e) => checkThresholds(e, [threshold(CLP, "1"), threshold(USD, "1"), threshold(CLP, "2")])),
    ).toEqual({ "thresholds.2.currency": ["CLP has a threshold already"] });
  });

  it("at least one; an unresolved currency or amount (reported by the service) adds nothing", () => {
    expect(Object.keys(collected((e) => checkThresholds(e, [])))).toEqual(["thresholds"]);
    expect(collected((e) => checkThresholds(e, [threshold(null, "1"), threshold(CLP, null)]))).toEqual({});
  });
});

describe("schedule", () => {
  it("days between attempts 1-60 and attempts 1-20, whole numbers, required", () => {
    const check = (value: number | null, range: { min: number; max: number }) =>
      collected((e) => checkWholeInRange(e, "f", value, range)).f ?? [];
    for (const ok of [1, 30, 60]) expect(check(ok, DAYS_BETWEEN_ATTEMPTS)).toEqual([]);
    for (const bad of [0, 61, -3, 2.5])
      expect(check(bad, DAYS_BETWEEN_ATTEMPTS)).toEqual(["must be a whole number from 1 to 60"]);
    for (const ok of [1, 8, 20]) expect(check(ok, MAX_ATTEMPTS)).toEqual([]);
    for (const bad of [0, 21]) expect(check(bad, MAX_ATTEMPTS)).toEqual(["must be a whole number from 1 to 20"]);
    expect(check(null, MAX_ATTEMPTS)).toEqual(["is required"]);
  });
});

describe("codes, e-mails, final actions", () => {
  it("a code: a letter or digit first, then letters, digits, _ - and ., at most 100 characters", () => {
    for (const ok of ["default", "B2B.default", "2026-q1_retry", "x".repeat(100)])
      expect(campaignCodeProblem(ok)).toBeNull();
    for (const bad of ["-lead", "with space", "ñandú", "a/b", "x".repeat(101)])
      expect(campaignCodeProblem(bad)).not.toBeNull();
  });

  it("bcc e-mails: each an address, at most ten", () => {
    expect(collected((e) => checkBccEmails(e, ["a@acme.cl", "b@acme.cl"]))).toEqual({});
    expect(collected((e) => checkBccEmails(e, ["a@acme.cl", "not an address"]))).toEqual({
      "bcc_emails.1": ["must be an e-mail address"],
    });
    const many = Array.from({ length: MAX_BCC_EMAILS + 1 }, (_, i) => `u${i}@acme.cl`);
    expect(Object.keys(collected((e) => checkBccEmails(e, many)))).toEqual(["bcc_emails"]);
  });

  it("the final actions the issue names, in its order", () => {
    expect(FINAL_ACTIONS).toEqual(["none", "pause_subscriptions", "cancel_subscriptions", "mark_uncollectible"]);
  });
});

describe('isPaymentOverdue (docs/dunning.md "Overdue invoices", the worked example)', () => {
  it("is overdue while something is due and the invoice was not written off", () => {
    expect(isPaymentOverdue(new Decimal(2916), false)).toBe(true);
    expect(isPaymentOverdue(new Decimal(1916), false)).toBe(true);
    expect(isPaymentOverdue(new Decimal("0.01"), false)).toBe(true);
    expect(isPaymentOverdue(new Decimal(0), false)).toBe(false);
    expect(isPaymentOverdue(new Decimal(1916), true)).toBe(false);
    expect(isPaymentOverdue(new Decimal(0), true)).toBe(false);
  });
});

describe('dunning attempts (docs/dunning.md "Attempts")', () => {
  it("thresholdReached: something overdue reaching the currency's threshold", () => {
    expect(thresholdReached(new Decimal(11900), new Decimal(0))).toBe(true);
    expect(thresholdReached(new Decimal(11900), new Decimal(50000))).toBe(false);
    expect(thresholdReached(new Decimal(50000), new Decimal(50000))).toBe(true);
    expect(thresholdReached(new Decimal(0), new Decimal(0))).toBe(false);
    expect(thresholdReached(new Decimal(11900), null)).toBe(false);
  });

  it("nextAttemptAt: days of 24 hours after the attempt", () => {
    const first = new Date("2026-03-02T12:00:00Z");
    const second = nextAttemptAt(first, 3);
    expect(second.toISOString()).toBe("2026-03-05T12:00:00.000Z");
    expect(nextAttemptAt(second, 3).toISOString()).toBe("2026-03-08T12:00:00.000Z");
  });

  it("attemptOutcome and runAfterAttempt", () => {
    expect(attemptOutcome(new Decimal(0))).toBe("paid");
    expect(attemptOutcome(new Decimal(11900))).toBe("unpaid");
    expect(runAfterAttempt(1, 3, "unpaid")).toBe("active");
    expect(runAfterAttempt(2, 3, "paid")).toBe("paid");
    expect(runAfterAttempt(3, 3, "unpaid")).toBe("finished");
    expect(runAfterAttempt(3, 3, "paid")).toBe("paid");
  });

  it("finalActionTargets: what is still unpaid, each once", () => {
    const a: FinalActionInvoice = {
      id: "inv_A",
      due: "11900",
      markedUncollectible: false,
      subscriptionId: "sub_S",
      subscriptionStatus: "active",
    };
    const b: FinalActionInvoice = { ...a, id: "inv_B", due: "0", subscriptionId: "sub_T" };
    const a2: FinalActionInvoice = { ...a, id: "inv_A2" };
    expect(finalActionTargets("cancel_subscriptions", [a, b, a2])).toEqual({ subscriptions: ["sub_S"], invoices: [] });
    expect(finalActionTargets("pause_subscriptions", [a, b])).toEqual({ subscriptions: ["sub_S"], invoices: [] });
    expect(finalActionTargets("mark_uncollectible", [a, b, a2])).toEqual({
      subscriptions: [],
      invoices: ["inv_A", "inv_A2"],
    });
    expect(finalActionTargets("none", [a, b])).toEqual({ subscriptions: [], invoices: [] });
    const paused = { ...a, subscriptionStatus: "paused" };
    expect(finalActionTargets("pause_subscriptions", [paused]).subscriptions).toEqual([]);
    expect(finalActionTargets("cancel_subscriptions", [paused]).subscriptions).toEqual(["sub_S"]);
    const cancelled = { ...a, subscriptionStatus: "cancelled" };
    expect(finalActionTargets("cancel_subscriptions", [cancelled]).subscriptions).toEqual([]);
    expect(finalActionTargets("mark_uncollectible", [{ ...a, markedUncollectible: true }]).invoices).toEqual([]);
  });
});
