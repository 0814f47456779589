/**
 * The frontends' shared date formatting (web/shared/format.ts formatDate): a calendar date as it is, an instant by
 * its date in the reader's time zone (the process's TZ here, the browser's in a page).
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatDate } from "../web/shared/format.js";

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe("formatDate", () => {
  it("prints a calendar date as it is, in any time zone", () => {
    for (const tz of ["UTC", "America/Santiago", "Asia/Tokyo"]) {
      process.env.TZ = tz;
      expect(formatDate("2026-12-07", "es")).toBe("07-12-2026");
      expect(formatDate("2026-12-07", "en")).toBe("2026-12-07");
    }
    expect(formatDate(null, "es")).toBe("—");
  });

  it("prints an instant by its date where the reader is: 00:30 UTC on the 8th is the 7th in Chile", () => {
    process.env.TZ = "America/Santiago";
    expect(formatDate("2026-12-08T00:30:00.000Z", "es")).toBe("07-12-2026");
    expect(formatDate("2026-12-08T03:30:00.000Z", "es")).toBe("08-12-2026");
    process.env.TZ = "UTC";
    expect(formatDate("2026-12-08T00:30:00.000Z", "en")).toBe("2026-12-08");
  });
});
