/**
 * The revenue data set of `npm run bench:analytics` and `npm run bench:dashboard` (docs/performance.md "Revenue
 * analytics"): one organization (test mode) with `subscriptions` subscriptions, one customer each, from January 2025
 * to December 2026, seeded with set-based SQL (`INSERT ... SELECT ... FROM generate_series`):
 * - nine in ten monthly (Básico 10,000 or Pro 25,000 CLP), each starting in one of the first 14 months and billed
 *   10 cycles (then cancelled, so the months see churn); one in ten yearly (Anual 120,000), billed once;
 * - every cycle invoice finalized (CL33, one plan line of its period, 19 % IVA), dated its cycle's start, due 10 days
 *   later, and paid by one succeeded payment dated its due date, except one in eight (outstanding, overdue);
 * - one one-off invoice per subscription (100,000 + IVA), paid, and one credit note per hundred.
 * About 1,000,000 invoices and 900,000 payments for 100,000 subscriptions. The triggers of revenue analytics'
 * aggregates mark every customer as it goes (what a drain then computes).
 */
import pg from "pg";
import { Prisma, type PrismaClient } from "../src/infra/prisma/generated/client.js";
import { DEFAULT_SETTINGS } from "../src/infra/config.js";
import { createApiKey } from "../src/services/api-keys.js";
import { createProduct } from "../src/services/products.js";
import { runContext } from "../src/services/billing-run/run-context.js";

/** The PostgreSQL server the benchmarks make their databases on: BENCH_POSTGRES_URL, else TEST_DATABASE_URL. */
const SERVER = new URL(
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test",
);

async function onServer(statement: string) {
  const client = new pg.Client({ connectionString: SERVER.toString() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Runs `fn` with the URL of a new database `name` on SERVER, dropped afterwards whatever happens. */
export async function withBenchDatabase<T>(name: string, fn: (url: string) => Promise<T>): Promise<T> {
  const url = new URL(SERVER.toString());
  url.pathname = `/${name}`;
  await onServer(`CREATE DATABASE ${name}`);
  try {
    return await fn(url.toString());
  } finally {
    await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/** Subscriptions per seeding statement. */
export const CHUNK = 10_000;

/** The seeded plans' ids. */
export interface SeedPlans {
  basico: string;
  pro: string;
  anual: string;
}

/** Subscriptions `from`..`to` with their customers, invoices, lines, payments and credit notes: one statement. */
export function seedChunk(org: string, plans: SeedPlans, from: number, to: number) {
  const id = (prefix: string, salt: string) =>
    `'${prefix}_' || substr(md5(random()::text || '${salt}' || g.i::text), 1, 24)`;
  return Prisma.sql`
    WITH g AS MATERIALIZED (
      SELECT g.i, ${Prisma.raw(id("cus", "c"))} AS cus, ${Prisma.raw(id("sub", "s"))} AS sub,
        (g.i % 10 = 0) AS yearly,
        CASE WHEN g.i % 10 = 0 THEN ${plans.anual} WHEN g.i % 2 = 0 THEN ${plans.pro} ELSE ${plans.basico} END AS plan,
        CASE WHEN g.i % 10 = 0 THEN 120000 WHEN g.i % 2 = 0 THEN 25000 ELSE 10000 END AS price,
        ('2025-01-01'::date + make_interval(months => g.i % 14) + make_interval(days => g.i % 28))::date AS start
      FROM generate_series(${from}::int, ${to}::int) AS g(i)
    ), c AS (
      INSERT INTO "Customer" ("id", "organizationId", "testMode", "name", "countryId", "createdAt", "updatedAt")
      SELECT cus, ${org}, true, 'Cliente ' || i, 'CL', now(), now() FROM g
    ), s AS (
      INSERT INTO "Subscription" ("id", "organizationId", "testMode", "documentTypeId", "customerId", "dateStart",
        "nextBilling", "nextBillingCycle", "status", "cancelled", "userEmail", "createdAt", "updatedAt")
      SELECT sub, ${org}, true, 'CL33', cus, start, (start + make_interval(months => 10))::date, 11,
        CASE WHEN yearly THEN 'active' ELSE 'cancelled' END,
        CASE WHEN yearly THEN NULL ELSE (start + make_interval(months => 10))::timestamptz END, 'seed', now(), now()
      FROM g
    ), cycles AS MATERIALIZED (
      SELECT g.*, n, ${Prisma.raw(id("inv", "i' || n || '"))} AS inv, ${Prisma.raw(id("lin", "l' || n || '"))} AS lin,
        ${Prisma.raw(id("pay", "p' || n || '"))} AS pay,
        (start + make_interval(months => CASE WHEN yearly THEN 0 ELSE n - 1 END))::date AS period_start,
        (start + make_interval(months => CASE WHEN yearly THEN 12 ELSE n END))::date AS period_end
      FROM g CROSS JOIN generate_series(1, 10) AS n WHERE n = 1 OR NOT yearly
    ), inv AS (
      INSERT INTO "Invoice" ("id", "organizationId", "testMode", "customerId", "documentTypeId", "currencyId", "number",
        "numbering", "date", "dueDate", "amount", "tax", "taxPercent", "subtotal", "total", "status", "userEmail",
        "finalizedAt", "subscriptionId", "billingCycle", "periodStart", "periodEnd", "createdAt", "updatedAt")
      SELECT inv, ${org}, true, cus, 'CL33', 'CLP', NULL, NULL, period_start, period_start + 10, price,
        price * 0.19, 19, price, price * 1.19, 'finalized', 'seed', now(), sub, n, period_start, period_end, now(),
        now()
      FROM cycles
    ), lines AS (
      INSERT INTO "InvoiceLine" ("id", "invoiceId", "organizationId", "position", "name", "quantity", "amount", "total",
        "planId", "periodStart", "periodEnd", "createdAt", "updatedAt")
      SELECT lin, inv, ${org}, 0, 'Plan', 1, price, price, plan, period_start, period_end, now(), now() FROM cycles
    ), paid AS (
      INSERT INTO "Payment" ("id", "organizationId", "testMode", "customerId", "invoiceId", "amount", "currencyId",
        "date", "status", "userEmail", "createdAt", "updatedAt")
      SELECT pay, ${org}, true, cus, inv, price * 1.19, 'CLP', period_start + 10, 'succeeded', 'seed', now(), now()
      FROM cycles WHERE (i + n) % 8 <> 0
    ), oneoff AS MATERIALIZED (
      SELECT g.*, ${Prisma.raw(id("inv", "o"))} AS inv, ${Prisma.raw(id("lin", "m"))} AS lin,
        ${Prisma.raw(id("pay", "q"))} AS pay, ${Prisma.raw(id("cre", "n"))} AS note FROM g
    ), oneoff_inv AS (
      INSERT INTO "Invoice" ("id", "organizationId", "testMode", "customerId", "documentTypeId", "currencyId", "date",
        "dueDate", "amount", "tax", "taxPercent", "subtotal", "total", "status", "userEmail", "finalizedAt",
        "createdAt", "updatedAt")
      SELECT inv, ${org}, true, cus, 'CL33', 'CLP', start + 5, start + 35, 100000, 19000, 19, 100000, 119000,
        'finalized', 'seed', now(), now(), now() FROM oneoff
    ), oneoff_lines AS (
      INSERT INTO "InvoiceLine" ("id", "invoiceId", "organizationId", "position", "name", "quantity", "amount", "total",
        "createdAt", "updatedAt")
      SELECT lin, inv, ${org}, 0, 'Implementación', 1, 100000, 100000, now(), now() FROM oneoff
    ), oneoff_paid AS (
      INSERT INTO "Payment" ("id", "organizationId", "testMode", "customerId", "invoiceId", "amount", "currencyId",
        "date", "status", "userEmail", "createdAt", "updatedAt")
      SELECT pay, ${org}, true, cus, inv, 119000, 'CLP', start + 20, 'succeeded', 'seed', now(), now() FROM oneoff
    )
    INSERT INTO "CreditNote" ("id", "organizationId", "testMode", "invoiceId", "documentTypeId", "currencyId", "date",
      "amount", "tax", "taxPercent", "subtotal", "total", "status", "userEmail", "createdAt", "updatedAt")
    SELECT note, ${org}, true, inv, 'CL61', 'CLP', start + 40, 10000, 1900, 19, 10000, 11900, 'finalized', 'seed',
      now(), now()
    FROM oneoff WHERE i % 100 = 0`;
}

/** The seeded organization: its id, a service context of its test mode, its plans, the rows made and the seconds. */
export interface SeededRevenue {
  organization: string;
  ctx: ReturnType<typeof runContext>;
  plans: SeedPlans;
  counts: Record<string, number>;
  seedSeconds: number;
}

/** Creates the organization "Analítica", its product and plans, and seeds `subscriptions` (module comment); ANALYZE. */
export async function seedRevenueOrganization(prisma: PrismaClient, subscriptions: number): Promise<SeededRevenue> {
  const { organization } = await createApiKey(prisma, { organizationName: "Analítica", email: "a@b.cl", mode: "test" });
  const ctx = runContext(prisma, DEFAULT_SETTINGS, () => new Date(), {
    organizationId: organization,
    testMode: true,
    userEmail: "bench@example.cl",
  });
  const product = await createProduct(ctx, {
    name: "Nube",
    plans: [
      { name: "Básico", amount: 10000, currency: "CLP", frequency: "monthly" },
      { name: "Pro", amount: 25000, currency: "CLP", frequency: "monthly" },
      { name: "Anual", amount: 120000, currency: "CLP", frequency: "yearly" },
    ],
  });
  const [basico, pro, anual] = (
    await prisma.plan.findMany({ where: { productId: product.id }, orderBy: { position: "asc" } })
  ).map((p) => p.id);
  const plans = { basico, pro, anual };
  const started = performance.now();
  for (let from = 0; from < subscriptions; from += CHUNK)
    await prisma.$executeRaw(seedChunk(organization, plans, from, Math.min(subscriptions, from + CHUNK) - 1));
  await prisma.$executeRawUnsafe(`ANALYZE`);
  const seedSeconds = (performance.now() - started) / 1000;
  const counts = Object.fromEntries(
    await Promise.all(
      (["invoice", "invoiceLine", "payment", "creditNote", "subscription"] as const).map(async (table) => [
        table,
        await (prisma[table] as unknown as { count: () => Promise<number> }).count(),
      ]),
    ),
  );
  return { organization, ctx, plans, counts, seedSeconds };
}
