/**
 * The HTTP application: /graphql (graphql-yoga), /v1 (REST adapter over the same Yoga instance), the pages,
 * /healthz, /readyz, /metrics, and the background workers of the process. `createApp` wires the parts of src/app/
 * to a database (docs/architecture.md "The server's parts"); `startServer` listens:
 *
 * - app/credentials.ts: who a request is (API key, dashboard session, portal credential) and its client address;
 * - app/graphql-server.ts: Yoga with its plugins and the operations' context;
 * - app/routes.ts: the routes by path, the request id, the request log and its series;
 * - app/guard.ts: what a request passes first (role, CORS, rate and failed-authentication limits);
 * - app/idempotent.ts: keyed requests (Idempotency-Key);
 * - app/metrics.ts: the series of /metrics;
 * - app/workers.ts: the background workers, and stopping them.
 */
import type { Registry } from "prom-client";
import type { Database } from "./infra/database.js";
import type { Logger } from "./infra/logger.js";
import { DEFAULT_SETTINGS, type AppSettings, type ServiceRole } from "./infra/config.js";
import { createSmtpMailer, type Mailer } from "./infra/mail.js";
import { ApiKeyCache, followApiKeyChanges, LiveApiKeyIndex } from "./services/api-key-cache.js";
import { liveApiKeyPrefixes } from "./services/api-keys.js";
import { installEventPrinter } from "./services/events.js";
import { restEventPrinter } from "./rest/event-objects.js";
import { EventFeeds, MAX_STREAM_BACKLOG } from "./graphql/event-feed.js";
import { requestAuthWith } from "./app/credentials.js";
import { createGraphQLServer, type AppYoga } from "./app/graphql-server.js";
import { createRoutes } from "./app/routes.js";
import { createGuard } from "./app/guard.js";
import { idempotentRunner } from "./app/idempotent.js";
import { createAppMetrics } from "./app/metrics.js";
import { EVENT_RETENTION_INTERVAL_MS, intervalsOfRole, startBackgroundWorkers } from "./app/workers.js";

export { clientAddress } from "./app/credentials.js";
export { APQ_MAX_DOCUMENTS, APQ_TTL_MS, GRAPHIQL_OPTIONS } from "./app/graphql-server.js";
export { READY_TIMEOUT_MS } from "./app/routes.js";
export { WORKER_PATHS } from "./app/guard.js";
export { EVENT_RETENTION_INTERVAL_MS } from "./app/workers.js";

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
  yoga: AppYoga;
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

/** The app of a database: its request handler, its Yoga, its series, and its background workers (AppOptions). */
export function createApp(options: AppOptions): App {
  const { database, logger, publicUrl, role = "all" } = options;
  const { prisma } = database;
  const settings: AppSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  // events print their object as the REST API does (rest/event-objects.ts, services/events.ts)
  installEventPrinter(restEventPrinter);
  const mailer =
    options.mailer !== undefined ? options.mailer : settings.smtpUrl ? createSmtpMailer(settings.smtpUrl) : null;
  // the live event streams (GraphQL `events` subscriptions; graphql/event-feed.ts) are counted at each scrape
  const metrics = createAppMetrics(database, () => eventFeeds.size);
  const workers = startBackgroundWorkers(
    { database, settings, logger, mailer, onBillingRun: metrics.business.billingRun },
    intervalsOfRole(role, {
      outboxIntervalMs: options.outboxIntervalMs ?? 30_000,
      billingRunIntervalMs: options.billingRunIntervalMs ?? 0,
      dunningIntervalMs: options.dunningIntervalMs ?? 0,
      analyticsDrainIntervalMs: options.analyticsDrainIntervalMs ?? 0,
      siiIntervalMs: options.siiIntervalMs ?? 0,
      eventRetentionIntervalMs: options.eventRetentionIntervalMs ?? EVENT_RETENTION_INTERVAL_MS,
      webhookWorker: options.webhookWorker ?? true,
    }),
  );
  // each live stream is fed by the one LISTEN (workers.eventStream)
  const eventFeeds = new EventFeeds({
    stream: workers.eventStream,
    maxBacklog: options.eventStreamBacklog ?? MAX_STREAM_BACKLOG,
    onEnd: metrics.streamEnded,
  });
  // API keys by hash, kept API_KEY_CACHE_TTL_SECONDS (services/api-key-cache.ts, docs/operations.md); the live keys'
  // hash prefixes, read only for a client address past the failed-authentication limit presenting a key the cache
  // does not hold (docs/limits.md "Failed authentications"); keys revoked or created by any process reach both
  // through the listener, and nothing is cached while it is not listening (docs/operations.md "API key cache")
  const apiKeys = new ApiKeyCache(settings.apiKeyCacheTtlSeconds * 1000);
  const liveKeys = new LiveApiKeyIndex(() => liveApiKeyPrefixes(prisma));
  const listening = followApiKeyChanges(workers.eventStream, apiKeys, liveKeys);
  const requestAuth = requestAuthWith(apiKeys);
  // requests and failed sign-ins are counted in PostgreSQL's RateLimit table, shared by every process, unless
  // RATE_LIMIT_STORE=memory; in memory on the embedded database (database.query is PostgreSQL's only)
  const rateLimitStore = settings.rateLimitStore === "database" ? database.query : undefined;
  const yoga = createGraphQLServer({ prisma, settings, logger, publicUrl, mailer, eventFeeds, requestAuth });
  const handle = createRoutes({
    prisma,
    settings,
    logger,
    publicUrl,
    yoga,
    metrics,
    idempotent: idempotentRunner({ prisma, logger, requestAuth }),
    portalDir: options.portalDir,
    rateLimitStore,
  });
  const guarded = createGuard({ role, settings, logger, metrics, rateLimitStore, apiKeys, liveKeys, handle });
  return {
    handle: guarded,
    yoga,
    registry: metrics.registry,
    mailer,
    endStreams: () => eventFeeds.close(),
    stopWorkers: workers.stop,
    async close() {
      eventFeeds.close();
      await workers.stop();
      await (await workers.eventStream)?.close();
      mailer?.close();
      apiKeys.close();
      liveKeys.close();
    },
    listening,
  };
}

export { createHttpServer, drainHttpServer, listen, MAX_BODY_BYTES } from "./http-server.js";
