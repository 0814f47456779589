/**
 * Claiming due subscriptions (docs/billing-run.md "What is due", "Exactly once and crash safety"):
 * `status` active, `next_billing` on or before the cutoff (`until` when given, else today in the
 * organization's time zone), on the run's test clock or, without one, on none. Claimed in batches
 * with `SELECT ... FOR UPDATE SKIP LOCKED`, so concurrent runners (CLI, server interval, several
 * processes) take disjoint subscriptions.
 */
import type { PrismaClient } from "../../infra/prisma/generated/client.js";
import { Prisma } from "../../infra/prisma/generated/client.js";
import type { Tx } from "../context.js";
import { isoDate } from "../../domain/formats.js";
import { sqlRows } from "../../infra/sql/index.js";

/** The largest offset from UTC of any time zone (Pacific/Kiritimati, UTC+14). */
const LATEST_UTC_OFFSET_MS = 14 * 3_600_000;

/** A claimed (locked) due subscription, with what the run needs to bill it. */
export interface Claimed {
  id: string;
  organizationId: string;
  testMode: boolean;
  timeZone: string;
  userEmail: string;
}

/** Which subscriptions a run bills. */
export interface DueScope {
  /** `yyyy-mm-dd`: the cutoff; absent: today in each organization's time zone at `startedAt` */
  until?: string;
  startedAt: Date;
  /** only the customers on this test clock; absent: only customers on none */
  testClockId?: string;
}

/**
 * The due-filter SQL: active, next billing on or before the cutoff, and on test clock
 * `testClockId` or, without it, on none (test clocks, docs/test-clocks.md: their customers are
 * billed only when their clock advances).
 */
function dueFilter({ until, startedAt, testClockId }: DueScope): Prisma.Sql {
  // without `until`, also bounded by the latest date anywhere at `startedAt` (UTC+14), which the
  // partial index on (nextBilling, id) of the billed statuses can use where the organization's zone cannot
  const cutoff = until
    ? Prisma.sql`${until}::date`
    : Prisma.sql`(${startedAt.toISOString()}::timestamptz AT TIME ZONE o."timeZone")::date
      AND s."nextBilling" <= ${isoDate(new Date(startedAt.getTime() + LATEST_UTC_OFFSET_MS))}::date`;
  const clock = testClockId
    ? Prisma.sql`s."customerId" IN (SELECT c."id" FROM "Customer" c WHERE c."testClockId" = ${testClockId})`
    : Prisma.sql`s."customerId" NOT IN (SELECT c."id" FROM "Customer" c WHERE c."testClockId" IS NOT NULL)`;
  return Prisma.sql`s."status" IN ('active', 'past_due') AND s."nextBilling" <= ${cutoff} AND ${clock}`;
}

/** How many subscriptions are due now (the run's progress total). */
export async function countDue(prisma: PrismaClient, scope: DueScope): Promise<number> {
  const [{ count }] = await sqlRows<{ count: number }>(
    prisma,
    Prisma.sql`
    SELECT COUNT(*)::int AS "count" FROM "Subscription" s JOIN "Organization" o ON o."id" = s."organizationId"
    WHERE ${dueFilter(scope)}`,
  );
  return Number(count);
}

/**
 * Locks and returns up to `limit` due subscriptions no other runner holds (SKIP LOCKED), oldest
 * `next_billing` first (the partial index on (nextBilling, id) of the statuses `active` and `past_due`, migration
 * 2026120701000002_subscription_past_due, gives that order, so the claim reads
 * about `limit` rows however many are due), leaving out `excluded` (failed or stopped early in this run); `only`: that
 * subscription alone (the one-by-one retry of a failed batch).
 */
export async function claimDue(
  tx: Tx | PrismaClient,
  scope: DueScope,
  take: { limit: number; excluded: ReadonlySet<string>; only?: string },
): Promise<Claimed[]> {
  // the excluded ids as one array parameter, so that the text stays the same (a prepared statement)
  const notIn = take.excluded.size ? Prisma.sql`AND s."id" <> ALL(${[...take.excluded]}::text[])` : Prisma.empty;
  const onlyId = take.only ? Prisma.sql`AND s."id" = ${take.only}` : Prisma.empty;
  return sqlRows<Claimed>(
    tx,
    Prisma.sql`
    SELECT s."id", s."organizationId", s."testMode", o."timeZone", s."userEmail"
    FROM "Subscription" s JOIN "Organization" o ON o."id" = s."organizationId"
    WHERE ${dueFilter(scope)} ${notIn} ${onlyId}
    ORDER BY s."nextBilling", s."id"
    LIMIT ${take.limit}
    FOR UPDATE OF s SKIP LOCKED`,
    { prepared: true },
  );
}
