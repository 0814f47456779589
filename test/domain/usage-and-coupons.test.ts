/** Usage aggregation (src/domain/usage.ts) and coupon rules (src/domain/coupons.ts). */
import { describe, expect, it } from "vitest";
import { aggregateUsage, checkUsage, type UsageRecord } from "../../src/domain/usage.js";
import { FieldErrorCollector, InvalidStateError } from "../../src/domain/errors.js";
import { assertCouponAttachable, couponApplies, couponDiscounts, type CouponTerms } from "../../src/domain/coupons.js";
import { computeDocumentTotals } from "../../src/domain/totals.js";
import { validationErrorOf } from "../helpers/errors.js";

const at = (iso: string) => new Date(iso);
const november = { start: at("2026-11-01T03:00:00Z"), end: at("2026-12-01T03:00:00Z") };
const records: UsageRecord[] = [
  { quantity: 7, dateTime: at("2026-10-20T12:00:00Z") }, // before the period
  { quantity: 3, dateTime: at("2026-11-02T10:00:00Z") },
  { quantity: "10.5", dateTime: at("2026-11-15T10:00:00Z") },
  { quantity: 4, dateTime: at("2026-11-30T10:00:00Z") },
  { quantity: 100, dateTime: at("2026-12-01T03:00:00Z") }, // at the end: next period
];

describe("usage aggregation", () => {
  it("worked examples on one month of records", () => {
    expect(aggregateUsage(records, "sum", november).toString()).toBe("17.5");
    expect(aggregateUsage(records, "max", november).toString()).toBe("10.5");
    expect(aggregateUsage(records, "last_during_period", november).toString()).toBe("4");
    expect(aggregateUsage(records, "last_ever", november).toString()).toBe("4");
  });

  it("an empty period: 0, except last_ever, which carries the last earlier record", () => {
    const december = { start: at("2026-12-01T03:00:00Z"), end: at("2027-01-01T03:00:00Z") };
    const early = records.slice(0, 4);
    expect(aggregateUsage(early, "sum", december).toString()).toBe("0");
    expect(aggregateUsage(early, "max", december).toString()).toBe("0");
    expect(aggregateUsage(early, "last_during_period", december).toString()).toBe("0");
    expect(aggregateUsage(early, "last_ever", december).toString()).toBe("4");
    expect(aggregateUsage([], "last_ever", december).toString()).toBe("0");
  });

  it("on equal times the later record wins", () => {
    const same = [
      { quantity: 1, dateTime: at("2026-11-05T00:00:00Z") },
      { quantity: 2, dateTime: at("2026-11-05T00:00:00Z") },
    ];
    expect(aggregateUsage(same, "last_during_period", november).toString()).toBe("2");
  });
});

const coupon = (terms: Partial<CouponTerms>): CouponTerms => ({
  discountScheme: "%",
  amount: 10,
  durationScheme: "once",
  durationTimes: null,
  applyOn: "invoice",
  validUntil: null,
  ...terms,
});

describe("coupons", () => {
  it("duration: once applies to the first invoice, limited to N, forever always", () => {
    expect([0, 1].map((n) => couponApplies(coupon({ durationScheme: "once" }), n))).toEqual([true, false]);
    expect([0, 1, 2, 3].map((n) => couponApplies(coupon({ durationScheme: "limited", durationTimes: 3 }), n))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(couponApplies(coupon({ durationScheme: "forever" }), 1000)).toBe(true);
  });

  it("cannot be attached after valid_until (400 on coupon)", () => {
    const expired = coupon({ validUntil: at("2026-11-01T00:00:00Z") });
    expect(validationErrorOf(() => assertCouponAttachable(expired, at("2026-11-22T00:00:00Z"))).fields).toEqual({
      coupon: ["the coupon expired on 2026-11-01T00:00:00.000Z"],
    });
    expect(() => assertCouponAttachable(expired, at("2026-10-31T00:00:00Z"))).not.toThrow();
  });

  it("apply_on invoice: the invoice's document discount; totals take it from there", () => {
    const { document, lines } = couponDiscounts(coupon({ amount: 10 }), [{ gross: 20000 }, { gross: 5000 }]);
    expect(document).toEqual({ discount: "10", discountScheme: "%" });
    expect(lines).toEqual([
      { discount: "0", discountScheme: "%" },
      { discount: "0", discountScheme: "%" },
    ]);
    const totals = computeDocumentTotals({
      lines: [
        { quantity: 1, amount: 20000 },
        { quantity: 1, amount: 5000 },
      ],
      discount: document!.discount,
      discountScheme: document!.discountScheme,
      taxPercent: 19,
      hasTaxes: true,
      pricesIncludeTax: false,
      currency: { id: "CLP", rounded: true, decimals: 0 },
    });
    expect([totals.amount.toString(), totals.tax.toString(), totals.total.toString()]).toEqual([
      "22500",
      "4275",
      "26775",
    ]);
  });

  it("apply_on line with $: each line discounted, capped at the line", () => {
    const { document, lines } = couponDiscounts(coupon({ applyOn: "line", discountScheme: "$", amount: 3000 }), [
      { gross: 20000 },
      { gross: 2000 },
    ]);
    expect(document).toBeNull();
    expect(lines).toEqual([
      { discount: "3000", discountScheme: "$" },
      { discount: "2000", discountScheme: "$" },
    ]);
  });
});

describe("a new usage record", () => {
  const now = at("2026-11-22T12:00:00Z");
  const metered = { usageScheme: "metered", subscriptionStatus: "active" };
  const check =
    (quantity: string | null, dateTime: Date, line: typeof metered | null = metered) =>
    () =>
      checkUsage({ quantity, dateTime }, line, now, new FieldErrorCollector());

  it("accepts a metered line, quantity 0 or more, up to a day ahead", () => {
    expect(check("0", now)).not.toThrow();
    expect(check("3.5", at("2026-11-23T12:00:00Z"))).not.toThrow();
  });
  it("refuses a licensed line, a negative or missing quantity, a date over a day ahead (400)", () => {
    expect(validationErrorOf(check("1", now, { ...metered, usageScheme: "licensed" })).fields).toHaveProperty(
      "subscription_line",
    );
    expect(validationErrorOf(check("-1", now)).fields).toEqual({ quantity: ["must not be negative"] });
    expect(validationErrorOf(check(null, now)).fields).toEqual({ quantity: ["is required"] });
    expect(validationErrorOf(check("1", at("2026-11-23T12:00:01Z"))).fields).toEqual({
      date_time: ["must not be more than a day in the future"],
    });
  });
  it("refuses usage on a cancelled subscription (409)", () => {
    expect(check("1", now, { ...metered, subscriptionStatus: "cancelled" })).toThrow(InvalidStateError);
  });
});

import { zonedMidnight } from "../../src/domain/formats.js";

describe("zonedMidnight", () => {
  it("is the instant a calendar day starts in a time zone", () => {
    expect(zonedMidnight("2026-11-01", "America/Santiago").toISOString()).toBe("2026-11-01T03:00:00.000Z");
    expect(zonedMidnight("2026-07-01", "America/Santiago").toISOString()).toBe("2026-07-01T04:00:00.000Z");
    expect(zonedMidnight("2026-11-01", "UTC").toISOString()).toBe("2026-11-01T00:00:00.000Z");
  });
});
