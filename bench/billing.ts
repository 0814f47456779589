/**
 * `npm run bench:billing [-- --count 10000 --workers 4 --batch-size 100]`: the billing run's
 * throughput on PostgreSQL. Creates a fresh database (BENCH_POSTGRES_URL's server, default
 * postgresql://postgres@127.0.0.1:5432/postgres), migrates it, seeds `count` subscriptions with
 * mixed plans (licensed seats, graduated and volume tiers, metered with usages:
 * bench/billing-seed.ts), runs the billing run over two due cycles each, checks the result, prints
 * subscriptions billed per second and peak memory (maxRSS), and drops the database.
 */
import { Command } from "commander";
import pg from "pg";
import { createDatabase } from "../src/infra/database.js";
import { migrateTarget } from "../src/infra/database.js";
import { BILLING_PHASE_MS, runBilling } from "../src/services/billing-run.js";
import { seedSubscriptions } from "./billing-seed.js";

const options = new Command()
  .option("--count <n>", "subscriptions to seed", "10000")
  .option("--workers <n>", "parallel claim loops", "4")
  .option("--batch-size <n>", "subscriptions per transaction", "100")
  .parse()
  .opts<{ count: string; workers: string; batchSize: string }>();
const count = Number(options.count);

const server = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const name = `billing_bench_${process.pid}`;
const admin = async (sql: string) => {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};
const url = new URL(server);
url.pathname = `/${name}`;
const target = { kind: "postgres" as const, url: url.toString() };

await admin(`CREATE DATABASE "${name}"`);
try {
  await migrateTarget(target);
  const database = await createDatabase(target);
  try {
    let t = performance.now();
    const seeded = await seedSubscriptions(database.prisma, { count, dateStart: "2026-01-01" });
    console.log(`seeded ${count} subscriptions in ${((performance.now() - t) / 1000).toFixed(1)} s; peak memory so far (maxRSS) ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);

    t = performance.now();
    const summary = await runBilling({ prisma: database.prisma, until: "2026-02-01", workers: Number(options.workers), batchSize: Number(options.batchSize) });
    const seconds = (performance.now() - t) / 1000;
    const invoices = await database.prisma.invoice.count({ where: { organizationId: seeded.organizationId, status: "finalized" } });
    const billedUsage = await database.prisma.usage.count({ where: { organizationId: seeded.organizationId, invoiceId: null } });
    console.log(JSON.stringify({ ...summary, errors: summary.errors.slice(0, 3) }));
    if (summary.billed !== count || summary.failed || billedUsage !== 0) throw new Error(`expected ${count} billed, no failure and every usage billed (unbilled usages: ${billedUsage})`);
    const maxRssMb = process.resourceUsage().maxRSS / 1024;
    console.log(`billed ${summary.billed} subscriptions (${invoices} invoices, ${summary.cycles} cycles) in ${seconds.toFixed(1)} s`);
    console.log(`${(summary.billed / seconds).toFixed(0)} subscriptions/s, ${(summary.invoices / seconds).toFixed(0)} invoices/s; peak memory (maxRSS) ${maxRssMb.toFixed(0)} MB`);
    console.log(`workers ${options.workers}, batch size ${options.batchSize}`);
    console.log(`phases (ms, summed over workers): ${JSON.stringify(Object.fromEntries(Object.entries(BILLING_PHASE_MS).map(([k, v]) => [k, Math.round(v)])))}`);
  } finally {
    await database.close();
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
