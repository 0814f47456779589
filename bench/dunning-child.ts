/**
 * The processes bench/dunning.ts starts, so that what it measures is one process's own memory:
 *
 * - `seed --url U --count N`: seeds N customers with an overdue invoice each (bench/dunning-seed.ts, set-based SQL)
 *   and prints one JSON line `{ organizationId, seconds, maxRssMb }`.
 * - `run --url U --until D`: opens the database and installs the event printing as the command line's `dunning run`
 *   does (src/cli/program.ts), prints `ready`, waits for a line on stdin, then runs the dunning worker's round as
 *   that command does: the overdue sweep (services/overdue-invoices.ts) and then the attempts
 *   (services/dunning-attempts.ts `runDunningAttempts`), both with `until` D; then a second attempts round at the
 *   same time (which must make no attempt). Prints one JSON line `{ sweep, attempts, again, sweepSeconds,
 *   attemptSeconds, againSeconds, startUs, cpuMs, maxRssMb, heapUsedMb, heapTotalMb, externalMb, rssMb }`
 *   (`startUs`: CLOCK_MONOTONIC µs when the attempts began, for bench/profile-summary.ts --since-us; `cpuMs`: this
 *   process's CPU time over the sweep and the first attempts round; `maxRssMb`: its peak resident memory,
 *   process.resourceUsage().maxRSS; the others: peaks of process.memoryUsage(), sampled every 100 ms).
 */
import { createInterface } from "node:readline";
import { Command } from "commander";

const options = new Command()
  .argument("<mode>", "seed or run")
  .requiredOption("--url <url>", "PostgreSQL database")
  .option("--count <n>", "customers to seed", "10000")
  .option("--until <date>", "the round's today (yyyy-mm-dd)", "2026-11-20")
  .parse();
const mode = options.args[0];
const opts = options.opts<{ url: string; count: string; until: string }>();
const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** Peaks of process.memoryUsage() sampled every 100 ms until `stop`. */
function samplePeaks() {
  const peaks = { heapUsedMb: 0, heapTotalMb: 0, externalMb: 0, rssMb: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peaks.heapUsedMb = Math.max(peaks.heapUsedMb, mb(m.heapUsed));
    peaks.heapTotalMb = Math.max(peaks.heapTotalMb, mb(m.heapTotal));
    peaks.externalMb = Math.max(peaks.externalMb, mb(m.external));
    peaks.rssMb = Math.max(peaks.rssMb, mb(m.rss));
  };
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

/** BENCH_DUNNING_STATEMENTS: the statements the attempts sent, most sent first, per attempt (to stderr). */
function printStatements(statements: Map<string, number>, attempts: number) {
  const all = [...statements].sort((a, b) => b[1] - a[1]);
  const total = all.reduce((n, [, k]) => n + k, 0);
  if (total === 0) return;
  process.stderr.write(`statements per attempt: ${(total / attempts).toFixed(1)}\n`);
  for (const [sql, n] of all.slice(0, 40)) process.stderr.write(`${(n / attempts).toFixed(2)}  ${sql}\n`);
}

async function seed() {
  const [{ createDatabase }, { seedOverdueCustomers }] = await Promise.all([
    import("../src/infra/database.js"),
    import("./dunning-seed.js"),
  ]);
  const database = await createDatabase({ kind: "postgres", url: opts.url });
  try {
    const t = performance.now();
    const seeded = await seedOverdueCustomers(database.prisma, { count: Number(opts.count) });
    const seconds = (performance.now() - t) / 1000;
    console.log(JSON.stringify({ organizationId: seeded.organizationId, seconds, maxRssMb: maxRssMb() }));
  } finally {
    await database.close();
  }
}

async function run() {
  const [{ createDatabase }, { settings: loadSettings, installEventPrinting }, overdue, attempts] = await Promise.all([
    import("../src/infra/database.js"),
    import("../src/cli/open.js"),
    import("../src/services/overdue-invoices.js"),
    import("../src/services/dunning-attempts.js"),
  ]);
  const [{ settings }] = await Promise.all([loadSettings(), installEventPrinting()]);
  const statements = new Map<string, number>();
  let counting = false;
  const onStatement = process.env.BENCH_DUNNING_STATEMENTS
    ? (sql: string) => {
        if (!counting) return;
        const key = sql.replace(/\s+/g, " ").slice(0, 160);
        statements.set(key, (statements.get(key) ?? 0) + 1);
      }
    : undefined;
  const database = await createDatabase({ kind: "postgres", url: opts.url }, { onStatement });
  try {
    console.log("ready");
    const lines = createInterface({ input: process.stdin });
    await new Promise<void>((resolve) => lines.once("line", () => resolve()));
    lines.close();
    const peaks = samplePeaks();
    const round = { prisma: database.prisma, settings, now: () => new Date(), until: opts.until };
    const cpu = process.cpuUsage();
    let t = performance.now();
    const sweep = await overdue.sweepOverdueInvoices(round);
    const sweepSeconds = (performance.now() - t) / 1000;
    const startUs = Number(process.hrtime.bigint() / 1000n);
    t = performance.now();
    counting = true;
    const first = await attempts.runDunningAttempts(round);
    counting = false;
    const attemptSeconds = (performance.now() - t) / 1000;
    printStatements(statements, first.attempts);
    const used = process.cpuUsage(cpu);
    t = performance.now();
    const again = await attempts.runDunningAttempts(round);
    const againSeconds = (performance.now() - t) / 1000;
    console.log(
      JSON.stringify({
        sweep,
        attempts: first,
        again,
        sweepSeconds,
        attemptSeconds,
        againSeconds,
        startUs,
        cpuMs: (used.user + used.system) / 1000,
        maxRssMb: maxRssMb(),
        ...peaks.stop(),
      }),
    );
  } finally {
    await database.close();
  }
}

if (mode === "seed") await seed();
else if (mode === "run") await run();
else throw new Error(`unknown mode ${mode}`);
