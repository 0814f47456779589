/**
 * Customer aggregations (spec Customer.aggregations): a financial summary per customer, computed
 * in SQL for a batch of customers (one query, indexes on Invoice(customerId, status),
 * CreditNote(invoiceId, status) and Payment(customerId, status)).
 *
 *   sales                = total of finalized invoices
 *   sales_current_period = the same, dated in the current calendar month of the organization's
 *                          time zone
 *   balance              = sales + total of finalized debit notes of its invoices
 *                          - total of finalized credit notes of its invoices
 *                          - amount of succeeded payments
 *
 * Amounts are in the customer's aggregation currency: its `currency`, else its country's default
 * currency; documents and payments in other currencies are not added (a mixed sum would mean
 * nothing). A customer with neither gets a summary over all currencies and `currency` null.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { sqlRows } from "../infra/sql/index.js";
import { calendarMonth } from "../domain/periods.js";
import type { ServiceContext } from "./context.js";

export interface CustomerAggregations {
  /** ISO 4217 code the amounts are in, or null (see module doc) */
  currency: string | null;
  /** decimal strings in `currency` */
  balance: string;
  sales: string;
  salesCurrentPeriod: string;
}

interface Row {
  id: string;
  currency: string | null;
  sales: string;
  salesCurrentPeriod: string;
  credited: string;
  debited: string;
  paid: string;
}

/**
 * Aggregations of `customerIds` (of the caller's organization and mode), in input order. One statement
 * of fixed text (the ids one array parameter), sent as a prepared statement on PostgreSQL: planned
 * once per connection, not on every call (each event batch of subscriptions asks for 100 customers'
 * aggregations: docs/performance.md "After events: the cost of printing events").
 */
export async function customerAggregations(
  ctx: ServiceContext,
  customerIds: readonly string[],
): Promise<CustomerAggregations[]> {
  const org = await ctx.prisma.organization.findUniqueOrThrow({
    where: { id: ctx.auth.organizationId },
    select: { timeZone: true },
  });
  const period = calendarMonth(org.timeZone, ctx.now());
  const rows = await sqlRows<Row>(
    ctx.prisma,
    Prisma.sql`
    WITH customers AS (
      SELECT c."id",
             COALESCE(c."currencyId", (SELECT cur."id" FROM "Currency" cur WHERE cur."countryId" = c."countryId"
             AND cur."isDefault" LIMIT 1)) AS currency
      FROM "Customer" c
      WHERE c."id" = ANY(${[...customerIds]}::text[])
        AND c."organizationId" = ${ctx.auth.organizationId} AND c."testMode" = ${ctx.auth.testMode}
    )
    SELECT c."id", c.currency,
           COALESCE(inv.sales, 0)::text AS "sales",
           COALESCE(inv.period, 0)::text AS "salesCurrentPeriod",
           COALESCE(cn.credited, 0)::text AS "credited",
           COALESCE(cn.debited, 0)::text AS "debited",
           COALESCE(pay.paid, 0)::text AS "paid"
    FROM customers c
    LEFT JOIN LATERAL (
      SELECT SUM(i."total") AS sales,
             SUM(i."total") FILTER (WHERE i."date" >= ${period.start}::date
             AND i."date" < ${period.end}::date) AS period
      FROM "Invoice" i
      WHERE i."customerId" = c."id" AND i."status" = 'finalized' AND (c.currency IS NULL OR i."currencyId" = c.currency)
    ) inv ON true
    LEFT JOIN LATERAL (
      SELECT SUM(n."total") FILTER (WHERE t."isCreditNote") AS credited,
             SUM(n."total") FILTER (WHERE NOT t."isCreditNote") AS debited
      FROM "Invoice" i JOIN "CreditNote" n ON n."invoiceId" = i."id" JOIN "DocumentType" t
      ON t."id" = n."documentTypeId"
      WHERE i."customerId" = c."id" AND n."status" = 'finalized' AND (c.currency IS NULL OR n."currencyId" = c.currency)
    ) cn ON true
    LEFT JOIN LATERAL (
      SELECT SUM(p."amount") AS paid
      FROM "Payment" p
      WHERE p."customerId" = c."id" AND p."status" = 'succeeded' AND (c.currency IS NULL OR p."currencyId" = c.currency)
    ) pay ON true`,
    { prepared: true },
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return customerIds.map((id) => {
    const r = byId.get(id);
    if (!r) return { currency: null, balance: "0", sales: "0", salesCurrentPeriod: "0" };
    const balance = new Prisma.Decimal(r.sales).plus(r.debited).minus(r.credited).minus(r.paid);
    return {
      currency: r.currency,
      balance: balance.toFixed(),
      sales: new Prisma.Decimal(r.sales).toFixed(),
      salesCurrentPeriod: new Prisma.Decimal(r.salesCurrentPeriod).toFixed(),
    };
  });
}
