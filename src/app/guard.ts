/**
 * What every request passes before its route (docs/limits.md): the process's role, CORS, the failed-authentication
 * limit of the client address and the rate limit of the credential.
 */
import type { AppSettings, ServiceRole } from "../infra/config.js";
import { cors } from "../infra/http-security.js";
import type { Logger } from "../infra/logger.js";
import { createRateLimits, type RateLimits, type Refusal, type StoreQuery } from "../infra/rate-limit.js";
import { holdsValidKey, mayAuthenticate, presentedKeyHash } from "../services/api-keys.js";
import type { ApiKeyCache, LiveApiKeyIndex } from "../services/api-key-cache.js";
import { errorResponse } from "../rest/router.js";
import { clientAddress, dashboardCookie, portalCookie } from "./credentials.js";
import { surfaceOf, type AppMetrics } from "./metrics.js";
import { loggedPath, withHeaders } from "./routes.js";

/** What a `worker` process answers over HTTP (docs/scaling.md "Roles"); anything else is a 404. */
export const WORKER_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

/** What the guard checks with. */
export interface GuardDeps {
  role: ServiceRole;
  settings: AppSettings;
  logger: Logger;
  metrics: AppMetrics;
  /**
   * where requests are counted (infra/rate-limit.ts): PostgreSQL's RateLimit table, shared by every process, or this
   * process's memory when undefined (RATE_LIMIT_STORE=memory, and always on the embedded database)
   */
  rateLimitStore?: StoreQuery;
  /** the process's API key cache and the live keys' hash prefixes (services/api-key-cache.ts) */
  apiKeys: ApiKeyCache;
  liveKeys: LiveApiKeyIndex;
  /** the routes (app/routes.ts) */
  handle: (request: Request) => Promise<Response>;
}

/** The 429 of a refused request, in the surface's error shape, with Retry-After. */
function rateLimited(surface: "graphql" | "rest", refusal: Refusal, why: string): Response {
  const message = `Too many ${why}; retry in ${refusal.retryAfterSeconds} s.`;
  const response =
    surface === "graphql"
      ? Response.json({ errors: [{ message, extensions: { code: "rate_limited" } }] }, { status: 429 })
      : errorResponse("rate_limited", message);
  response.headers.set("retry-after", String(refusal.retryAfterSeconds));
  return response;
}

/**
 * The app's `handle`: a `worker` process answers only WORKER_PATHS (else a 404 naming its role); the portal's and the
 * dashboard's pages are limited per client address; /graphql and /v1 go through `guardedApi`. Security headers are
 * added by http-server.ts for every answer.
 */
export function createGuard(deps: GuardDeps): (request: Request) => Promise<Response> {
  const { role, settings, handle } = deps;
  // an API key's bucket is its stored hash, which authenticate() then finds computed (hashed once per request);
  // anything else presented (a malformed header, a portal cookie) gets rate-limit.ts's own digest
  const limits = createRateLimits(settings, presentedKeyHash, deps.rateLimitStore);
  const api = guardedApi(deps, limits);
  return async (request) => {
    const url = new URL(request.url);
    if (role === "worker" && !WORKER_PATHS.has(url.pathname))
      return errorResponse(
        "not_found",
        `No route for ${request.method} ${url.pathname}: this process runs the background workers ` +
          `(SERVICE_ROLE=worker) and answers only ${[...WORKER_PATHS].join(", ")}`,
      );
    const surface = surfaceOf(url.pathname);
    if (surface !== "other") return api(request, url, surface);
    // the portal's pages are limited per client address (a session key is tried there); the dashboard's sign-in
    // routes likewise (besides the failed sign-in limits of pages/dashboard.ts)
    const pages = ["/portal", "/dashboard"];
    if (pages.some((p) => url.pathname === p || url.pathname.startsWith(`${p}/`))) {
      const refusal = await limits.consumeRequest(null, clientAddress(request, settings.trustProxy));
      if (refusal) return rateLimited("rest", refusal, "requests from this address");
    }
    return handle(request);
  };
}

/**
 * /graphql and /v1: CORS (preflights answered here), the failed-authentication limit of the client address and the
 * rate limit of the credential (an API key; a dashboard session and a portal credential are limited like one); a 401
 * to a request that carried a key counts as a failed authentication. Past the limit, a request whose `Authorization`
 * cannot authenticate (`mayAuthenticate`: no statement of its own) is refused with 429 before it runs, and one that
 * ran and answered 401 gets the 429 instead; a valid key, and a request without `Authorization`, are served as usual.
 */
function guardedApi({ settings, logger, metrics, apiKeys, liveKeys, handle }: GuardDeps, limits: RateLimits) {
  return async (request: Request, url: URL, surface: "graphql" | "rest"): Promise<Response> => {
    const policy = cors(request, settings.corsOrigins);
    const finish = (response: Response) => withHeaders(response, (headers) => policy.decorate(headers));
    if (policy.preflight) return finish(policy.preflight);
    const address = clientAddress(request, settings.trustProxy);
    const authorization = request.headers.get("authorization");
    // past the failed-authentication limit, only keys that may authenticate run (docs/limits.md, its section
    // "Failed authentications"); a cached valid key always does, so its address's count is not read
    const limited =
      authorization && !holdsValidKey(authorization, new Date(), apiKeys)
        ? await limits.checkAuthFailures(address, authorization)
        : null;
    const blocked = limited && !(await mayAuthenticate(authorization, new Date(), apiKeys, liveKeys)) ? limited : null;
    const session = authorization ? undefined : dashboardCookie(request);
    const cookie = authorization || session ? undefined : portalCookie(request);
    const credential = authorization ?? (session ? `member:${session}` : cookie ? `portal:${cookie}` : null);
    const refusal = blocked ?? (await limits.consumeRequest(credential, address));
    if (refusal) {
      metrics.answered(surface, 429);
      const reason = blocked ? "authentication failures" : "rate limit";
      logger.warn({ method: request.method, path: loggedPath(url.pathname), address, reason }, "request refused");
      const why = blocked ? "failed authentications from this address" : "requests for this API key";
      return finish(rateLimited(surface, refusal, why));
    }
    const response = await handle(request);
    if (response.status === 401 && authorization) {
      await limits.recordAuthFailure(address);
      if (limited) {
        // the index said the key may exist, the database says it cannot authenticate: refused without a read next time
        const hash = presentedKeyHash(authorization);
        if (hash) liveKeys.drop(hash);
        await response.body?.cancel();
        return finish(rateLimited(surface, limited, "failed authentications from this address"));
      }
    }
    return finish(response);
  };
}
