/**
 * Collection (docs/billing-run.md "Collection and the no-card rule"): after a batch commits
 * (gateways are never called inside a transaction), each finalized subscription invoice with an
 * amount due, no payment yet, and a customer with a usable reusable source gets a payment for what
 * is due, authorized with that source (services/payments.ts charges it once). The invoice row is
 * claimed with SKIP LOCKED while the payment is created and its charge attempt started, in one
 * transaction, so two runners never create two payments for one invoice nor start two charges of
 * one payment, and a run that died between billing and collecting is caught up by the next run's
 * sweep. The run's payment of an invoice has a known id (`collectionPaymentId`), so the sweep also
 * finds one left behind by a process that died after creating it: never charged (created by an
 * earlier version, which charged in a transaction of its own) or with its attempt started and
 * never answered; the first is charged, the second's attempt is asked again at the gateway with the
 * same idempotency key (payments.ts resumeStaleCharge).
 */
import type { Payment, PrismaClient } from "../../infra/prisma/generated/client.js";
import { Prisma } from "../../infra/prisma/generated/client.js";
import type { AppSettings } from "../../infra/config.js";
import { toDecimal } from "../../domain/money.js";
import { sqlRows } from "../../infra/sql/index.js";
import { withinTransaction, type ServiceContext } from "../context.js";
import { usableSourceOf } from "../cycle-decision.js";
import { invoiceBalances } from "../invoice-balances.js";
import { authorizeLocked, createPayment, finishCharge, resumeStaleCharge } from "../payments.js";
import { runContext } from "./run-context.js";
import { collectionPaymentId } from "../../domain/billing-cycle.js";

export { collectionPaymentId };

/** Invoices the collection sweep reads per query. */
const COLLECT_PAGE = 500;

/**
 * How long (ms, wall clock) a started charge attempt of the run may stay unanswered before a sweep
 * takes it as left by a process that died, and asks the gateway again with the same attempt id.
 */
export const STALE_CHARGE_MS = 5 * 60_000;

export interface CollectOptions {
  prisma: PrismaClient;
  settings: AppSettings;
  now: () => Date;
  /** only these invoices (default: every subscription invoice waiting for collection) */
  invoiceIds?: string[];
  /** STALE_CHARGE_MS unless given (tests: 0, an attempt left by a killed process is stale at once) */
  staleChargeMs?: number;
}

/** How a collection went: invoices paid, and `[invoice id, error]` of each failure. */
export interface CollectResult {
  collected: number;
  /** of the failures, charges the card declined (the payment awaits another payment method) */
  declined: number;
  failures: [string, unknown][];
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
  /** the run's payment's attempt left pending since `staleBefore` or longer (its process died), or null */
  staleChargeId: string | null;
}

/**
 * The candidates after invoice id `after`: the given invoices, or a page of the sweep. An invoice
 * is a candidate when it has no payment, or when the run's payment of it (`collectionPaymentId`)
 * was never charged, or has a charge attempt pending since `staleBefore` or longer.
 */
function candidatesAfter(options: CollectOptions, after: string, staleBefore: Date): Promise<CollectCandidate[]> {
  const only = options.invoiceIds ? Prisma.sql`AND i."id" = ANY(${options.invoiceIds}::text[])` : Prisma.empty;
  // the sweep (no ids) reads its candidates a page at a time, by id, so its memory does not grow with them
  const limit = options.invoiceIds ? Prisma.empty : Prisma.sql`LIMIT ${COLLECT_PAGE}`;
  return sqlRows<CollectCandidate>(
    options.prisma,
    Prisma.sql`
    SELECT i."id", i."organizationId", i."testMode", i."customerId", i."userEmail", i."subscriptionId",
      i."billingCycle",
      (SELECT c."id" FROM "PaymentCharge" c WHERE c."paymentId" = 'pay_' || substr(i."id", 5)
        AND c."status" = 'pending' AND c."updatedAt" <= ${staleBefore}::timestamptz LIMIT 1) AS "staleChargeId"
    FROM "Source" src
    JOIN "Invoice" i ON i."customerId" = src."customerId" AND i."organizationId" = src."organizationId"
    AND i."testMode" = src."testMode"
    WHERE src."usage" = 'reusable' AND src."status" = 'chargeable' AND src."customerId" IS NOT NULL
      AND i."subscriptionId" IS NOT NULL AND i."status" = 'finalized' AND i."total" > 0
      AND (NOT EXISTS (SELECT 1 FROM "Payment" p WHERE p."invoiceId" = i."id")
        OR EXISTS (SELECT 1 FROM "Payment" p WHERE p."id" = 'pay_' || substr(i."id", 5) AND p."invoiceId" = i."id"
          AND ((p."status" = 'requires_payment_method'
              AND NOT EXISTS (SELECT 1 FROM "PaymentCharge" c WHERE c."paymentId" = p."id"))
            OR (p."status" = 'processing' AND EXISTS (SELECT 1 FROM "PaymentCharge" c WHERE c."paymentId" = p."id"
              AND c."status" = 'pending' AND c."updatedAt" <= ${staleBefore}::timestamptz)))))
      ${only} AND i."id" > ${after}
    GROUP BY i."id"
    ORDER BY i."id"
    ${limit}`,
    { prepared: true },
  );
}

/**
 * Collects finalized subscription invoices that have an amount due and no payment yet, whose
 * customer has a reusable source: creates a payment for the amount due and starts its charge with
 * the source (one transaction, the invoice row claimed with SKIP LOCKED), then charges it at the
 * gateway. Also finishes the run's payments a dead process left: one never charged is charged, one
 * whose attempt stayed pending `staleChargeMs` is asked again with the same attempt id. A declined
 * charge leaves the payment in `requires_payment_method` (the run does not retry it; the customer
 * or the API can pay it with another source). Returns how many succeeded and the failures.
 */
export async function collectInvoices(options: CollectOptions): Promise<CollectResult> {
  const result: CollectResult = { collected: 0, declined: 0, failures: [] };
  if (options.invoiceIds && options.invoiceIds.length === 0) return result;
  const staleBefore = new Date(Date.now() - (options.staleChargeMs ?? STALE_CHARGE_MS));
  let candidates = await candidatesAfter(options, "", staleBefore);
  while (candidates.length) {
    for (const c of candidates)
      await collectOne(runContext(options.prisma, options.settings, options.now, c), c, staleBefore, result);
    candidates = options.invoiceIds
      ? []
      : await candidatesAfter(options, candidates[candidates.length - 1].id, staleBefore);
  }
  return result;
}

/** Counts a charge's answer: collected when it succeeded, else a failure of invoice `invoiceId`. */
function countCharge(result: CollectResult, invoiceId: string, paid: Payment): void {
  if (paid.status === "succeeded") result.collected++;
  else {
    // declined: the payment is back awaiting a payment method, with the decline as its reason
    if (paid.status === "requires_payment_method") result.declined++;
    result.failures.push([
      invoiceId,
      new Error(`charge of payment ${paid.id} ${paid.status}: ${paid.failureReason ?? ""}`),
    ]);
  }
}

/**
 * Charges candidate `c`: finishes the run's payment's stale attempt, or (the invoice claimed with
 * SKIP LOCKED) creates the run's payment unless it exists already, starts its charge with the
 * customer's source in the same transaction, and charges it after the commit. Nothing when another
 * runner holds the invoice, the invoice has another payment, or the run's payment was charged.
 */
async function collectOne(
  ctx: ServiceContext,
  c: CollectCandidate,
  staleBefore: Date,
  result: CollectResult,
): Promise<void> {
  try {
    const paymentId = collectionPaymentId(c.id);
    if (c.staleChargeId) {
      // a process died between starting this attempt and recording the gateway's answer
      const paid = await resumeStaleCharge(ctx, c.staleChargeId, staleBefore);
      if (paid) countCharge(result, c.id, paid);
      return;
    }
    const sourceId = await usableSourceOf(ctx, c.customerId);
    if (!sourceId) return;
    const pending = await ctx.prisma.$transaction(async (tx) => {
      // claimed: a concurrent runner skips it, and sees the payment processing once this commits
      const locked = await tx.$queryRaw<
        { id: string }[]
      >`SELECT "id" FROM "Invoice" WHERE "id" = ${c.id} FOR UPDATE SKIP LOCKED`;
      if (!locked.length) return null;
      const payments = await tx.payment.findMany({
        where: { invoiceId: c.id },
        select: { id: true, status: true, _count: { select: { charges: true } } },
      });
      const own = payments.find((p) => p.id === paymentId);
      // only the run's own payment, created and never charged (its process died), is taken up
      if (own ? own.status !== "requires_payment_method" || own._count.charges > 0 : payments.length > 0) return null;
      const txCtx = withinTransaction(ctx, tx);
      const [balance] = await invoiceBalances(txCtx, [c.id]);
      if (!toDecimal(balance.due).greaterThan(0)) return null;
      if (!own)
        await createPayment(
          txCtx,
          {
            amount: balance.due,
            invoice: c.id,
            description: `Subscription ${c.subscriptionId}, cycle ${c.billingCycle}`,
          },
          { id: paymentId },
        );
      return authorizeLocked(txCtx, paymentId, sourceId);
    });
    if (!pending) return;
    countCharge(result, c.id, await finishCharge(ctx, pending));
  } catch (e) {
    result.failures.push([c.id, e]);
  }
}
