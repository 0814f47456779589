/**
 * The dashboard's page and sign-in routes (docs/dashboard.md); the sign-in routes are JSON in and out; the dashboard's
 * data comes from /graphql with the session cookie:
 *
 * - `POST /dashboard/api/sign-in` `{"email", "password", "organization"?}`: 200 `{"member": {...}}` with the session
 *   cookies (`dashboard_session`, HttpOnly, and `dashboard_csrf`, read by the page), 401 for a wrong e-mail or
 *   password (alike), 429 past the failed sign-in limits (Retry-After), 400 for a missing field;
 * - `POST /dashboard/api/invites/<token>` `{"password"}`: accepts an invitation (sets the password, at least 12
 *   characters: else 400 on `password`) and signs in like sign-in; 401 for a used, expired or unknown link;
 * - `POST /dashboard/api/sign-out` (the cookie and its X-Dashboard-CSRF header): ends the session now, clears the
 *   cookies;
 * - `GET /dashboard`, `/dashboard/` and `/dashboard/invite/<token>` (where the invitation link points): the dashboard's
 *   page, built by Vite from web/dashboard into dist/dashboard (`npm run build`), which shows the sign-in page, the
 *   set-password page of an invitation, or the dashboard itself, and talks only to /graphql and the routes above;
 *   `/dashboard/assets/...` are its files. Its CSP (DASHBOARD_CSP) allows no inline script and no other host.
 *
 * Errors are in the REST shape `{"error": {"code", "message", "fields"?}}`.
 */
import fs from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { DASHBOARD_CSP } from "../infra/http-security.js";
import type { SignInLimits } from "../infra/rate-limit.js";
import { DomainError, RateLimitedError, ValidationError } from "../domain/errors.js";
import {
  clearedSessionCookies,
  DASHBOARD_COOKIE,
  DASHBOARD_CSRF_HEADER,
  DASHBOARD_MODE_HEADER,
  sessionCookies,
} from "../domain/members.js";
import { parseCookies } from "../domain/portal.js";
import { acceptInvite, authenticateMember, signIn, signOutMember, type SignedIn } from "../services/members.js";
import { errorResponse } from "../rest/respond.js";

export interface DashboardRoutesOptions {
  prisma: PrismaClient;
  /** failed sign-ins per e-mail and per client address (infra/rate-limit.ts createSignInLimits) */
  signInLimits: SignInLimits;
  /** PUBLIC_URL: an https one makes the cookies Secure */
  publicUrl?: string;
  /** the client's address (server.ts clientAddress: the socket's peer, or X-Forwarded-For behind TRUST_PROXY) */
  clientAddress: (request: Request) => string;
  /** the built dashboard (index.html and assets/); default DEFAULT_DASHBOARD_DIR */
  dashboardDir?: string;
  now?: () => Date;
}

/** Where `npm run build` writes the dashboard (dist/dashboard of the project, for src/ and dist/ alike). */
export const DEFAULT_DASHBOARD_DIR = join(fileURLToPath(new URL("../../", import.meta.url)), "dist", "dashboard");

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
};

/** The built page (index.html, read once) and its files under assets/, from `dir`. */
function builtFiles(dir: string) {
  let index: string | null = null;
  return {
    async page(): Promise<Response> {
      try {
        index ??= await fs.readFile(join(dir, "index.html"), "utf8");
      } catch {
        return errorResponse("service_unavailable", "The dashboard is not built: run npm run build");
      }
      return new Response(index, {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-store",
          "content-security-policy": DASHBOARD_CSP,
        },
      });
    },
    async asset(name: string): Promise<Response> {
      const type = CONTENT_TYPES[extname(name)];
      if (!type || !/^[\w.-]+$/.test(name)) return errorResponse("not_found", `No dashboard file ${name}`);
      try {
        const content = await fs.readFile(join(dir, "assets", name));
        return new Response(content, {
          headers: { "content-type": type, "cache-control": "public, max-age=31536000, immutable" },
        });
      } catch {
        return errorResponse("not_found", `No dashboard file ${name}`);
      }
    },
  };
}

/** The answer of a session started: the member, and both cookies. */
function signedInResponse(signedIn: SignedIn, secure: boolean): Response {
  const { member } = signedIn;
  const response = Response.json({
    member: {
      id: member.id,
      organization: member.organizationId,
      email: member.email,
      name: member.name,
      role: member.role,
      last_sign_in_at: member.lastSignInAt?.toISOString() ?? null,
    },
  });
  for (const cookie of sessionCookies(signedIn.secret, signedIn.csrfToken, secure))
    response.headers.append("set-cookie", cookie);
  response.headers.set("cache-control", "no-store");
  return response;
}

/** The JSON object of a request's body; ValidationError when it is not one. */
async function jsonBody(request: Request): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    throw new ValidationError("The body must be a JSON object", { body: ["must be a JSON object"] });
  }
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new ValidationError("The body must be a JSON object", { body: ["must be a JSON object"] });
  return body as Record<string, unknown>;
}

/** A DomainError in the REST shape (429 with Retry-After); anything else is thrown on (a 500 of server.ts). */
function domainErrorResponse(e: unknown): Response {
  if (!(e instanceof DomainError)) throw e;
  const response = errorResponse(e.code, e.message, e.fields);
  if (e instanceof RateLimitedError && e.retryAfterSeconds)
    response.headers.set("retry-after", String(e.retryAfterSeconds));
  return response;
}

/**
 * The handler of /dashboard paths: a Response for every path under /dashboard, null for any other path. Only the
 * routes of the module comment; 404 for another path, 405 for another method.
 */
export function createDashboardRoutes(options: DashboardRoutesOptions): (request: Request) => Promise<Response | null> {
  const now = options.now ?? (() => new Date());
  const { prisma } = options;
  const files = builtFiles(options.dashboardDir ?? DEFAULT_DASHBOARD_DIR);

  async function route(request: Request, url: URL): Promise<Response> {
    const secure = (options.publicUrl ?? url.origin).startsWith("https:");
    const path = url.pathname.replace(/\/$/, "");
    const invite = /^\/dashboard\/api\/invites\/([^/]+)$/.exec(path);
    const post = (run: () => Promise<Response>) =>
      request.method === "POST" ? run() : methodNotAllowed(request.method, "POST");
    if (path === "/dashboard/api/sign-in")
      return post(async () => {
        const body = await jsonBody(request);
        const input = { email: body.email, password: body.password, organizationId: body.organization };
        return signedInResponse(
          await signIn(prisma, options.signInLimits, input, options.clientAddress(request), now()),
          secure,
        );
      });
    if (invite)
      return post(async () => {
        const body = await jsonBody(request);
        return signedInResponse(await acceptInvite(prisma, decodedSegment(invite[1]), body.password, now()), secure);
      });
    if (path === "/dashboard/api/sign-out")
      return post(async () => {
        const cookie = parseCookies(request.headers.get("cookie"))[DASHBOARD_COOKIE];
        const headers = request.headers;
        const auth = await authenticateMember(
          prisma,
          cookie,
          headers.get(DASHBOARD_CSRF_HEADER),
          headers.get(DASHBOARD_MODE_HEADER),
          now(),
        );
        await signOutMember({ prisma, auth, now });
        const response = Response.json({ signed_out: true });
        for (const c of clearedSessionCookies(secure)) response.headers.append("set-cookie", c);
        return response;
      });
    const get = (run: () => Promise<Response>) =>
      request.method === "GET" || request.method === "HEAD" ? run() : methodNotAllowed(request.method, "GET, HEAD");
    // the page: the dashboard, and the invitation link's set-password page (the same app reads the address)
    if (path === "/dashboard" || /^\/dashboard\/invite\/[^/]+$/.test(path)) return get(() => files.page());
    const asset = /^\/dashboard\/assets\/([^/]+)$/.exec(url.pathname);
    if (asset) return get(() => files.asset(asset[1]));
    return errorResponse("not_found", `No route for ${request.method} ${url.pathname}`);
  }

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== "/dashboard" && !url.pathname.startsWith("/dashboard/")) return null;
    try {
      return await route(request, url);
    } catch (e) {
      return domainErrorResponse(e);
    }
  };
}

/** A path segment percent-decoded; as it came when it is not valid percent-encoding (then no token matches it). */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function methodNotAllowed(method: string, allow: string): Response {
  const response = Response.json(
    { error: { code: "method_not_allowed", message: `${method} is not allowed here: use ${allow}` } },
    { status: 405 },
  );
  response.headers.set("allow", allow);
  return response;
}
