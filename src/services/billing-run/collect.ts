/**
 * Collection (docs/billing-run.md "Collection and the no-card rule"): after a batch commits
 * (gateways are never called inside a transaction), each finalized subscription invoice with an
 * amount due, no payment yet, and a customer with a usable reusable source gets a payment for what
 * is due, authorized with that source (services/payments.ts charges it once). The invoice row is
 * claimed with SKIP LOCKED while the payment is created, so two runners never create two payments
 * for one invoice, and a run that died between billing and collecting is caught up by the next
 * run's sweep.
 */
import type { PrismaClient } from "../../infra/prisma/generated/client.js";
import { Prisma } from "../../infra/prisma/generated/client.js";
import type { AppSettings } from "../../infra/config.js";
import { toDecimal } from "../../domain/money.js";
import { sqlRows } from "../../infra/prepared-sql.js";
import { withinTransaction, type ServiceContext } from "../context.js";
import { usableSourceOf } from "../cycle-decision.js";
import { invoiceBalances } from "../invoice-balances.js";
import { authorizePayment, createPayment } from "../payments.js";
import { runContext } from "./run-context.js";

/** Invoices the collection sweep reads per query. */
const COLLECT_PAGE = 500;

export interface CollectOptions {
  prisma: PrismaClient;
  settings: AppSettings;
  now: () => Date;
  /** only these invoices (default: every subscription invoice waiting for collection) */
  invoiceIds?: string[];
}

/** How a collection went: invoices paid, and `[invoice id, error]` of each failure. */
export interface CollectResult {
  collected: number;
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
}

/** The candidates after invoice id `after`: the given invoices, or a page of the sweep. */
function candidatesAfter(options: CollectOptions, after: string): Promise<CollectCandidate[]> {
  const only = options.invoiceIds ? Prisma.sql`AND i."id" = ANY(${options.invoiceIds}::text[])` : Prisma.empty;
  // the sweep (no ids) reads its candidates a page at a time, by id, so its memory does not grow with them
  const limit = options.invoiceIds ? Prisma.empty : Prisma.sql`LIMIT ${COLLECT_PAGE}`;
  return sqlRows<CollectCandidate>(
    options.prisma,
    Prisma.sql`
    SELECT i."id", i."organizationId", i."testMode", i."customerId", i."userEmail", i."subscriptionId", i."billingCycle"
    FROM "Source" src
    JOIN "Invoice" i ON i."customerId" = src."customerId" AND i."organizationId" = src."organizationId"
    AND i."testMode" = src."testMode"
    WHERE src."usage" = 'reusable' AND src."status" = 'chargeable' AND src."customerId" IS NOT NULL
      AND i."subscriptionId" IS NOT NULL AND i."status" = 'finalized' AND i."total" > 0
      AND NOT EXISTS (SELECT 1 FROM "Payment" p WHERE p."invoiceId" = i."id") ${only} AND i."id" > ${after}
    GROUP BY i."id"
    ORDER BY i."id"
    ${limit}`,
    { prepared: true },
  );
}

/**
 * Collects finalized subscription invoices that have an amount due and no payment yet, whose
 * customer has a reusable source: creates a payment for the amount due (claiming the invoice row
 * with SKIP LOCKED meanwhile) and authorizes it with the source, which charges it. A declined
 * charge leaves the payment in `requires_payment_method` (the run does not retry it; the
 * customer or the API can pay it with another source). Returns how many succeeded and the failures.
 */
export async function collectInvoices(options: CollectOptions): Promise<CollectResult> {
  const result: CollectResult = { collected: 0, failures: [] };
  if (options.invoiceIds && options.invoiceIds.length === 0) return result;
  let candidates = await candidatesAfter(options, "");
  while (candidates.length) {
    for (const c of candidates)
      await collectOne(runContext(options.prisma, options.settings, options.now, c), c, result);
    candidates = options.invoiceIds ? [] : await candidatesAfter(options, candidates[candidates.length - 1].id);
  }
  return result;
}

/** Creates the payment of candidate `c` (unless another runner holds or paid it) and charges the customer's source. */
async function collectOne(ctx: ServiceContext, c: CollectCandidate, result: CollectResult): Promise<void> {
  try {
    const sourceId = await usableSourceOf(ctx, c.customerId);
    if (!sourceId) return;
    const payment = await ctx.prisma.$transaction(async (tx) => {
      // claimed: a concurrent runner skips it, and sees the payment once this commits
      const locked = await tx.$queryRaw<
        { id: string }[]
      >`SELECT "id" FROM "Invoice" WHERE "id" = ${c.id} FOR UPDATE SKIP LOCKED`;
      if (!locked.length) return null;
      if (await tx.payment.findFirst({ where: { invoiceId: c.id }, select: { id: true } })) return null;
      const txCtx = withinTransaction(ctx, tx);
      const [balance] = await invoiceBalances(txCtx, [c.id]);
      if (!toDecimal(balance.due).greaterThan(0)) return null;
      return createPayment(txCtx, {
        amount: balance.due,
        invoice: c.id,
        description: `Subscription ${c.subscriptionId}, cycle ${c.billingCycle}`,
      });
    });
    if (!payment) return;
    const paid = await authorizePayment(ctx, payment.id, sourceId);
    if (paid.status === "succeeded") result.collected++;
    else
      result.failures.push([
        c.id,
        new Error(`charge of payment ${paid.id} ${paid.status}: ${paid.failureReason ?? ""}`),
      ]);
  } catch (e) {
    result.failures.push([c.id, e]);
  }
}
