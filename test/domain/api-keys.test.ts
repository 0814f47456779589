import { describe, expect, it } from "vitest";
import {
  bearerKey,
  isKeyExpired,
  isOrganizationId,
  lastUseIsStale,
  mayManageKeyOfMode,
  parseKeyExpiry,
} from "../../src/domain/api-keys.js";
import { ValidationError } from "../../src/domain/errors.js";

const now = new Date("2026-11-24T15:30:00.000Z");

function refusal(input: string): ValidationError {
  try {
    parseKeyExpiry(input, now);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error(`${input} was accepted`);
}

describe("parseKeyExpiry", () => {
  it("reads a date as 00:00 UTC of that date", () => {
    expect(parseKeyExpiry("2026-12-01", now).toISOString()).toBe("2026-12-01T00:00:00.000Z");
    expect(parseKeyExpiry(" 2026-11-25 ", now).toISOString()).toBe("2026-11-25T00:00:00.000Z");
    expect(parseKeyExpiry("2028-02-29", now).toISOString()).toBe("2028-02-29T00:00:00.000Z");
  });

  it("reads ISO 8601 timestamps with Z or an offset as that instant", () => {
    expect(parseKeyExpiry("2026-12-01T12:00:00Z", now).toISOString()).toBe("2026-12-01T12:00:00.000Z");
    expect(parseKeyExpiry("2026-12-01T09:00-03:00", now).toISOString()).toBe("2026-12-01T12:00:00.000Z");
    expect(parseKeyExpiry("2026-11-24T15:30:00.001Z", now).toISOString()).toBe("2026-11-24T15:30:00.001Z");
  });

  it("refuses today (already 00:00 UTC past), past instants and now itself", () => {
    expect(refusal("2026-11-24").fields).toEqual({
      expires: ["must be in the future, got 2026-11-24T00:00:00.000Z (now 2026-11-24T15:30:00.000Z)"],
    });
    expect(refusal("2025-01-01").message).toMatch(/^expires: must be in the future/);
    expect(refusal("2026-11-24T15:30:00Z").message).toMatch(/^expires: must be in the future/);
  });

  it("refuses malformed input, impossible dates and timestamps without an offset", () => {
    for (const input of [
      "",
      "tomorrow",
      "2026-13-01",
      "2026-02-30",
      "2027-02-29",
      "2026-12-1",
      "01-12-2026",
      "2026-12-01T12:00:00",
      "2026-12-01T25:00Z",
      "2026-12-01T12:60Z",
      "2026-12-01T12:00+15:00",
      "2026-12-01 12:00Z",
    ]) {
      expect(refusal(input).message, input).toBe(
        `expires: must be a date yyyy-mm-dd or an ISO 8601 timestamp with an offset (2026-12-01T12:00:00Z), ` +
          `got ${JSON.stringify(input)}`,
      );
    }
  });
});

describe("isKeyExpired and lastUseIsStale", () => {
  it("expires at the instant itself; null never expires", () => {
    expect(isKeyExpired(null, now)).toBe(false);
    expect(isKeyExpired(new Date(now.getTime() + 1), now)).toBe(false);
    expect(isKeyExpired(now, now)).toBe(true);
    expect(isKeyExpired(new Date(now.getTime() - 1), now)).toBe(true);
  });

  it("a last use is worth writing when never written or more than 60 s old", () => {
    expect(lastUseIsStale(null, now)).toBe(true);
    expect(lastUseIsStale(new Date(now.getTime() - 60_000), now)).toBe(false);
    expect(lastUseIsStale(new Date(now.getTime() - 60_001), now)).toBe(true);
    expect(lastUseIsStale(new Date(now.getTime() - 5_000), now)).toBe(false);
  });
});

describe("bearerKey", () => {
  it("takes the scheme in any case (RFC 7235) and the key exactly", () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"])
      expect(bearerKey(`${scheme} sk_test_abc123`)).toBe("sk_test_abc123");
    expect(bearerKey("  bearer \t sk_live_XYZ9  ")).toBe("sk_live_XYZ9");
  });

  it("refuses other schemes, malformed keys and missing headers", () => {
    for (const header of [
      null,
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Basic sk_test_abc",
      "Bearer SK_TEST_abc",
      "Bearer sk_test_",
      "Bearer sk_prod_abc",
      "Bearer sk_test_abc extra",
      "Bearersk_test_abc",
      "sk_test_abc",
      "Bearer sk_test_ab-c",
    ]) {
      expect(bearerKey(header), String(header)).toBeNull();
    }
  });
});

describe("isOrganizationId", () => {
  it("is org_ and 24 base62 characters", () => {
    expect(isOrganizationId("org_0123456789abcdefghijABCD")).toBe(true);
    for (const text of [
      "Acme SpA",
      "org_",
      "org_0123456789abcdefghijABC",
      "org_0123456789abcdefghijABCDE",
      "cus_0123456789abcdefghijABCD",
      "org_0123456789abcdefghij-BCD",
    ])
      expect(isOrganizationId(text), text).toBe(false);
  });
});

describe("mayManageKeyOfMode", () => {
  it("lets admin members manage both modes and an API key only its own", () => {
    expect(mayManageKeyOfMode({ member: true, testMode: true }, "live")).toBe(true);
    expect(mayManageKeyOfMode({ member: true, testMode: false }, "test")).toBe(true);
    expect(mayManageKeyOfMode({ member: false, testMode: false }, "live")).toBe(true);
    expect(mayManageKeyOfMode({ member: false, testMode: true }, "test")).toBe(true);
    expect(mayManageKeyOfMode({ member: false, testMode: true }, "live")).toBe(false);
    expect(mayManageKeyOfMode({ member: false, testMode: false }, "test")).toBe(false);
  });
});
