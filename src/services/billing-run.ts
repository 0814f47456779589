/**
 * The billing run (issue "The billing run"; docs/billing-run.md): bills every due subscription of
 * every organization and mode exactly once per cycle, then collects the invoices with the
 * customer's reusable payment source.
 *
 * - Due: `status` active (paused and cancelled ones are skipped) and `next_billing` on or before
 *   the cutoff: `until` when given, else today in the organization's time zone.
 * - Work is claimed in batches with `SELECT ... FOR UPDATE SKIP LOCKED`: concurrent runners (CLI,
 *   server interval, several processes) take disjoint subscriptions. A batch is ONE transaction:
 *   for each claimed subscription, every due cycle in order (catch-up) gets its invoice, computed
 *   by domain/billing-cycle.ts `cycleInvoice` over `cycleInputFrom` (the same functions as the
 *   upcoming-invoice preview), finalized (numbered; finalizeNewInvoiceDrafts, which gives SII-issued
 *   types one CAF folio range per batch and signs their DTEs in worker threads), the period's usages marked billed,
 *   coupon and addon redemptions counted, and `next_billing`, `next_billing_cycle`,
 *   `previous_billing` advanced. The batch is read with one `loadCycleData` and written with a few
 *   bulk statements (BatchWrites; docs/billing-run.md "Throughput"). A crash rolls the whole batch back; the
 *   unique index Invoice(subscriptionId, billingCycle) is the last guard against a double bill.
 *   When a batch fails, its subscriptions are retried one transaction each, so one bad
 *   subscription fails alone.
 * - Which cycle is billed and when a subscription ends instead is domain/billing-cycle.ts
 *   `cycleDecision` (the preview decides with it too): at `next_billing`, a subscription with
 *   `cancel_at_period_end` is cancelled (its stored reason), one past its `billing_cycles` or
 *   reaching its `end_date` is cancelled with reason `ended`, each after its final invoice (the
 *   last period's metered usage and pending items, when not zero); and (rule "no card",
 *   `noCardEnds` over services/cycle-decision.ts) one whose previous cycle's invoice is still
 *   unpaid after its due date while the customer has no usable reusable source is cancelled with
 *   `no_card` instead of billing the new cycle.
 * - Collection happens after the batch commits (gateways are never called inside a
 *   transaction): each finalized subscription invoice with an amount due, no payment yet, and a
 *   customer with a usable reusable source gets a payment for what is due, authorized with that
 *   source (services/payments.ts charges it once). The invoice row is claimed with SKIP LOCKED
 *   while the payment is created, so two runners never create two payments for one invoice, and
 *   a run that died between billing and collecting is caught up by the next run's sweep.
 */
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { Prisma } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import { DEFAULT_SETTINGS } from "../infra/config.js";
import { newId } from "../infra/ids.js";
import { cycleDecision, cycleInvoice, periodUsages } from "../domain/billing-cycle.js";
import type { UsageAggregation } from "../domain/usage.js";
import { noCardApplies, usableSourceOf } from "./cycle-decision.js";
import { ValidationError } from "../domain/errors.js";
import { isoDate, todayIn, zonedMidnight, dateColumn } from "../domain/formats.js";
import { toDecimal } from "../domain/money.js";
import { withinTransaction, type ServiceContext, type Tx } from "./context.js";
import { finalizeNewInvoiceDrafts } from "./document-lifecycle.js";
import { totalColumns } from "../domain/document-lines.js";
import { invoiceBalances } from "./invoice-balances.js";
import { authorizePayment, createPayment } from "./payments.js";
import { startIntervalWorker, type IntervalWorker } from "../infra/interval-worker.js";
import { cycleInputFrom, cycleState, loadCycleData, loadPendingItems, type CycleData } from "./upcoming-invoice.js";
import { linesAtCycle, parsePendingChanges } from "../domain/proration.js";
import { applyPendingChanges, markPendingItemsBilled } from "./proration.js";

/** The cancel reasons and the source the run charges, from the one place of the cycle rules. */
export { ENDED_REASON, NO_CARD_REASON } from "../domain/billing-cycle.js";
export { usableSourceOf } from "./cycle-decision.js";
/** Subscriptions claimed per transaction. */
export const DEFAULT_BATCH_SIZE = 100;
/** At most this many cycles are billed per subscription in one run (a runaway catch-up guard). */
export const MAX_CYCLES_PER_RUN = 1000;

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
  /** due subscriptions left unbilled: failed, or past the catch-up limit */
  skipped: number;
  /** `id: message` of each failure (at most 100) */
  errors: string[];
}

interface Claimed {
  id: string;
  organizationId: string;
  testMode: boolean;
  timeZone: string;
  userEmail: string;
}

/** What billing one subscription did. */
interface Outcome {
  invoices: string[];
  /** the invoices with their document type, to finalize */
  drafts: { id: string; documentTypeId: string }[];
  /** the context the invoices were created with (their organization and mode) */
  ctx: ServiceContext | null;
  cycles: number;
  cancelled: boolean;
  /** still due after MAX_CYCLES_PER_RUN cycles */
  unfinished: boolean;
}

const RUN_TRANSACTION = { maxWait: 30_000, timeout: 120_000 };

/** A service context acting for `organizationId` in mode `testMode` (the run has no API key). */
export function runContext(prisma: PrismaClient, settings: AppSettings, now: () => Date, c: { organizationId: string; testMode: boolean; userEmail: string }): ServiceContext {
  return { prisma, auth: { organizationId: c.organizationId, testMode: c.testMode, userEmail: c.userEmail, apiKeyId: "" }, now, settings, baseUrl: "" };
}

/**
 * The due-filter SQL: active, next billing on or before the cutoff (`until`, or today in the
 * organization's zone), and on test clock `testClockId` or, without it, on none (test clocks,
 * docs/test-clocks.md: their customers are billed only when their clock advances).
 */
function dueFilter(until: string | undefined, now: Date, testClockId: string | undefined): Prisma.Sql {
  const cutoff = until ? Prisma.sql`${until}::date` : Prisma.sql`(${now.toISOString()}::timestamptz AT TIME ZONE o."timeZone")::date`;
  const clock = testClockId
    ? Prisma.sql`s."customerId" IN (SELECT c."id" FROM "Customer" c WHERE c."testClockId" = ${testClockId})`
    : Prisma.sql`s."customerId" NOT IN (SELECT c."id" FROM "Customer" c WHERE c."testClockId" IS NOT NULL)`;
  return Prisma.sql`s."status" = 'active' AND s."nextBilling" <= ${cutoff} AND ${clock}`;
}

/**
 * Runs the billing run once over every organization and mode (see the module comment). Returns
 * the counts; never throws for one subscription's failure (it is counted and listed in `errors`).
 */
export async function runBilling(options: BillingRunOptions): Promise<BillingRunSummary> {
  const { prisma, until } = options;
  if (until !== undefined && !(/^\d{4}-\d{2}-\d{2}$/.test(until) && !Number.isNaN(Date.parse(`${until}T00:00:00Z`)) && new Date(`${until}T00:00:00Z`).toISOString().startsWith(until))) {
    throw ValidationError.field("until", `must be a date yyyy-mm-dd, got ${until}`);
  }
  const settings: AppSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const now = options.now ?? (() => new Date());
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const startedAt = now();
  const summary: BillingRunSummary = { billed: 0, invoices: 0, cycles: 0, cancelled: 0, collected: 0, failed: 0, skipped: 0, errors: [] };
  const fail = (id: string, e: unknown) => {
    summary.failed++;
    if (summary.errors.length < 100) summary.errors.push(`${id}: ${(e as Error).message ?? String(e)}`);
  };

  const [{ count }] = await prisma.$queryRaw<{ count: number }[]>(Prisma.sql`
    SELECT COUNT(*)::int AS "count" FROM "Subscription" s JOIN "Organization" o ON o."id" = s."organizationId" WHERE ${dueFilter(until, startedAt, options.testClockId)}`);
  const total = Number(count);
  let done = 0;
  // subscriptions that failed or stopped early in this run are not claimed again
  const excluded = new Set<string>();

  const claim = async (tx: Tx | PrismaClient, limit: number, only?: string): Promise<Claimed[]> => {
    const notIn = excluded.size ? Prisma.sql`AND s."id" NOT IN (${Prisma.join([...excluded])})` : Prisma.empty;
    const onlyId = only ? Prisma.sql`AND s."id" = ${only}` : Prisma.empty;
    return tx.$queryRaw<Claimed[]>(Prisma.sql`
      SELECT s."id", s."organizationId", s."testMode", o."timeZone", s."userEmail"
      FROM "Subscription" s JOIN "Organization" o ON o."id" = s."organizationId"
      WHERE ${dueFilter(until, startedAt, options.testClockId)} ${notIn} ${onlyId}
      ORDER BY s."nextBilling", s."id"
      LIMIT ${limit}
      FOR UPDATE OF s SKIP LOCKED`);
  };

  const record = (claimed: Claimed, outcome: Outcome) => {
    if (outcome.invoices.length) summary.billed++;
    summary.invoices += outcome.invoices.length;
    summary.cycles += outcome.cycles;
    if (outcome.cancelled) summary.cancelled++;
    if (outcome.unfinished) {
      summary.skipped++;
      excluded.add(claimed.id);
    }
  };

  const collectNow = async (invoiceIds: string[]) => {
    if (options.collect === false || invoiceIds.length === 0) return;
    const r = await collectInvoices({ prisma, settings, now, invoiceIds });
    summary.collected += r.collected;
    for (const [id, e] of r.failures) fail(id, e);
  };

  const contextOf = (claimed: Claimed) => runContext(prisma, settings, now, claimed);
  const cutoffOf = (claimed: Claimed) => until ?? todayIn(claimed.timeZone, startedAt);

  const worker = async () => {
    while (!options.signal?.aborted) {
      let batch: Claimed[] = [];
      let invoices: string[] = [];
      try {
        const outcomes = await prisma.$transaction(async (tx) => {
          batch = await claim(tx, batchSize);
          const results = await billBatch(tx, batch, contextOf, cutoffOf);
          await finalizeDrafts(tx, results);
          return results;
        }, RUN_TRANSACTION);
        if (batch.length === 0) return;
        outcomes.forEach((o, i) => record(batch[i], o));
        invoices = outcomes.flatMap((o) => o.invoices);
      } catch {
        if (batch.length === 0) throw new Error("claiming due subscriptions failed");
        // the batch rolled back: bill its subscriptions one transaction each, so a bad one fails alone
        for (const claimed of batch) {
          try {
            const outcome = await prisma.$transaction(async (tx) => {
              const [again] = await claim(tx, 1, claimed.id);
              if (!again) return null;
              const results = await billBatch(tx, [again], contextOf, cutoffOf);
              await finalizeDrafts(tx, results);
              return results[0];
            }, RUN_TRANSACTION);
            if (outcome) {
              record(claimed, outcome);
              invoices.push(...outcome.invoices);
            }
          } catch (e) {
            excluded.add(claimed.id);
            summary.skipped++;
            fail(claimed.id, e);
          }
        }
      }
      done += batch.length;
      options.onProgress?.(Math.min(done, Math.max(total, done)), Math.max(total, done));
      await collectNow(invoices);
    }
  };

  await Promise.all(Array.from({ length: Math.max(1, options.workers ?? 1) }, () => worker()));
  // invoices billed by an earlier run that stopped before collecting them
  if (options.collect !== false && !options.testClockId && !options.signal?.aborted) {
    const r = await collectInvoices({ prisma, settings, now });
    summary.collected += r.collected;
    for (const [id, e] of r.failures) fail(id, e);
  }
  return summary;
}

/** The invoice of cycle n-1 as the no-card rule reads it. */
interface PreviousInvoice {
  id: string;
  dueDate: Date | null;
  status: string;
}

const ROWS_PER_STATEMENT = 1000;
/** Invoices the collection sweep reads per query. */
const COLLECT_PAGE = 500;
async function inChunks<T>(rows: readonly T[], write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) await write(rows.slice(i, i + ROWS_PER_STATEMENT));
}

/** Columns of an Invoice row the run inserts (`@db.Date` columns as `yyyy-mm-dd`, decimals as strings). */
type InvoiceRow = Record<string, string | number | boolean | null>;
type InvoiceLineRow = Record<string, string | number | boolean | null>;

/**
 * Inserts `rows` (all with the same keys: column names; the other columns take their defaults)
 * into `table` with one statement and one parameter: the rows as JSON, typed by the table's row
 * type (json_populate_recordset). Much cheaper than createMany for wide rows.
 */
async function insertRows(tx: Tx, table: "Invoice" | "InvoiceLine", rows: readonly Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Prisma.raw(Object.keys(rows[0]).map((c) => `"${c}"`).join(", "));
  // Dates serialize as ISO instants (Date.prototype.toJSON)
  const json = JSON.stringify(rows);
  await tx.$executeRaw(Prisma.sql`INSERT INTO ${Prisma.raw(`"${table}"`)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${Prisma.raw(`"${table}"`)}, ${json}::json)`);
}

/**
 * The writes of a batch, buffered and written with a few bulk statements (flush): invoice drafts
 * and their lines, usage marks, line coupon and addon redemption increments. Flushed before
 * anything that reads or writes those rows in the database (applyPendingChanges, the no-card
 * balance, markPendingItemsBilled) and at the end of the batch, so the database sees the same
 * rows, in the same order, as with one statement per write.
 */
class BatchWrites {
  invoices: InvoiceRow[] = [];
  lines: InvoiceLineRow[] = [];
  usageMarks: { id: string; invoiceId: string }[] = [];
  lineRedemptions = new Map<string, number>();
  addonRedemptions = new Map<string, number>();

  constructor(private readonly tx: Tx) {}

  async flush(): Promise<void> {
    const { tx } = this;
    const [invoices, lines, marks, lineRedemptions, addonRedemptions] = [this.invoices, this.lines, this.usageMarks, [...this.lineRedemptions], [...this.addonRedemptions]];
    this.invoices = [];
    this.lines = [];
    this.usageMarks = [];
    this.lineRedemptions = new Map();
    this.addonRedemptions = new Map();
    const now = new Date();
    await inChunks(invoices, (rows) => insertRows(tx, "Invoice", rows.map((r) => ({ ...r, updatedAt: now }))));
    await inChunks(lines, (rows) => insertRows(tx, "InvoiceLine", rows.map((r) => ({ ...r, updatedAt: now }))));
    // one JSON parameter for the whole chunk (a VALUES list took two bound parameters per mark)
    await inChunks(marks, (chunk) =>
      tx.$executeRaw(Prisma.sql`
        UPDATE "Usage" u SET "invoiceId" = v."invoiceId"
        FROM json_to_recordset(${JSON.stringify(chunk)}::json) AS v("id" text, "invoiceId" text)
        WHERE u."id" = v."id" AND u."invoiceId" IS NULL`),
    );
    await inChunks(lineRedemptions, (chunk) =>
      tx.$executeRaw(Prisma.sql`
        UPDATE "SubscriptionLine" l SET "couponRedemptions" = l."couponRedemptions" + v."n", "updatedAt" = ${now}
        FROM (VALUES ${Prisma.join(chunk.map(([id, n]) => Prisma.sql`(${id}, ${n}::int)`))}) AS v("id", "n")
        WHERE l."id" = v."id"`),
    );
    await inChunks(addonRedemptions, (chunk) =>
      tx.$executeRaw(Prisma.sql`
        UPDATE "SubscriptionAddon" a SET "addonRedemptions" = a."addonRedemptions" + v."n", "updatedAt" = ${now}
        FROM (VALUES ${Prisma.join(chunk.map(([id, n]) => Prisma.sql`(${id}, ${n}::int)`))}) AS v("id", "n")
        WHERE a."id" = v."id"`),
    );
  }
}

/**
 * Bills every due cycle of each claimed (locked) subscription of `batch` in order, inside `tx`
 * (see the module comment for the rules): reads the batch with loadCycleData, computes each cycle
 * with cycleInputFrom + cycleInvoice while keeping that data current in memory, buffers the
 * writes (BatchWrites), and advances or cancels the subscriptions with one statement. The drafts
 * are finalized by the caller (finalizeDrafts). `cutoffOf`: the last cycle start to bill.
 */
async function billBatch(tx: Tx, batch: Claimed[], contextOf: (c: Claimed) => ServiceContext, cutoffOf: (c: Claimed) => string): Promise<Outcome[]> {
  if (batch.length === 0) return [];
  const zoneOf = new Map(batch.map((c) => [c.id, c.timeZone]));
  const data = await loadCycleData(tx, batch.map((c) => c.id), { timeZoneOf: (s) => zoneOf.get(s.id)! });
  // the no-card rule reads cycle n-1's invoice: stored ones, and the ones this batch creates
  const previousKey = (id: string, n: number) => `${id}#${n}`;
  const previousInvoices = new Map<string, PreviousInvoice>();
  // one raw statement whatever the batch: each subscription's invoices from cycle n-1 on (the
  // unique index on (subscriptionId, billingCycle) serves it); a findMany with one OR branch per
  // subscription cost a query compilation per batch
  const subs = [...data.values()].map((d) => d.subscription);
  if (subs.length) {
    const stored = await tx.$queryRaw<{ id: string; subscriptionId: string; billingCycle: number; dueDate: string | null; status: string }[]>(Prisma.sql`
      SELECT i."id", i."subscriptionId", i."billingCycle", to_char(i."dueDate", 'YYYY-MM-DD') AS "dueDate", i."status"
      FROM unnest(ARRAY[${Prisma.join(subs.map((s) => s.id))}]::text[], ARRAY[${Prisma.join(subs.map((s) => s.nextBillingCycle - 1))}]::int[]) AS w("id", "from")
      JOIN "Invoice" i ON i."subscriptionId" = w."id" AND i."billingCycle" >= w."from"`);
    for (const i of stored) previousInvoices.set(previousKey(i.subscriptionId, i.billingCycle), { id: i.id, status: i.status, dueDate: i.dueDate === null ? null : dateColumn(i.dueDate) });
  }
  const writes = new BatchWrites(tx);
  const outcomes: Outcome[] = [];
  for (const claimed of batch) {
    const d = data.get(claimed.id);
    if (!d) throw new Error(`subscription ${claimed.id} was claimed but not found`);
    outcomes.push(await billSubscription(tx, contextOf(claimed), d, cutoffOf(claimed), writes, previousInvoices, previousKey));
  }
  await writes.flush();
  const changed = batch.map((c, i) => ({ sub: data.get(c.id)!.subscription, outcome: outcomes[i] })).filter((c) => c.outcome.cycles > 0 || c.outcome.cancelled);
  const now = new Date();
  // one JSON parameter per chunk (a VALUES list took eight bound parameters per subscription)
  await inChunks(changed, (chunk) =>
    tx.$executeRaw(Prisma.sql`
      UPDATE "Subscription" s SET "nextBilling" = v."nextBilling", "nextBillingCycle" = v."nextBillingCycle", "previousBilling" = v."previousBilling",
        "couponRedemptions" = v."couponRedemptions", "status" = v."status", "cancelled" = v."cancelled", "cancelReason" = v."cancelReason", "updatedAt" = ${now}
      FROM json_to_recordset(${JSON.stringify(
        chunk.map(({ sub }) => ({
          id: sub.id,
          nextBilling: isoDate(sub.nextBilling),
          nextBillingCycle: sub.nextBillingCycle,
          previousBilling: sub.previousBilling ? isoDate(sub.previousBilling) : null,
          couponRedemptions: sub.couponRedemptions,
          status: sub.status,
          cancelled: sub.cancelled,
          cancelReason: sub.cancelReason,
        })),
      )}::json) AS v("id" text, "nextBilling" date, "nextBillingCycle" int, "previousBilling" date, "couponRedemptions" int, "status" text, "cancelled" timestamptz, "cancelReason" text)
      WHERE s."id" = v."id"`),
  );
  return outcomes;
}

/**
 * Bills every due cycle of one claimed subscription (its CycleData `d`, kept current in memory)
 * up to `cutoff` (`yyyy-mm-dd`), buffering the writes in `writes`; the subscription row itself is
 * written by billBatch from `d.subscription`.
 */
async function billSubscription(
  tx: Tx,
  base: ServiceContext,
  d: CycleData,
  cutoff: string,
  writes: BatchWrites,
  previousInvoices: Map<string, PreviousInvoice>,
  previousKey: (id: string, n: number) => string,
): Promise<Outcome> {
  const ctx = withinTransaction(base, tx);
  const outcome: Outcome = { invoices: [], drafts: [], ctx, cycles: 0, cancelled: false, unfinished: false };
  const sub = d.subscription;
  const dayStart = (date: string) => zonedMidnight(date, d.timeZone);
  const cancel = (reason: string | null, at: Date) => {
    sub.status = "cancelled";
    sub.cancelled = at;
    sub.cancelReason = reason;
    outcome.cancelled = true;
  };

  while (sub.status === "active" && isoDate(sub.nextBilling) <= cutoff) {
    if (outcome.cycles >= MAX_CYCLES_PER_RUN) {
      outcome.unfinished = true;
      break;
    }
    // the cycle rules (domain/billing-cycle.ts cycleDecision), as the upcoming-invoice preview decides
    const state = cycleState(sub);
    const date = state.date;
    const n = state.cycle;
    let decision = cycleDecision(state);
    if (decision.action === "bill") {
      // the no-card rule is read from the database only for a cycle that would be billed
      const previous = previousInvoices.get(previousKey(sub.id, n - 1)) ?? null;
      const check = { cycle: n, date, previous: previous && { ...previous, dueDate: previous.dueDate ? isoDate(previous.dueDate) : null }, customerId: sub.customerId };
      if (await noCardApplies(ctx, check, () => writes.flush())) decision = cycleDecision(state, true);
    }
    if (decision.action === "none") break;
    const ending = decision.action === "end" ? decision : null;
    const endNow = () => cancel(ending!.cancelReason, ending!.cancelledAt === "now" ? base.now() : dayStart(date));
    if (ending && !ending.finalInvoice) {
      endNow();
      break;
    }

    // a final invoice (the subscription ends) bills the stored lines' last usage and pending items
    const { input, currency, document, lines } = cycleInputFrom(d, n, { final: !!ending });
    // lines scheduled at_period_end for this cycle take effect first (docs/proration.md); the
    // input above already bills them as applyPendingChanges writes them
    if (!ending && linesAtCycle(parsePendingChanges(sub.pendingChanges), n)) {
      await writes.flush();
      await applyPendingChanges(ctx, sub.id, n);
      d.lines = lines;
      sub.pendingChanges = null;
    }
    const invoice = cycleInvoice(input);
    // the cycle's period ends where the next one starts
    const next = invoice.periodEnd;
    if (invoice.lines.length > 0) {
      const invoiceId = newId("inv");
      const planOf = new Map(lines.map((l) => [l.id, l.planId]));
      const due = new Date(dateColumn(date).getTime() + sub.expirationDays * 86_400_000);
      writes.invoices.push({
        id: invoiceId,
        organizationId: sub.organizationId,
        testMode: sub.testMode,
        customerId: sub.customerId,
        documentTypeId: document,
        currencyId: currency,
        date,
        dueDate: isoDate(due),
        ...totalColumns(invoice.totals, invoice),
        periodStart: invoice.periodStart,
        periodEnd: invoice.periodEnd,
        note: sub.note,
        status: "draft",
        userEmail: sub.userEmail,
        subscriptionId: sub.id,
        billingCycle: n,
      });
      writes.lines.push(
        ...invoice.lines.map((l, position) => ({
          id: newId("lin"),
          invoiceId,
          position,
          name: l.name,
          description: l.description,
          quantity: l.quantity,
          amount: l.amount,
          discount: l.discount,
          discountScheme: l.discountScheme,
          exempt: l.exempt,
          total: invoice.totals.lines[position].total.toString(),
          planId: l.source.kind === "line" ? (planOf.get(l.source.id) ?? null) : null,
          periodStart: l.periodStart,
          periodEnd: l.periodEnd,
        })),
      );
      previousInvoices.set(previousKey(sub.id, n), { id: invoiceId, dueDate: due, status: "draft" });
      // finalized (numbered) at the end of the transaction: finalizeDrafts
      outcome.invoices.push(invoiceId);
      outcome.drafts.push({ id: invoiceId, documentTypeId: document });
      // prorations and carried credits this invoice bills; credit that did not fit waits for the next cycle
      if (invoice.billedPendingItems.length || invoice.carriedCredits.length) {
        await writes.flush();
        await markPendingItemsBilled(ctx, sub.id, invoiceId, invoice);
        d.pendingItems = await loadPendingItems(tx, [sub.id]);
      }

      // the usages this invoice bills: each metered line's period records not billed yet
      // (domain/billing-cycle.ts periodUsages: the records the preview priced, marked billed)
      for (const l of invoice.lines) {
        const plan = l.source.kind === "line" ? input.lines.find((c) => c.id === l.source.id)?.plan : undefined;
        if (plan?.usageScheme !== "metered") continue;
        const records = d.usages.filter((u) => u.subscriptionLineId === l.source.id);
        for (const u of periodUsages(records, plan.usageAggregation as UsageAggregation, { start: dayStart(l.periodStart), end: dayStart(l.periodEnd) }).billed) {
          u.invoiceId = invoiceId;
          writes.usageMarks.push({ id: u.id, invoiceId });
        }
      }
      for (const id of new Set(invoice.redeemedLineCoupons)) {
        writes.lineRedemptions.set(id, (writes.lineRedemptions.get(id) ?? 0) + 1);
        const line = d.lines.find((x) => x.id === id);
        if (line) line.couponRedemptions++;
      }
      for (const id of new Set(invoice.billedAddons)) {
        writes.addonRedemptions.set(id, (writes.addonRedemptions.get(id) ?? 0) + 1);
        const addon = d.addons.find((x) => x.id === id);
        if (addon) addon.addonRedemptions++;
      }
    }
    if (ending) {
      // ended after its final invoice: next_billing and next_billing_cycle stay where it ended
      if (invoice.subscriptionCouponRedeemed) sub.couponRedemptions++;
      endNow();
      break;
    }
    sub.nextBilling = dateColumn(next);
    sub.nextBillingCycle = n + 1;
    sub.previousBilling = dateColumn(date);
    if (invoice.subscriptionCouponRedeemed) sub.couponRedemptions++;
    outcome.cycles++;
  }
  return outcome;
}

/**
 * Finalizes the drafts the batch created (finalizeNewInvoiceDrafts: numbered with one counter
 * update per organization, mode and document type, or with one CAF folio range and DTEs signed in
 * worker threads when the organization issues that type with SII), in creation order within each document type (so
 * numbers follow the cycles). Groups go in a fixed order, so concurrent runners lock counter rows
 * in the same order. Done last: the counter row is held until commit, and concurrent runners of
 * one organization queue on it only for these few statements, not for the whole batch.
 */
async function finalizeDrafts(tx: Tx, outcomes: Outcome[]): Promise<void> {
  const groups = new Map<string, { ctx: ServiceContext; documentTypeId: string; ids: string[] }>();
  for (const o of outcomes) {
    for (const draft of o.drafts) {
      const key = `${o.ctx!.auth.organizationId}\u0000${o.ctx!.auth.testMode}\u0000${draft.documentTypeId}`;
      const group = groups.get(key) ?? { ctx: o.ctx!, documentTypeId: draft.documentTypeId, ids: [] };
      group.ids.push(draft.id);
      groups.set(key, group);
    }
  }
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key)!;
    await finalizeNewInvoiceDrafts(tx, group.ctx, group.documentTypeId, group.ids);
  }
}

interface CollectOptions {
  prisma: PrismaClient;
  settings: AppSettings;
  now: () => Date;
  /** only these invoices (default: every subscription invoice waiting for collection) */
  invoiceIds?: string[];
}

/**
 * Collects finalized subscription invoices that have an amount due and no payment yet, whose
 * customer has a reusable source: creates a payment for the amount due (claiming the invoice row
 * with SKIP LOCKED meanwhile) and authorizes it with the source, which charges it. A declined
 * charge leaves the payment in `requires_payment_method` (the run does not retry it; the
 * customer or the API can pay it with another source). Returns how many succeeded and the failures.
 */
export async function collectInvoices(options: CollectOptions): Promise<{ collected: number; failures: [string, unknown][] }> {
  const { prisma, settings, now } = options;
  const result = { collected: 0, failures: [] as [string, unknown][] };
  if (options.invoiceIds && options.invoiceIds.length === 0) return result;
  const only = options.invoiceIds ? Prisma.sql`AND i."id" IN (${Prisma.join(options.invoiceIds)})` : Prisma.empty;
  // the sweep (no ids) reads its candidates a page at a time, by id, so its memory does not grow with them
  const limit = options.invoiceIds ? Prisma.empty : Prisma.sql`LIMIT ${COLLECT_PAGE}`;
  const page = (after: string) => prisma.$queryRaw<CollectCandidate[]>(Prisma.sql`
    SELECT i."id", i."organizationId", i."testMode", i."customerId", i."userEmail", i."subscriptionId", i."billingCycle"
    FROM "Source" src
    JOIN "Invoice" i ON i."customerId" = src."customerId" AND i."organizationId" = src."organizationId" AND i."testMode" = src."testMode"
    WHERE src."usage" = 'reusable' AND src."status" = 'chargeable' AND src."customerId" IS NOT NULL
      AND i."subscriptionId" IS NOT NULL AND i."status" = 'finalized' AND i."total" > 0
      AND NOT EXISTS (SELECT 1 FROM "Payment" p WHERE p."invoiceId" = i."id") ${only} AND i."id" > ${after}
    GROUP BY i."id"
    ORDER BY i."id"
    ${limit}`);
  let candidates = await page("");
  while (candidates.length) {
    for (const c of candidates) await collectOne(c);
    candidates = options.invoiceIds ? [] : await page(candidates[candidates.length - 1].id);
  }
  return result;

  async function collectOne(c: CollectCandidate): Promise<void> {
    const ctx = runContext(prisma, settings, now, c);
    try {
      const sourceId = await usableSourceOf(ctx, c.customerId);
      if (!sourceId) return;
      const payment = await prisma.$transaction(async (tx) => {
        // claimed: a concurrent runner skips it, and sees the payment once this commits
        const locked = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "Invoice" WHERE "id" = ${c.id} FOR UPDATE SKIP LOCKED`;
        if (!locked.length) return null;
        if (await tx.payment.findFirst({ where: { invoiceId: c.id }, select: { id: true } })) return null;
        const txCtx = withinTransaction(ctx, tx);
        const [balance] = await invoiceBalances(txCtx, [c.id]);
        if (!toDecimal(balance.due).greaterThan(0)) return null;
        return createPayment(txCtx, { amount: balance.due, invoice: c.id, description: `Subscription ${c.subscriptionId}, cycle ${c.billingCycle}` });
      });
      if (!payment) return;
      const paid = await authorizePayment(ctx, payment.id, sourceId);
      if (paid.status === "succeeded") result.collected++;
      else result.failures.push([c.id, new Error(`charge of payment ${paid.id} ${paid.status}: ${paid.failureReason ?? ""}`)]);
    } catch (e) {
      result.failures.push([c.id, e]);
    }
  }
}

/** A finalized subscription invoice the collection considers. */
interface CollectCandidate {
  id: string;
  organizationId: string;
  testMode: boolean;
  customerId: string;
  userEmail: string;
  subscriptionId: string;
  billingCycle: number;
}

/** A billing run repeated every `intervalMs` inside the server (BILLING_RUN_INTERVAL_SECONDS). */
export type BillingRunWorker = IntervalWorker;

/**
 * Starts the billing run on an interval (a round never overlaps the previous one; other runners
 * may run at the same time: claims are SKIP LOCKED). `report` gets each round's summary or error,
 * and the round's wall-clock duration in seconds.
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
