/**
 * The processes bench/billing.ts starts, so that what it measures is one process's own memory:
 *
 * - `seed --url U --count N`: seeds N subscriptions (bench/billing-seed.ts, set-based SQL) and
 *   prints one JSON line `{ organizationId, seconds, maxRssMb }`.
 * - `run --url U --until D --workers W --batch-size B`: opens the database, prints `ready`, waits
 *   for a line on stdin (so that several runners start together), runs the billing run once and
 *   prints one JSON line `{ summary, start, end, cpuMs, maxRssMb }` (`start`/`end`: epoch ms around
 *   the run; `cpuMs`: this process's CPU time (user + system) during the run; `maxRssMb`: this process's peak resident
 *   memory, process.resourceUsage().maxRSS; `heapUsedMb`, `heapTotalMb`, `externalMb`: peaks of process.memoryUsage()
 *   sampled every 100 ms).
 */
import { createInterface } from "node:readline";
import { Command } from "commander";
import { createDatabase } from "../src/infra/database.js";
import { runBilling } from "../src/services/billing-run.js";
import { seedSubscriptions } from "./billing-seed.js";

const options = new Command()
  .argument("<mode>", "seed or run")
  .requiredOption("--url <url>", "PostgreSQL database")
  .option("--count <n>", "subscriptions to seed", "10000")
  .option("--until <date>", "billing run cutoff", "2026-02-01")
  .option("--workers <n>", "parallel claim loops", "1")
  .option("--batch-size <n>", "subscriptions per transaction")
  .parse();
const mode = options.args[0];
const opts = options.opts<{ url: string; count: string; until: string; workers: string; batchSize?: string }>();
const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

const database = await createDatabase({ kind: "postgres", url: opts.url });
try {
  if (mode === "seed") {
    const t = performance.now();
    const seeded = await seedSubscriptions(database.prisma, {
      count: Number(opts.count),
      dateStart: "2026-01-01",
      readBack: false,
    });
    console.log(
      JSON.stringify({
        organizationId: seeded.organizationId,
        seconds: (performance.now() - t) / 1000,
        maxRssMb: maxRssMb(),
      }),
    );
  } else if (mode === "run") {
    await database.prisma.$queryRaw`SELECT 1`;
    console.log("ready");
    const lines = createInterface({ input: process.stdin });
    await new Promise<void>((resolve) => lines.once("line", () => resolve()));
    lines.close();
    // peaks of the V8 heap and of memory outside it, sampled during the run (where RSS goes)
    const peak = { heapUsedMb: 0, heapTotalMb: 0, externalMb: 0 };
    const sample = () => {
      const m = process.memoryUsage();
      peak.heapUsedMb = Math.max(peak.heapUsedMb, Math.round(m.heapUsed / 2 ** 20));
      peak.heapTotalMb = Math.max(peak.heapTotalMb, Math.round(m.heapTotal / 2 ** 20));
      peak.externalMb = Math.max(peak.externalMb, Math.round(m.external / 2 ** 20));
    };
    const sampler = setInterval(sample, 100);
    const start = Date.now();
    const cpu = process.cpuUsage();
    const summary = await runBilling({
      prisma: database.prisma,
      until: opts.until,
      workers: Number(opts.workers),
      batchSize: opts.batchSize ? Number(opts.batchSize) : undefined,
    });
    const end = Date.now();
    const used = process.cpuUsage(cpu);
    clearInterval(sampler);
    sample();
    console.log(
      JSON.stringify({ summary, start, end, cpuMs: (used.user + used.system) / 1000, maxRssMb: maxRssMb(), ...peak }),
    );
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} finally {
  await database.close();
}
