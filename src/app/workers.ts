/**
 * The background workers a service process runs beside its HTTP surfaces (docs/scaling.md "Roles"): the event
 * listener, webhook delivery, event retention, the outbox, the billing run, dunning, the revenue analytics drain and
 * SII sending. Each is safe next to other processes' (claims in the database, SKIP LOCKED, leases); each is off when
 * its interval is 0, and an `api` process starts none of them.
 */
import type { AppSettings, ServiceRole } from "../infra/config.js";
import type { Database } from "../infra/database.js";
import type { Logger } from "../infra/logger.js";
import type { Mailer } from "../infra/mail.js";
import { startIntervalWorker, type IntervalWorker } from "../infra/interval-worker.js";
import { deleteExpiredEvents } from "../services/events.js";
import { startEventStream, type EventStream } from "../services/event-stream.js";
import { startWebhookWorker } from "../services/webhook-delivery.js";
import { startOutboxWorker } from "../services/outbox.js";
import { startBillingRunWorker, type BillingRunSummary } from "../services/billing-run.js";
import { runDunningRound } from "../services/dunning-round.js";
import { drainRevenueRound } from "../services/revenue-aggregates.js";
import { startSiiWorker } from "../services/sii-sending.js";

/** How often the event retention worker deletes expired events (ms). */
export const EVENT_RETENTION_INTERVAL_MS = 10 * 60_000;

/** How often each background worker runs in this process (ms; 0: not in this process). */
export interface WorkerIntervals {
  /** the outbox's retries (docs/reminders.md); needs a mailer */
  outboxIntervalMs: number;
  /** the billing run (docs/billing-run.md) */
  billingRunIntervalMs: number;
  /** the dunning worker: the overdue sweep, then the campaigns' attempts (docs/dunning.md "The worker") */
  dunningIntervalMs: number;
  /** dirty customers drained into the revenue aggregates (docs/analytics.md "How it is computed") */
  analyticsDrainIntervalMs: number;
  /** SII sending: queued DTEs uploaded, their status polled (docs/sii-sending.md) */
  siiIntervalMs: number;
  /** expired events deleted (docs/webhooks.md "Events") */
  eventRetentionIntervalMs: number;
  /** webhook delivery, woken on commit (docs/webhooks.md "Delivery"); not an interval */
  webhookWorker: boolean;
}

/** An `api` process (SERVICE_ROLE=api) leaves every background worker to the `worker` processes. */
export function intervalsOfRole(role: ServiceRole, intervals: WorkerIntervals): WorkerIntervals {
  if (role !== "api") return intervals;
  return {
    outboxIntervalMs: 0,
    billingRunIntervalMs: 0,
    dunningIntervalMs: 0,
    analyticsDrainIntervalMs: 0,
    siiIntervalMs: 0,
    eventRetentionIntervalMs: 0,
    webhookWorker: false,
  };
}

/** What the workers need. */
export interface WorkerDeps {
  database: Database;
  settings: AppSettings;
  logger: Logger;
  mailer: Mailer | null;
  /** called after each billing run with its summary or error and its length (services/metrics.ts) */
  onBillingRun: (summary: BillingRunSummary | null, error: unknown, seconds: number | undefined) => void;
}

/** The workers started in this process. */
export interface BackgroundWorkers {
  /**
   * committed events, new webhook messages and API key changes as they happen (LISTEN/NOTIFY; null when the process
   * cannot listen): the webhook worker and the GraphQL event streams wake on them, the key caches follow them
   */
  eventStream: Promise<EventStream | null>;
  /**
   * stops every worker: no new round starts, a running round is asked to stop between items (its AbortSignal) and
   * awaited. Resolves once every round has ended; calling it again waits for the same. The event listener stays open.
   */
  stop(): Promise<void>;
}

/** A worker started by this module: stopped with the others. */
interface Stoppable {
  stop(): Promise<void>;
}

/** Starts the event listener and every worker whose interval is not 0 (`intervals`, after `intervalsOfRole`). */
export function startBackgroundWorkers(deps: WorkerDeps, intervals: WorkerIntervals): BackgroundWorkers {
  const { database, logger } = deps;
  const eventStream: Promise<EventStream | null> = startEventStream(database).catch((err) => {
    logger.error({ err }, "cannot listen to committed events; webhooks are sent by polling");
    return null;
  });
  const { prisma } = database;
  const started: (Stoppable | null)[] = [
    intervals.webhookWorker ? startWebhookWorker({ prisma, settings: deps.settings, logger }, eventStream) : null,
    startRetention(deps, intervals.eventRetentionIntervalMs),
    deps.mailer && intervals.outboxIntervalMs > 0
      ? startOutboxWorker({ prisma, mailer: deps.mailer, logger, settings: deps.settings }, intervals.outboxIntervalMs)
      : null,
    startBillingRun(deps, intervals.billingRunIntervalMs),
    startDunning(deps, intervals.dunningIntervalMs),
    startAnalyticsDrain(deps, intervals.analyticsDrainIntervalMs),
    intervals.siiIntervalMs > 0
      ? startSiiWorker({ prisma, logger, settings: deps.settings }, intervals.siiIntervalMs)
      : null,
  ];
  let stopped: Promise<void> | null = null;
  return {
    eventStream,
    stop() {
      stopped ??= Promise.all(started.map((w) => w?.stop())).then(() => undefined);
      return stopped;
    },
  };
}

/** Event retention (docs/webhooks.md "Events"): events older than EVENT_RETENTION_DAYS deleted in batches. */
function startRetention({ database, settings, logger }: WorkerDeps, intervalMs: number): IntervalWorker | null {
  if (intervalMs <= 0) return null;
  return startIntervalWorker(
    (signal) =>
      deleteExpiredEvents(database.prisma, new Date(), settings.eventRetentionDays, signal).then(
        (deleted) => deleted && logger.info({ deleted }, "expired events deleted"),
        (err) => logger.error({ err }, "deleting expired events failed"),
      ),
    intervalMs,
  );
}

/** The billing run (docs/billing-run.md): off unless configured; safe next to other runners (SKIP LOCKED claims). */
function startBillingRun(deps: WorkerDeps, intervalMs: number): Stoppable | null {
  if (intervalMs <= 0) return null;
  const { database, settings, logger } = deps;
  return startBillingRunWorker({ prisma: database.prisma, settings }, intervalMs, (summary, error, seconds) => {
    deps.onBillingRun(summary, error, seconds);
    if (error) logger.error({ err: error }, "billing run failed");
    else if (summary && (summary.cycles || summary.cancelled || summary.collected || summary.failed))
      logger.info({ ...summary }, "billing run");
  });
}

/**
 * Dunning (docs/dunning.md "The worker"): the overdue sweep, then the campaigns' attempts; safe next to other
 * processes' (SKIP LOCKED claims, the runs' leases).
 */
function startDunning({ database, settings, logger, mailer }: WorkerDeps, intervalMs: number): IntervalWorker | null {
  if (intervalMs <= 0) return null;
  return startIntervalWorker(
    (signal) =>
      runDunningRound({
        prisma: database.prisma,
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
    intervalMs,
  );
}

/**
 * Revenue analytics (docs/analytics.md "How it is computed"): dirty customers drained into the maintained
 * aggregates, so readers rarely find work; safe next to other processes' (a try-lock per organization and mode).
 */
function startAnalyticsDrain({ database, logger }: WorkerDeps, intervalMs: number): IntervalWorker | null {
  if (intervalMs <= 0) return null;
  return startIntervalWorker(
    (signal) =>
      drainRevenueRound(database.prisma, signal).then(
        (summary) => summary.customers && logger.debug({ ...summary }, "revenue analytics drained"),
        (err) => logger.error({ err }, "draining revenue analytics failed"),
      ),
    intervalMs,
  );
}
