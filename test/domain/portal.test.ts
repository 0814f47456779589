/** The customer portal's pure rules (src/domain/portal.ts; docs/customer-portal.md). */
import { describe, expect, it } from "vitest";
import {
  clearedCredentialCookies,
  contrastRatio,
  credentialCookies,
  credentialExpiresAt,
  isPortalSecret,
  parseCookies,
  portalColors,
  portalLink,
  portalLocale,
  redactPortalPath,
} from "../../src/domain/portal.js";

describe("credential", () => {
  it("lives 30 minutes, never beyond its session", () => {
    const now = new Date("2026-11-24T10:00:00Z");
    expect(credentialExpiresAt(now, new Date("2026-11-24T11:00:00Z")).toISOString()).toBe("2026-11-24T10:30:00.000Z");
    expect(credentialExpiresAt(now, new Date("2026-11-24T10:05:00Z")).toISOString()).toBe("2026-11-24T10:05:00.000Z");
  });

  it("sets an HttpOnly SameSite=Strict secret cookie and a readable CSRF cookie", () => {
    const now = new Date("2026-11-24T10:00:00Z");
    expect(credentialCookies("a".repeat(32), "b".repeat(32), new Date("2026-11-24T10:30:00Z"), now, true)).toEqual([
      `portal_credential=${"a".repeat(32)}; Path=/; Max-Age=1800; SameSite=Strict; Secure; HttpOnly`,
      `portal_csrf=${"b".repeat(32)}; Path=/; Max-Age=1800; SameSite=Strict; Secure`,
    ]);
    expect(clearedCredentialCookies(false)).toEqual([
      "portal_credential=; Path=/; Max-Age=0; SameSite=Strict; HttpOnly",
      "portal_csrf=; Path=/; Max-Age=0; SameSite=Strict",
    ]);
  });

  it("parses a Cookie header, the first of a repeated name winning", () => {
    expect(parseCookies("a=1; portal_credential=xyz; a=2;  b = 3 ")).toEqual({
      a: "1",
      portal_credential: "xyz",
      b: "3",
    });
    expect(parseCookies(null)).toEqual({});
    expect(parseCookies("novalue; =x")).toEqual({});
  });

  it("looks up only well-formed secrets", () => {
    expect(isPortalSecret("A1".repeat(16))).toBe(true);
    expect(isPortalSecret("A1".repeat(15))).toBe(false);
    expect(isPortalSecret(`${"a".repeat(31)}'`)).toBe(false);
    expect(isPortalSecret(undefined)).toBe(false);
  });
});

describe("the portal link", () => {
  it("is the base, /portal/ and the key, and is what the logs redact", () => {
    const key = `cs_${"Ab1".repeat(10)}xy`;
    expect(portalLink("https://billing.acme.cl", key)).toBe(`https://billing.acme.cl/portal/${key}`);
    expect(portalLink("http://127.0.0.1:3000", key)).toBe(`http://127.0.0.1:3000/portal/${key}`);
    expect(redactPortalPath(new URL(portalLink("http://h", key)).pathname)).toBe("/portal/[redacted]");
  });
});

describe("logs", () => {
  it("redact whatever follows /portal/ but the page's files", () => {
    expect(redactPortalPath(`/portal/cs_${"x".repeat(32)}`)).toBe("/portal/[redacted]");
    expect(redactPortalPath("/portal/anything-typed/")).toBe("/portal/[redacted]/");
    expect(redactPortalPath("/portal/")).toBe("/portal/");
    expect(redactPortalPath("/portal/assets/index-abc.js")).toBe("/portal/assets/index-abc.js");
    expect(redactPortalPath("/v1/customers/")).toBe("/v1/customers/");
  });
});

describe("language", () => {
  it("is Spanish for Spanish-speaking countries, English elsewhere", () => {
    expect(portalLocale("CL")).toBe("es");
    expect(portalLocale("mx")).toBe("es");
    expect(portalLocale("US")).toBe("en");
    expect(portalLocale("BR")).toBe("en");
    expect(portalLocale(null)).toBe("en");
  });
});

describe("colours (WCAG 2.x contrast)", () => {
  it("computes the contrast ratio", () => {
    expect(contrastRatio("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrastRatio("#ffffff", "#ffffff")).toBe(1);
    // WebAIM's checker: #767676 on white is 4.54
    expect(contrastRatio("#767676", "#ffffff")).toBeCloseTo(4.54, 2);
  });

  it("keeps readable branding colours", () => {
    expect(portalColors("#f7f3ea", "#7a3e00")).toEqual({
      background: "#f7f3ea",
      text: "#111111",
      asset: "#7a3e00",
      onAsset: "#ffffff",
      adjusted: false,
    });
  });

  it("replaces an unreadable asset colour with the text colour", () => {
    // yellow on white: 1.07
    expect(portalColors("#ffffff", "#ffff00")).toEqual({
      background: "#ffffff",
      text: "#111111",
      asset: "#111111",
      onAsset: "#ffffff",
      adjusted: true,
    });
    // a dark background gets light text
    expect(portalColors("#101820", "#0b57d0")).toMatchObject({ text: "#ffffff", asset: "#ffffff", onAsset: "#111111" });
  });

  it("uses white and blue without branding", () => {
    expect(portalColors(null, null)).toEqual({
      background: "#ffffff",
      text: "#111111",
      asset: "#0b57d0",
      onAsset: "#ffffff",
      adjusted: false,
    });
  });
});
