/**
 * The dashboard's team members (docs/dashboard.md "Members and sign-in"): roles and what each may do, the password
 * policy, invitation and session lifetimes (12 hours idle), the session cookies and the CSRF header, the sign-in
 * limits, the dashboard mode header. Pure functions, unit-tested in test/domain/members.test.ts.
 */

/** The roles of a member, from most to least powerful. */
export const MEMBER_ROLES = ["admin", "finance", "viewer"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** True when `value` is a MemberRole. */
export function isMemberRole(value: unknown): value is MemberRole {
  return typeof value === "string" && (MEMBER_ROLES as readonly string[]).includes(value);
}

/**
 * What a role may do: `read` every query; `write` the mutations of customers, documents, payments, subscriptions,
 * dunning (everything but the admin ones); `admin` the mutations of members, API keys and settings (webhook
 * endpoints, certificates, CAFs, organization settings and branding).
 */
export interface RolePermissions {
  read: boolean;
  write: boolean;
  admin: boolean;
}

/** The permissions of `role`: admin everything, finance read and write, viewer read only. */
export function rolePermissions(role: MemberRole): RolePermissions {
  return { read: true, write: role !== "viewer", admin: role === "admin" };
}

/** Shortest password (characters, counted as Unicode code points). */
export const MIN_PASSWORD_LENGTH = 12;
/** Longest password (code points): hashing has a cost, a bounded input keeps it bounded. */
export const MAX_PASSWORD_LENGTH = 200;

/**
 * Why `password` cannot be a member's password, or null when it can: at least MIN_PASSWORD_LENGTH and at most
 * MAX_PASSWORD_LENGTH characters (code points, so an emoji counts once), not only spaces.
 */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== "string") return "is required";
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters (got ${length})`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (!password.trim()) return "must not be only spaces";
  return null;
}

/** How an e-mail is stored and compared: trimmed and lowercase. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** How long an invitation link works (seconds): 7 days. */
export const INVITE_TTL_SECONDS = 7 * 24 * 60 * 60;

/** When an invitation made at `now` stops working. */
export function inviteExpiresAt(now: Date, ttlSeconds = INVITE_TTL_SECONDS): Date {
  return new Date(now.getTime() + ttlSeconds * 1000);
}

/** How long a session lives without a request (seconds): 12 hours idle. */
export const SESSION_IDLE_SECONDS = 12 * 60 * 60;

/**
 * A session's last use is written again only when the one stored is older than this (ms), so a busy session costs
 * one UPDATE a minute, not one per request; the idle expiry is therefore exact to within a minute.
 */
export const SESSION_TOUCH_RESOLUTION_MS = 60_000;

/** When a session last used at `lastSeenAt` expires: SESSION_IDLE_SECONDS later. */
export function sessionExpiresAt(lastSeenAt: Date, idleSeconds = SESSION_IDLE_SECONDS): Date {
  return new Date(lastSeenAt.getTime() + idleSeconds * 1000);
}

/** True when a session expiring at `expiresAt` no longer opens anything at `now`. */
export function sessionExpired(expiresAt: Date, now: Date): boolean {
  return expiresAt.getTime() <= now.getTime();
}

/** True when a session seen at `lastSeenAt` should have its last use written again at `now`. */
export function sessionTouchIsStale(lastSeenAt: Date, now: Date): boolean {
  return now.getTime() - lastSeenAt.getTime() >= SESSION_TOUCH_RESOLUTION_MS;
}

/** The HttpOnly cookie holding a member session's secret. */
export const DASHBOARD_COOKIE = "dashboard_session";
/** The cookie holding the session's CSRF token, readable by the dashboard page, which echoes it in the header. */
export const DASHBOARD_CSRF_COOKIE = "dashboard_csrf";
/** The header every /graphql request made with the member cookie must carry, with the CSRF cookie's value. */
export const DASHBOARD_CSRF_HEADER = "x-dashboard-csrf";
/** The header naming the data a member works on: `test` (the default) or `live`. */
export const DASHBOARD_MODE_HEADER = "x-dashboard-mode";
/** Random base62 characters of a session secret, a CSRF token and an invitation token (about 238 bits each). */
export const MEMBER_SECRET_LENGTH = 40;

/**
 * True when `value` looks like a member secret (base62, MEMBER_SECRET_LENGTH characters): anything else is not
 * looked up.
 */
export function isMemberSecret(value: string | undefined | null): value is string {
  return typeof value === "string" && value.length === MEMBER_SECRET_LENGTH && /^[0-9A-Za-z]+$/.test(value);
}

/**
 * The two Set-Cookie values of a new session: the secret (HttpOnly) and the CSRF token (read by the page), both
 * SameSite=Strict on path `/` (the pages are under /dashboard/, the API at /graphql), Secure when the service is
 * reached over https. No Max-Age: the server ends the session after SESSION_IDLE_SECONDS idle, and the browser drops
 * the cookies when it closes.
 */
export function sessionCookies(secret: string, csrfToken: string, secure: boolean): string[] {
  const common = `Path=/; SameSite=Strict${secure ? "; Secure" : ""}`;
  return [`${DASHBOARD_COOKIE}=${secret}; ${common}; HttpOnly`, `${DASHBOARD_CSRF_COOKIE}=${csrfToken}; ${common}`];
}

/** Set-Cookie values that remove both dashboard cookies. */
export function clearedSessionCookies(secure: boolean): string[] {
  const common = `Path=/; Max-Age=0; SameSite=Strict${secure ? "; Secure" : ""}`;
  return [`${DASHBOARD_COOKIE}=; ${common}; HttpOnly`, `${DASHBOARD_CSRF_COOKIE}=; ${common}`];
}

/**
 * The mode a dashboard request works in, from its DASHBOARD_MODE_HEADER: test when absent or empty, live for `live`;
 * anything else is an error message (a 400 on the header).
 */
export function dashboardMode(header: string | null | undefined): { testMode: boolean } | { error: string } {
  const value = (header ?? "").trim().toLowerCase();
  if (value === "" || value === "test") return { testMode: true };
  if (value === "live") return { testMode: false };
  return { error: `must be test or live (got ${JSON.stringify(value.slice(0, 20))})` };
}

/** The absolute invitation link: `<baseUrl>/dashboard/invite/<token>` (`baseUrl` without a trailing slash). */
export function inviteLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/dashboard/invite/${encodeURIComponent(token)}`;
}

/** `path` with the token of an invitation link replaced by `[redacted]` (request logs). */
export function redactInvitePath(path: string): string {
  return path.replace(/^\/dashboard\/(invite|api\/invites)\/[^/]+/, "/dashboard/$1/[redacted]");
}

/** Failed sign-ins one e-mail may have per SIGN_IN_WINDOW_SECONDS before its sign-ins answer 429. */
export const SIGN_IN_FAILURES_PER_EMAIL = 5;
/** Failed sign-ins one client address may have per SIGN_IN_WINDOW_SECONDS before its sign-ins answer 429. */
export const SIGN_IN_FAILURES_PER_ADDRESS = 20;
/** The window of the sign-in failure counts (seconds): 15 minutes. */
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/** The invitation e-mail's subject and text. */
export function inviteMessage(
  organizationName: string,
  role: MemberRole,
  link: string,
  expiresAt: Date,
): { subject: string; body: string } {
  return {
    subject: `You are invited to ${organizationName}'s billing dashboard`,
    body:
      `You have been invited to ${organizationName}'s billing dashboard as ${role}.\n\n` +
      `Open this link to choose your password (at least ${MIN_PASSWORD_LENGTH} characters):\n${link}\n\n` +
      `The link works once, until ${expiresAt.toISOString()}. If you did not expect it, ignore this message.\n`,
  };
}
