/**
 * Revenue analytics' maintained aggregates (docs/analytics.md "How it is computed"): exact, never stale.
 *
 * - **Marks.** Triggers (migration 2026120711000001_revenue_aggregates) add a row to "RevenueDirtyCustomer" in the
 *   transaction of every change that can move a customer's figures (its finalized invoices, their lines, its credit
 *   and debit notes, its succeeded payments, its subscriptions' pause and cancellation, and the reference data the
 *   statements read), one row per customer and transaction.
 * - **Customer rows.** A drain takes a batch of dirty customers of one organization and mode (deleting their marks),
 *   recomputes their rows with the live statements' rules restricted to them (services/revenue-sql.ts: each
 *   customer's MRR at every month end its cycle invoices cover, with its movement against the previous month end;
 *   its money flows by month and due month), and adds the difference to the sums per (organization, mode,
 *   currency, month[, due month]) ("RevenueMonth", "RevenueFlow"): the old rows subtracted, the new ones added.
 * - **Exactness.** Drains of one organization and mode hold its advisory transaction lock, so the sums are changed
 *   by one drain at a time. A drain reads the customers (a statement after the one deleting their marks) in a
 *   snapshot that has every transaction whose mark it deleted; a transaction that commits later left its own mark,
 *   which the next drain takes. A reader (`readRevenueAggregates`) drains everything pending under the lock, then
 *   reads the sums in the same transaction: its answer is the live statements' for what was committed when it
 *   started. A drain killed or failed mid-way rolls back: its marks stay, its sums are unchanged.
 * - **Background.** `drainRevenueRound` (the server's revenue drain worker, `ANALYTICS_DRAIN_INTERVAL_SECONDS`)
 *   drains every organization and mode with marks, skipping one whose lock another process holds, so readers
 *   rarely find work.
 */
import { Prisma, type PrismaClient } from "../infra/prisma/generated/client.js";
import { sqlRows } from "../infra/sql/index.js";
import { monthIndex, type AnalyticsMonth, type MoneyFlow } from "../domain/revenue-analytics.js";
import { atomically, type ServiceContext } from "./context.js";
import {
  countsAt,
  CYCLE_INVOICE,
  monthEndOf,
  monthIndexOf,
  MONTHLY,
  MOVEMENT,
  NOTE_KIND,
  PLAN_LINE_JOINS,
  PLAN_LINE_NET,
  type MrrRow,
} from "./revenue-sql.js";

/** Dirty customers recomputed per drain transaction. */
export const REVENUE_DRAIN_BATCH = 500;

/** An organization and mode whose aggregates are drained together (one advisory lock). */
export interface RevenueTenant {
  organizationId: string;
  testMode: boolean;
}

/** What one drain transaction did: `locked` false when another holds the tenant's lock (a `tryLock` drain). */
export interface RevenueDrainBatch {
  locked: boolean;
  /** dirty customers recomputed */
  customers: number;
}

type Db = Parameters<typeof sqlRows>[0];

/** The tenant's advisory lock, held until the transaction ends; with `tryLock`, false when another holds it. */
export async function lockRevenueTenant(db: Db, tenant: RevenueTenant, tryLock: boolean): Promise<boolean> {
  const key = `revenue-aggregates:${tenant.organizationId}:${tenant.testMode}`;
  if (!tryLock) {
    await sqlRows(db, Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))::text AS locked`);
    return true;
  }
  const [row] = await sqlRows<{ locked: boolean }>(
    db,
    Prisma.sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS locked`,
  );
  return row.locked;
}

/**
 * One drain step inside transaction `db`, which must already hold the tenant's lock: takes up to `limit` dirty
 * customers (deleting their marks) and brings their rows and the sums up to date. Returns how many it took.
 */
export async function drainRevenueCustomers(db: Db, tenant: RevenueTenant, limit: number): Promise<number> {
  const { organizationId: org, testMode: mode } = tenant;
  const taken = await sqlRows<{ customerId: string }>(
    db,
    Prisma.sql`
      DELETE FROM "RevenueDirtyCustomer" WHERE "organizationId" = ${org} AND "testMode" = ${mode}
        AND "customerId" IN (SELECT DISTINCT "customerId" FROM "RevenueDirtyCustomer"
          WHERE "organizationId" = ${org} AND "testMode" = ${mode} ORDER BY "customerId" LIMIT ${limit})
      RETURNING "customerId"`,
  );
  const ids = [...new Set(taken.map((r) => r.customerId))];
  if (ids.length === 0) return 0;
  for (const statement of customerStatements(tenant, ids)) await sqlRows(db, statement);
  return ids.length;
}

/**
 * The four statements that replace customers `ids`' rows and move the sums by the difference (exported for
 * bench/analytics.ts's EXPLAIN).
 */
export function customerStatements(tenant: RevenueTenant, ids: string[]): Prisma.Sql[] {
  const { organizationId: org, testMode: mode } = tenant;
  const mine = Prisma.sql`"organizationId" = ${org} AND "testMode" = ${mode} AND "customerId" = ANY(${ids}::text[])`;
  const addMonths = (from: string, sign: "" | "-") =>
    Prisma.raw(`
      INSERT INTO "RevenueMonth" ("organizationId", "testMode", "currencyId", "month", "mrr", "newMrr", "expansionMrr",
        "contractionMrr", "churnedMrr", "activeSubscriptions", "activeCustomers")
      SELECT "organizationId", "testMode", "currencyId", "month", ${sign}SUM("mrr"), ${sign}SUM("newMrr"),
        ${sign}SUM("expansionMrr"), ${sign}SUM("contractionMrr"), ${sign}SUM("churnedMrr"),
        ${sign}SUM("subscriptions")::int,
        ${sign}(COUNT(*) FILTER (WHERE "active"))::int
      FROM ${from} GROUP BY "organizationId", "testMode", "currencyId", "month"
      ON CONFLICT ("organizationId", "testMode", "currencyId", "month") DO UPDATE SET
        "mrr" = "RevenueMonth"."mrr" + EXCLUDED."mrr", "newMrr" = "RevenueMonth"."newMrr" + EXCLUDED."newMrr",
        "expansionMrr" = "RevenueMonth"."expansionMrr" + EXCLUDED."expansionMrr",
        "contractionMrr" = "RevenueMonth"."contractionMrr" + EXCLUDED."contractionMrr",
        "churnedMrr" = "RevenueMonth"."churnedMrr" + EXCLUDED."churnedMrr",
        "activeSubscriptions" = "RevenueMonth"."activeSubscriptions" + EXCLUDED."activeSubscriptions",
        "activeCustomers" = "RevenueMonth"."activeCustomers" + EXCLUDED."activeCustomers"`);
  const addFlows = (from: string, sign: "" | "-") =>
    Prisma.raw(`
      INSERT INTO "RevenueFlow" ("organizationId", "testMode", "currencyId", "month", "kind", "dueMonth", "forInvoice",
        "total", "tax")
      SELECT "organizationId", "testMode", "currencyId", "month", "kind", "dueMonth", "forInvoice", ${sign}SUM("total"),
        ${sign}SUM("tax")
      FROM ${from} GROUP BY "organizationId", "testMode", "currencyId", "month", "kind", "dueMonth", "forInvoice"
      ON CONFLICT ("organizationId", "testMode", "currencyId", "month", "kind", "dueMonth", "forInvoice") DO UPDATE SET
        "total" = "RevenueFlow"."total" + EXCLUDED."total", "tax" = "RevenueFlow"."tax" + EXCLUDED."tax"`);
  return [
    Prisma.sql`WITH old AS (DELETE FROM "RevenueCustomerMonth" WHERE ${mine} RETURNING *) ${addMonths("old", "-")}`,
    Prisma.sql`WITH ${customerMonths(tenant, ids)},
      new AS (
        INSERT INTO "RevenueCustomerMonth" ("organizationId", "testMode", "customerId", "currencyId", "month", "mrr",
          "subscriptions", "active", "newMrr", "expansionMrr", "contractionMrr", "churnedMrr")
        SELECT ${org}, ${mode}, "customerId", "currencyId", k, cur, subscriptions, active, ${MOVEMENT.newMrr},
          ${MOVEMENT.expansionMrr}, ${MOVEMENT.contractionMrr}, ${MOVEMENT.churnedMrr}
        FROM pairs
        RETURNING *
      ) ${addMonths("new", "")}`,
    Prisma.sql`WITH old AS (DELETE FROM "RevenueCustomerFlow" WHERE ${mine} RETURNING *) ${addFlows("old", "-")}`,
    Prisma.sql`WITH ${customerFlows(tenant, ids)},
      new AS (
        INSERT INTO "RevenueCustomerFlow" ("organizationId", "testMode", "customerId", "currencyId", "kind", "month",
          "dueMonth", "forInvoice", "total", "tax")
        SELECT ${org}, ${mode}, "customerId", "currencyId", kind, month, "dueMonth", "forInvoice", SUM(total), SUM(tax)
        FROM flows GROUP BY "customerId", "currencyId", kind, month, "dueMonth", "forInvoice"
        RETURNING *
      ) ${addFlows("new", "")}`,
  ];
}

/**
 * CTEs ending in `pairs`: each of customers `ids`' MRR at every month end (index k) a cycle invoice of theirs covers,
 * per currency, rounded to the currency's unit, with the previous month end's (`prev`), the subscriptions counted
 * and whether the customer is active; plus the month after their last such month end (cur 0: churned). The rules of
 * services/revenue-analytics.ts `mrrStatement`, for these customers and every month.
 */
function customerMonths(tenant: RevenueTenant, ids: string[]): Prisma.Sql {
  const { organizationId: org, testMode: mode } = tenant;
  return Prisma.sql`
    org AS (SELECT "timeZone" AS tz FROM "Organization" WHERE "id" = ${org}),
    plan_lines AS (
      SELECT e.k, i."customerId", i."currencyId", i."subscriptionId", p."frequency", ${PLAN_LINE_NET} AS net
      FROM "Invoice" i
      CROSS JOIN LATERAL (
        SELECT k, ${Prisma.raw(monthEndOf("k"))} AS last
        FROM generate_series(${Prisma.raw(monthIndexOf('i."periodStart"'))},
          ${Prisma.raw(monthIndexOf('i."periodEnd"'))}) AS g(k)
      ) e
      ${PLAN_LINE_JOINS}
      CROSS JOIN org
      WHERE i."organizationId" = ${org} AND i."testMode" = ${mode} AND i."customerId" = ANY(${ids}::text[])
        AND ${CYCLE_INVOICE} AND ${countsAt("e.last")}
    ),
    customers AS (
      SELECT pl.k, pl."customerId", pl."currencyId", COUNT(DISTINCT pl."subscriptionId")::int AS subscriptions,
        ROUND(SUM(${MONTHLY}), CASE WHEN c."rounded" THEN 0 ELSE c."decimals" END) AS mrr
      FROM plan_lines pl JOIN "Currency" c ON c."id" = pl."currencyId"
      GROUP BY pl.k, pl."customerId", pl."currencyId", c."rounded", c."decimals"
    ),
    pairs AS (
      SELECT COALESCE(c."customerId", p."customerId") AS "customerId",
        COALESCE(c."currencyId", p."currencyId") AS "currencyId",
        COALESCE(c.k, p.k + 1) AS k, COALESCE(c.mrr, 0) AS cur, COALESCE(p.mrr, 0) AS prev,
        c."customerId" IS NOT NULL AS active, COALESCE(c.subscriptions, 0) AS subscriptions
      FROM customers c FULL JOIN customers p
        ON p."customerId" = c."customerId" AND p."currencyId" = c."currencyId" AND p.k = c.k - 1
    )`;
}

/**
 * A CTE `flows`: customers `ids`' money flows, as services/revenue-analytics.ts `moneyStatement` reads them, by
 * absolute month index and due month index (-1: none). A note or a payment for an invoice belongs to the invoice's
 * customer; a payment on account to its own customer, or to '' without one.
 */
function customerFlows(tenant: RevenueTenant, ids: string[]): Prisma.Sql {
  const { organizationId: org, testMode: mode } = tenant;
  const month = (column: string) => Prisma.raw(monthIndexOf(column));
  const due = Prisma.raw(`COALESCE(${monthIndexOf('i."dueDate"')}, -1)`);
  return Prisma.sql`
    flows AS (
      SELECT i."customerId", i."currencyId", 'invoice' AS kind, ${month('i."date"')} AS month, ${due} AS "dueMonth",
        true AS "forInvoice", i."total" AS total, i."tax" AS tax
      FROM "Invoice" i
      WHERE i."organizationId" = ${org} AND i."testMode" = ${mode} AND i."customerId" = ANY(${ids}::text[])
        AND i."status" = 'finalized'
      UNION ALL
      SELECT i."customerId", n."currencyId", ${NOTE_KIND}, ${month('n."date"')}, ${due}, true, n."total", n."tax"
      FROM "Invoice" i JOIN "CreditNote" n ON n."invoiceId" = i."id"
      JOIN "DocumentType" dt ON dt."id" = n."documentTypeId"
      WHERE i."customerId" = ANY(${ids}::text[]) AND n."organizationId" = ${org} AND n."testMode" = ${mode}
        AND n."status" = 'finalized'
      UNION ALL
      SELECT i."customerId", p."currencyId", 'payment', ${month('p."date"')}, ${due}, true, p."amount", 0
      FROM "Invoice" i JOIN "Payment" p ON p."invoiceId" = i."id"
      WHERE i."customerId" = ANY(${ids}::text[]) AND p."organizationId" = ${org} AND p."testMode" = ${mode}
        AND p."status" = 'succeeded'
      UNION ALL
      SELECT COALESCE(p."customerId", ''), p."currencyId", 'payment', ${month('p."date"')}, -1, false, p."amount", 0
      FROM "Payment" p
      WHERE p."invoiceId" IS NULL
        AND (p."customerId" = ANY(${ids}::text[]) OR (p."customerId" IS NULL AND '' = ANY(${ids}::text[])))
        AND p."organizationId" = ${org} AND p."testMode" = ${mode} AND p."status" = 'succeeded'
    )`;
}

/**
 * One drain transaction of `tenant`: its lock (waited for, or with `tryLock` given up when another holds it), then
 * up to `limit` dirty customers. A failure or a killed process rolls it back: the marks stay.
 */
export function drainRevenueBatch(
  prisma: PrismaClient,
  tenant: RevenueTenant,
  options: { tryLock?: boolean; limit?: number } = {},
): Promise<RevenueDrainBatch> {
  return prisma.$transaction(async (tx) => {
    if (!(await lockRevenueTenant(tx, tenant, options.tryLock ?? false))) return { locked: false, customers: 0 };
    return { locked: true, customers: await drainRevenueCustomers(tx, tenant, options.limit ?? REVENUE_DRAIN_BATCH) };
  });
}

/** What a background round did: dirty customers recomputed, tenants skipped (another process held their lock). */
export interface RevenueDrainSummary {
  customers: number;
  skipped: number;
}

/**
 * The background drain (docs/analytics.md "How it is computed"): every organization and mode with marks, batch by
 * batch (a transaction each), until none is left; a tenant whose lock another process or a reader holds is skipped
 * (`tryLock`), that one drains it. `signal` is checked before each batch.
 */
export async function drainRevenueRound(prisma: PrismaClient, signal?: AbortSignal): Promise<RevenueDrainSummary> {
  const summary: RevenueDrainSummary = { customers: 0, skipped: 0 };
  const tenants = await sqlRows<RevenueTenant>(
    prisma,
    Prisma.sql`SELECT DISTINCT "organizationId", "testMode" FROM "RevenueDirtyCustomer"`,
  );
  for (const tenant of tenants) {
    for (;;) {
      if (signal?.aborted) return summary;
      const batch = await drainRevenueBatch(prisma, tenant, { tryLock: true });
      if (!batch.locked) summary.skipped++;
      summary.customers += batch.customers;
      if (!batch.locked || batch.customers < REVENUE_DRAIN_BATCH) break;
    }
  }
  return summary;
}

/** The maintained figures of months `months` in `currencyId`: MRR rows by month index and money flows. */
export interface RevenueAggregateRows {
  mrr: MrrRow[];
  flows: MoneyFlow[];
}

/**
 * What readRevenueAggregates reads: the sums of `tenant` in `currencyId` for the months from absolute month index
 * `first` to `last` (domain/revenue-analytics.ts monthIndex), both included.
 */
interface AggregateQuery {
  tenant: RevenueTenant;
  currencyId: string;
  first: number;
  last: number;
}

/**
 * Reads the sums for the caller's organization and mode after draining its dirty customers: batches in their own
 * transactions first (outside a caller's transaction), then, under the lock, what is left and the two reads in
 * one transaction. The flows are grouped as services/revenue-analytics.ts `moneyStatement` groups them (month and
 * due month indexes relative to the months asked for: 0 the months before, months + 1 after).
 */
export async function readRevenueAggregates(
  ctx: ServiceContext,
  currencyId: string,
  months: AnalyticsMonth[],
): Promise<RevenueAggregateRows> {
  const tenant = { organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode };
  const first = monthIndex(months[0].start);
  const query: AggregateQuery = { tenant, currencyId, first, last: first + months.length - 1 };
  for (;;) {
    const rows = await atomically(ctx, (tx) => drainAndRead(tx, !ctx.inTransaction, query));
    if (rows) return rows;
  }
}

/**
 * readRevenueAggregates' transaction: the tenant's lock, a batch of its dirty customers, then the sums; null when the
 * batch was full (more may be left: the caller commits it and asks again, so no transaction grows with the backlog),
 * unless it runs in a caller's transaction (`ownTransaction` false), where everything left is drained in it.
 */
async function drainAndRead(
  tx: ServiceContext,
  ownTransaction: boolean,
  query: AggregateQuery,
): Promise<RevenueAggregateRows | null> {
  const { tenant } = query;
  await lockRevenueTenant(tx.prisma, tenant, false);
  let drained = await drainRevenueCustomers(tx.prisma, tenant, REVENUE_DRAIN_BATCH);
  if (drained === REVENUE_DRAIN_BATCH && ownTransaction) return null;
  while (drained === REVENUE_DRAIN_BATCH) drained = await drainRevenueCustomers(tx.prisma, tenant, REVENUE_DRAIN_BATCH);
  return readSums(tx.prisma, query);
}

/**
 * The sums of `query` (two statements: the months' MRR rows, then the money flows), month indexes relative to the
 * month before `first` (k 1 is `first`; a flow's month and due month clamped to 0..months + 1). Amounts as decimal
 * text.
 */
async function readSums(db: Db, query: AggregateQuery): Promise<RevenueAggregateRows> {
  const { tenant, currencyId, first, last } = query;
  const before = first - 1;
  const n = last - first + 1;
  const mine = Prisma.sql`"organizationId" = ${tenant.organizationId} AND "testMode" = ${tenant.testMode}
    AND "currencyId" = ${currencyId}`;
  const mrr = await sqlRows<MrrRow>(
    db,
    Prisma.sql`
      SELECT ("month" - ${before})::int AS k, "mrr"::text AS "mrr", "newMrr"::text AS "newMrr",
        "expansionMrr"::text AS "expansionMrr", "contractionMrr"::text AS "contractionMrr",
        "churnedMrr"::text AS "churnedMrr", "activeSubscriptions", "activeCustomers"
      FROM "RevenueMonth" WHERE ${mine} AND "month" BETWEEN ${first} AND ${last}`,
  );
  const bucket = (column: string) => Prisma.raw(`GREATEST(0, LEAST(${n + 1}, ${column} - ${before}))::int`);
  const flows = await sqlRows<MoneyFlow>(
    db,
    Prisma.sql`
      SELECT "kind", ${bucket('"month"')} AS "month",
        CASE WHEN "dueMonth" >= 0 THEN ${bucket('"dueMonth"')} END AS "dueMonth", "forInvoice",
        SUM("total")::text AS "total", SUM("tax")::text AS "tax"
      FROM "RevenueFlow" WHERE ${mine} AND "month" <= ${last}
      GROUP BY 1, 2, 3, 4`,
  );
  return { mrr, flows };
}
