/**
 * `npm run bench:analytics [-- --explain]`: `revenueAnalytics` over 24 months at scale on PostgreSQL
 * (docs/performance.md "Revenue analytics"; issue 34's target: 24 months over 1,000,000 invoices and 100,000
 * subscriptions in at most 300 ms).
 *
 * Creates a fresh database `bench_analytics_<pid>` on the server of BENCH_POSTGRES_URL, else TEST_DATABASE_URL,
 * else postgresql://postgres@127.0.0.1:5432/test, migrates it, and seeds with set-based SQL
 * (`INSERT ... SELECT ... FROM generate_series`) one organization with BENCH_ANALYTICS_SUBSCRIPTIONS subscriptions
 * (default 100,000), one customer each, from January 2025 to December 2026:
 * - nine in ten monthly (Básico 10,000 or Pro 25,000 CLP), each starting in one of the first 14 months and billed
 *   10 cycles (then cancelled, so the months see churn); one in ten yearly (Anual 120,000), billed once;
 * - every cycle invoice finalized (CL33, one plan line of its period, 19 % IVA), dated its cycle's start, due 10 days
 *   later, and paid by one succeeded payment dated its due date, except one in eight (outstanding, overdue);
 * - one one-off invoice per subscription (100,000 + IVA), paid, and one credit note per hundred.
 * About 1,000,000 invoices and 900,000 payments at the default size (the triggers of revenue analytics' aggregates
 * mark every customer as it goes). Then: the live statements (`liveRevenueAnalytics`, BENCH_ANALYTICS_LIVE_RUNS
 * timed runs, default 2), what every request computed before the aggregates; the backfill (the background round
 * drains every customer); `revenueAnalytics` for January 2025 to December 2026 (3 warm-up runs, then
 * BENCH_ANALYTICS_RUNS, default 20) with p50, p99 and the mean in ms, and whether it equals the live answer; one
 * read after 10, 100 and 1,000 customers got a payment each (the read drains them), and the comparison with the live
 * answer again; the triggers' cost: one more seed chunk with them and one without (`session_replication_role`
 * replica), as a ratio. One JSON line at the end. `--explain` prints EXPLAIN (ANALYZE, BUFFERS) of the two live
 * statements and of one drain batch's statements (rolled back). The database is dropped at the end.
 */
import { Command } from "commander";
import { Prisma } from "../src/infra/prisma/generated/client.js";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import {
  liveRevenueAnalytics,
  moneyStatement,
  mrrStatement,
  revenueAnalytics,
  type RevenueAnalytics,
} from "../src/services/revenue-analytics.js";
import { customerStatements, drainRevenueRound, REVENUE_DRAIN_BATCH } from "../src/services/revenue-aggregates.js";
import { Decimal } from "../src/domain/money.js";
import { analyticsMonths } from "../src/domain/revenue-analytics.js";
import { CHUNK, seedChunk, seedRevenueOrganization, withBenchDatabase } from "./revenue-seed.js";

const options = new Command()
  .option("--explain", "print the plans of the two statements")
  .parse()
  .opts<{ explain?: boolean }>();
const subscriptions = Number(process.env.BENCH_ANALYTICS_SUBSCRIPTIONS ?? 100_000);
const runs = Number(process.env.BENCH_ANALYTICS_RUNS ?? 20);
const liveRuns = Number(process.env.BENCH_ANALYTICS_LIVE_RUNS ?? 2);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

/** p50, p99 and mean of `times` (ms), one decimal. */
function summary(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const round = (ms: number) => Number(ms.toFixed(1));
  return {
    p50Ms: round(percentile(sorted, 0.5)),
    p99Ms: round(percentile(sorted, 0.99)),
    meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}

/** An answer with every decimal string normalized ("45000.00" and "45000" alike), to compare two answers. */
const normalized = (answer: RevenueAnalytics) =>
  JSON.stringify(
    answer.months.map((m) =>
      Object.fromEntries(
        Object.entries(m).map(([k, v]) => [
          k,
          typeof v === "string" && /^-?\d/.test(v) && k !== "month" && k !== "monthEnd" ? new Decimal(v).toFixed() : v,
        ]),
      ),
    ),
  );

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await fn();
  return [result, performance.now() - started];
}

async function main() {
  await withBenchDatabase(`bench_analytics_${process.pid}`, async (url) => {
    await migrateTarget({ kind: "postgres", url });
    const database = await createDatabase({ kind: "postgres", url });
    try {
      const prisma = database.prisma;
      const { organization, ctx, plans, counts, seedSeconds } = await seedRevenueOrganization(prisma, subscriptions);
      const { basico, pro, anual } = plans;
      console.log(`seeded in ${seedSeconds.toFixed(1)} s: ${JSON.stringify(counts)}`);
      const input = { currency: "CLP", from: "2025-01-01", to: "2026-12-31" };
      const ask = () => revenueAnalytics(ctx, input);
      if (options.explain) {
        const { previous, months } = analyticsMonths("2025-01-01", "2026-12-31");
        for (const statement of [mrrStatement(ctx, "CLP", 0, previous, months), moneyStatement(ctx, "CLP", months)]) {
          const plan = await prisma.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
            `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
            ...statement.values,
          );
          console.log(plan.map((row) => row["QUERY PLAN"]).join("\n"));
        }
      }
      // the live statements (the reference, what every request computed before the aggregates)
      const liveTimes: number[] = [];
      let live = await liveRevenueAnalytics(ctx, input);
      for (let k = 0; k < liveRuns; k++) {
        const [answer, ms] = await timed(() => liveRevenueAnalytics(ctx, input));
        live = answer;
        liveTimes.push(ms);
      }
      console.log(`live statements: ${JSON.stringify(summary(liveTimes))}`);
      if (options.explain) {
        // one drain batch's statements, rolled back
        const ids = (
          await prisma.$queryRaw<{ customerId: string }[]>(Prisma.sql`
            SELECT DISTINCT "customerId" FROM "RevenueDirtyCustomer" ORDER BY 1 LIMIT ${REVENUE_DRAIN_BATCH}`)
        ).map((r) => r.customerId);
        await prisma
          .$transaction(
            async (tx) => {
              for (const statement of customerStatements({ organizationId: organization, testMode: true }, ids)) {
                const plan = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
                  `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
                  ...statement.values,
                );
                console.log(plan.map((row) => row["QUERY PLAN"]).join("\n"));
              }
              throw new Error("rolled back");
            },
            { timeout: 600_000 },
          )
          .catch(() => undefined);
      }
      // the backfill: every seeded customer is dirty (the triggers marked them); the background round drains them
      const [backfill, backfillMs] = await timed(() => drainRevenueRound(prisma));
      console.log(`backfill: ${backfill.customers} customers in ${(backfillMs / 1000).toFixed(1)} s`);
      await prisma.$executeRawUnsafe(`ANALYZE`);
      for (let k = 0; k < 3; k++) await ask();
      const times: number[] = [];
      let answer = await ask();
      for (let k = 0; k < runs; k++) {
        const [a, ms] = await timed(ask);
        answer = a;
        times.push(ms);
      }
      const equal = normalized(answer) === normalized(live);
      if (!equal) console.log("DIFFERENT", normalized(answer), normalized(live));
      // a stream of writes between reads: `touched` customers get a payment on account each (the triggers mark
      // them), then one read drains them and answers
      const afterWrites: Record<string, number> = {};
      for (const touched of [10, 100, 1000]) {
        await prisma.$executeRaw(Prisma.sql`
          INSERT INTO "Payment" ("id", "organizationId", "testMode", "customerId", "amount", "currencyId", "date",
            "status", "userEmail", "createdAt", "updatedAt")
          SELECT 'pay_w' || ${touched} || '_' || c."id", c."organizationId", true, c."id", 1000, 'CLP', '2026-06-15',
            'succeeded', 'bench', now(), now()
          FROM (SELECT "id", "organizationId" FROM "Customer" WHERE "organizationId" = ${organization}
            ORDER BY md5("id" || ${touched}) LIMIT ${touched}) c`);
        const [, ms] = await timed(ask);
        afterWrites[`read after ${touched} customers written (ms)`] = Number(ms.toFixed(1));
      }
      const equalAfterWrites = normalized(await ask()) === normalized(await liveRevenueAnalytics(ctx, input));
      // what the triggers add to writes: one more chunk of the seed with them, one without (its customers marked
      // by hand after), the same size
      const extra = Math.min(CHUNK, subscriptions);
      const [, withTriggers] = await timed(() =>
        prisma.$executeRaw(seedChunk(organization, { basico, pro, anual }, subscriptions, subscriptions + extra - 1)),
      );
      const [, withoutTriggers] = await timed(() =>
        prisma.$transaction(
          async (tx) => {
            await tx.$executeRawUnsafe(`SET LOCAL session_replication_role = replica`);
            await tx.$executeRaw(
              seedChunk(organization, { basico, pro, anual }, subscriptions + extra, subscriptions + 2 * extra - 1),
            );
          },
          { timeout: 600_000 },
        ),
      );
      const figures = {
        subscriptions,
        counts,
        runs,
        ...summary(times),
        live: { runs: liveRuns, ...summary(liveTimes) },
        equalToLive: equal,
        equalToLiveAfterWrites: equalAfterWrites,
        backfill: { customers: backfill.customers, seconds: Number((backfillMs / 1000).toFixed(1)) },
        afterWrites,
        seedChunk: {
          subscriptions: extra,
          withTriggersMs: Number(withTriggers.toFixed(0)),
          withoutTriggersMs: Number(withoutTriggers.toFixed(0)),
          ratio: Number((withTriggers / withoutTriggers).toFixed(2)),
        },
        seedSeconds: Number(seedSeconds.toFixed(1)),
        lastMonth: answer.months[answer.months.length - 1],
      };
      console.log(
        `revenueAnalytics, 24 months: p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, mean ${figures.meanMs} ms ` +
          `(live statements: p50 ${figures.live.p50Ms} ms); equal to the live answer: ${equal}, after writes: ` +
          `${equalAfterWrites}`,
      );
      console.log(JSON.stringify(figures));
    } finally {
      await database.close();
    }
  });
}

await main();
