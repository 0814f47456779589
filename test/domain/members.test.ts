/** The dashboard members' rules (src/domain/members.ts): roles, passwords, lifetimes, cookies, the mode header. */
import { describe, expect, it } from "vitest";
import {
  clearedSessionCookies,
  dashboardMode,
  INVITE_TTL_SECONDS,
  inviteExpiresAt,
  inviteLink,
  isMemberRole,
  isMemberSecret,
  MEMBER_SECRET_LENGTH,
  normalizeEmail,
  passwordProblem,
  redactInvitePath,
  rolePermissions,
  SESSION_IDLE_SECONDS,
  sessionCookies,
  sessionExpired,
  sessionExpiresAt,
  sessionTouchIsStale,
} from "../../src/domain/members.js";

describe("roles", () => {
  it("gives admin everything, finance reads and writes, viewer reads only", () => {
    expect(rolePermissions("admin")).toEqual({ read: true, write: true, admin: true });
    expect(rolePermissions("finance")).toEqual({ read: true, write: true, admin: false });
    expect(rolePermissions("viewer")).toEqual({ read: true, write: false, admin: false });
  });
  it("knows only its three roles", () => {
    expect(["admin", "finance", "viewer"].every(isMemberRole)).toBe(true);
    expect(isMemberRole("owner")).toBe(false);
    expect(isMemberRole("Admin")).toBe(false);
    expect(isMemberRole(undefined)).toBe(false);
  });
});

describe("passwords", () => {
  it("takes 12 characters or more", () => {
    expect(passwordProblem("a".repeat(12))).toBeNull();
    expect(passwordProblem("correct horse battery staple")).toBeNull();
    expect(passwordProblem("a".repeat(11))).toBe("must be at least 12 characters (got 11)");
    expect(passwordProblem("")).toBe("must be at least 12 characters (got 0)");
    expect(passwordProblem(undefined)).toBe("is required");
  });
  it("counts code points, refuses blank and overlong ones", () => {
    expect(passwordProblem("🔒".repeat(11))).toMatch(/got 11/);
    expect(passwordProblem("🔒".repeat(12))).toBeNull();
    expect(passwordProblem(" ".repeat(14))).toBe("must not be only spaces");
    expect(passwordProblem("a".repeat(201))).toBe("must be at most 200 characters");
  });
  it("stores e-mails trimmed and lowercase", () => {
    expect(normalizeEmail("  Ana@ACME.cl ")).toBe("ana@acme.cl");
  });
});

describe("lifetimes", () => {
  const now = new Date("2026-12-07T10:00:00Z");
  it("invitations last 7 days", () => {
    expect(INVITE_TTL_SECONDS).toBe(604_800);
    expect(inviteExpiresAt(now).toISOString()).toBe("2026-12-14T10:00:00.000Z");
  });
  it("sessions end after 12 hours idle, exactly at the instant", () => {
    expect(SESSION_IDLE_SECONDS).toBe(43_200);
    const expires = sessionExpiresAt(now);
    expect(expires.toISOString()).toBe("2026-12-07T22:00:00.000Z");
    expect(sessionExpired(expires, new Date(expires.getTime() - 1))).toBe(false);
    expect(sessionExpired(expires, expires)).toBe(true);
  });
  it("writes a session's last use at most once a minute", () => {
    expect(sessionTouchIsStale(now, new Date(now.getTime() + 59_999))).toBe(false);
    expect(sessionTouchIsStale(now, new Date(now.getTime() + 60_000))).toBe(true);
  });
});

describe("cookies", () => {
  const secret = "s".repeat(MEMBER_SECRET_LENGTH);
  const csrf = "c".repeat(MEMBER_SECRET_LENGTH);
  it("holds the secret HttpOnly and the CSRF token readable, both SameSite=Strict on /", () => {
    expect(sessionCookies(secret, csrf, false)).toEqual([
      `dashboard_session=${secret}; Path=/; SameSite=Strict; HttpOnly`,
      `dashboard_csrf=${csrf}; Path=/; SameSite=Strict`,
    ]);
  });
  it("marks them Secure behind TLS, and clears both", () => {
    for (const cookie of sessionCookies(secret, csrf, true)) expect(cookie).toContain("; Secure");
    expect(clearedSessionCookies(true)).toEqual([
      "dashboard_session=; Path=/; Max-Age=0; SameSite=Strict; Secure; HttpOnly",
      "dashboard_csrf=; Path=/; Max-Age=0; SameSite=Strict; Secure",
    ]);
  });
  it("looks up only well-formed secrets", () => {
    expect(isMemberSecret(secret)).toBe(true);
    expect(isMemberSecret(secret.slice(1))).toBe(false);
    expect(isMemberSecret(`${secret.slice(1)}-`)).toBe(false);
    expect(isMemberSecret(undefined)).toBe(false);
  });
});

describe("the mode header and links", () => {
  it("works on test data unless live is asked", () => {
    expect(dashboardMode(null)).toEqual({ testMode: true });
    expect(dashboardMode("test")).toEqual({ testMode: true });
    expect(dashboardMode(" LIVE ")).toEqual({ testMode: false });
    expect(dashboardMode("prod")).toEqual({ error: 'must be test or live (got "prod")' });
  });
  it("builds the invitation link and redacts it in logs", () => {
    expect(inviteLink("https://billing.acme.cl/", "abc")).toBe("https://billing.acme.cl/dashboard/invite/abc");
    expect(redactInvitePath("/dashboard/invite/abc")).toBe("/dashboard/invite/[redacted]");
    expect(redactInvitePath("/dashboard/api/invites/abc")).toBe("/dashboard/api/invites/[redacted]");
    expect(redactInvitePath("/dashboard/api/sign-in")).toBe("/dashboard/api/sign-in");
  });
});
