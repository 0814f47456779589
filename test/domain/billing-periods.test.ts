/** Billing periods and proration (src/domain/billing-periods.ts; docs/proration.md). */
import { describe, expect, it } from "vitest";
import {
  addMonthsClamped,
  billingPeriod,
  cycleStart,
  daysBetween,
  prorationLines,
  splitByDays,
} from "../../src/domain/billing-periods.js";
import { validationErrorOf } from "../helpers/errors.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };

describe("billing periods", () => {
  it("monthly from Jan 31 clamps to month ends without drifting: Feb 28, Mar 31, Apr 30", () => {
    expect([1, 2, 3, 4, 5].map((n) => cycleStart("2026-01-31", "monthly", n))).toEqual([
      "2026-01-31",
      "2026-02-28",
      "2026-03-31",
      "2026-04-30",
      "2026-05-31",
    ]);
    expect(addMonthsClamped("2028-01-31", 1)).toBe("2028-02-29");
  });

  it("every frequency: daily, weekly, monthly, quarterly, yearly", () => {
    expect(billingPeriod("2026-11-22", "daily", 3)).toEqual({ start: "2026-11-24", end: "2026-11-25" });
    expect(billingPeriod("2026-11-22", "weekly", 2)).toEqual({ start: "2026-11-29", end: "2026-12-06" });
    expect(billingPeriod("2026-11-22", "monthly", 2)).toEqual({ start: "2026-12-22", end: "2027-01-22" });
    expect(billingPeriod("2026-11-30", "quarterly", 1)).toEqual({ start: "2026-11-30", end: "2027-02-28" });
    expect(billingPeriod("2028-02-29", "yearly", 2)).toEqual({ start: "2029-02-28", end: "2030-02-28" });
  });

  it("a year of monthly periods is contiguous and covers 365 days", () => {
    const periods = Array.from({ length: 12 }, (_, i) => billingPeriod("2026-01-15", "monthly", i + 1));
    for (let i = 1; i < periods.length; i++) expect(periods[i].start).toBe(periods[i - 1].end);
    expect(daysBetween(periods[0].start, periods[11].end)).toBe(365);
  });

  it("refuses cycle 0", () => {
    expect(() => cycleStart("2026-01-01", "monthly", 0)).toThrow("cycle must be a positive integer");
  });
});

describe("proration by day", () => {
  const november = { start: "2026-11-01", end: "2026-12-01" };

  it("worked example: 30 000 over 30 days, changed on Nov 21 -> unused 10 000, used 20 000", () => {
    const { used, unused } = splitByDays(30000, november, "2026-11-21", CLP);
    expect([used.toString(), unused.toString()]).toEqual(["20000", "10000"]);
  });

  it("the parts always add up to the whole, whatever the rounding", () => {
    for (const amount of ["9999", "1", "12345.67", "0.01"]) {
      for (let day = 1; day <= 30; day++) {
        const date = `2026-11-${String(day).padStart(2, "0")}`;
        const currency = amount.includes(".") ? USD : CLP;
        const { used, unused } = splitByDays(amount, november, date, currency);
        expect(used.plus(unused).toString()).toBe(amount);
        expect(unused.isNegative() || used.isNegative()).toBe(false);
      }
    }
  });

  it("a date outside the period is a 400 on date", () => {
    expect(validationErrorOf(() => splitByDays(100, november, "2026-12-02", CLP)).fields).toEqual({
      date: ["must be within the period 2026-11-01 to 2026-12-01"],
    });
  });

  it("worked example: 2 -> 3 seats of 10 000 on Nov 21 gives a credit of 6 667 and a charge of 10 000", () => {
    const lines = prorationLines({
      oldName: "2 x Pro",
      oldAmount: 20000,
      newName: "3 x Pro",
      newAmount: 30000,
      period: november,
      date: "2026-11-21",
      currency: CLP,
    });
    expect(lines.map((l) => [l.name, l.amount.toString(), l.periodStart, l.periodEnd])).toEqual([
      ["Unused time on 2 x Pro (Nov 21 - Dec 1)", "-6667", "2026-11-21", "2026-12-01"],
      ["Remaining time on 3 x Pro (Nov 21 - Dec 1)", "10000", "2026-11-21", "2026-12-01"],
    ]);
  });

  it("a change on the first day credits and charges the whole period; on the renewal date nothing", () => {
    const first = prorationLines({
      oldName: "Basic",
      oldAmount: 10000,
      newName: "Pro",
      newAmount: 25000,
      period: november,
      date: "2026-11-01",
      currency: CLP,
    });
    expect(first.map((l) => l.amount.toString())).toEqual(["-10000", "25000"]);
    expect(
      prorationLines({
        oldName: "Basic",
        oldAmount: 10000,
        newName: "Pro",
        newAmount: 25000,
        period: november,
        date: "2026-12-01",
        currency: CLP,
      }),
    ).toEqual([]);
  });
});
