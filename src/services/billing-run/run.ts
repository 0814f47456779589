/**
 * The run loop (docs/billing-run.md): claim loops take batches of due subscriptions (claim.ts),
 * bill each batch in one transaction (batch.ts; infra/sql/direct-transaction.ts, so that its
 * hand-written statements go straight to the transaction's pg connection on PostgreSQL), retry a
 * failed batch one subscription per transaction so a bad one fails alone, and collect each
 * batch's invoices after it commits (collect.ts); at the end, a sweep collects what an earlier run
 * left. Also the same run on an interval inside the server.
 */
import type { PrismaClient } from "../../infra/prisma/generated/client.js";
import type { AppSettings } from "../../infra/config.js";
import { DEFAULT_SETTINGS } from "../../infra/config.js";
import { startIntervalWorker, type IntervalWorker } from "../../infra/interval-worker.js";
import { directTransaction } from "../../infra/sql/index.js";
import { ValidationError } from "../../domain/errors.js";
import { todayIn } from "../../domain/formats.js";
import { billBatch, type BatchTerms } from "./batch.js";
import type { Outcome } from "./bill-subscription.js";
import { claimDue, countDue, type Claimed, type DueScope } from "./claim.js";
import { collectInvoices, type CollectResult } from "./collect.js";
import { runContext } from "./run-context.js";

/** Subscriptions claimed per transaction. */
export const DEFAULT_BATCH_SIZE = 100;

const RUN_TRANSACTION = { maxWait: 30_000, timeout: 120_000 };

export interface BillingRunOptions {
  prisma: PrismaClient;
  settings?: Partial<AppSettings>;
  /** `yyyy-mm-dd`: bill cycles starting on or before this day; default: today in each organization's time zone */
  until?: string;
  /** current time (tests); default the clock */
  now?: () => Date;
  batchSize?: number;
  /** parallel claim loops in this process (PostgreSQL; PGlite has one connection, keep 1) */
  workers?: number;
  /** called after each batch: subscriptions processed so far, and how many were due at the start */
  onProgress?: (done: number, total: number) => void;
  /**
   * aborted when the server stops: the run ends after the batch in progress (committed, its
   * invoices collected); the subscriptions left are billed by the next run
   */
  signal?: AbortSignal;
  /** collect the new invoices with the customers' reusable sources (default true) */
  collect?: boolean;
  /**
   * bill only the subscriptions of customers on this test clock (advanceTestClock, with `now` and
   * `until` from the clock); without it, those customers are left out
   */
  testClockId?: string;
}

export interface BillingRunSummary {
  /** subscriptions that got at least one cycle billed */
  billed: number;
  /** invoices created and finalized */
  invoices: number;
  /** cycles advanced (several per subscription when catching up; includes cycles with nothing to bill) */
  cycles: number;
  /** subscriptions cancelled by the run: period end, billing cycles or end date reached, no card */
  cancelled: number;
  /** invoices paid by charging the customer's reusable source */
  collected: number;
  /** failures: a subscription that could not be billed, or a declined or failed charge */
  failed: number;
  /** of `failed`, charges the card declined (the customer's outcome, not a fault of the run) */
  declined: number;
  /** due subscriptions left unbilled: failed, or past the catch-up limit */
  skipped: number;
  /** `id: message` of each failure (at most 100) */
  errors: string[];
}

/** One run in progress: its options, scope, counts, and the subscriptions it will not claim again. */
interface Run {
  options: BillingRunOptions;
  settings: AppSettings;
  now: () => Date;
  scope: DueScope;
  terms: BatchTerms;
  summary: BillingRunSummary;
  /** subscriptions that failed or stopped early in this run are not claimed again */
  excluded: Set<string>;
  total: number;
  done: number;
}

/** 400 unless `until` is absent or a real date `yyyy-mm-dd`. */
function checkUntil(until: string | undefined): void {
  if (until === undefined) return;
  const valid =
    /^\d{4}-\d{2}-\d{2}$/.test(until) &&
    !Number.isNaN(Date.parse(`${until}T00:00:00Z`)) &&
    new Date(`${until}T00:00:00Z`).toISOString().startsWith(until);
  if (!valid) throw ValidationError.field("until", `must be a date yyyy-mm-dd, got ${until}`);
}

/**
 * Runs the billing run once over every organization and mode (docs/billing-run.md). Returns the
 * counts; never throws for one subscription's failure (it is counted and listed in `errors`).
 */
export async function runBilling(options: BillingRunOptions): Promise<BillingRunSummary> {
  checkUntil(options.until);
  const settings: AppSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const now = options.now ?? (() => new Date());
  const scope: DueScope = { until: options.until, startedAt: now(), testClockId: options.testClockId };
  const terms: BatchTerms = {
    contextOf: (claimed) => runContext(options.prisma, settings, now, claimed),
    cutoffOf: (claimed) => options.until ?? todayIn(claimed.timeZone, scope.startedAt),
  };
  const summary: BillingRunSummary = {
    billed: 0,
    invoices: 0,
    cycles: 0,
    cancelled: 0,
    collected: 0,
    failed: 0,
    declined: 0,
    skipped: 0,
    errors: [],
  };
  const run: Run = {
    options,
    settings,
    now,
    scope,
    terms,
    summary,
    excluded: new Set(),
    total: await countDue(options.prisma, scope),
    done: 0,
  };
  await Promise.all(Array.from({ length: Math.max(1, options.workers ?? 1) }, () => claimLoop(run)));
  // invoices billed by an earlier run that stopped before collecting them
  if (options.collect !== false && !options.testClockId && !options.signal?.aborted) {
    addCollected(run, await collectInvoices({ prisma: options.prisma, settings, now }));
  }
  return summary;
}

/** Counts a failure of subscription or invoice `id` (its message kept, at most 100). */
function fail(run: Run, id: string, e: unknown): void {
  run.summary.failed++;
  if (run.summary.errors.length < 100) run.summary.errors.push(`${id}: ${(e as Error).message ?? String(e)}`);
}

function addCollected(run: Run, r: CollectResult): void {
  run.summary.collected += r.collected;
  run.summary.declined += r.declined;
  for (const [id, e] of r.failures) fail(run, id, e);
}

/** Counts what billing `claimed` did. */
function record(run: Run, claimed: Claimed, outcome: Outcome): void {
  const { summary } = run;
  if (outcome.invoices.length) summary.billed++;
  summary.invoices += outcome.invoices.length;
  summary.cycles += outcome.cycles;
  if (outcome.cancelled) summary.cancelled++;
  if (outcome.unfinished) {
    summary.skipped++;
    run.excluded.add(claimed.id);
  }
}

/** Claims, bills and collects batches until none is due or the run is aborted. */
async function claimLoop(run: Run): Promise<void> {
  const { options } = run;
  while (!options.signal?.aborted) {
    const billed = await billNextBatch(run);
    if (billed.batch.length === 0) return;
    run.done += billed.batch.length;
    options.onProgress?.(Math.min(run.done, Math.max(run.total, run.done)), Math.max(run.total, run.done));
    if (options.collect !== false && billed.invoices.length > 0) {
      addCollected(
        run,
        await collectInvoices({
          prisma: options.prisma,
          settings: run.settings,
          now: run.now,
          invoiceIds: billed.invoices,
        }),
      );
    }
  }
}

/** Bills one batch in one transaction; when it rolls back, its subscriptions one transaction each. */
async function billNextBatch(run: Run): Promise<{ batch: Claimed[]; invoices: string[] }> {
  let batch: Claimed[] = [];
  try {
    const outcomes = await directTransaction(
      run.options.prisma,
      async (tx) => {
        batch = await claimDue(tx, run.scope, {
          limit: run.options.batchSize ?? DEFAULT_BATCH_SIZE,
          excluded: run.excluded,
        });
        return billBatch(tx, batch, run.terms);
      },
      RUN_TRANSACTION,
    );
    outcomes.forEach((o, i) => record(run, batch[i], o));
    return { batch, invoices: outcomes.flatMap((o) => o.invoices) };
  } catch {
    if (batch.length === 0) throw new Error("claiming due subscriptions failed");
    return { batch, invoices: await billOneByOne(run, batch) };
  }
}

/** The batch rolled back: bills its subscriptions one transaction each, so a bad one fails alone. */
async function billOneByOne(run: Run, batch: Claimed[]): Promise<string[]> {
  const invoices: string[] = [];
  for (const claimed of batch) {
    try {
      const outcome = await directTransaction(
        run.options.prisma,
        async (tx) => {
          const [again] = await claimDue(tx, run.scope, { limit: 1, excluded: run.excluded, only: claimed.id });
          if (!again) return null;
          return (await billBatch(tx, [again], run.terms))[0];
        },
        RUN_TRANSACTION,
      );
      if (outcome) {
        record(run, claimed, outcome);
        invoices.push(...outcome.invoices);
      }
    } catch (e) {
      run.excluded.add(claimed.id);
      run.summary.skipped++;
      fail(run, claimed.id, e);
    }
  }
  return invoices;
}

/** A billing run repeated every `intervalMs` inside the server (BILLING_RUN_INTERVAL_SECONDS). */
export type BillingRunWorker = IntervalWorker;

/**
 * Starts the billing run on an interval (a round never overlaps the previous one; other runners
 * may run at the same time: claims are SKIP LOCKED). `report` gets each round's summary or error,
 * and the round's wall-clock duration in seconds (the billing_run_duration_seconds metric).
 */
export function startBillingRunWorker(
  options: Omit<BillingRunOptions, "until" | "onProgress">,
  intervalMs: number,
  report: (summary: BillingRunSummary | null, error?: unknown, durationSeconds?: number) => void,
): BillingRunWorker {
  return startIntervalWorker((signal) => {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    return runBilling({ ...options, signal })
      .then((s) => report(s, undefined, seconds()))
      .catch((e) => report(null, e, seconds()));
  }, intervalMs);
}
