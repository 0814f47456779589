import { describe, expect, it } from "vitest";
import { calendarMonth } from "../../src/domain/periods.js";

describe("calendarMonth", () => {
  it("is the month of the organization's local date, not of UTC", () => {
    // 2026-12-01 02:30 UTC is still 2026-11-30 23:30 in Santiago (UTC-3 in summer)
    expect(calendarMonth("America/Santiago", new Date("2026-12-01T02:30:00Z"))).toEqual({
      start: "2026-11-01",
      end: "2026-12-01",
    });
    expect(calendarMonth("UTC", new Date("2026-12-01T02:30:00Z"))).toEqual({ start: "2026-12-01", end: "2027-01-01" });
  });

  it("rolls December over to January of the next year", () => {
    expect(calendarMonth("America/Santiago", new Date("2026-12-15T12:00:00Z"))).toEqual({
      start: "2026-12-01",
      end: "2027-01-01",
    });
  });
});
