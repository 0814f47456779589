/**
 * Seeds `count` due subscriptions straight into the database with a few set-based SQL statements
 * (`INSERT ... SELECT ... FROM generate_series`, no API and no rows built in JavaScript), for the
 * billing bench (bench/billing.ts, which runs it in its own process: bench/billing-child.ts) and
 * the crash test (test/integration/billing-run-crash.test.ts). 100,000 subscriptions take seconds.
 * Mixed plans in turn (subscription i gets plan i mod 4): licensed seats, graduated tiers, volume
 * tiers, and a metered plan (sum) with `usagesPerMetered` usage records in the first period.
 * Every subscription starts on `dateStart` (monthly), so on `until` = start of cycle 2 each bills
 * two cycles (the metered usage on cycle 2). Customers have no payment source (collection finds
 * nothing to charge); invoices fall due after 45 days, so the no-card rule does not cancel them on
 * cycle 2.
 */
import type { PrismaClient } from "../src/infra/prisma/generated/client.js";
import { Prisma } from "../src/infra/prisma/generated/client.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";

export interface SeedOptions {
  count: number;
  /** `yyyy-mm-dd`, default 2026-01-01 */
  dateStart?: string;
  usagesPerMetered?: number;
  organizationName?: string;
  testMode?: boolean;
  /** read back the subscription ids and the metered lines' usage sums (default true; the bench skips it) */
  readBack?: boolean;
}

export interface Seeded {
  organizationId: string;
  subscriptionIds: string[];
  /** metered subscription line ids and the sum of their usage quantities */
  meteredUsage: Map<string, number>;
}

/** Subscriptions inserted per statement (each statement inserts their customers, lines and usages too). */
const CHUNK = 25_000;

/** Inserts the organization, a product with four plans, `count` customers with one subscription each, and usages. */
export async function seedSubscriptions(prisma: PrismaClient, options: SeedOptions): Promise<Seeded> {
  const testMode = options.testMode ?? true;
  const dateStart = options.dateStart ?? "2026-01-01";
  const usagesPer = options.usagesPerMetered ?? 3;
  const { organization } = await createApiKey(prisma, {
    organizationName: options.organizationName ?? `Seed ${Date.now()}`,
    email: "seed@example.cl",
    mode: testMode ? "test" : "live",
  });
  const tenant = { organizationId: organization, testMode };
  const productId = newId("pro");
  await prisma.product.create({ data: { id: productId, ...tenant, name: "Seeded" } });
  const tiers = [
    { up_to: "10", unit_amount: "1000", flat_amount: "0" },
    { up_to: null, unit_amount: "500", flat_amount: "2000" },
  ];
  const plans = [
    { id: newId("pla"), name: "Seats", amount: "9990", usageScheme: "licensed", tiersMode: null, tiers: [] },
    {
      id: newId("pla"),
      name: "Storage graduated",
      amount: "0",
      usageScheme: "licensed",
      tiersMode: "graduated",
      tiers,
    },
    { id: newId("pla"), name: "Storage volume", amount: "0", usageScheme: "licensed", tiersMode: "volume", tiers },
    { id: newId("pla"), name: "API calls", amount: "7", usageScheme: "metered", tiersMode: null, tiers: [] },
  ];
  await prisma.plan.createMany({
    data: plans.map((p, position) => ({
      ...p,
      ...tenant,
      productId,
      position,
      currencyId: "CLP",
      frequency: "monthly",
      usageAggregation: "sum",
    })),
  });
  const planIds = plans.map((p) => p.id);

  // ids as newId makes them (prefix and 24 base62 characters; hex digits are base62 ones)
  const id = (prefix: string, salt: string) =>
    Prisma.sql`${`${prefix}_`} || substr(md5(random()::text || ${salt}::text || g.i::text), 1, 24)`;
  for (let from = 0; from < options.count; from += CHUNK) {
    const to = Math.min(options.count, from + CHUNK) - 1;
    // one statement per chunk: the rows of subscription i are derived from i (quantities as the
    // JavaScript seed had them: licensed (i mod 25) + 1 seats, metered usage u of i (i mod 7) + u + 1)
    await prisma.$executeRaw(Prisma.sql`
      WITH g AS MATERIALIZED (
        SELECT g.i, ${id("cus", "c")} AS "customerId", ${id("sub", "s")} AS "subscriptionId", ${id("lin", "l")} AS
        "lineId",
          (${planIds}::text[])[g.i % 4 + 1] AS "planId"
        FROM generate_series(${from}::int, ${to}::int) AS g(i)
      ), c AS (
        INSERT INTO "Customer" ("id", "organizationId", "testMode", "name", "countryId", "taxId", "updatedAt")
        SELECT "customerId", ${organization}, ${testMode}, 'Cliente ' || i, 'CL', '76042235-5', now() FROM g
      ), s AS (
        INSERT INTO "Subscription" ("id", "organizationId", "testMode", "documentTypeId", "customerId", "dateStart",
        "nextBilling", "expirationDays", "userEmail", "updatedAt")
        SELECT "subscriptionId", ${organization}, ${testMode}, 'CL33',
        "customerId", ${dateStart}::date, ${dateStart}::date, 45, 'seed@example.cl', now() FROM g
      ), l AS (
        INSERT INTO "SubscriptionLine" ("id", "subscriptionId", "organizationId", "planId", "quantity", "updatedAt")
        SELECT "lineId", "subscriptionId", ${organization}, "planId",
          CASE WHEN i % 4 = 3 THEN 1 ELSE i % 25 + 1 END, now() FROM g
      )
      INSERT INTO "Usage" ("id", "organizationId", "testMode", "subscriptionLineId", "quantity", "dateTime")
      SELECT 'usa_' || substr(md5(random()::text || g.i::text || '-' || u::text), 1,
      24), ${organization}, ${testMode}, "lineId", g.i % 7 + u + 1,
        (${dateStart}::date + (u + 1) * 3)::timestamp AT TIME ZONE 'UTC'
      FROM g CROSS JOIN generate_series(0, ${usagesPer - 1}::int) AS u
      WHERE g.i % 4 = 3`);
  }
  if (options.readBack === false) return { organizationId: organization, subscriptionIds: [], meteredUsage: new Map() };
  const subscriptions = await prisma.$queryRaw<
    { id: string }[]
  >`SELECT "id" FROM "Subscription" WHERE "organizationId" = ${organization}`;
  const sums = await prisma.$queryRaw<{ id: string; sum: string }[]>`
    SELECT u."subscriptionLineId" AS "id", SUM(u."quantity")::text AS "sum" FROM "Usage" u
    WHERE u."organizationId" = ${organization} GROUP BY u."subscriptionLineId"`;
  return {
    organizationId: organization,
    subscriptionIds: subscriptions.map((s) => s.id),
    meteredUsage: new Map(sums.map((s) => [s.id, Number(s.sum)])),
  };
}
