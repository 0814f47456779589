/**
 * domain/formats.ts isoDate: the UTC calendar date of an instant, memoized for UTC midnights (the
 * billing run asks for the same dates many times; docs/performance.md "Billing run").
 */
import { describe, expect, it } from "vitest";
import { isoDate } from "../../src/domain/formats.js";

describe("isoDate", () => {
  it("gives the UTC date of midnights, of other instants and of dates before 1970, the same on every call", () => {
    for (let i = 0; i < 3; i++) {
      expect(isoDate(new Date("2026-02-28T00:00:00Z"))).toBe("2026-02-28");
      expect(isoDate(new Date("2028-02-29T00:00:00Z"))).toBe("2028-02-29");
      expect(isoDate(new Date("2026-03-01T23:59:59.999Z"))).toBe("2026-03-01");
      expect(isoDate(new Date("2026-03-01T23:59:59.999-03:00"))).toBe("2026-03-02");
      expect(isoDate(new Date("1969-12-31T00:00:00Z"))).toBe("1969-12-31");
      expect(isoDate(new Date("1969-12-31T12:00:00Z"))).toBe("1969-12-31");
    }
  });

  it("stays right past its memo's bound (it is cleared, not wrong)", () => {
    const start = Date.UTC(2000, 0, 1);
    for (let day = 0; day < 12_000; day++) {
      const date = new Date(start + day * 86_400_000);
      expect(isoDate(date)).toBe(date.toISOString().slice(0, 10));
    }
    expect(isoDate(new Date(start))).toBe("2000-01-01");
  });

  it("throws RangeError for an invalid date, as toISOString does", () => {
    expect(() => isoDate(new Date("not a date"))).toThrow(RangeError);
  });
});
