/**
 * The overdue sweep (docs/dunning.md "Overdue invoices"): the dunning worker's first step. It looks once at
 * every finalized invoice whose due date has passed (the due date is before today in the organization's time
 * zone, or at the customer's test clock's time), and when something is still due on it and it was not marked
 * uncollectible (domain/dunning.ts `isPaymentOverdue`) marks it overdue (`paymentOverdueAt`) and writes its
 * `invoice.payment_overdue` event, in the transaction that marks it swept (`overdueCheckedAt`). An invoice
 * paid by its due date is marked swept without an event.
 *
 * Several processes: each page of invoices is claimed `FOR UPDATE SKIP LOCKED` and the claim re-reads
 * `overdueCheckedAt IS NULL` under the lock, so two sweepers at once take different invoices and each invoice
 * gets one event, whichever process commits; a process killed mid-page rolls its page back, and the next
 * sweep takes it again. Nothing is sent to anyone here: the event goes out like any other (webhooks, the
 * live stream).
 */
import { Prisma, type PrismaClient } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import { isPaymentOverdue } from "../domain/dunning.js";
import { sqlRows } from "../infra/sql/index.js";
import { toDecimal } from "../domain/money.js";
import { ValidationError } from "../domain/errors.js";
import { isIsoDate } from "../domain/formats.js";
import { withinTransaction } from "./context.js";
import { recordEvents } from "./events.js";
import { invoiceBalances } from "./invoice-balances.js";
import { movePastDue } from "./past-due.js";
import { runContext } from "./billing-run/run-context.js";

/** Invoices claimed and swept per transaction. */
export const OVERDUE_PAGE = 200;

export interface OverdueSweepOptions {
  prisma: PrismaClient;
  settings: AppSettings;
  /** the wall clock (the time recorded in `overdueCheckedAt` and `paymentOverdueAt`) */
  now: () => Date;
  /**
   * "today" for every invoice (yyyy-mm-dd): invoices due before it are swept (`dunning run --until`).
   * Default: today in each organization's time zone, at the customer's test clock's time when it has one.
   */
  until?: string;
  /** only the invoices of this test clock's customers, at its time (advancing the clock) */
  testClockId?: string;
  /** checked before each page: a stopping process finishes the page it is in and starts no other */
  signal?: AbortSignal;
  /** called after each page with the invoices swept so far and those waiting when the sweep began */
  onProgress?: (done: number, total: number) => void;
}

/** What a sweep did: invoices looked at, and those of them found overdue (an event each). */
export interface OverdueSweepSummary {
  swept: number;
  overdue: number;
}

interface Candidate {
  id: string;
  organizationId: string;
  testMode: boolean;
  userEmail: string;
  uncollectible: boolean;
}

/**
 * The candidates' condition: finalized, not swept, with a due date before "today" (the partial index
 * `Invoice_overdue_sweep_idx` holds the first three). `bound` caps the due dates read through that index: the
 * latest "today" of any organization (UTC's date plus two days covers every time zone), so invoices due
 * further ahead are never read; a test clock's customers later than that are swept when their clock advances.
 */
function candidateCondition(options: OverdueSweepOptions, now: Date): Prisma.Sql {
  const day = options.until
    ? Prisma.sql`${options.until}::date`
    : Prisma.sql`(COALESCE(t."frozenTime", ${now}::timestamptz) AT TIME ZONE o."timeZone")::date`;
  const clock = options.testClockId ? Prisma.sql`AND c."testClockId" = ${options.testClockId}` : Prisma.empty;
  const bound = options.until ?? new Date(now.getTime() + 2 * 86_400_000).toISOString().slice(0, 10);
  const clockBound = options.testClockId
    ? Prisma.sql`(SELECT ("frozenTime" + interval '2 days')::date FROM "TestClock" WHERE "id" = ${options.testClockId})`
    : Prisma.sql`${bound}::date`;
  return Prisma.sql`
    FROM "Invoice" i
    JOIN "Organization" o ON o."id" = i."organizationId"
    JOIN "Customer" c ON c."id" = i."customerId"
    LEFT JOIN "TestClock" t ON t."id" = c."testClockId"
    WHERE i."status" = 'finalized' AND i."overdueCheckedAt" IS NULL AND i."dueDate" IS NOT NULL
      AND i."dueDate" < ${clockBound} AND i."dueDate" < ${day} ${clock}`;
}

/**
 * Sweeps the finalized invoices past their due date (see the module's comment), a page per transaction,
 * until none is left or `signal` aborts. Returns how many were swept and how many of them were overdue.
 * Errors: 400 on `until` when it is not a date yyyy-mm-dd.
 */
export async function sweepOverdueInvoices(options: OverdueSweepOptions): Promise<OverdueSweepSummary> {
  if (options.until !== undefined && !isIsoDate(options.until))
    throw ValidationError.field("until", `must be a date yyyy-mm-dd, got ${options.until}`);
  const summary: OverdueSweepSummary = { swept: 0, overdue: 0 };
  const now = options.now();
  const condition = candidateCondition(options, now);
  const [{ n }] = await sqlRows<{ n: number }>(options.prisma, Prisma.sql`SELECT count(*)::int AS n ${condition}`);
  for (;;) {
    if (options.signal?.aborted) break;
    const swept = await options.prisma.$transaction(async (tx) => sweepPage(tx as never, options, condition, now));
    summary.swept += swept.swept;
    summary.overdue += swept.overdue;
    options.onProgress?.(summary.swept, Math.max(n, summary.swept));
    if (swept.swept < OVERDUE_PAGE) break;
  }
  return summary;
}

/** One page, in transaction `tx`: claims up to OVERDUE_PAGE candidates, marks them, writes the events. */
async function sweepPage(
  tx: PrismaClient,
  options: OverdueSweepOptions,
  condition: Prisma.Sql,
  now: Date,
): Promise<OverdueSweepSummary> {
  const page = await sqlRows<Candidate>(
    tx,
    Prisma.sql`
    SELECT i."id", i."organizationId", i."testMode", i."userEmail",
      i."markedUncollectibleAt" IS NOT NULL AS "uncollectible"
    ${condition}
    ORDER BY i."dueDate", i."id"
    LIMIT ${OVERDUE_PAGE}
    FOR UPDATE OF i SKIP LOCKED`,
  );
  if (page.length === 0) return { swept: 0, overdue: 0 };
  // balances and events are per organization and mode (an event belongs to one; invoiceBalances reads one)
  const groups = new Map<string, Candidate[]>();
  for (const c of page) {
    const key = `${c.organizationId} ${c.testMode}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const overdueIds: string[] = [];
  const events: [ReturnType<typeof runContext>, string[]][] = [];
  for (const group of groups.values()) {
    const ctx = withinTransaction(runContext(tx, options.settings, options.now, group[0]), tx as never);
    const balances = await invoiceBalances(
      ctx,
      group.map((c) => c.id),
    );
    const overdue = group.filter((c, i) => isPaymentOverdue(toDecimal(balances[i].due), c.uncollectible));
    if (overdue.length === 0) continue;
    overdueIds.push(...overdue.map((c) => c.id));
    events.push([ctx, overdue.map((c) => c.id)]);
  }
  await tx.$executeRaw(Prisma.sql`
    UPDATE "Invoice" SET "overdueCheckedAt" = ${now}::timestamptz,
      "paymentOverdueAt" = CASE WHEN "id" = ANY(${overdueIds}::text[]) THEN ${now}::timestamptz END
    WHERE "id" = ANY(${page.map((c) => c.id)}::text[])`);
  // after the update, so that the events' invoices are printed as they now are
  for (const [ctx, ids] of events) {
    await recordEvents(ctx, "invoice.payment_overdue", "invoice", ids);
    // a subscription whose latest cycle invoice is now overdue is past due (services/past-due.ts)
    await movePastDue(ctx, ids, true);
  }
  return { swept: page.length, overdue: overdueIds.length };
}
