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
 *   by domain/billing-cycle.ts `cycleInvoice` over `cycleInputOf` (the same functions as the
 *   upcoming-invoice preview), finalized with `finalizeLockedDocument` (numbered), the period's
 *   usages marked billed, coupon and addon redemptions counted, and `next_billing`,
 *   `next_billing_cycle`, `previous_billing` advanced. A crash rolls the whole batch back; the
 *   unique index Invoice(subscriptionId, billingCycle) is the last guard against a double bill.
 *   When a batch fails, its subscriptions are retried one transaction each, so one bad
 *   subscription fails alone.
 * - Ends: at `next_billing`, a subscription with `cancel_at_period_end` is cancelled (its stored
 *   reason), one past its `billing_cycles` or reaching its `end_date` is cancelled with reason
 *   `ended`, and (rule "no card") one whose previous cycle's invoice is still unpaid after its
 *   due date while the customer has no usable reusable source is cancelled with `no_card`
 *   instead of billing the new cycle.
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
import { findGateway } from "../infra/gateways/index.js";
import { newId } from "../infra/ids.js";
import { cycleInvoice } from "../domain/billing-cycle.js";
import { ValidationError } from "../domain/errors.js";
import { isoDate, todayIn, zonedMidnight } from "../domain/formats.js";
import { toDecimal } from "../domain/money.js";
import { withinTransaction, type ServiceContext, type Tx } from "./context.js";
import { dateColumn, finalizeLockedDocument, totalColumns } from "./documents.js";
import { invoiceBalances } from "./invoice-balances.js";
import { authorizePayment, createPayment } from "./payments.js";
import { cycleInputOf } from "./upcoming-invoice.js";
import { startIntervalWorker, type IntervalWorker } from "../infra/interval-worker.js";
import { applyPendingChanges, markPendingItemsBilled } from "./proration.js";

/** `cancel_reason` of a subscription cancelled by the no-card rule (spec: value `no_card` occurs). */
export const NO_CARD_REASON = "no_card";
/** `cancel_reason` of a subscription that reached its `billing_cycles` or `end_date`. */
export const ENDED_REASON = "ended";
/** Subscriptions claimed per transaction. */
export const DEFAULT_BATCH_SIZE = 25;
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

  const worker = async () => {
    for (;;) {
      let batch: Claimed[] = [];
      let invoices: string[] = [];
      try {
        const outcomes = await prisma.$transaction(async (tx) => {
          batch = await claim(tx, batchSize);
          const results: Outcome[] = [];
          for (const claimed of batch) results.push(await billSubscription(tx, runContext(prisma, settings, now, claimed), claimed, until ?? todayIn(claimed.timeZone, startedAt)));
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
              const result = await billSubscription(tx, runContext(prisma, settings, now, again), again, until ?? todayIn(again.timeZone, startedAt));
              await finalizeDrafts(tx, [result]);
              return result;
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
  if (options.collect !== false && !options.testClockId) {
    const r = await collectInvoices({ prisma, settings, now });
    summary.collected += r.collected;
    for (const [id, e] of r.failures) fail(id, e);
  }
  return summary;
}

/**
 * Bills every due cycle of the claimed (locked) subscription in order, inside `tx`: see the
 * module comment for the rules. `cutoff` (`yyyy-mm-dd`): the last cycle start to bill.
 */
async function billSubscription(tx: Tx, base: ServiceContext, claimed: Claimed, cutoff: string): Promise<Outcome> {
  const ctx = withinTransaction(base, tx);
  const outcome: Outcome = { invoices: [], ctx, cycles: 0, cancelled: false, unfinished: false };
  let sub = await tx.subscription.findUniqueOrThrow({ where: { id: claimed.id } });
  const dayStart = (date: string) => zonedMidnight(date, claimed.timeZone);
  const cancel = async (reason: string | null, at: Date) => {
    await tx.subscription.update({ where: { id: sub.id }, data: { status: "cancelled", cancelled: at, cancelReason: reason } });
    outcome.cancelled = true;
  };

  while (sub.status === "active" && isoDate(sub.nextBilling) <= cutoff) {
    if (outcome.cycles >= MAX_CYCLES_PER_RUN) {
      outcome.unfinished = true;
      break;
    }
    const date = isoDate(sub.nextBilling);
    const n = sub.nextBillingCycle;
    if (sub.cancelAtPeriodEnd) {
      await cancel(sub.cancelReason, dayStart(date));
      break;
    }
    if ((sub.billingCycles !== null && n > sub.billingCycles) || (sub.endDate && isoDate(sub.endDate) <= date)) {
      await cancel(ENDED_REASON, dayStart(date));
      break;
    }
    if (n > 1 && (await noCardApplies(ctx, sub.id, n, date, sub.customerId))) {
      await cancel(NO_CARD_REASON, base.now());
      break;
    }

    // lines scheduled at_period_end for this cycle take effect first (docs/proration.md)
    await applyPendingChanges(ctx, sub.id, n);
    const { input, currency, document, lines } = await cycleInputOf(ctx, sub.id, n, { timeZone: claimed.timeZone });
    const invoice = cycleInvoice(input);
    // the cycle's period ends where the next one starts
    const next = invoice.periodEnd;
    let invoiceId: string | null = null;
    if (invoice.lines.length > 0) {
      invoiceId = newId("inv");
      const planOf = new Map(lines.map((l) => [l.id, l.planId]));
      const due = new Date(dateColumn(date).getTime() + sub.expirationDays * 86_400_000);
      await tx.invoice.create({
        data: {
          id: invoiceId,
          organizationId: claimed.organizationId,
          testMode: claimed.testMode,
          customerId: sub.customerId,
          documentTypeId: document,
          currencyId: currency,
          date: dateColumn(date),
          dueDate: due,
          ...totalColumns(invoice.totals, invoice),
          periodStart: dateColumn(invoice.periodStart),
          periodEnd: dateColumn(invoice.periodEnd),
          note: sub.note,
          status: "draft",
          userEmail: sub.userEmail,
          subscriptionId: sub.id,
          billingCycle: n,
          lines: {
            createMany: {
              data: invoice.lines.map((l, position) => ({
                id: newId("lin"),
                position,
                name: l.name,
                description: l.description,
                quantity: l.quantity,
                amount: l.amount,
                discount: l.discount,
                discountScheme: l.discountScheme,
                exempt: invoice.totals.lines[position].exempt,
                total: invoice.totals.lines[position].total.toString(),
                planId: l.source.kind === "line" ? (planOf.get(l.source.id) ?? null) : null,
                periodStart: dateColumn(l.periodStart),
                periodEnd: dateColumn(l.periodEnd),
              })),
            },
          },
        },
        select: { id: true },
      });
      // finalized (numbered) at the end of the transaction: finalizeDrafts
      outcome.invoices.push(invoiceId);
      // prorations and carried credits this invoice bills; credit that did not fit waits for the next cycle
      if (invoice.billedPendingItems.length || invoice.carriedCredits.length) await markPendingItemsBilled(ctx, sub.id, invoiceId, invoice);

      // the usages this invoice bills: each metered line's period records not billed yet
      const metered = invoice.lines.filter((l) => l.source.kind === "line" && input.lines.find((c) => c.id === l.source.id)?.plan.usageScheme === "metered");
      if (metered.length) {
        await tx.usage.updateMany({
          where: { invoiceId: null, OR: metered.map((l) => ({ subscriptionLineId: l.source.id, dateTime: { gte: dayStart(l.periodStart), lt: dayStart(l.periodEnd) } })) },
          data: { invoiceId },
        });
      }
      if (invoice.redeemedLineCoupons.length) {
        await tx.subscriptionLine.updateMany({ where: { id: { in: invoice.redeemedLineCoupons } }, data: { couponRedemptions: { increment: 1 } } });
      }
      if (invoice.billedAddons.length) {
        await tx.subscriptionAddon.updateMany({ where: { id: { in: invoice.billedAddons } }, data: { addonRedemptions: { increment: 1 } } });
      }
    }
    sub = await tx.subscription.update({
      where: { id: sub.id },
      data: {
        nextBilling: dateColumn(next),
        nextBillingCycle: n + 1,
        previousBilling: dateColumn(date),
        ...(invoice.subscriptionCouponRedeemed ? { couponRedemptions: { increment: 1 } } : {}),
      },
    });
    outcome.cycles++;
  }
  return outcome;
}

/**
 * Finalizes the drafts the batch created, in creation order (so numbers follow the cycles), with
 * `finalizeLockedDocument` (the drafts were created in this transaction, so nobody else sees them).
 * Done last: the document counter row it locks is held until commit, and concurrent runners of
 * one organization queue on it only for these few queries, not for the whole batch.
 */
async function finalizeDrafts(tx: Tx, outcomes: Outcome[]): Promise<void> {
  for (const o of outcomes) for (const id of o.invoices) await finalizeLockedDocument(tx, o.ctx!, "invoice", id, "draft");
}

/**
 * The no-card rule (docs/billing-run.md): at the start of cycle `n` (`date`), the invoice of cycle
 * n-1 still has an amount due, its due date is before `date`, and the customer has no usable
 * reusable source.
 */
async function noCardApplies(ctx: ServiceContext, subscriptionId: string, n: number, date: string, customerId: string): Promise<boolean> {
  const previous = await ctx.prisma.invoice.findUnique({ where: { subscriptionId_billingCycle: { subscriptionId, billingCycle: n - 1 } }, select: { id: true, dueDate: true, status: true } });
  // the previous cycle may have been billed (still a draft) earlier in this transaction
  if (!previous || !["draft", "finalized"].includes(previous.status) || !previous.dueDate || isoDate(previous.dueDate) >= date) return false;
  const [balance] = await invoiceBalances(ctx, [previous.id]);
  if (!toDecimal(balance.due).greaterThan(0)) return false;
  return (await usableSourceOf(ctx, customerId)) === null;
}

/**
 * The customer's source the run charges: the newest `chargeable` `reusable` source of the
 * customer (in the context's organization and mode) whose gateway is enabled and allowed in that
 * mode; null when there is none.
 */
export async function usableSourceOf(ctx: ServiceContext, customerId: string): Promise<string | null> {
  const sources = await ctx.prisma.source.findMany({
    where: { customerId, organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode, usage: "reusable", status: "chargeable", gateway: { in: ctx.settings.paymentGateways } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true, gateway: true },
  });
  const usable = sources.find((s) => {
    const gateway = findGateway(s.gateway, ctx.settings.paymentGateways);
    return gateway && gateway.charge && (!gateway.testOnly || ctx.auth.testMode);
  });
  return usable?.id ?? null;
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
  const candidates = await prisma.$queryRaw<{ id: string; organizationId: string; testMode: boolean; customerId: string; userEmail: string; subscriptionId: string; billingCycle: number }[]>(Prisma.sql`
    SELECT i."id", i."organizationId", i."testMode", i."customerId", i."userEmail", i."subscriptionId", i."billingCycle"
    FROM "Source" src
    JOIN "Invoice" i ON i."customerId" = src."customerId" AND i."organizationId" = src."organizationId" AND i."testMode" = src."testMode"
    WHERE src."usage" = 'reusable' AND src."status" = 'chargeable' AND src."customerId" IS NOT NULL
      AND i."subscriptionId" IS NOT NULL AND i."status" = 'finalized' AND i."total" > 0
      AND NOT EXISTS (SELECT 1 FROM "Payment" p WHERE p."invoiceId" = i."id") ${only}
    GROUP BY i."id"
    ORDER BY i."id"`);
  for (const c of candidates) {
    const ctx = runContext(prisma, settings, now, c);
    try {
      const sourceId = await usableSourceOf(ctx, c.customerId);
      if (!sourceId) continue;
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
      if (!payment) continue;
      const paid = await authorizePayment(ctx, payment.id, sourceId);
      if (paid.status === "succeeded") result.collected++;
      else result.failures.push([c.id, new Error(`charge of payment ${paid.id} ${paid.status}: ${paid.failureReason ?? ""}`)]);
    } catch (e) {
      result.failures.push([c.id, e]);
    }
  }
  return result;
}

/** A billing run repeated every `intervalMs` inside the server (BILLING_RUN_INTERVAL_SECONDS). */
export type BillingRunWorker = IntervalWorker;

/**
 * Starts the billing run on an interval (a round never overlaps the previous one; other runners
 * may run at the same time: claims are SKIP LOCKED). `report` gets each round's summary or error.
 */
export function startBillingRunWorker(options: Omit<BillingRunOptions, "until" | "onProgress">, intervalMs: number, report: (summary: BillingRunSummary | null, error?: unknown) => void): BillingRunWorker {
  return startIntervalWorker(
    () =>
      runBilling(options)
        .then((s) => report(s))
        .catch((e) => report(null, e)),
    intervalMs,
  );
}
