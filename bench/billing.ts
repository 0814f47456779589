/**
 * `npm run bench:billing [-- --count 10000 --runners 2 --workers 1 --batch-size 100 --profile dir]`:
 * the billing run's throughput and memory on PostgreSQL (docs/performance.md "Billing run").
 *
 * For each measured setting (one runner; with `--runners N` also N runners side by side, as a
 * ratio to the one runner measured in the same invocation) it creates a fresh database on
 * BENCH_POSTGRES_URL's server (default postgresql://postgres@127.0.0.1:5432/postgres), migrates
 * it, seeds `count` subscriptions with mixed plans in a separate process (bench/billing-seed.ts:
 * set-based SQL), then starts the runner processes (bench/billing-child.ts `run`: each opens its
 * own Prisma client and runs `runBilling` with `--workers` claim loops), releases them together,
 * and bills two due cycles per subscription. It prints the seed's time and peak memory, each
 * runner's peak memory (maxRSS of that runner process only), subscriptions billed per second
 * (wall clock from the first runner's start to the last one's end; each runner bills in the
 * command line's bounded thread, src/cli/billing-run.ts), and checks with SQL that every
 * subscription was billed exactly once per due cycle, every usage record once, and the invoice
 * numbers are gapless. The databases are dropped at the end. `--profile dir` runs the runners
 * under `node --cpu-prof` (summarise with bench/profile-summary.ts).
 *
 * `--service`: the runners are service processes instead (`node dist/main.js` with
 * `SERVICE_ROLE=worker` and `BILLING_RUN_INTERVAL_SECONDS=1`; needs `npm run build`), billing what
 * is due now as a deployment's worker processes do (docs/scaling.md). The subscriptions are seeded
 * to start 45 days ago (cycles 1 and 2 due, 3 not) and held back (`nextBilling` far ahead) while
 * the workers start; once all answer /healthz, one UPDATE makes them due, and the time runs from
 * that commit until every subscription has reached cycle 3 (polled every 100 ms). The runners'
 * figures are then each worker process's CPU time and peak RSS, from /proc.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Command } from "commander";
import pg from "pg";
import { migrateTarget } from "../src/infra/database.js";
import { processCpuMs, requireFreshBuild, serviceEnv, startChild, type Child } from "./harness.js";

const options = new Command()
  .option("--count <n>", "subscriptions to seed", "10000")
  .option("--runners <n>", "runner processes side by side (besides the one-runner baseline)", "1")
  .option("--workers <n>", "parallel claim loops per runner process", "1")
  .option("--batch-size <n>", "subscriptions per transaction (default: the run's DEFAULT_BATCH_SIZE)")
  .option("--profile <dir>", "write a CPU profile of each runner process to dir")
  .option("--service", "runners are service processes with SERVICE_ROLE=worker (see above)")
  .option("--without-analytics-triggers", "disable revenue analytics' marking triggers (their cost, by comparison)")
  .parse()
  .opts<{
    count: string;
    runners: string;
    workers: string;
    batchSize?: string;
    profile?: string;
    service?: boolean;
    withoutAnalyticsTriggers?: boolean;
  }>();
const count = Number(options.count);
const runners = Number(options.runners);
const server = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const UNTIL = "2026-02-01";
/** The tables bench/billing-seed.ts writes. */
const SEEDED_TABLES = [
  "Organization",
  "OrganizationSettings",
  "ApiKey",
  "Product",
  "Plan",
  "Customer",
  "Subscription",
  "SubscriptionLine",
  "Usage",
];

async function withClient<T>(connectionString: string, f: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end();
  }
}

/** Starts `node bench/billing-child.ts ...args`; `lines` gets each stdout line. */
function child(args: string[], nodeFlags: string[] = []) {
  const proc = spawn(process.execPath, [...nodeFlags, "--import", "tsx", "bench/billing-child.ts", ...args], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "silent" },
  });
  // stdout lines queued as they come, so none is lost while no one waits for it
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: proc.stdout }).on("line", (line) =>
    waiting.length ? waiting.shift()!(line) : queued.push(line),
  );
  const exited = new Promise<void>((resolve, reject) =>
    proc.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`bench/billing-child.ts ${args[0]} exited with ${code}`)),
    ),
  );
  exited.catch(() => undefined);
  const next = () =>
    queued.length
      ? Promise.resolve(queued.shift()!)
      : new Promise<string>((resolve, reject) => {
          waiting.push(resolve);
          exited.then(() => reject(new Error("child ended without output")), reject);
        });
  return { proc, next, exited };
}

/**
 * CPU time (user + system, ms) of PostgreSQL's backends serving database `name`, sampled every 50 ms
 * from /proc while `stop` is not called (the server is on this machine): each backend's last sample
 * counts, so up to 50 ms of a backend that ends between samples is missed. Null when /proc cannot
 * be read (a server elsewhere). The sampling connection is to the server's default database, so its
 * own backend is not counted. Also what the runners' backends were doing while in a transaction, as
 * shares of the samples (pg_stat_activity's wait event: none is running, Client:ClientRead is
 * waiting for the runner's next statement, Lock:... for a row another transaction holds).
 */
function sampleBackends(name: string) {
  const ticks = new Map<number, number>();
  const waits = new Map<string, number>();
  let readable = true;
  const client = new pg.Client({ connectionString: server });
  const connected = client.connect();
  const sample = async () => {
    const { rows } = await client.query<{ pid: number; client: boolean; state: string | null; wait: string | null }>(
      `SELECT pid, backend_type = 'client backend' AS client, state, wait_event_type || ':' || wait_event AS wait
      FROM pg_stat_activity WHERE datname = $1`,
      [name],
    );
    for (const { pid, client: ours, state, wait } of rows) {
      // what each runner's backend in a transaction was doing: running, waiting for a lock
      // (Lock:...), for the runner's next statement (Client:ClientRead), for I/O or the WAL
      if (ours && (state === "active" || state?.startsWith("idle in transaction"))) {
        const key = wait ?? "running";
        waits.set(key, (waits.get(key) ?? 0) + 1);
      }
      try {
        // fields after the command's closing parenthesis: utime and stime are the 12th and 13th
        const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
        ticks.set(pid, Number(fields[11]) + Number(fields[12]));
      } catch {
        readable = readable && rows.length === 0;
      }
    }
  };
  let running = true;
  const loop = (async () => {
    await connected;
    while (running) {
      await sample();
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop(): Promise<{ cpuMs: number | null; waits: string }> {
      running = false;
      await loop;
      await client.end();
      const samples = [...waits.values()].reduce((a, b) => a + b, 0);
      return {
        // clock ticks of 10 ms (getconf CLK_TCK: 100)
        cpuMs: readable ? [...ticks.values()].reduce((a, b) => a + b, 0) * 10 : null,
        waits: [...waits]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 4)
          .map(([k, n]) => `${k} ${Math.round((100 * n) / samples)} %`)
          .join(", "),
      };
    },
  };
}

interface RunResult {
  summary: { billed: number; invoices: number; cycles: number; failed: number; skipped: number; errors: string[] };
  start: number;
  end: number;
  /** CLOCK_MONOTONIC µs at the start (profile-summary.ts --since-us) */
  startUs: number;
  cpuMs: number;
  maxRssMb: number;
  heapLimitMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}

/** The invariants of a finished run over the seeded database, checked with SQL; throws on a violation. */
async function check(client: pg.Client): Promise<{ invoices: number }> {
  const q = async (sql: string) => (await client.query(sql)).rows[0] as Record<string, string>;
  const subs = await q(
    `SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE "nextBillingCycle" <> 3) AS behind FROM "Subscription"`,
  );
  // cycle 1 bills the licensed plans in advance; cycle 2 bills them again and the metered usage of cycle 1's period
  const wrong = await q(`
    SELECT COUNT(*) AS n FROM (
      SELECT s."id", p."usageScheme", COUNT(i."id") FILTER (WHERE i."billingCycle" = 1) AS c1, COUNT(i."id")
      FILTER (WHERE i."billingCycle" = 2) AS c2,
        COUNT(i."id") FILTER (WHERE i."billingCycle" NOT IN (1, 2)) AS other
      FROM "Subscription" s JOIN "SubscriptionLine" l ON l."subscriptionId" = s."id" JOIN "Plan" p
      ON p."id" = l."planId"
      LEFT JOIN "Invoice" i ON i."subscriptionId" = s."id"
      GROUP BY s."id", p."usageScheme"
    ) x WHERE x.other > 0 OR x.c2 <> 1 OR x.c1 <> CASE WHEN x."usageScheme" = 'metered' THEN 0 ELSE 1 END`);
  const usages = await q(`
    SELECT COUNT(*) FILTER (WHERE u."invoiceId" IS NULL) AS unbilled,
      COUNT(*) FILTER (WHERE u."invoiceId" IS NOT NULL AND (i."subscriptionId" IS DISTINCT FROM l."subscriptionId"
      OR i."billingCycle" <> 2)) AS misbilled
    FROM "Usage" u JOIN "SubscriptionLine" l ON l."id" = u."subscriptionLineId" LEFT JOIN "Invoice" i
    ON i."id" = u."invoiceId"`);
  const numbers = await q(`
    SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE "status" <> 'finalized') AS drafts,
    COUNT(DISTINCT "number") AS distinct_numbers,
      COALESCE(MAX("number") - MIN("number") + 1, 0) AS span
    FROM "Invoice"`);
  const problems = [
    Number(subs.n) !== count && `${subs.n} subscriptions, seeded ${count}`,
    Number(subs.behind) && `${subs.behind} subscriptions not advanced to cycle 3`,
    Number(wrong.n) && `${wrong.n} subscriptions without exactly one invoice per due cycle`,
    Number(usages.unbilled) && `${usages.unbilled} usage records unbilled`,
    Number(usages.misbilled) && `${usages.misbilled} usage records on another subscription's or cycle's invoice`,
    Number(numbers.drafts) && `${numbers.drafts} invoices left draft`,
    (Number(numbers.distinct_numbers) !== Number(numbers.n) || Number(numbers.span) !== Number(numbers.n)) &&
      `invoice numbers not gapless and unique (${numbers.n} invoices, ${numbers.distinct_numbers} numbers over a ` +
        `span of ${numbers.span})`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`check failed: ${problems.join("; ")}`);
  return { invoices: Number(numbers.n) };
}

/**
 * One measured setting: a fresh database, seeded in its own process, billed by `processes` runner processes at once.
 */
async function measure(processes: number) {
  const name = `billing_bench_${process.pid}_${processes}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  await withClient(server, (c) => c.query(`CREATE DATABASE "${name}"`));
  try {
    await migrateTarget({ kind: "postgres", url: url.toString() });
    // revenue analytics' triggers (migration 2026120711000001_revenue_aggregates) off: the billing run without them
    if (options.withoutAnalyticsTriggers)
      await withClient(url.toString(), (c) =>
        c.query(
          ["Invoice", "InvoiceLine", "CreditNote", "Payment", "Subscription"]
            .map((table) => `ALTER TABLE "${table}" DISABLE TRIGGER USER`)
            .join(";"),
        ),
      );
    const seeder = child([
      "seed",
      "--url",
      url.toString(),
      "--count",
      String(count),
      ...(options.service ? ["--date-start", SERVICE_DATE_START] : []),
    ]);
    const seed = JSON.parse(await seeder.next()) as { seconds: number; maxRssMb: number };
    await seeder.exited;
    // the seeded tables only: a VACUUM ANALYZE of the empty Invoice and InvoiceLine tables records
    // them as empty (0 pages, 0 rows), and the plans a connection then caches for the foreign key
    // checks on Invoice scan it whole until autovacuum analyzes it again (docs/performance.md
    // "After: the database's share"); migrated and never analyzed, as in a new database, or
    // analyzed with rows, as in a used one, they probe the primary key
    if (options.service)
      await withClient(url.toString(), (c) => c.query(`UPDATE "Subscription" SET "nextBilling" = DATE '2999-01-01'`));
    await withClient(url.toString(), (c) => c.query(`VACUUM ANALYZE ${SEEDED_TABLES.map((t) => `"${t}"`).join(", ")}`));
    if (options.service) {
      const measured = await runServiceWorkers(url.toString(), name, processes);
      const { invoices } = await withClient(url.toString(), check);
      return { processes, seed, ...measured, invoices };
    }

    const flags = options.profile ? ["--cpu-prof", `--cpu-prof-dir=${options.profile}`] : [];
    const args = [
      "run",
      "--url",
      url.toString(),
      "--until",
      UNTIL,
      "--workers",
      options.workers,
      ...(options.batchSize ? ["--batch-size", options.batchSize] : []),
    ];
    const procs = Array.from({ length: processes }, () => child(args, flags));
    for (const p of procs) if ((await p.next()) !== "ready") throw new Error("runner not ready");
    const results = procs.map((p) => p.next());
    const backends = sampleBackends(name);
    for (const p of procs) p.proc.stdin.end("go\n");
    const runs = (await Promise.all(results)).map((line) => JSON.parse(line) as RunResult);
    await Promise.all(procs.map((p) => p.exited));
    const { cpuMs: postgresCpuMs, waits } = await backends.stop();

    const seconds = (Math.max(...runs.map((r) => r.end)) - Math.min(...runs.map((r) => r.start))) / 1000;
    const billed = runs.reduce((n, r) => n + r.summary.billed, 0);
    const failed = runs.reduce((n, r) => n + r.summary.failed, 0);
    if (failed)
      throw new Error(
        `${failed} failures: ${runs
          .flatMap((r) => r.summary.errors)
          .slice(0, 3)
          .join("; ")}`,
      );
    if (billed !== count) throw new Error(`billed ${billed} subscriptions, seeded ${count}`);
    const { invoices } = await withClient(url.toString(), check);
    return { processes, seed, seconds, billed, invoices, rate: billed / seconds, runs, postgresCpuMs, waits };
  } finally {
    await withClient(server, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
}

/** `--service`: the subscriptions' start, 45 days before today (cycles 1 and 2 due now, cycle 3 not). */
const SERVICE_DATE_START = new Date(Date.now() - 45 * 86_400_000).toISOString().slice(0, 10);

/**
 * `--service`: starts `processes` service processes with SERVICE_ROLE=worker on `url`, makes the held subscriptions
 * due, and times their interval billing runs until every subscription has reached cycle 3.
 */
async function runServiceWorkers(url: string, name: string, processes: number) {
  requireFreshBuild();
  const env = { ...serviceEnv(url), SERVICE_ROLE: "worker", BILLING_RUN_INTERVAL_SECONDS: "1" };
  const flags = options.profile ? ["--cpu-prof", `--cpu-prof-dir=${options.profile}`] : [];
  const workers: Child[] = [];
  try {
    for (let i = 0; i < processes; i++) workers.push(await startChild([...flags, "dist/main.js"], env));
    const cpuBefore = workers.map((w) => processCpuMs(w.child.pid!));
    const backends = sampleBackends(name);
    return await withClient(url, async (c) => {
      await c.query(`UPDATE "Subscription" SET "nextBilling" = "dateStart"`);
      const start = Date.now();
      for (;;) {
        const { rows } = await c.query<{ behind: string }>(
          `SELECT COUNT(*) FILTER (WHERE "nextBillingCycle" <> 3) AS behind FROM "Subscription"`,
        );
        if (Number(rows[0].behind) === 0) break;
        if (Date.now() - start > 600_000) throw new Error(`${rows[0].behind} subscriptions not billed after 10 min`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const end = Date.now();
      const { cpuMs: postgresCpuMs, waits } = await backends.stop();
      const runs: RunResult[] = workers.map((w, i) => {
        const status = readFileSync(`/proc/${w.child.pid}/status`, "utf8");
        const hwmMb = Math.round(Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024);
        return {
          summary: { billed: 0, invoices: 0, cycles: 0, failed: 0, skipped: 0, errors: [] },
          start,
          end,
          startUs: 0,
          cpuMs: processCpuMs(w.child.pid!) - cpuBefore[i],
          maxRssMb: hwmMb,
          heapLimitMb: 0,
          heapUsedMb: 0,
          heapTotalMb: 0,
          externalMb: 0,
        };
      });
      const seconds = (end - start) / 1000;
      return { seconds, billed: count, rate: count / seconds, runs, postgresCpuMs, waits };
    });
  } finally {
    for (const w of workers) await w.stop();
  }
}

const load = async () =>
  (await import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
console.log(
  `billing bench: ${count} subscriptions, ` +
    `${options.service ? "service worker processes" : `${options.workers} claim loop(s) per runner`}, batch ` +
    `size ${options.batchSize ?? "default"}; load average ${await load()}`,
);
const settings = runners > 1 ? [1, runners] : [1];
const results = [];
for (const processes of settings) {
  const r = await measure(processes);
  results.push(r);
  console.log(
    `${processes} runner${processes > 1 ? "s" : ""}: seeded in ${r.seed.seconds.toFixed(1)} s (seed process peak ` +
      `RSS ${r.seed.maxRssMb} MB); ` +
      `billed ${r.billed} subscriptions (${r.invoices} invoices) in ${r.seconds.toFixed(2)} s = ${r.rate.toFixed(0)} ` +
      `subscriptions/s; ` +
      `runner peak RSS ${r.runs
        .map((x) =>
          options.service
            ? `${x.maxRssMb} MB (worker process)`
            : `${x.maxRssMb} MB (V8 heap used ${x.heapUsedMb} MB of ${x.heapTotalMb} ` +
              `MB, limit ${x.heapLimitMb} MB, external ${x.externalMb} MB; ${x.summary.billed} billed)`,
        )
        .join(", ")}; ` +
      `runner CPU ${(r.runs.reduce((t, x) => t + x.cpuMs, 0) / r.billed).toFixed(2)} ms per subscription` +
      (r.postgresCpuMs === null ? "" : `, PostgreSQL backends ${(r.postgresCpuMs / r.billed).toFixed(2)} ms`) +
      `; the runners' backends in a transaction: ${r.waits}` +
      `; checks passed; load average ${await load()}` +
      (options.profile ? `; profiles from --since-us ${r.runs.map((x) => x.startUs).join(", ")}` : ""),
  );
}
if (results.length > 1)
  console.log(`${runners} runners / 1 runner: ${(results[1].rate / results[0].rate).toFixed(2)}x`);
