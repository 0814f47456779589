/**
 * The HTTP application: /graphql (graphql-yoga), /v1 (REST adapter over the same Yoga instance),
 * /healthz, /readyz, /metrics. `createApp` wires it to a database; `startServer` listens.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createYoga, type GraphiQLOptions } from "graphql-yoga";
import { createInMemoryAPQStore, useAPQ } from "@graphql-yoga/plugin-apq";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { schema } from "./graphql/schema.js";
import { subscriptionsOverSsePlugin } from "./graphql/operation-types.js";
import type { GraphQLContext } from "./graphql/context.js";
import { maskError } from "./graphql/errors.js";
import {
  authenticate,
  holdsValidKey,
  liveApiKeyPrefixes,
  mayAuthenticate,
  presentedKeyHash,
} from "./services/api-keys.js";
import { ApiKeyCache, followApiKeyChanges, LiveApiKeyIndex } from "./services/api-key-cache.js";
import { createRestHandler, errorResponse } from "./rest/router.js";
import { domainErrorOfDatabaseFailure, RETRY_AFTER_SECONDS } from "./infra/database-errors.js";
import { boundFieldErrors, boundMessage } from "./domain/input-limits.js";
import { handleCheckout } from "./pages/checkout.js";
import { handleDocs, isDocsPath } from "./pages/docs.js";
import { createGraphiQL, GRAPHIQL_FILES, isGraphiQLRequest } from "./pages/graphiql.js";
import type { Database } from "./infra/database.js";
import type { Logger } from "./infra/logger.js";
import { redactSessionKeys } from "./domain/customer-sessions.js";
import { redactCheckoutTokens } from "./domain/payments.js";
import { migrationNames } from "./infra/migrate.js";
import { DEFAULT_SETTINGS, type AppSettings, type ServiceRole } from "./infra/config.js";
import { createSmtpMailer, type Mailer } from "./infra/mail.js";
import { startOutboxWorker, type OutboxWorker } from "./services/outbox.js";
import { startBillingRunWorker, type BillingRunWorker } from "./services/billing-run.js";
import { runDunningRound } from "./services/dunning-round.js";
import { startSiiWorker, type SiiWorker } from "./services/sii-sending.js";
import { runIdempotent } from "./services/idempotency.js";
import { requestDatabase, withRequestDatabase } from "./services/request-transaction.js";
import { DomainError } from "./domain/errors.js";
import { registerBusinessMetrics } from "./services/metrics.js";
import { documentLimitPlugins, enforceDeadlines, timeBudgetPlugin } from "./graphql/limits.js";
import { createRateLimits, createSignInLimits, type Refusal } from "./infra/rate-limit.js";
import { cors } from "./infra/http-security.js";
import { socketAddress } from "./http-server.js";
import { createPortalPages } from "./pages/portal.js";
import { authenticatePortal } from "./services/portal.js";
import { authenticateMember } from "./services/members.js";
import { createDashboardRoutes } from "./pages/dashboard.js";
import {
  DASHBOARD_COOKIE,
  DASHBOARD_CSRF_HEADER,
  DASHBOARD_MODE_HEADER,
  redactInvitePath,
  SIGN_IN_FAILURES_PER_ADDRESS,
  SIGN_IN_FAILURES_PER_EMAIL,
  SIGN_IN_WINDOW_SECONDS,
} from "./domain/members.js";
import type { Auth } from "./services/context.js";
import { parseCookies, PORTAL_COOKIE, PORTAL_CSRF_HEADER, redactPortalPath } from "./domain/portal.js";
import { assertIdempotencyKey } from "./domain/idempotency.js";
import type { PrismaClient } from "./infra/prisma/generated/client.js";
import { deleteExpiredEvents, installEventPrinter } from "./services/events.js";
import { startEventStream, type EventStream } from "./services/event-stream.js";
import { startWebhookWorker, type WebhookWorker } from "./services/webhook-delivery.js";
import { startIntervalWorker, type IntervalWorker } from "./infra/interval-worker.js";
import { drainRevenueRound } from "./services/revenue-aggregates.js";
import { restEventPrinter } from "./rest/event-objects.js";
import { EventFeeds, MAX_STREAM_BACKLOG } from "./graphql/event-feed.js";

/** How often the event retention worker deletes expired events (ms). */
export const EVENT_RETENTION_INTERVAL_MS = 10 * 60_000;

/**
 * A request path as request logs print it: session keys, checkout tokens, portal links and dashboard invitation
 * links redacted.
 */
function loggedPath(pathname: string): string {
  return redactInvitePath(redactPortalPath(redactCheckoutTokens(redactSessionKeys(pathname))));
}

/** The customer-portal credential a request carries (its HttpOnly cookie), if any. */
function portalCookie(request: Request): string | undefined {
  return parseCookies(request.headers.get("cookie"))[PORTAL_COOKIE];
}

/**
 * The dashboard session a request carries (its HttpOnly cookie), if any, and when it is the request's credential: a
 * browser holding both a portal and a dashboard cookie sends both to /graphql, so the dashboard's is used when the
 * request carries its CSRF header (the dashboard page sends it) or no portal cookie.
 */
function dashboardCookie(request: Request): string | undefined {
  const cookies = parseCookies(request.headers.get("cookie"));
  const cookie = cookies[DASHBOARD_COOKIE];
  if (cookie === undefined) return undefined;
  return request.headers.has(DASHBOARD_CSRF_HEADER) || cookies[PORTAL_COOKIE] === undefined ? cookie : undefined;
}

/**
 * Apollo's automatic persisted queries (docs/graphql.md "Persisted queries"): the documents sent
 * with their SHA-256 hash are kept in memory, per process, in an LRU of at most this many, each for
 * APQ_TTL_MS after it was stored; a hash no longer kept answers `PersistedQueryNotFound` and the
 * client sends the query again.
 */
export const APQ_MAX_DOCUMENTS = 1_000;
export const APQ_TTL_MS = 60 * 60 * 1000;

/** /readyz answers 503 when the database does not answer within this long (ms). */
export const READY_TIMEOUT_MS = 2_000;

/**
 * GraphiQL at GET /graphql (Accept: text/html; pages/graphiql.ts): the page and its files come from
 * the service (`@graphql-yoga/render-graphiql`'s build, from node_modules), so it loads with no
 * request to a CDN and works offline. The headers editor starts as `{"Authorization": "Bearer "}`
 * for the API key, and GraphiQL keeps what is typed there in the browser's localStorage
 * (`shouldPersistHeaders`), so the key is remembered in that browser.
 */
export const GRAPHIQL_OPTIONS: GraphiQLOptions = {
  title: "Billing API",
  defaultHeaders: '{"Authorization": "Bearer "}',
  shouldPersistHeaders: true,
  defaultEditorToolsVisibility: "headers",
};

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

/** True when `authorization` is `Bearer <token>` (scheme in any case). Compared by hashes, in constant time. */
function bearerMatches(authorization: string | null, token: string | undefined): boolean {
  if (!token || !authorization) return false;
  const m = /^bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return false;
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(m[1]), digest(token));
}

/** What a `worker` process answers over HTTP (docs/scaling.md "Roles"); anything else is a 404. */
export const WORKER_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

export interface AppOptions {
  database: Database;
  logger: Logger;
  /**
   * SERVICE_ROLE (docs/scaling.md "Roles"; default `all`): `api` starts no background worker, whatever the intervals
   * below say; `worker` answers only WORKER_PATHS over HTTP (anything else: 404 `not_found` naming the role)
   */
  role?: ServiceRole;
  /** absolute base URL for links; derived from each request when unset */
  publicUrl?: string;
  /** run-time settings of the use cases (infra/config.ts); defaults for what is not given */
  settings?: Partial<AppSettings>;
  /**
   * outbox: a Mailer to use instead of SMTP_URL's (tests); how often the retry worker runs (ms, default 30 s; 0: no
   * worker)
   */
  mailer?: Mailer | null;
  outboxIntervalMs?: number;
  /** how often the billing run runs inside the server (ms; default 0: never; BILLING_RUN_INTERVAL_SECONDS) */
  billingRunIntervalMs?: number;
  /**
   * how often the dunning worker runs inside the server (ms; default 0: never, as in tests; main.ts passes
   * DUNNING_INTERVAL_SECONDS, default 3600): the overdue sweep (docs/dunning.md "The worker")
   */
  dunningIntervalMs?: number;
  /**
   * how often the revenue analytics drain runs inside the server (ms; default 0: never, as in tests; main.ts passes
   * ANALYTICS_DRAIN_INTERVAL_SECONDS, default 10): dirty customers into the maintained aggregates
   * (services/revenue-aggregates.ts drainRevenueRound)
   */
  analyticsDrainIntervalMs?: number;
  /**
   * SII sending (docs/sii-sending.md): how often the worker uploads queued DTEs and polls SII (ms; default 0: no
   * worker, as in tests; main.ts passes SII_SEND_INTERVAL_SECONDS)
   */
  siiIntervalMs?: number;
  /** the built customer portal (docs/customer-portal.md); default dist/portal */
  portalDir?: string;
  /**
   * webhook delivery in this process (docs/webhooks.md; default true): the worker that sends webhook messages, woken
   * on commit
   */
  webhookWorker?: boolean;
  /** how often expired events are deleted (ms; default EVENT_RETENTION_INTERVAL_MS; 0: never in this process) */
  eventRetentionIntervalMs?: number;
  /**
   * events a live stream (the GraphQL `events` subscription) may have waiting unread before it is cut off (default
   * MAX_STREAM_BACKLOG; tests lower it)
   */
  eventStreamBacklog?: number;
}

export interface App {
  handle(request: Request): Promise<Response>;
  yoga: ReturnType<typeof createYoga<Record<string, unknown>, GraphQLContext>>;
  registry: Registry;
  /** SMTP mailer (null without SMTP_URL) */
  mailer: Mailer | null;
  /**
   * ends every open live event stream (each gets a `service_unavailable` error, then its answer completes) and
   * refuses new ones: called when the server starts draining, so streams do not hold the drain (main.ts)
   */
  endStreams(): void;
  /**
   * stops the background workers (the outbox, the billing run, the SII worker, webhook delivery, event retention): no
   * new round starts, a running round is asked to stop between items (its AbortSignal) and awaited; requests are
   * still answered (main.ts calls it when the server starts draining). Resolves once every round has ended; calling
   * it again waits for the same.
   */
  stopWorkers(): Promise<void>;
  /**
   * stops background work (stopWorkers, the live event streams, the event listener) and closes the mailer; the
   * database stays open
   */
  close(): Promise<void>;
  /**
   * resolves once the process listens to notifications (true), or could not (false): until then the API key cache
   * caches nothing (services/api-key-cache.ts followApiKeyChanges); tests wait for it
   */
  listening: Promise<boolean>;
}

export function createApp({
  database,
  logger,
  role = "all",
  publicUrl,
  settings: given,
  mailer: givenMailer,
  outboxIntervalMs = 30_000,
  billingRunIntervalMs = 0,
  dunningIntervalMs = 0,
  analyticsDrainIntervalMs = 0,
  siiIntervalMs = 0,
  portalDir,
  webhookWorker: webhooksEnabled = true,
  eventRetentionIntervalMs = EVENT_RETENTION_INTERVAL_MS,
  eventStreamBacklog = MAX_STREAM_BACKLOG,
}: AppOptions): App {
  const { prisma } = database;
  const settings: AppSettings = { ...DEFAULT_SETTINGS, ...given };
  // an `api` process leaves every background worker to the `worker` processes
  if (role === "api") {
    [
      outboxIntervalMs,
      billingRunIntervalMs,
      dunningIntervalMs,
      siiIntervalMs,
      eventRetentionIntervalMs,
      analyticsDrainIntervalMs,
    ] = [0, 0, 0, 0, 0, 0];
    webhooksEnabled = false;
  }
  // events print their object as the REST API does (rest/event-objects.ts, services/events.ts)
  installEventPrinter(restEventPrinter);
  // committed events, new webhook messages and API key changes as they happen (LISTEN/NOTIFY): the webhook worker and
  // the GraphQL event stream wake on them (docs/webhooks.md "Waking on commit"), the key caches follow them
  const eventStream: Promise<EventStream | null> = startEventStream(database).catch((err) => {
    logger.error({ err }, "cannot listen to committed events; webhooks are sent by polling");
    return null;
  });
  const webhooks: WebhookWorker | null = webhooksEnabled
    ? startWebhookWorker({ prisma, settings, logger }, eventStream)
    : null;
  const retention: IntervalWorker | null =
    eventRetentionIntervalMs > 0
      ? startIntervalWorker(
          (signal) =>
            deleteExpiredEvents(prisma, new Date(), settings.eventRetentionDays, signal).then(
              (deleted) => deleted && logger.info({ deleted }, "expired events deleted"),
              (err) => logger.error({ err }, "deleting expired events failed"),
            ),
          eventRetentionIntervalMs,
        )
      : null;
  // API keys by hash, kept API_KEY_CACHE_TTL_SECONDS (services/api-key-cache.ts, docs/operations.md)
  const apiKeys = new ApiKeyCache(settings.apiKeyCacheTtlSeconds * 1000);
  // the live keys' hash prefixes, read only for a client address past the failed-authentication limit presenting a
  // key the cache does not hold (services/api-key-cache.ts, docs/limits.md "Failed authentications")
  const liveKeys = new LiveApiKeyIndex(() => liveApiKeyPrefixes(prisma));
  // keys revoked or created by any process reach both through the listener; nothing is cached while it is not
  // listening (docs/operations.md "API key cache")
  const listening = followApiKeyChanges(eventStream, apiKeys, liveKeys);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // business and health series (services/metrics.ts): database-backed ones are read at each scrape
  const business = registerBusinessMetrics(registry, prisma, database.pool);
  // outbox (docs/reminders.md): with a mailer, due messages are retried by an interval in this process
  const mailer = givenMailer !== undefined ? givenMailer : settings.smtpUrl ? createSmtpMailer(settings.smtpUrl) : null;
  const worker: OutboxWorker | null =
    mailer && outboxIntervalMs > 0 ? startOutboxWorker({ prisma, mailer, logger, settings }, outboxIntervalMs) : null;
  // billing run (docs/billing-run.md): off unless configured; safe next to other runners (SKIP LOCKED claims)
  const billingWorker: BillingRunWorker | null =
    billingRunIntervalMs > 0
      ? startBillingRunWorker({ prisma, settings }, billingRunIntervalMs, (summary, error, seconds) => {
          business.billingRun(summary, error, seconds);
          if (error) logger.error({ err: error }, "billing run failed");
          else if (summary && (summary.cycles || summary.cancelled || summary.collected || summary.failed))
            logger.info({ ...summary }, "billing run");
        })
      : null;
  // dunning (docs/dunning.md "The worker"): the overdue sweep, then the campaigns' attempts; safe next to other
  // processes' (SKIP LOCKED claims, the runs' leases)
  const dunningWorker: IntervalWorker | null =
    dunningIntervalMs > 0
      ? startIntervalWorker(
          (signal) =>
            runDunningRound({
              prisma,
              settings,
              now: () => new Date(),
              signal,
              sendsMail: mailer !== null,
              onError: (run, err) => logger.error({ err, run }, "a dunning attempt failed"),
            }).then(({ summary, failures }) => {
              for (const { step, error } of failures) logger.error({ err: error }, `the dunning ${step} failed`);
              if (summary.swept || summary.entered || summary.attempts || summary.paid || summary.failed)
                logger.info({ ...summary }, "dunning round");
            }),
          dunningIntervalMs,
        )
      : null;
  // revenue analytics (docs/analytics.md "How it is computed"): dirty customers drained into the maintained
  // aggregates, so readers rarely find work; safe next to other processes' (a try-lock per organization and mode)
  const analyticsDrain: IntervalWorker | null =
    analyticsDrainIntervalMs > 0
      ? startIntervalWorker(
          (signal) =>
            drainRevenueRound(prisma, signal).then(
              (summary) => summary.customers && logger.debug({ ...summary }, "revenue analytics drained"),
              (err) => logger.error({ err }, "draining revenue analytics failed"),
            ),
          analyticsDrainIntervalMs,
        )
      : null;
  // SII (docs/sii-sending.md): queued DTEs are uploaded and their status polled by an interval in this process
  const siiWorker: SiiWorker | null =
    siiIntervalMs > 0 ? startSiiWorker({ prisma, logger, settings }, siiIntervalMs) : null;
  // the live event streams (GraphQL `events` subscriptions; graphql/event-feed.ts), each fed by the one LISTEN
  const streamsEnded = new Counter({
    name: "billing_event_streams_ended_total",
    help: "Live event streams the server ended: behind (the client read too slowly), shutdown",
    labelNames: ["reason"],
    registers: [registry],
  });
  const eventFeeds = new EventFeeds({
    stream: eventStream,
    maxBacklog: eventStreamBacklog,
    onEnd: (reason) => streamsEnded.inc({ reason }),
  });
  new Gauge({
    name: "billing_event_streams_open",
    help: "Live event streams (GraphQL events subscriptions) open now",
    registers: [registry],
    collect() {
      this.set(eventFeeds.size);
    },
  });
  const requests = new Counter({
    name: "billing_http_requests_total",
    help: "HTTP requests by surface and status",
    labelNames: ["surface", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "billing_http_request_duration_seconds",
    help: "HTTP request duration by surface",
    labelNames: ["surface"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  // GraphQL limits (graphql/limits.ts, docs/limits.md): document limits, cost, time budget
  enforceDeadlines(schema);
  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    // APQ first: it fills in the query of a hash at onParams, before the document limits parse it
    plugins: [
      useAPQ({ store: createInMemoryAPQStore({ max: APQ_MAX_DOCUMENTS, ttl: APQ_TTL_MS }) }),
      ...documentLimitPlugins(),
      subscriptionsOverSsePlugin(),
      timeBudgetPlugin(settings.graphqlTimeBudgetMs),
    ],
    cors: false, // CORS is answered for /graphql and /v1 alike in `guarded` (infra/http-security.ts)
    // the body's size is bounded before a request is made (http-server.ts MAX_BODY_BYTES, 5 MiB: 413 in the
    // surface's error shape); Yoga's own bound (25 MB) would pipe every body through one more web stream
    maxRequestBodySize: false,
    graphqlEndpoint: "/graphql",
    // GraphiQL is answered before Yoga (handle() below, pages/graphiql.ts), with files of the service's own
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError: (error) => maskError(error, logger) },
    context: async ({ request, responseCookies, requestId: given }) => {
      // the id handle() gave the request (/graphql), else the header of an operation run in process (REST)
      const requestId =
        (typeof given === "string" ? given : null) ?? request.headers.get("x-request-id") ?? randomUUID();
      // a keyed request runs in its own transaction (idempotent() below): every query goes there
      const db = requestDatabase() ?? prisma;
      const auth = await requestAuth(db, request);
      const baseUrl = publicUrl ?? new URL(request.url).origin;
      return {
        prisma: db,
        auth,
        now: () => new Date(),
        settings,
        baseUrl,
        requestId,
        logger: logger.child({ requestId }),
        mailer,
        responseCookies: Array.isArray(responseCookies) ? (responseCookies as string[]) : undefined,
        eventFeeds,
      } as GraphQLContext;
    },
  });

  const rest = createRestHandler({ yoga, publicUrl });
  const graphiql = createGraphiQL(GRAPHIQL_OPTIONS);
  // the customer portal's pages (pages/portal.ts); its data comes from /graphql
  const portalPages = createPortalPages({ prisma, portalDir, publicUrl });
  // the dashboard's sign-in routes (pages/dashboard.ts); failed sign-ins counted where the request limits are
  const dashboardRoutes = createDashboardRoutes({
    prisma,
    publicUrl,
    clientAddress: (request) => clientAddress(request, settings.trustProxy),
    signInLimits: createSignInLimits(
      {
        perEmail: SIGN_IN_FAILURES_PER_EMAIL,
        perAddress: SIGN_IN_FAILURES_PER_ADDRESS,
        windowSeconds: SIGN_IN_WINDOW_SECONDS,
      },
      settings.rateLimitStore === "database" ? database.query : undefined,
    ),
  });

  /**
   * Who a request is: its API key (Authorization), else its dashboard session (cookie, with the X-Dashboard-CSRF
   * and X-Dashboard-Mode headers; services/members.ts), else its customer-portal credential (cookie, with the
   * X-Portal-CSRF header; services/portal.ts), else a 401.
   */
  async function requestAuth(db: PrismaClient, request: Request): Promise<Auth> {
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
  }

  /**
   * Ready when the database answers within READY_TIMEOUT_MS and every migration is applied.
   * `reason` is what anyone may read; `detail` (the driver's error, the pending migrations) only
   * the holder of METRICS_TOKEN.
   */
  async function ready(): Promise<{ ok: boolean; reason: string; detail: string }> {
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
   * A POST to /v1 or /graphql with an `Idempotency-Key` header runs once per key (of the key's
   * organization and mode); the same key again replays the first answer with
   * `Idempotent-Replayed: true` (domain/idempotency.ts). The whole request runs in one database
   * transaction with the key and its stored answer (services/idempotency.ts): every query of the
   * request goes through it as the ambient database (request-transaction.ts), a 5xx answer (or a
   * GraphQL `internal_error`) rolls it all back and frees the key. Without a valid API key the
   * request runs as usual (and answers 401).
   */
  async function idempotent(
    request: Request,
    key: string,
    surface: string,
    run: (request: Request) => Promise<Response>,
  ): Promise<Response> {
    let auth;
    try {
      auth = await requestAuth(prisma, request);
      if (auth.portal) {
        // the portal's keys live apart from the API keys' (same organization and mode)
        assertIdempotencyKey(key);
        key = `portal/${auth.portal.customerId}/${key}`;
      }
    } catch (e) {
      // no valid key: the request runs as usual and answers 401; anything else (a database that
      // cannot serve) must not run the request without its key
      if (e instanceof DomainError && (e.status === 401 || e.status === 403)) return run(request);
      return keyedFailure(e, key, surface);
    }
    const url = new URL(request.url);
    const body = await request.text();
    const replay = (r: Request) => new Request(r.url, { method: r.method, headers: r.headers, body });
    let firstHeaders: Headers | null = null;
    try {
      const answer = await runIdempotent(
        prisma,
        auth,
        { key, operation: `POST ${url.pathname}`, body },
        new Date(),
        (db) =>
          withRequestDatabase(db, async () => {
            const response = await run(replay(request));
            firstHeaders = response.headers;
            return { status: response.status, body: await response.text() };
          }),
        (answer) => answer.status >= 500 || (surface === "graphql" && hasInternalError(answer.body)),
      );
      const headers =
        firstHeaders ??
        new Headers({ "content-type": "application/json; charset=utf-8", "idempotent-replayed": "true" });
      return new Response(answer.body || null, { status: answer.status, headers });
    } catch (e) {
      // not the request's own answer: its transaction could not start, store or commit (the
      // request's errors are answers, handle() catches them); everything is rolled back
      return keyedFailure(e, key, surface);
    }
  }

  /**
   * The answer of a keyed request that failed outside the request itself (authentication or its
   * transaction could not run, start, store or commit; everything is rolled back, the key stays
   * free): a DomainError as itself, a database that cannot serve as 503 with Retry-After
   * (infra/database-errors.ts), anything else a logged, masked 500.
   */
  function keyedFailure(e: unknown, key: string, surface: string): Response {
    // a database that cannot serve (no connection for the transaction, a timeout) is a 503 with
    // Retry-After, as everywhere else (infra/database-errors.ts)
    const known = e instanceof DomainError ? e : domainErrorOfDatabaseFailure(e);
    if (!known) logger.error({ err: e, idempotencyKey: key }, "keyed request failed; rolled back, the key stays free");
    else if (!(e instanceof DomainError))
      logger.warn(
        { err: e, idempotencyKey: key },
        `keyed request failed: ${known.code}; rolled back, the key stays free`,
      );
    if (known && surface === "rest") return errorResponse(known.code, known.message, known.fields);
    const error = known
      ? {
          code: known.code,
          message: boundMessage(known.message),
          ...(known.fields ? { fields: boundFieldErrors(known.fields) } : {}),
        }
      : { code: "internal_error", message: "Unexpected error." };
    const status = known ? known.status : 500;
    const headers: Record<string, string> = status === 503 ? { "retry-after": String(RETRY_AFTER_SECONDS) } : {};
    return Response.json(
      surface === "graphql" ? { errors: [{ message: error.message, extensions: error }] } : { error },
      { status, headers },
    );
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const idempotencyKey = request.method === "POST" ? request.headers.get("idempotency-key") : null;
    if (idempotencyKey !== null && (url.pathname.startsWith("/graphql") || url.pathname.startsWith("/v1"))) {
      const surface = url.pathname.startsWith("/graphql") ? "graphql" : "rest";
      const headers = new Headers(request.headers);
      headers.delete("idempotency-key");
      // the request without its key (a request made from the URL: `new Request(request)` takes only Node's own)
      const unkeyed = new Request(request.url, { method: request.method, headers, body: await request.text() });
      return idempotent(unkeyed, idempotencyKey, surface, handle);
    }
    const surface = url.pathname.startsWith("/graphql") ? "graphql" : url.pathname.startsWith("/v1") ? "rest" : "other";
    const started = performance.now();
    const requestId = request.headers.get("x-request-id") ?? randomUUID();
    let response: Response;
    try {
      if (surface === "graphql" && isGraphiQLRequest(request, url.pathname)) response = await graphiql.page(request);
      else if (surface === "graphql") {
        // the request as it came (its id goes in the server context); cookies an operation sets (the portal's
        // sign-out clears its own): GraphQLContext.responseCookies
        const responseCookies: string[] = [];
        response = await yoga.fetch(request, { responseCookies, requestId });
        for (const cookie of responseCookies) response.headers.append("set-cookie", cookie);
      } else if (surface === "rest") response = await rest(request, requestId);
      else if (/^\/checkout\/[A-Za-z0-9_]+\/?$/.test(url.pathname)) {
        const token = url.pathname.split("/")[2];
        response = await handleCheckout(request, token, {
          prisma,
          now: () => new Date(),
          settings,
          baseUrl: publicUrl ?? url.origin,
        });
      } else if (url.pathname === "/portal" || url.pathname.startsWith("/portal/")) {
        response = (await portalPages(request))!;
      } else if (url.pathname === "/dashboard" || url.pathname.startsWith("/dashboard/")) {
        response = (await dashboardRoutes(request))!;
      } else if (url.pathname.startsWith(GRAPHIQL_FILES))
        response = await graphiql.file(request, url.pathname.slice(GRAPHIQL_FILES.length));
      else if (isDocsPath(url.pathname)) response = await handleDocs(request);
      else if (url.pathname === "/healthz") response = Response.json({ status: "ok" });
      else if (url.pathname === "/readyz") {
        const r = await ready();
        const detail = bearerMatches(request.headers.get("authorization"), settings.metricsToken) ? r.detail : r.reason;
        response = Response.json({ status: r.ok ? "ready" : "not_ready", detail }, { status: r.ok ? 200 : 503 });
      } else if (url.pathname === "/metrics") {
        // behind METRICS_TOKEN (docs/limits.md "Metrics and readiness"): off without it
        if (!settings.metricsToken)
          response = errorResponse("not_found", "No route for /metrics: set METRICS_TOKEN to serve metrics");
        else if (!bearerMatches(request.headers.get("authorization"), settings.metricsToken)) {
          response = errorResponse("authentication_required", "/metrics needs Authorization: Bearer <METRICS_TOKEN>");
          response.headers.set("www-authenticate", 'Bearer realm="metrics"');
        } else {
          await business.refresh();
          response = new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
        }
      } else {
        response = Response.json(
          { error: { code: "not_found", message: `No route for ${request.method} ${url.pathname}` } },
          { status: 404 },
        );
      }
    } catch (e) {
      // a database that cannot serve now is a 503 with Retry-After (infra/database-errors.ts); anything else a masked
      // 500
      const mapped = domainErrorOfDatabaseFailure(e);
      if (mapped) {
        logger.warn({ err: e, requestId }, `request failed: ${mapped.code}`);
        response = errorResponse(mapped.code, mapped.message, mapped.fields);
      } else {
        logger.error({ err: e, requestId }, "request failed");
        response = Response.json({ error: { code: "internal_error", message: "Unexpected error." } }, { status: 500 });
      }
    }
    const ms = performance.now() - started;
    requests.inc({ surface, status: String(response.status) });
    duration.observe({ surface }, ms / 1000);
    logger.info(
      {
        requestId,
        method: request.method,
        path: loggedPath(url.pathname),
        status: response.status,
        ms: Math.round(ms),
      },
      "request",
    );
    return withHeaders(response, (headers) => headers.set("x-request-id", requestId));
  }

  // an API key's bucket is its stored hash, which authenticate() then finds computed (hashed once per request);
  // anything else presented (a malformed header, a portal cookie) gets rate-limit.ts's own digest. Counted in
  // PostgreSQL's RateLimit table, shared by every process, unless RATE_LIMIT_STORE=memory; in memory on the
  // embedded database (database.query is PostgreSQL's only)
  const limits = createRateLimits(
    settings,
    presentedKeyHash,
    settings.rateLimitStore === "database" ? database.query : undefined,
  );

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
   * What every request passes first (docs/limits.md): on /graphql and /v1, CORS (preflights
   * answered here), the failed-authentication limit of the client address and the rate limit of
   * the API key; a 401 to a request that carried a key counts as a failed authentication. Past the
   * limit, a request whose `Authorization` cannot authenticate (`mayAuthenticate`: no statement of
   * its own) is refused with 429 before it runs, and one that ran and answered 401 gets the 429
   * instead; a valid key, and a request without `Authorization`, are served as usual. Security
   * headers are added by http-server.ts for every answer.
   */
  async function guarded(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (role === "worker" && !WORKER_PATHS.has(url.pathname))
      return errorResponse(
        "not_found",
        `No route for ${request.method} ${url.pathname}: this process runs the background workers ` +
          `(SERVICE_ROLE=worker) and answers only ${[...WORKER_PATHS].join(", ")}`,
      );
    const surface = url.pathname.startsWith("/graphql") ? "graphql" : url.pathname.startsWith("/v1") ? "rest" : null;
    if (!surface) {
      // the portal's pages are limited per client address (a session key is tried there)
      // the dashboard's sign-in routes likewise (besides the failed sign-in limits of pages/dashboard.ts)
      const pages = ["/portal", "/dashboard"];
      if (pages.some((p) => url.pathname === p || url.pathname.startsWith(`${p}/`))) {
        const address = clientAddress(request, settings.trustProxy);
        const refusal = await limits.consumeRequest(null, address);
        if (refusal) return rateLimited("rest", refusal, "requests from this address");
      }
      return handle(request);
    }
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
    // a dashboard session and a portal credential are limited like an API key: per credential
    const session = authorization ? undefined : dashboardCookie(request);
    const cookie = authorization || session ? undefined : portalCookie(request);
    const credential = authorization ?? (session ? `member:${session}` : cookie ? `portal:${cookie}` : null);
    const refusal = blocked ?? (await limits.consumeRequest(credential, address));
    if (refusal) {
      requests.inc({ surface, status: "429" });
      logger.warn(
        {
          method: request.method,
          path: loggedPath(url.pathname),
          address,
          reason: blocked ? "authentication failures" : "rate limit",
        },
        "request refused",
      );
      return finish(
        rateLimited(
          surface,
          refusal,
          blocked ? "failed authentications from this address" : "requests for this API key",
        ),
      );
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
  }

  let workersStopped: Promise<void> | null = null;
  function stopWorkers(): Promise<void> {
    workersStopped ??= Promise.all([
      worker?.stop(),
      billingWorker?.stop(),
      dunningWorker?.stop(),
      analyticsDrain?.stop(),
      siiWorker?.stop(),
      webhooks?.stop(),
      retention?.stop(),
    ]).then(() => undefined);
    return workersStopped;
  }

  async function close(): Promise<void> {
    eventFeeds.close();
    await stopWorkers();
    await (await eventStream)?.close();
    mailer?.close();
    apiKeys.close();
    liveKeys.close();
  }

  return {
    handle: guarded,
    yoga,
    registry,
    mailer,
    endStreams: () => eventFeeds.close(),
    stopWorkers,
    close,
    listening,
  };
}

/**
 * `response` with its headers changed by `set`: in place, as the headers of every answer made in this process are
 * mutable (`new Response`, `Response.json`, Yoga's), so its body is not wrapped again; on a copy for an answer whose
 * headers are immutable (one `fetch()` returned).
 */
function withHeaders(response: Response, set: (headers: Headers) => void): Response {
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

/**
 * True when a GraphQL answer (200 with `errors`) reports a failure of the service rather than of
 * the request: an error with code `internal_error` (or none), or with an HTTP status of 5xx.
 */
function hasInternalError(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { errors?: { extensions?: { code?: string; http?: { status?: number } } }[] };
    return (parsed.errors ?? []).some(
      (e) => !e.extensions?.code || e.extensions.code === "internal_error" || (e.extensions.http?.status ?? 0) >= 500,
    );
  } catch {
    return false;
  }
}

export { createHttpServer, drainHttpServer, listen, MAX_BODY_BYTES } from "./http-server.js";
