/**
 * What is paid and due on invoices, for a batch of invoices in one SQL query (indexes
 * CreditNote(invoiceId, status) and Payment(invoiceId, status)), for the services that settle, charge and
 * dun invoices. GraphQL's amountPaid, amountDue and paymentStatus compute the same from the payments and notes
 * read with the invoice (graphql/types/invoice.ts, domain/payments.ts invoiceAmounts).
 *
 *   paid     = succeeded payments of the invoice
 *   credited = finalized credit notes of the invoice (61, 112)
 *   debited  = finalized debit notes of the invoice (56, 111)
 *   due      = max(0, total + debited - credited - paid)  (domain/payments.ts invoiceAmountDue)
 *   inFlight = payments being charged right now (processing); a new charge must fit in due - inFlight
 *
 * Payments of an invoice are in its currency (services/payments.ts), so the sums are exact.
 */
import { movePastDue } from "./past-due.js";
import { Prisma } from "../infra/prisma/generated/client.js";
import { invoiceAmountDue } from "../domain/payments.js";
import { lockTenantRow, type ServiceContext } from "./context.js";
import { recordEvents } from "./events.js";
import { preparedSql, queryPrepared } from "../infra/sql/index.js";

export interface InvoiceBalance {
  /** decimal strings in the invoice currency */
  total: string;
  credited: string;
  debited: string;
  paid: string;
  inFlight: string;
  due: string;
}

interface Row {
  id: string;
  total: string;
  credited: string;
  debited: string;
  paid: string;
  inFlight: string;
}

const ZERO: InvoiceBalance = { total: "0", credited: "0", debited: "0", paid: "0", inFlight: "0", due: "0" };

/**
 * The SQL that sums invoice `i`'s finalized credit notes (`cn.credited`) and debit notes (`cn.debited`): the notes
 * that count in its balance (module comment), for this module's statement and the dunning round's
 * (services/dunning-attempts.ts).
 */
export const NOTES_JOIN = `LEFT JOIN LATERAL (
    SELECT SUM(n."total") FILTER (WHERE dt."isCreditNote") AS credited,
           SUM(n."total") FILTER (WHERE NOT dt."isCreditNote") AS debited
    FROM "CreditNote" n JOIN "DocumentType" dt ON dt."id" = n."documentTypeId"
    WHERE n."invoiceId" = i."id" AND n."status" = 'finalized'
  ) cn ON true`;

/**
 * The balances' statement: $1 the invoices' ids, $2 the organization, $3 the mode. Sent as a named prepared
 * statement (infra/sql `queryPrepared`: straight to the pool on PostgreSQL, or on a direct transaction's
 * connection), not through Prisma's raw-query layer, which cost more than the statement itself (docs/performance.md
 * "An invoice's balance in its own read").
 */
const BALANCES = preparedSql(`
  SELECT i."id", i."total"::text AS "total",
         COALESCE(cn.credited, 0)::text AS "credited",
         COALESCE(cn.debited, 0)::text AS "debited",
         COALESCE(p.paid, 0)::text AS "paid",
         COALESCE(p.in_flight, 0)::text AS "inFlight"
  FROM "Invoice" i
  ${NOTES_JOIN}
  LEFT JOIN LATERAL (
    SELECT SUM(pay."amount") FILTER (WHERE pay."status" = 'succeeded') AS paid,
           SUM(pay."amount") FILTER (WHERE pay."status" = 'processing') AS in_flight
    FROM "Payment" pay WHERE pay."invoiceId" = i."id" AND pay."status" IN ('succeeded', 'processing')
  ) p ON true
  WHERE i."id" = ANY($1::text[]) AND i."organizationId" = $2::text AND i."testMode" = $3::boolean`);

/** Balances of `invoiceIds` (of the caller's organization and mode), in input order; unknown ids give zeros. */
export async function invoiceBalances(ctx: ServiceContext, invoiceIds: readonly string[]): Promise<InvoiceBalance[]> {
  if (invoiceIds.length === 0) return [];
  const rows = await queryPrepared<Row>(ctx.prisma, BALANCES, [
    [...new Set(invoiceIds)],
    ctx.auth.organizationId,
    ctx.auth.testMode,
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return invoiceIds.map((id) => {
    const r = byId.get(id);
    if (!r) return ZERO;
    const plain = (v: string) => new Prisma.Decimal(v).toFixed();
    return {
      total: plain(r.total),
      credited: plain(r.credited),
      debited: plain(r.debited),
      paid: plain(r.paid),
      inFlight: plain(r.inFlight),
      due: invoiceAmountDue(r).toFixed(),
    };
  });
}

/**
 * For a change that may leave nothing due on invoice `invoiceId` (a payment's success, a credit
 * note's finalize), inside the change's transaction `ctx`, before the change: locks the invoice
 * (concurrent settlements of one invoice queue, so exactly one sees it paid) and reads its balance.
 * `recordPaid`, called after the change, writes `invoice.paid` when something was due before and
 * nothing is due now (docs/webhooks.md "Event types"), and then moves a past-due subscription whose latest cycle
 * invoice it is back to `active` (services/past-due.ts). The rule is settlingInvoices', for one invoice.
 */
export async function settlingInvoice(
  ctx: ServiceContext,
  invoiceId: string,
): Promise<{ recordPaid(): Promise<void> }> {
  const settling = await settlingInvoices(ctx, [invoiceId]);
  return { recordPaid: () => settling.recordPaid([invoiceId]) };
}

/**
 * Locks the invoices `invoiceIds` of the caller's organization and mode (`FOR UPDATE`, in id order, one statement)
 * for the rest of the caller's transaction; returns their ids, distinct and sorted.
 */
export async function lockInvoices(ctx: ServiceContext, invoiceIds: readonly string[]): Promise<string[]> {
  const ids = [...new Set(invoiceIds)].sort();
  if (ids.length === 1) await lockTenantRow(ctx.prisma, ctx, "Invoice", ids[0]);
  else if (ids.length > 1)
    await ctx.prisma.$queryRaw(Prisma.sql`SELECT "id" FROM "Invoice" WHERE "id" = ANY(${ids}::text[])
      AND "organizationId" = ${ctx.auth.organizationId} AND "testMode" = ${ctx.auth.testMode}
      ORDER BY "id" FOR UPDATE`);
  return ids;
}

/**
 * settlingInvoice for several invoices of the caller's organization and mode (a page of payments settled together):
 * locks them in id order with one statement and reads their balances with one. `recordPaid(ids)`, after the
 * change, with the invoices (of those) that the change may have paid: `invoice.paid` for each that had something
 * due before and nothing now, with one statement, and their past-due subscriptions back to `active`.
 */
export async function settlingInvoices(
  ctx: ServiceContext,
  invoiceIds: readonly string[],
): Promise<{ recordPaid(ids: readonly string[]): Promise<void> }> {
  const ids = await lockInvoices(ctx, invoiceIds);
  const before = new Map((await invoiceBalances(ctx, ids)).map((b, k) => [ids[k], b]));
  return {
    async recordPaid(paidIds) {
      const candidates = [...new Set(paidIds)].filter((id) =>
        new Prisma.Decimal(before.get(id)?.due ?? 0).greaterThan(0),
      );
      if (candidates.length === 0) return;
      const after = await invoiceBalances(ctx, candidates);
      const paid = candidates.filter((_, k) => new Prisma.Decimal(after[k].due).isZero());
      if (paid.length === 0) return;
      await recordEvents(ctx, "invoice.paid", "invoice", paid);
      // a past-due subscription whose latest cycle invoice this is is active again (docs/dunning.md)
      await movePastDue(ctx, paid, false);
    },
  };
}
