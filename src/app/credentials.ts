/**
 * Who a request is (docs/limits.md, docs/dashboard.md, docs/customer-portal.md): the client's address, the
 * credentials a request carries (an API key in `Authorization`, a dashboard session cookie, a customer-portal
 * cookie) and the one function that turns them into the `Auth` of a use case.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { socketAddress } from "../http-server.js";
import { authenticate } from "../services/api-keys.js";
import type { ApiKeyCache } from "../services/api-key-cache.js";
import { authenticatePortal } from "../services/portal.js";
import { authenticateMember } from "../services/members.js";
import type { Auth } from "../services/context.js";
import { DASHBOARD_COOKIE, DASHBOARD_CSRF_HEADER, DASHBOARD_MODE_HEADER } from "../domain/members.js";
import { parseCookies, PORTAL_COOKIE, PORTAL_CSRF_HEADER } from "../domain/portal.js";
import type { PrismaClient } from "../infra/prisma/generated/client.js";

/** The client's address: the socket's peer, or with TRUST_PROXY the last X-Forwarded-For entry. */
export function clientAddress(request: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers
      .get("x-forwarded-for")
      ?.split(",")
      .map((a) => a.trim())
      .filter(Boolean)
      .at(-1);
    if (forwarded) return forwarded;
  }
  return socketAddress(request);
}

/** The customer-portal credential a request carries (its HttpOnly cookie), if any. */
export function portalCookie(request: Request): string | undefined {
  return parseCookies(request.headers.get("cookie"))[PORTAL_COOKIE];
}

/**
 * The dashboard session a request carries (its HttpOnly cookie), if any, and when it is the request's credential: a
 * browser holding both a portal and a dashboard cookie sends both to /graphql, so the dashboard's is used when the
 * request carries its CSRF header (the dashboard page sends it) or no portal cookie.
 */
export function dashboardCookie(request: Request): string | undefined {
  const cookies = parseCookies(request.headers.get("cookie"));
  const cookie = cookies[DASHBOARD_COOKIE];
  if (cookie === undefined) return undefined;
  return request.headers.has(DASHBOARD_CSRF_HEADER) || cookies[PORTAL_COOKIE] === undefined ? cookie : undefined;
}

/** True when `authorization` is `Bearer <token>` (scheme in any case). Compared by hashes, in constant time. */
export function bearerMatches(authorization: string | null, token: string | undefined): boolean {
  if (!token || !authorization) return false;
  const m = /^bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return false;
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(m[1]), digest(token));
}

/** Who a request is, read with `db` (the request's transaction when it has one). */
export type RequestAuth = (db: PrismaClient, request: Request) => Promise<Auth>;

/**
 * Who a request is: its API key (Authorization; looked up through `apiKeys`, the process's key cache), else its
 * dashboard session (cookie, with the X-Dashboard-CSRF and X-Dashboard-Mode headers; services/members.ts), else its
 * customer-portal credential (cookie, with the X-Portal-CSRF header; services/portal.ts). Throws the 401 (or 403)
 * DomainError of a missing, unknown, revoked or expired credential.
 */
export function requestAuthWith(apiKeys: ApiKeyCache): RequestAuth {
  return async (db, request) => {
    const authorization = request.headers.get("authorization");
    const session = authorization ? undefined : dashboardCookie(request);
    if (session !== undefined) {
      const headers = request.headers;
      const mode = headers.get(DASHBOARD_MODE_HEADER);
      return authenticateMember(db, session, headers.get(DASHBOARD_CSRF_HEADER), mode, new Date());
    }
    const cookie = portalCookie(request);
    if (!authorization && cookie !== undefined)
      return (await authenticatePortal(db, cookie, request.headers.get(PORTAL_CSRF_HEADER), new Date())).auth;
    return authenticate(db, authorization, new Date(), apiKeys);
  };
}
