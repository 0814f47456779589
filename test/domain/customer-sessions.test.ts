/** Customer session rules: key format and entropy, expiry, settings snapshot, colours (docs/customer-sessions.md). */
import { describe, expect, it } from "vitest";
import {
  SESSION_KEY_BITS,
  isSessionExpired,
  newSessionKey,
  normalizeHexColor,
  redactSessionKeys,
  sessionExpiresAt,
  sessionSettings,
  storedSessionSettings,
} from "../../src/domain/customer-sessions.js";
import { randomSecret } from "../../src/infra/ids.js";

describe("newSessionKey", () => {
  it("is cs_ and 32 base62 characters, at least 128 bits of randomness", () => {
    const key = newSessionKey(randomSecret);
    expect(key).toMatch(/^cs_[0-9A-Za-z]{32}$/);
    expect(SESSION_KEY_BITS).toBeGreaterThanOrEqual(128);
    expect(SESSION_KEY_BITS).toBeCloseTo(190.5, 1);
  });

  it("asks the random source for exactly 32 characters and uses them unchanged", () => {
    const asked: number[] = [];
    const key = newSessionKey((n) => (asked.push(n), "a".repeat(n)));
    expect(asked).toEqual([32]);
    expect(key).toBe(`cs_${"a".repeat(32)}`);
  });

  it("refuses a source that returns too few or non-base62 characters", () => {
    expect(() => newSessionKey(() => "abc")).toThrow();
    expect(() => newSessionKey((n) => "-".repeat(n))).toThrow();
  });

  it("does not repeat over many keys, and uses the whole alphabet", () => {
    const keys = new Set(Array.from({ length: 2000 }, () => newSessionKey(randomSecret)));
    expect(keys.size).toBe(2000);
    const chars = new Set([...keys].flatMap((k) => [...k.slice(3)]));
    expect(chars.size).toBe(62);
  });
});

describe("session expiry", () => {
  const created = new Date("2026-11-22T10:00:00.000Z");

  it("expires TTL seconds after creation (default one hour)", () => {
    expect(sessionExpiresAt(created, 3600).toISOString()).toBe("2026-11-22T11:00:00.000Z");
    expect(sessionExpiresAt(created, 1).getTime() - created.getTime()).toBe(1000);
  });

  it("refuses a TTL that is not a positive whole number of seconds", () => {
    for (const ttl of [0, -1, 1.5, Number.NaN]) expect(() => sessionExpiresAt(created, ttl)).toThrow();
  });

  it("is expired from the expiry instant on", () => {
    const expires = sessionExpiresAt(created, 60);
    expect(isSessionExpired(expires, new Date(expires.getTime() - 1))).toBe(false);
    expect(isSessionExpired(expires, expires)).toBe(true);
    expect(isSessionExpired(expires, new Date(expires.getTime() + 1))).toBe(true);
  });
});

describe("normalizeHexColor", () => {
  it("accepts #rrggbb and #rgb in any case, as lowercase #rrggbb", () => {
    expect(normalizeHexColor("#1A2b3C")).toBe("#1a2b3c");
    expect(normalizeHexColor("#fff")).toBe("#ffffff");
    expect(normalizeHexColor("#0aF")).toBe("#00aaff");
  });

  it("rejects names, missing #, alpha channels and other lengths", () => {
    for (const bad of ["red", "ffffff", "#ffff", "#ffffff00", "#12345", "#ggg", "rgb(0,0,0)", "", " #fff", "#fff "]) {
      expect(normalizeHexColor(bad), bad).toBeNull();
    }
  });
});

describe("session settings", () => {
  const org = {
    name: "Acme SpA",
    businessName: "Acme Portal",
    colorBackground: "#ffffff",
    colorAsset: "#112233",
    displayInvoices: false,
    termsOfServiceUrl: "https://acme.cl/terms",
    privacyPolicyUrl: "https://acme.cl/privacy",
  };

  it("copies the branding and adds the return URL", () => {
    expect(sessionSettings(org, "https://acme.cl/back")).toEqual({
      businessName: "Acme Portal",
      colorBackground: "#ffffff",
      colorAsset: "#112233",
      displayInvoices: false,
      termsOfServiceUrl: "https://acme.cl/terms",
      privacyPolicyUrl: "https://acme.cl/privacy",
      returnUrl: "https://acme.cl/back",
    });
  });

  it("falls back to the organization's name when there is no business name", () => {
    expect(sessionSettings({ ...org, businessName: null }, "https://x.cl").businessName).toBe("Acme SpA");
    expect(sessionSettings({ ...org, businessName: "" }, "https://x.cl").businessName).toBe("Acme SpA");
  });

  it("reads a stored snapshot back, with defaults for missing or mistyped values", () => {
    const stored = JSON.parse(JSON.stringify(sessionSettings(org, "https://acme.cl/back")));
    expect(storedSessionSettings(stored, "https://other")).toEqual(sessionSettings(org, "https://acme.cl/back"));
    expect(storedSessionSettings({}, "https://acme.cl/back")).toEqual({
      businessName: null,
      colorBackground: null,
      colorAsset: null,
      displayInvoices: true,
      termsOfServiceUrl: null,
      privacyPolicyUrl: null,
      returnUrl: "https://acme.cl/back",
    });
    expect(storedSessionSettings([1], "https://a").displayInvoices).toBe(true);
    expect(storedSessionSettings({ displayInvoices: "no", colorAsset: 3 }, "https://a")).toMatchObject({
      displayInvoices: true,
      colorAsset: null,
    });
  });
});

describe("redactSessionKeys", () => {
  it("hides keys in logged paths", () => {
    const key = newSessionKey(randomSecret);
    expect(redactSessionKeys(`/v1/customer_base/sessions/${key}/`)).toBe("/v1/customer_base/sessions/cs_[redacted]/");
    expect(redactSessionKeys("/v1/customers/cus_abc/")).toBe("/v1/customers/cus_abc/");
    expect(redactSessionKeys("/v1/docs_abc/")).toBe("/v1/docs_abc/");
  });
});
