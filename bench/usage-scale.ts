/**
 * `npm run bench:usage-scale` (docs/performance.md "Usage ingestion"): the usage aggregation the
 * upcoming-invoice preview reads, at 1 M and 10 M usage rows of ONE subscription line. Needs a
 * current build (`npm run build`): the preview is measured through the service (`node dist/main.js`).
 *
 * 1. On a fresh PostgreSQL database (`bench_usage_scale_<pid>`, dropped at the end, or
 *    BENCH_DATABASE_URL) seeds an organization, an API key and a monthly subscription from
 *    2026-09-01 whose next cycle (3, on 2026-11-01) bills October's usage of one metered line.
 * 2. For each size of BENCH_ROWS (default `1000000,10000000`) adds rows with SQL (generate_series,
 *    chunks of 1 M) spread evenly from 2026-09-15 to 2026-11-20 (so about 47 % fall in the billed
 *    month, some before it for last_ever, some after it), then VACUUM ANALYZE, then for each
 *    aggregation (sum, max, last_during_period, last_ever; the plan's is switched with an UPDATE):
 *    - the preview's latency: GraphQL `upcomingInvoice` through the service, one warm-up, median of
 *      3 (BENCH_PREVIEW_TIMEOUT seconds each at most, default 120; the service is restarted after
 *      a timeout), checked against the same aggregate computed by SQL over the billed month;
 *    - EXPLAIN (ANALYZE, BUFFERS) of the aggregation's SQL as the preview sends it.
 * Prints the load average beside the figures. Figures go to stdout only.
 */
import pg from "pg";
import { loadAverage, openDatabase, requireFreshBuild, startService, type Child } from "./harness.js";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";
import { zonedMidnight } from "../src/domain/formats.js";

const SIZES = (process.env.BENCH_ROWS ?? "1000000,10000000").split(",").map(Number);
const TIMEOUT_S = Number(process.env.BENCH_PREVIEW_TIMEOUT ?? 120);
const CHUNK = 1_000_000;
const AGGREGATIONS = ["sum", "max", "last_during_period", "last_ever"] as const;
const TIME_ZONE = "America/Santiago";

requireFreshBuild();

interface Seed {
  key: string;
  organization: string;
  subscription: string;
  line: string;
  plan: string;
}

async function seed(url: string): Promise<Seed> {
  await migrateTarget({ kind: "postgres", url });
  const database = await createDatabase({ kind: "postgres", url });
  try {
    const prisma = database.prisma;
    const { key, organization } = await createApiKey(prisma, {
      organizationName: "Bench usage scale",
      email: "bench@example.cl",
      mode: "test",
    });
    await prisma.organization.update({ where: { id: organization }, data: { timeZone: TIME_ZONE } });
    const tenant = { organizationId: organization, testMode: true };
    const customerId = newId("cus");
    await prisma.customer.create({
      data: {
        id: customerId,
        ...tenant,
        name: "Cliente SpA",
        address: "Av. Siempre Viva 123",
        countryId: "CL",
        email: "pagos@cliente.cl",
        taxId: "76042235-5",
      },
    });
    const productId = newId("pro");
    await prisma.product.create({ data: { id: productId, ...tenant, name: "API" } });
    const plan = newId("pla");
    await prisma.plan.create({
      data: {
        id: plan,
        ...tenant,
        productId,
        position: 0,
        name: "API calls",
        amount: "7",
        usageScheme: "metered",
        currencyId: "CLP",
        frequency: "monthly",
        usageAggregation: "sum",
      } as never,
    });
    const subscription = newId("sub");
    await prisma.subscription.create({
      data: {
        id: subscription,
        ...tenant,
        documentTypeId: "CL33",
        customerId,
        dateStart: new Date("2026-09-01"),
        nextBilling: new Date("2026-11-01"),
        nextBillingCycle: 3,
        userEmail: "bench@example.cl",
      } as never,
    });
    const line = newId("lin");
    await prisma.subscriptionLine.create({
      data: {
        id: line,
        subscriptionId: subscription,
        organizationId: tenant.organizationId,
        planId: plan,
        quantity: "1",
      } as never,
    });
    return { key, organization, subscription, line, plan };
  } finally {
    await database.close();
  }
}

const FROM = "2026-09-15T00:00:00Z";
const SPAN_MS = Date.parse("2026-11-20T00:00:00Z") - Date.parse(FROM);

/**
 * Rows `first` to `last` (1-based) of the line, ids `usa_scale<n>`: quantities 0.25 to 24.75, dated
 * at (n x 7919 mod the span) ms after FROM: 7919 is prime to the span, so every prefix of the rows
 * (the first 1 M, then all 10 M) is spread evenly over the span, in no order.
 */
async function addRows(c: pg.Client, s: Seed, first: number, last: number): Promise<void> {
  await c.query(
    `INSERT INTO "Usage" ("id", "organizationId", "testMode", "subscriptionLineId", "quantity", "dateTime", "createdAt")
     SELECT 'usa_scale' || g, $1, true, $2, ((g * 7919) % 99 + 1) / 4.0, t, t
     FROM generate_series($5::bigint, $6::bigint) g,
     LATERAL (SELECT $3::timestamptz + ((g * 7919) % $4) * interval '1 millisecond' AS t) d`,
    [s.organization, s.line, FROM, SPAN_MS, first, last],
  );
}

/** The billed period of cycle 3: October 2026 in the organization's time zone. */
const PERIOD = { start: zonedMidnight("2026-10-01", TIME_ZONE), end: zonedMidnight("2026-11-01", TIME_ZONE) };

/** The aggregate by SQL, as domain/usage.ts defines it (no row billed here, so no invoiceId filter matters). */
async function expected(c: pg.Client, s: Seed, aggregation: (typeof AGGREGATIONS)[number]): Promise<string> {
  const q = {
    sum:
      `SELECT coalesce(sum(quantity), 0)::text AS v FROM "Usage" WHERE "subscriptionLineId" = $1 AND "dateTime" ` +
      `>= $2 AND "dateTime" < $3`,
    max:
      `SELECT coalesce(max(quantity), 0)::text AS v FROM "Usage" WHERE "subscriptionLineId" = $1 AND "dateTime" ` +
      `>= $2 AND "dateTime" < $3`,
    last_during_period:
      `SELECT quantity::text AS v FROM "Usage" WHERE "subscriptionLineId" = $1 AND "dateTime" >= ` +
      `$2 AND "dateTime" < $3 ORDER BY "dateTime" DESC, "createdAt" DESC LIMIT 1`,
    last_ever:
      `SELECT quantity::text AS v FROM "Usage" WHERE "subscriptionLineId" = $1 AND "dateTime" < $3 AND ` +
      `$2::timestamptz IS NOT NULL ORDER BY "dateTime" DESC, "createdAt" DESC LIMIT 1`,
  }[aggregation];
  const v = (await c.query(q, [s.line, PERIOD.start, PERIOD.end])).rows[0]?.v ?? "0";
  return String(Number(v));
}

const PREVIEW =
  `query Preview($id: ID!) { upcomingInvoice(subscription: $id) { lines { name quantity amount ` +
  `periodStart periodEnd } total } }`;

async function preview(service: Child, s: Seed): Promise<{ ms: number; quantity: string | null; error?: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${service.url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify({ query: PREVIEW, variables: { id: s.subscription } }),
      signal: AbortSignal.timeout(TIMEOUT_S * 1000),
    });
    const body = (await res.json()) as {
      data?: { upcomingInvoice: { lines: { quantity: string; periodStart: string }[] } };
      errors?: { message: string }[];
    };
    const ms = performance.now() - t0;
    if (body.errors?.length) return { ms, quantity: null, error: body.errors[0].message };
    const line = body.data!.upcomingInvoice.lines.find((l) => l.periodStart.startsWith("2026-10-01"));
    return { ms, quantity: line ? String(Number(line.quantity)) : "0" };
  } catch (e) {
    return { ms: performance.now() - t0, quantity: null, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The SQL the preview sends for the line's usage under `aggregation` (services/cycle-input.ts loadCycleData, aggregate
 * mode).
 */
function previewSql(aggregation: (typeof AGGREGATIONS)[number]): string {
  if (aggregation === "last_ever") {
    return `SELECT u.* FROM unnest(ARRAY[$1]::text[]) AS l("lineId") CROSS JOIN LATERAL (
      SELECT "id", "subscriptionLineId", "quantity"::text AS "quantity", "dateTime", "createdAt", "invoiceId"
      FROM "Usage"
      WHERE "subscriptionLineId" = l."lineId" AND "dateTime" < $3 AND $2::timestamptz IS NOT NULL
      ORDER BY "dateTime" DESC, "createdAt" DESC LIMIT 1) u`;
  }
  if (aggregation === "last_during_period") {
    return `SELECT u.* FROM unnest(ARRAY[$1]::text[]) AS l("lineId") CROSS JOIN LATERAL (
      SELECT "quantity"::text AS "quantity", "dateTime" FROM "Usage"
      WHERE "subscriptionLineId" = l."lineId" AND "dateTime" >= $2 AND "dateTime" < $3 AND "invoiceId" IS NULL
      ORDER BY "dateTime" DESC, "createdAt" DESC LIMIT 1) u`;
  }
  return `SELECT "subscriptionLineId", count(*)::int AS "count", sum("quantity")::text AS "sum",
    max("quantity")::text AS "max" FROM "Usage"
    WHERE "subscriptionLineId" = ANY(ARRAY[$1]::text[]) AND "dateTime" >= $2 AND "dateTime" < $3
    AND "invoiceId" IS NULL GROUP BY "subscriptionLineId"`;
}

async function main(): Promise<void> {
  const db = await openDatabase("bench_usage_scale");
  const c = new pg.Client({ connectionString: db.url });
  let service: Child | null = null;
  try {
    const s = await seed(db.url);
    await c.connect();
    service = await startService(db.url);
    let rows = 0;
    for (const size of SIZES) {
      const t0 = performance.now();
      for (let first = rows + 1; first <= size; first += CHUNK)
        await addRows(c, s, first, Math.min(size, first + CHUNK - 1));
      await c.query(`VACUUM ANALYZE "Usage"`);
      rows = size;
      const inPeriod = Number(
        (
          await c.query(
            `SELECT count(*) AS n FROM "Usage" WHERE "subscriptionLineId" = $1 AND "dateTime" >= $2 AND ` +
              `"dateTime" < $3`,
            [s.line, PERIOD.start, PERIOD.end],
          )
        ).rows[0].n,
      );
      console.log(
        `\n${size.toLocaleString("en")} rows of one line (${inPeriod.toLocaleString("en")} in the billed month), ` +
          `seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s; load ${loadAverage()}`,
      );
      // what the billing run reads for the line (loadCycleData's rows: every record from the billed period's start on)
      const rowsPlan = await c.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT "id", "subscriptionLineId", "quantity", "dateTime", ` +
          `"createdAt", "invoiceId" FROM "Usage" WHERE "subscriptionLineId" IN ($1) AND "dateTime" >= $2`,
        [s.line, PERIOD.start],
      );
      console.log(`  the rows the billing run loads (every record from the period's start on):`);
      for (const row of rowsPlan.rows) console.log(`      ${row["QUERY PLAN"]}`);
      for (const aggregation of AGGREGATIONS) {
        await c.query(`UPDATE "Plan" SET "usageAggregation" = $1 WHERE "id" = $2`, [aggregation, s.plan]);
        const want = await expected(c, s, aggregation);
        const times: number[] = [];
        let note = "";
        for (let i = 0; i < 4; i++) {
          const r = await preview(service, s);
          if (r.error) {
            note = ` FAILED: ${r.error}`;
            if (/timeout|abort/i.test(r.error)) {
              await service.stop();
              service = await startService(db.url);
            }
            break;
          }
          if (r.quantity !== want) note = ` WRONG: preview ${r.quantity}, SQL ${want}`;
          if (i > 0) times.push(r.ms);
        }
        const median = times.length ? [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] : NaN;
        console.log(
          `  ${aggregation}: preview ${
            times.length
              ? `${median.toFixed(0)} ms (median of ${times.length}` + `: ${times.map((t) => t.toFixed(0)).join(", ")})`
              : "-"
          }, quantity ${want}${note}; load ${loadAverage()}`,
        );
        const plan = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${previewSql(aggregation)}`, [
          s.line,
          PERIOD.start,
          PERIOD.end,
        ]);
        for (const row of plan.rows) console.log(`      ${row["QUERY PLAN"]}`);
      }
    }
  } finally {
    await service?.stop().catch(() => undefined);
    await c.end().catch(() => undefined);
    await db.drop();
  }
}

await main();
