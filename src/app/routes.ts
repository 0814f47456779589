/**
 * The HTTP routes of an app, by path: /graphql (GraphiQL or Yoga), /v1 (the REST adapter), /checkout, /portal,
 * /dashboard, GraphiQL's files, the API reference (/docs), /healthz, /readyz and /metrics. Each request gets an id
 * (`X-Request-Id`), is counted and logged once; a keyed POST runs once per key (app/idempotent.ts).
 */
import { randomUUID } from "node:crypto";
import type { AppSettings } from "../infra/config.js";
import { domainErrorOfDatabaseFailure } from "../infra/database-errors.js";
import type { Logger } from "../infra/logger.js";
import { migrationNames } from "../infra/migrate.js";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { redactCheckoutTokens } from "../domain/payments.js";
import { redactSessionKeys } from "../domain/customer-sessions.js";
import { redactPortalPath } from "../domain/portal.js";
import { redactInvitePath } from "../domain/members.js";
import { createRestHandler, errorResponse } from "../rest/router.js";
import { handleCheckout } from "../pages/checkout.js";
import { handleDocs, isDocsPath } from "../pages/docs.js";
import { createGraphiQL, GRAPHIQL_FILES, isGraphiQLRequest } from "../pages/graphiql.js";
import { createPortalPages } from "../pages/portal.js";
import { createDashboardRoutes } from "../pages/dashboard.js";
import { createSignInLimits, type StoreQuery } from "../infra/rate-limit.js";
import { SIGN_IN_FAILURES_PER_ADDRESS, SIGN_IN_FAILURES_PER_EMAIL, SIGN_IN_WINDOW_SECONDS } from "../domain/members.js";
import { bearerMatches, clientAddress } from "./credentials.js";
import { GRAPHIQL_OPTIONS, type AppYoga } from "./graphql-server.js";
import type { IdempotentRunner } from "./idempotent.js";
import { surfaceOf, type AppMetrics, type Surface } from "./metrics.js";

/** /readyz answers 503 when the database does not answer within this long (ms). */
export const READY_TIMEOUT_MS = 2_000;

/** What the routes answer with. */
export interface RouteDeps {
  prisma: PrismaClient;
  settings: AppSettings;
  logger: Logger;
  /** absolute base URL for links; derived from each request when unset */
  publicUrl?: string;
  yoga: AppYoga;
  metrics: AppMetrics;
  idempotent: IdempotentRunner;
  /** the built customer portal (docs/customer-portal.md); default dist/portal */
  portalDir?: string;
  /**
   * where the dashboard's failed sign-ins are counted (infra/rate-limit.ts): PostgreSQL's RateLimit table, shared by
   * every process, or this process's memory when undefined
   */
  rateLimitStore?: StoreQuery;
}

/** A route's answer to `request` (the path already read as `url`). */
type Route = (request: Request, url: URL) => Promise<Response>;

/**
 * A request path as request logs print it: session keys, checkout tokens, portal links and dashboard invitation
 * links redacted.
 */
export function loggedPath(pathname: string): string {
  return redactInvitePath(redactPortalPath(redactCheckoutTokens(redactSessionKeys(pathname))));
}

/**
 * The app's request handler: routes a request by path, answers a route's thrown database failure as 503 (anything
 * else thrown as a masked 500), counts, times and logs the request and sets its `X-Request-Id`.
 */
export function createRoutes(deps: RouteDeps): (request: Request) => Promise<Response> {
  const { logger, metrics } = deps;
  const route = routeByPath(deps);
  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const idempotencyKey = request.method === "POST" ? request.headers.get("idempotency-key") : null;
    const surface = surfaceOf(url.pathname);
    if (idempotencyKey !== null && surface !== "other") {
      const headers = new Headers(request.headers);
      headers.delete("idempotency-key");
      // the request without its key (a request made from the URL: `new Request(request)` takes only Node's own)
      const unkeyed = new Request(request.url, { method: request.method, headers, body: await request.text() });
      return deps.idempotent(unkeyed, idempotencyKey, surface, handle);
    }
    const started = performance.now();
    const requestId = request.headers.get("x-request-id") ?? randomUUID();
    let response: Response;
    try {
      response = await route(request, url, surface, requestId);
    } catch (e) {
      response = failure(logger, e, requestId);
    }
    const ms = performance.now() - started;
    metrics.answered(surface, response.status, ms / 1000);
    const path = loggedPath(url.pathname);
    logger.info({ requestId, method: request.method, path, status: response.status, ms: Math.round(ms) }, "request");
    return withHeaders(response, (headers) => headers.set("x-request-id", requestId));
  }
  return handle;
}

/** The answer of a route that threw: a database that cannot serve now is a 503 with Retry-After, else a masked 500. */
function failure(logger: Logger, e: unknown, requestId: string): Response {
  const mapped = domainErrorOfDatabaseFailure(e);
  if (mapped) {
    logger.warn({ err: e, requestId }, `request failed: ${mapped.code}`);
    return errorResponse(mapped.code, mapped.message, mapped.fields);
  }
  logger.error({ err: e, requestId }, "request failed");
  return Response.json({ error: { code: "internal_error", message: "Unexpected error." } }, { status: 500 });
}

/** The route of each path; an unknown path is a 404 `not_found`. */
function routeByPath(deps: RouteDeps) {
  const { yoga, settings, publicUrl, prisma } = deps;
  const rest = createRestHandler({ yoga, publicUrl });
  const graphiql = createGraphiQL(GRAPHIQL_OPTIONS);
  const operations = operationalRoutes(deps);
  const pages = pageRoutes(deps);
  return async (request: Request, url: URL, surface: Surface, requestId: string): Promise<Response> => {
    const path = url.pathname;
    if (surface === "graphql" && isGraphiQLRequest(request, path)) return graphiql.page(request);
    if (surface === "graphql") {
      // the request as it came (its id goes in the server context); cookies an operation sets (the portal's
      // sign-out clears its own): GraphQLContext.responseCookies
      const responseCookies: string[] = [];
      const response = await yoga.fetch(request, { responseCookies, requestId });
      for (const cookie of responseCookies) response.headers.append("set-cookie", cookie);
      return response;
    }
    if (surface === "rest") return rest(request, requestId);
    if (/^\/checkout\/[A-Za-z0-9_]+\/?$/.test(path)) {
      const context = { prisma, now: () => new Date(), settings, baseUrl: publicUrl ?? url.origin };
      return handleCheckout(request, path.split("/")[2], context);
    }
    if (path === "/portal" || path.startsWith("/portal/")) return (await pages.portal(request))!;
    if (path === "/dashboard" || path.startsWith("/dashboard/")) return (await pages.dashboard(request))!;
    if (path.startsWith(GRAPHIQL_FILES)) return graphiql.file(request, path.slice(GRAPHIQL_FILES.length));
    if (isDocsPath(path)) return handleDocs(request);
    const operational = operations.get(path);
    if (operational) return operational(request, url);
    return Response.json(
      { error: { code: "not_found", message: `No route for ${request.method} ${path}` } },
      { status: 404 },
    );
  };
}

/**
 * The customer portal's pages (pages/portal.ts; its data comes from /graphql) and the dashboard's sign-in routes
 * (pages/dashboard.ts), whose failed sign-ins are counted where the request limits are.
 */
function pageRoutes({ prisma, settings, publicUrl, portalDir, rateLimitStore }: RouteDeps) {
  return {
    portal: createPortalPages({ prisma, portalDir, publicUrl }),
    dashboard: createDashboardRoutes({
      prisma,
      publicUrl,
      clientAddress: (request) => clientAddress(request, settings.trustProxy),
      signInLimits: createSignInLimits(
        {
          perEmail: SIGN_IN_FAILURES_PER_EMAIL,
          perAddress: SIGN_IN_FAILURES_PER_ADDRESS,
          windowSeconds: SIGN_IN_WINDOW_SECONDS,
        },
        rateLimitStore,
      ),
    }),
  };
}

/** /healthz, /readyz and /metrics (docs/limits.md "Metrics and readiness"). */
function operationalRoutes({ prisma, settings, metrics }: RouteDeps): Map<string, Route> {
  const holdsMetricsToken = (request: Request) =>
    bearerMatches(request.headers.get("authorization"), settings.metricsToken);
  return new Map<string, Route>([
    ["/healthz", async () => Response.json({ status: "ok" })],
    [
      "/readyz",
      async (request) => {
        const r = await ready(prisma);
        const detail = holdsMetricsToken(request) ? r.detail : r.reason;
        return Response.json({ status: r.ok ? "ready" : "not_ready", detail }, { status: r.ok ? 200 : 503 });
      },
    ],
    [
      "/metrics",
      async (request) => {
        // behind METRICS_TOKEN: off without it
        if (!settings.metricsToken)
          return errorResponse("not_found", "No route for /metrics: set METRICS_TOKEN to serve metrics");
        if (!holdsMetricsToken(request)) {
          const response = errorResponse(
            "authentication_required",
            "/metrics needs Authorization: Bearer <METRICS_TOKEN>",
          );
          response.headers.set("www-authenticate", 'Bearer realm="metrics"');
          return response;
        }
        await metrics.business.refresh();
        const registry = metrics.registry;
        return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
      },
    ],
  ]);
}

/**
 * Ready when the database answers within READY_TIMEOUT_MS and every migration is applied.
 * `reason` is what anyone may read; `detail` (the driver's error, the pending migrations) only
 * the holder of METRICS_TOKEN.
 */
async function ready(prisma: PrismaClient): Promise<{ ok: boolean; reason: string; detail: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    const applied = await Promise.race([
      prisma.$queryRaw<{ migration_name: string }[]>`
        SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      timeout,
    ]);
    const names = new Set(applied.map((r) => r.migration_name));
    const missing = (await migrationNames()).filter((n) => !names.has(n));
    return missing.length
      ? { ok: false, reason: "pending migrations", detail: `pending migrations: ${missing.join(", ")}` }
      : { ok: true, reason: "ok", detail: "ok" };
  } catch (e) {
    return { ok: false, reason: "database unreachable", detail: `database unreachable: ${(e as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `response` with its headers changed by `set`: in place, as the headers of every answer made in this process are
 * mutable (`new Response`, `Response.json`, Yoga's), so its body is not wrapped again; on a copy for an answer whose
 * headers are immutable (one `fetch()` returned).
 */
export function withHeaders(response: Response, set: (headers: Headers) => void): Response {
  try {
    set(response.headers);
    return response;
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    const headers = new Headers(response.headers);
    set(headers);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
