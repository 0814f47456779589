/**
 * The processes bench/billing.ts starts, so that what it measures is one process's own memory:
 *
 * - `seed --url U --count N [--date-start D]`: seeds N subscriptions starting on D (default
 *   2026-01-01; bench/billing-seed.ts, set-based SQL) and prints one JSON line
 *   `{ organizationId, seconds, maxRssMb }`.
 * - `run --url U --until D --workers W --batch-size B`: starts the billing run's thread as the
 *   command line's `billing run` does (src/cli/billing-run.ts: its own bounded heap, the database
 *   from DATABASE_URL, here U), prints `ready` once its database is open, waits for a line on
 *   stdin (so that several runners start together), runs the billing run once and prints one JSON
 *   line `{ summary, start, end, startUs, cpuMs, maxRssMb, heapUsedMb, heapTotalMb, externalMb }`
 *   (`start`/`end`: epoch ms around the run; `startUs`: CLOCK_MONOTONIC µs at the start, for
 *   bench/profile-summary.ts --since-us; `cpuMs`: this process's CPU time (user + system, all
 *   threads) during the run; `maxRssMb`: this process's peak resident memory,
 *   process.resourceUsage().maxRSS; `heapUsedMb`, `heapTotalMb`, `externalMb`: the run thread's
 *   peaks of process.memoryUsage(), sampled every 100 ms).
 */
import { createInterface } from "node:readline";
import { Command } from "commander";

const options = new Command()
  .argument("<mode>", "seed or run")
  .requiredOption("--url <url>", "PostgreSQL database")
  .option("--count <n>", "subscriptions to seed", "10000")
  .option("--until <date>", "billing run cutoff", "2026-02-01")
  .option("--date-start <date>", "the seeded subscriptions' start", "2026-01-01")
  .option("--workers <n>", "parallel claim loops", "1")
  .option("--batch-size <n>", "subscriptions per transaction")
  .parse();
const mode = options.args[0];
const opts = options.opts<{
  url: string;
  count: string;
  until: string;
  dateStart: string;
  workers: string;
  batchSize?: string;
}>();
const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

if (mode === "seed") {
  // imported here: the runner process loads only what the command line's `billing run` loads
  const [{ createDatabase }, { seedSubscriptions }] = await Promise.all([
    import("../src/infra/database.js"),
    import("./billing-seed.js"),
  ]);
  const database = await createDatabase({ kind: "postgres", url: opts.url });
  try {
    const t = performance.now();
    const seeded = await seedSubscriptions(database.prisma, {
      count: Number(opts.count),
      dateStart: opts.dateStart,
      readBack: false,
    });
    console.log(
      JSON.stringify({
        organizationId: seeded.organizationId,
        seconds: (performance.now() - t) / 1000,
        maxRssMb: maxRssMb(),
      }),
    );
  } finally {
    await database.close();
  }
} else if (mode === "run") {
  const { startBillingRunThread } = await import("../src/cli/billing-run.js");
  const thread = await startBillingRunThread({ ...process.env, DATABASE_URL: opts.url });
  console.log("ready");
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once("line", () => resolve()));
  lines.close();
  const start = Date.now();
  const startUs = Number(process.hrtime.bigint() / 1000n);
  const cpu = process.cpuUsage();
  const { summary, heap } = await thread.run({
    until: opts.until,
    workers: Number(opts.workers),
    batchSize: opts.batchSize ? Number(opts.batchSize) : undefined,
  });
  const end = Date.now();
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({
      summary,
      start,
      end,
      startUs,
      cpuMs: (used.user + used.system) / 1000,
      maxRssMb: maxRssMb(),
      ...heap,
    }),
  );
} else {
  throw new Error(`unknown mode ${mode}`);
}
