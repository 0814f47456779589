/**
 * Revenue analytics (docs/analytics.md): the monthly figures of the caller's organization and mode in one
 * currency. `revenueAnalytics` reads them from the maintained aggregates (services/revenue-aggregates.ts, a handful
 * of rows per month); `liveRevenueAnalytics` computes them from the documents with two statements, whatever the
 * number of months, the reference the aggregates are checked against:
 *
 * 1. **MRR** (`mrrByMonth`): for each month end, each customer's monthly recurring revenue: the licensed plan lines
 *    of the subscription cycle invoices whose period covers that day, net of tax, normalized to a month
 *    (domain/revenue-analytics.ts MRR_FREQUENCY_FACTORS), of subscriptions neither cancelled nor paused by then,
 *    rounded to the currency's unit per customer; then, comparing each customer's month end with the previous one
 *    (domain/revenue-analytics.ts `mrrMovement`, in SQL: services/revenue-sql.ts `MOVEMENT`), the month's new,
 *    expansion, contraction and churned MRR, and the active subscriptions and customers.
 * 2. **Money** (`moneyFlows`): the finalized invoices, credit and debit notes and succeeded payments grouped by their
 *    month and their invoice's due month, which domain/revenue-analytics.ts `monthlyFigures` turns into invoiced,
 *    notes, IVA, collected, outstanding and overdue.
 *
 * The SQL rules both share are services/revenue-sql.ts.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { sqlRows } from "../infra/sql/index.js";
import { ValidationError } from "../domain/errors.js";
import {
  analyticsMonths,
  monthIndex,
  monthlyFigures,
  type AnalyticsMonth,
  type MoneyFlow,
  type MonthlyMoney,
} from "../domain/revenue-analytics.js";
import type { ServiceContext } from "./context.js";
import { readRevenueAggregates } from "./revenue-aggregates.js";
import {
  countsAt,
  CYCLE_INVOICE,
  monthIndexOf,
  MONTHLY,
  MOVEMENT,
  NOTE_KIND,
  PLAN_LINE_JOINS,
  PLAN_LINE_NET,
  type MrrRow,
} from "./revenue-sql.js";

/** One month of revenueAnalytics: amounts are decimal strings in the analysis' currency. */
export interface RevenueMonth extends MonthlyMoney {
  /** first day of the month, yyyy-mm-dd */
  month: string;
  /** last day of the month, yyyy-mm-dd: the day MRR and the balances are taken at */
  monthEnd: string;
  mrr: string;
  newMrr: string;
  expansionMrr: string;
  contractionMrr: string;
  churnedMrr: string;
  activeSubscriptions: number;
  activeCustomers: number;
}

/** What revenueAnalytics answers. */
export interface RevenueAnalytics {
  /** ISO 4217 code of every amount */
  currency: string;
  months: RevenueMonth[];
}

export interface RevenueAnalyticsInput {
  /** ISO 4217 code, e.g. CLP */
  currency: string;
  /** a day of the first month, yyyy-mm-dd */
  from: string;
  /** a day of the last month, yyyy-mm-dd */
  to: string;
}

/**
 * The figures of every calendar month from `from`'s to `to`'s (docs/analytics.md), read from the maintained
 * aggregates (services/revenue-aggregates.ts): the organization and mode's dirty customers are drained first, so
 * the answer is the live statements' for the data committed when it was asked. Errors (400): `currency` not a known
 * currency; `from`, `to` as domain/revenue-analytics.ts `analyticsMonths` says.
 */
export function revenueAnalytics(ctx: ServiceContext, input: RevenueAnalyticsInput): Promise<RevenueAnalytics> {
  return analytics(ctx, input, readMaintained);
}

/**
 * The same figures computed from the documents by the two live statements (`mrrStatement`, `moneyStatement`): the
 * definition the maintained aggregates are checked against (test/integration/revenue-aggregates.test.ts), and what
 * they would be rebuilt from. Seconds at a million invoices (docs/performance.md "Revenue analytics").
 */
export function liveRevenueAnalytics(ctx: ServiceContext, input: RevenueAnalyticsInput): Promise<RevenueAnalytics> {
  return analytics(ctx, input, (c, currency, scale, previous, months) =>
    Promise.all([mrrByMonth(c, currency, scale, previous, months), moneyFlows(c, currency, months)]),
  );
}

/** Reads the MRR figures per month index (1 = the first month) and the money flows of the months asked for. */
type FigureReader = (
  ctx: ServiceContext,
  currencyId: string,
  scale: number,
  previous: AnalyticsMonth,
  months: AnalyticsMonth[],
) => Promise<[Map<number, MrrFigures>, MoneyFlow[]]>;

async function analytics(
  ctx: ServiceContext,
  input: RevenueAnalyticsInput,
  read: FigureReader,
): Promise<RevenueAnalytics> {
  const { previous, months } = analyticsMonths(input.from, input.to);
  const currency = await ctx.prisma.currency.findUnique({
    where: { id: input.currency },
    select: { id: true, rounded: true, decimals: true },
  });
  if (!currency) throw ValidationError.field("currency", `unknown currency ${input.currency}`);
  const scale = currency.rounded ? 0 : currency.decimals;
  const [mrr, flows] = await read(ctx, currency.id, scale, previous, months);
  const money = monthlyFigures(flows, months.length, currency);
  return {
    currency: currency.id,
    months: months.map((m, k) => ({
      month: m.start,
      monthEnd: m.last,
      ...money[k],
      ...(mrr.get(k + 1) ?? EMPTY_MRR),
    })),
  };
}

/** The aggregates' figures, after draining the caller's organization and mode (services/revenue-aggregates.ts). */
const readMaintained: FigureReader = async (ctx, currencyId, _scale, _previous, months) => {
  const rows = await readRevenueAggregates(ctx, currencyId, months);
  return [new Map(rows.mrr.map((r) => [r.k, mrrFigures(r)])), rows.flows];
};

/** The MRR figures of one month. */
export type MrrFigures = Pick<
  RevenueMonth,
  "mrr" | "newMrr" | "expansionMrr" | "contractionMrr" | "churnedMrr" | "activeSubscriptions" | "activeCustomers"
>;

const EMPTY_MRR: MrrFigures = {
  mrr: "0",
  newMrr: "0",
  expansionMrr: "0",
  contractionMrr: "0",
  churnedMrr: "0",
  activeSubscriptions: 0,
  activeCustomers: 0,
};

/**
 * MRR and its movements per month index (1 = the first month; 0, the month before, is read for the first month's
 * movements). One statement.
 */
async function mrrByMonth(
  ctx: ServiceContext,
  currencyId: string,
  scale: number,
  previous: AnalyticsMonth,
  months: AnalyticsMonth[],
): Promise<Map<number, MrrFigures>> {
  const rows = await sqlRows<MrrRow>(ctx.prisma, mrrStatement(ctx, currencyId, scale, previous, months));
  return new Map(rows.map((r) => [r.k, mrrFigures(r)]));
}

/** One row of MRR sums (null sums: no customer moved that way) as the month's figures. */
function mrrFigures(r: MrrRow): MrrFigures {
  return {
    mrr: r.mrr,
    newMrr: r.newMrr ?? "0",
    expansionMrr: r.expansionMrr ?? "0",
    contractionMrr: r.contractionMrr ?? "0",
    churnedMrr: r.churnedMrr ?? "0",
    activeSubscriptions: r.activeSubscriptions,
    activeCustomers: r.activeCustomers,
  };
}

/** mrrByMonth's statement (exported for bench/analytics.ts's EXPLAIN). */
export function mrrStatement(
  ctx: ServiceContext,
  currencyId: string,
  scale: number,
  previous: AnalyticsMonth,
  months: AnalyticsMonth[],
): Prisma.Sql {
  const ends = [previous, ...months].map((m) => m.last);
  return Prisma.sql`
    WITH ends AS (
      SELECT (ord - 1)::int AS k, e::date AS last FROM unnest(${ends}::text[]) WITH ORDINALITY AS x(e, ord)
    ),
    org AS (SELECT "timeZone" AS tz FROM "Organization" WHERE "id" = ${ctx.auth.organizationId}),
    plan_lines AS (
      SELECT e.k, i."customerId", i."subscriptionId", p."frequency", ${PLAN_LINE_NET} AS net
      FROM ends e
      JOIN "Invoice" i ON i."organizationId" = ${ctx.auth.organizationId} AND i."testMode" = ${ctx.auth.testMode}
        AND i."currencyId" = ${currencyId} AND ${CYCLE_INVOICE}
        AND i."periodStart" <= e.last AND i."periodEnd" > e.last
      ${PLAN_LINE_JOINS}
      CROSS JOIN org
      WHERE ${countsAt("e.last")}
    ),
    customers AS (
      SELECT k, "customerId", ROUND(SUM(${MONTHLY}), ${scale}) AS mrr, COUNT(DISTINCT "subscriptionId") AS subscriptions
      FROM plan_lines GROUP BY k, "customerId"
    ),
    pairs AS (
      SELECT COALESCE(c.k, p.k + 1) AS k, COALESCE(c.mrr, 0) AS cur, COALESCE(p.mrr, 0) AS prev,
        c."customerId" IS NOT NULL AS active, COALESCE(c.subscriptions, 0) AS subscriptions
      FROM customers c FULL JOIN customers p ON p."customerId" = c."customerId" AND p.k = c.k - 1
    )
    SELECT k, SUM(cur)::text AS "mrr", SUM(${MOVEMENT.newMrr})::text AS "newMrr",
      SUM(${MOVEMENT.expansionMrr})::text AS "expansionMrr", SUM(${MOVEMENT.contractionMrr})::text AS "contractionMrr",
      SUM(${MOVEMENT.churnedMrr})::text AS "churnedMrr",
      SUM(subscriptions)::int AS "activeSubscriptions", (COUNT(*) FILTER (WHERE active))::int AS "activeCustomers"
    FROM pairs WHERE k BETWEEN 1 AND ${months.length} GROUP BY k`;
}

/**
 * The money flows up to the last month's end, grouped by month index (0: the month before the first and earlier)
 * and their invoice's due month index (beyond the last month: months + 1). One statement.
 */
function moneyFlows(ctx: ServiceContext, currencyId: string, months: AnalyticsMonth[]): Promise<MoneyFlow[]> {
  return sqlRows<MoneyFlow>(ctx.prisma, moneyStatement(ctx, currencyId, months));
}

/** moneyFlows' statement (exported for bench/analytics.ts's EXPLAIN). */
export function moneyStatement(ctx: ServiceContext, currencyId: string, months: AnalyticsMonth[]): Prisma.Sql {
  const before = monthIndex(months[0].start) - 1;
  // GREATEST and LEAST skip nulls: a null date (an invoice without a due date) is kept null by the CASE
  const bucket = (column: string) =>
    Prisma.raw(
      `CASE WHEN ${column} IS NOT NULL THEN GREATEST(0, LEAST(${months.length + 1}, ` +
        `${monthIndexOf(column)} - ${before})) END`,
    );
  const last = months[months.length - 1].last;
  const tenant = (alias: string) => {
    const table = Prisma.raw(alias);
    const { organizationId, testMode } = ctx.auth;
    return Prisma.sql`${table}."organizationId" = ${organizationId} AND ${table}."testMode" = ${testMode}`;
  };
  return Prisma.sql`
    SELECT kind, month, "dueMonth", "forInvoice", SUM(total)::text AS total, SUM(tax)::text AS tax FROM (
      SELECT 'invoice' AS kind, ${bucket('i."date"')} AS month, ${bucket('i."dueDate"')} AS "dueMonth",
        true AS "forInvoice", i."total" AS total, i."tax" AS tax
      FROM "Invoice" i
      WHERE ${tenant("i")} AND i."currencyId" = ${currencyId} AND i."status" = 'finalized' AND i."date" <= ${last}::date
      UNION ALL
      SELECT ${NOTE_KIND}, ${bucket('n."date"')},
        ${bucket('i."dueDate"')}, true, n."total", n."tax"
      FROM "CreditNote" n JOIN "DocumentType" dt ON dt."id" = n."documentTypeId"
      JOIN "Invoice" i ON i."id" = n."invoiceId"
      WHERE ${tenant("n")} AND n."currencyId" = ${currencyId} AND n."status" = 'finalized' AND n."date" <= ${last}::date
      UNION ALL
      SELECT 'payment', ${bucket('p."date"')}, ${bucket('i."dueDate"')}, p."invoiceId" IS NOT NULL, p."amount", 0
      FROM "Payment" p LEFT JOIN "Invoice" i ON i."id" = p."invoiceId"
      WHERE ${tenant("p")} AND p."currencyId" = ${currencyId} AND p."status" = 'succeeded' AND p."date" <= ${last}::date
    ) f
    GROUP BY kind, month, "dueMonth", "forInvoice"`;
}
