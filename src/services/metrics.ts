/**
 * Business and health series of /metrics (docs/operations.md). Two kinds:
 * - read from the database at scrape time, where the database is the source of truth (finalized
 *   documents, SII queue, mail outbox, charge attempts): `refresh()` runs one aggregate statement
 *   per table group (indexed, see migration 20261124000100_api_key_expiry) and sets the series;
 * - kept in this process: the billing run's rounds (`billingRun()`), and the PostgreSQL pool
 *   (read from the pool at scrape time).
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { DatabasePool } from "../infra/database.js";
import type { BillingRunSummary } from "./billing-run.js";

/** A scrape's database reads give up after this long (ms); the series keep their last values. */
export const SCRAPE_TIMEOUT_MS = 2_000;

const MODES = ["test", "live"] as const;
const mode = (testMode: boolean) => (testMode ? "test" : "live");

export interface BusinessMetrics {
  /** reads the database-backed series; never throws (a failure sets billing_database_up 0) */
  refresh(): Promise<void>;
  /** records one round of the in-process billing run (startBillingRunWorker's report) */
  billingRun(summary: BillingRunSummary | null, error: unknown, durationSeconds: number | undefined): void;
}

/** Registers the series on `registry`; `pool` (PostgreSQL) adds the pool gauges. */
export function registerBusinessMetrics(
  registry: Registry,
  prisma: PrismaClient,
  pool?: DatabasePool,
): BusinessMetrics {
  const registers = [registry];
  // the order of registration is the order of /metrics
  const database = registerDatabaseSeries(registers);
  const run = registerBillingRunSeries(registers);
  if (pool) registerPoolSeries(registers, pool);
  return {
    refresh: () => refreshDatabaseSeries(database, prisma),
    billingRun: (summary, error, durationSeconds) => recordBillingRun(run, { summary, error, durationSeconds }),
  };
}

/** The series read from the database at scrape time (`refresh`). */
interface DatabaseSeries {
  finalized: Counter;
  siiQueued: Gauge;
  siiOldest: Gauge;
  outbox: Gauge;
  charges: Gauge;
  databaseUp: Gauge;
}

/** Registers the database-backed series on `registers`: finalized documents, SII queue, outbox, charges, up. */
function registerDatabaseSeries(registers: Registry[]): DatabaseSeries {
  const finalized = new Counter({
    name: "billing_documents_finalized_total",
    help:
      "Documents finalized since the database was created, by kind (invoice, order, credit_note), document type " +
      "(CL33, ...) and mode (test, live); read from the database at scrape time",
    labelNames: ["kind", "document", "mode"],
    registers,
  });
  const siiQueued = new Gauge({
    name: "billing_sii_submissions_queued",
    help:
      "DTE submissions to SII not yet decided, by status (pending: to upload, sent: waiting for SII's verdict) " +
      "and mode; count",
    labelNames: ["status", "mode"],
    registers,
  });
  const siiOldest = new Gauge({
    name: "billing_sii_oldest_pending_age_seconds",
    help: "Age in seconds of the oldest SII submission still pending upload (0 when none)",
    registers,
  });
  const outbox = new Gauge({
    name: "billing_outbox_messages",
    help: "Mail outbox messages by status (pending: to send or retry, failed: gave up); count",
    labelNames: ["status"],
    registers,
  });
  const charges = new Gauge({
    name: "billing_payment_charge_attempts",
    help: "Payment charge attempts at gateways by gateway and outcome (pending, succeeded, declined, canceled); count",
    labelNames: ["gateway", "status"],
    registers,
  });
  const databaseUp = new Gauge({
    name: "billing_database_up",
    help: "1 when this scrape's database reads succeeded within 2 seconds, else 0",
    registers,
  });
  return { finalized, siiQueued, siiOldest, outbox, charges, databaseUp };
}

/** The series of the billing run in this process (`billingRun`). */
interface BillingRunSeries {
  runs: Counter;
  cycles: Counter;
  runInvoices: Counter;
  runFailures: Counter;
  runDuration: Histogram;
}

/** Registers the billing run's series on `registers`, its rounds by outcome at 0 (so both outcomes are listed). */
function registerBillingRunSeries(registers: Registry[]): BillingRunSeries {
  const runs = new Counter({
    name: "billing_run_rounds_total",
    help: "Rounds of the billing run in this process by outcome (ok, error)",
    labelNames: ["outcome"],
    registers,
  });
  const cycles = new Counter({
    name: "billing_run_cycles_billed_total",
    help: "Subscription billing cycles advanced by the billing run in this process (count)",
    registers,
  });
  const runInvoices = new Counter({
    name: "billing_run_invoices_total",
    help: "Invoices created and finalized by the billing run in this process (count)",
    registers,
  });
  const runFailures = new Counter({
    name: "billing_run_failures_total",
    help: "Failures in the billing run in this process: subscriptions not billed, declined or failed charges (count)",
    registers,
  });
  const runDuration = new Histogram({
    name: "billing_run_duration_seconds",
    help: "Wall-clock duration of a billing run round in this process, in seconds",
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers,
  });
  runs.inc({ outcome: "ok" }, 0);
  runs.inc({ outcome: "error" }, 0);
  return { runs, cycles, runInvoices, runFailures, runDuration };
}

/** Registers the PostgreSQL pool's gauges on `registers`, read from `pool` at scrape time (connections, waiting). */
function registerPoolSeries(registers: Registry[], pool: DatabasePool): void {
  new Gauge({
    name: "billing_db_pool_connections",
    help: "PostgreSQL pool connections by state (in_use, idle); count",
    labelNames: ["state"],
    registers,
    collect() {
      this.set({ state: "in_use" }, pool.total() - pool.idle());
      this.set({ state: "idle" }, pool.idle());
    },
  });
  new Gauge({
    name: "billing_db_pool_waiting_requests",
    help: "Requests queued for a PostgreSQL pool connection; count",
    registers,
    collect() {
      this.set(pool.waiting());
    },
  });
}

/** The database's counts behind the database-backed series: one aggregate statement per table group. */
async function readCounts(prisma: PrismaClient) {
  const [documents, sii, messages, attempts] = await Promise.all([
    prisma.$queryRaw<{ kind: string; document: string; testMode: boolean; n: number }[]>`
        SELECT 'invoice' AS "kind", "documentTypeId" AS "document", "testMode", COUNT(*)::int AS "n" FROM "Invoice"
        WHERE "finalizedAt" IS NOT NULL GROUP BY "documentTypeId", "testMode"
        UNION ALL
        SELECT 'order', "documentTypeId", "testMode", COUNT(*)::int FROM "Order" WHERE "finalizedAt" IS NOT NULL
        GROUP BY "documentTypeId", "testMode"
        UNION ALL
        SELECT 'credit_note', "documentTypeId", "testMode", COUNT(*)::int FROM "CreditNote"
        WHERE "finalizedAt" IS NOT NULL GROUP BY "documentTypeId", "testMode"`,
    prisma.$queryRaw<{ status: string; testMode: boolean; n: number; oldest: Date | null }[]>`
        SELECT "status", "testMode", COUNT(*)::int AS "n", MIN("createdAt") AS "oldest"
        FROM "SiiSubmission" WHERE "status" IN ('pending', 'sent') GROUP BY "status", "testMode"`,
    prisma.$queryRaw<{ status: string; n: number }[]>`
        SELECT "status", COUNT(*)::int AS "n" FROM "OutboxMessage" WHERE "status" IN ('pending', 'failed')
        GROUP BY "status"`,
    prisma.$queryRaw<{ gateway: string; status: string; n: number }[]>`
        SELECT "gateway", "status", COUNT(*)::int AS "n" FROM "PaymentCharge" GROUP BY "gateway", "status"`,
  ]);
  return { documents, sii, messages, attempts };
}

/**
 * Reads the counts (giving up after SCRAPE_TIMEOUT_MS) and sets the database-backed series, billing_database_up 1;
 * on a failure or the timeout only billing_database_up, to 0 (the others keep their last values). Never throws.
 */
async function refreshDatabaseSeries(series: DatabaseSeries, prisma: PrismaClient): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`database reads took longer than ${SCRAPE_TIMEOUT_MS} ms`)),
        SCRAPE_TIMEOUT_MS,
      );
    });
    const counts = await Promise.race([readCounts(prisma), timeout]);
    setDatabaseSeries(series, counts, Date.now());
    series.databaseUp.set(1);
  } catch {
    series.databaseUp.set(0);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sets the database-backed series to `counts`, read at `now` (ms since the epoch; the oldest pending SII
 * submission's age, in seconds, is counted from it). Series with a fixed set of labels list each at 0 when it has no
 * row.
 */
function setDatabaseSeries(
  series: DatabaseSeries,
  { documents, sii, messages, attempts }: Awaited<ReturnType<typeof readCounts>>,
  now: number,
): void {
  const { finalized, siiQueued, siiOldest, outbox, charges } = series;
  finalized.reset();
  for (const d of documents) finalized.inc({ kind: d.kind, document: d.document, mode: mode(d.testMode) }, Number(d.n));
  siiQueued.reset();
  for (const status of ["pending", "sent"]) for (const m of MODES) siiQueued.set({ status, mode: m }, 0);
  let oldest: number | null = null;
  for (const row of sii) {
    siiQueued.set({ status: row.status, mode: mode(row.testMode) }, Number(row.n));
    if (row.status === "pending" && row.oldest) oldest = Math.min(oldest ?? Infinity, new Date(row.oldest).getTime());
  }
  siiOldest.set(oldest === null ? 0 : Math.max(0, (now - oldest) / 1000));
  outbox.reset();
  for (const status of ["pending", "failed"]) outbox.set({ status }, 0);
  for (const m of messages) outbox.set({ status: m.status }, Number(m.n));
  charges.reset();
  for (const a of attempts) charges.set({ gateway: a.gateway, status: a.status }, Number(a.n));
}

/**
 * Records one round of the billing run: its outcome (error when it threw or has no summary), its duration in
 * seconds when known, and the summary's cycles, invoices and failures.
 */
function recordBillingRun(
  series: BillingRunSeries,
  round: { summary: BillingRunSummary | null; error: unknown; durationSeconds: number | undefined },
): void {
  const { summary, error, durationSeconds } = round;
  series.runs.inc({ outcome: error || !summary ? "error" : "ok" });
  if (durationSeconds !== undefined) series.runDuration.observe(durationSeconds);
  if (!summary) return;
  series.cycles.inc(summary.cycles);
  series.runInvoices.inc(summary.invoices);
  series.runFailures.inc(summary.failed);
}
