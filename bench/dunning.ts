/**
 * `npm run bench:dunning [-- --profile dir]`: the dunning worker's attempts at scale on PostgreSQL
 * (docs/performance.md "Dunning attempts"; issue 33's target: 100,000 customers with an overdue invoice each,
 * half with a declining test card, at least 500 attempts/s including the card charges and queued e-mails, peak
 * RSS flat within 20 % from 10,000 to 100,000, every attempt made once).
 *
 * For each size N (BENCH_DUNNING_SIZES, default `10000,100000`) it creates a fresh database on the server of
 * BENCH_POSTGRES_URL, else TEST_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/test, migrates it, seeds
 * N customers with one overdue invoice each (and the month before's, paid by card: a used database's history) in a
 * separate process (bench/dunning-seed.ts: set-based SQL; half
 * the cards succeed, half decline soft), then starts a runner process (bench/dunning-child.ts `run`) that runs the
 * dunning worker's round as `dunning run --until 2026-11-20` does: the overdue sweep, then `runDunningAttempts`
 * (every customer enters the organization's default campaign and gets attempt 1, charging the card), then a second
 * attempts round at the same time, which must make no attempt. It prints the sweep's time, the attempts per second
 * of the first round (entry included; and with the sweep), the runner's peak RSS (maxRSS of that process only),
 * the charges, the dunning e-mails queued (OutboxMessage rows of kind `dunning`), and checks with SQL that every
 * attempt was made once (one run per customer, one attempt row per run and number, one payment per run, attempt
 * and invoice, no invoice charged twice). Then the ratio of the peak RSS at the largest size to the smallest, and
 * one JSON line of everything. The databases are dropped at the end. `--profile dir` runs the runner under
 * `node --cpu-prof` (summarise with bench/profile-summary.ts from the printed --since-us).
 */
import { spawn } from "node:child_process";
import os from "node:os";
import { createInterface } from "node:readline";
import { Command } from "commander";
import pg from "pg";
import { migrateTarget } from "../src/infra/database.js";
import { HISTORY_INVOICE } from "./dunning-seed.js";
import { standInForAutovacuum } from "./harness.js";

const options = new Command()
  .option("--profile <dir>", "write a CPU profile of each runner process to dir")
  .parse()
  .opts<{ profile?: string }>();
const sizes = (process.env.BENCH_DUNNING_SIZES ?? "10000,100000").split(",").map(Number);
if (sizes.some((n) => !Number.isInteger(n) || n < 2)) throw new Error("BENCH_DUNNING_SIZES: whole numbers from 2");
const server = new URL(
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test",
);
/** The round's today: the seeded invoices (due 2026-11-10) are overdue. */
const UNTIL = "2026-11-20";
/** The tables bench/dunning-seed.ts writes (analyzed after the seed, as a used database's are). */
const SEEDED_TABLES = [
  "Organization",
  "Customer",
  "Source",
  "Invoice",
  "InvoiceLine",
  "Payment",
  "PaymentCharge",
  "DunningCampaign",
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

/** Starts `node bench/dunning-child.ts ...args`; `next` gives each stdout line. */
function child(args: string[], nodeFlags: string[] = []) {
  const proc = spawn(process.execPath, [...nodeFlags, "--import", "tsx", "bench/dunning-child.ts", ...args], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "silent" },
  });
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: proc.stdout }).on("line", (line) =>
    waiting.length ? waiting.shift()!(line) : queued.push(line),
  );
  const exited = new Promise<void>((resolve, reject) =>
    proc.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`bench/dunning-child.ts ${args[0]} exited with ${code}`)),
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

interface Summary {
  entered: number;
  attempts: number;
  paid: number;
  finished: number;
  charged: number;
  declined: number;
  failed: number;
}

interface RunResult {
  sweep: { swept: number; overdue: number };
  attempts: Summary;
  again: Summary;
  sweepSeconds: number;
  attemptSeconds: number;
  againSeconds: number;
  startUs: number;
  cpuMs: number;
  maxRssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  rssMb: number;
}

/** What the round must have done to `count` customers, half of whose cards decline: problems found. */
function summaryProblems(count: number, r: RunResult): string[] {
  const succeeding = Math.ceil(count / 2);
  const expected: [string, number, number][] = [
    ["invoices swept", r.sweep.swept, count],
    ["invoices found overdue", r.sweep.overdue, count],
    ["runs entered", r.attempts.entered, count],
    ["attempts", r.attempts.attempts, count],
    ["charges succeeded", r.attempts.charged, succeeding],
    ["charges declined", r.attempts.declined, count - succeeding],
    ["runs paid", r.attempts.paid, succeeding],
    ["runs finished", r.attempts.finished, 0],
    ["attempts failed", r.attempts.failed, 0],
    ["runs entered by the second round", r.again.entered, 0],
    ["attempts of the second round", r.again.attempts, 0],
  ];
  return expected.filter(([, got, want]) => got !== want).map(([what, got, want]) => `${what}: ${got}, not ${want}`);
}

/** "Every attempt made once", checked with SQL over the database after the round; throws on a violation. */
async function checkOnce(client: pg.Client, count: number): Promise<{ emails: number }> {
  const q = async (sql: string) => (await client.query(sql)).rows[0] as Record<string, string>;
  const runs = await q(`
    SELECT COUNT(*) AS n, COUNT(DISTINCT "customerId") AS customers,
      COUNT(*) FILTER (WHERE "attempts" <> 1) AS not_one FROM "DunningRun"`);
  const attempts = await q(`
    SELECT COUNT(*) AS n, COUNT(DISTINCT ("runId", "number")) AS distinct_numbers,
      COUNT(*) FILTER (WHERE "number" <> 1) AS not_first FROM "DunningAttempt"`);
  // each attempt's payment is named in its invoices entry; one per (run, attempt, invoice), each charged once
  const payments = await q(`
    WITH recorded AS (
      SELECT e->>'payment' AS "paymentId", e->>'invoice' AS "invoiceId"
      FROM "DunningAttempt" a, jsonb_array_elements(a."invoices") e
    ), charges AS (SELECT "paymentId", COUNT(*) AS n FROM "PaymentCharge" GROUP BY "paymentId")
    SELECT COUNT(*) AS n, COUNT(DISTINCT p."invoiceId") AS invoices,
      COUNT(*) FILTER (WHERE c.n IS DISTINCT FROM 1) AS charges,
      COUNT(*) FILTER (WHERE r."paymentId" IS NULL) AS unrecorded
    FROM "Payment" p LEFT JOIN charges c ON c."paymentId" = p."id"
    LEFT JOIN recorded r ON r."paymentId" = p."id" AND r."invoiceId" = p."invoiceId"
    WHERE p."invoiceId" NOT IN (SELECT "id" FROM "Invoice" WHERE "date" = '${HISTORY_INVOICE.date}')`);
  const paidTwice = await q(`
    SELECT COUNT(*) AS n FROM (SELECT "invoiceId" FROM "Payment" WHERE "status" = 'succeeded'
      GROUP BY "invoiceId" HAVING COUNT(*) > 1) x`);
  const emails = await q(`SELECT COUNT(*) AS n FROM "OutboxMessage" WHERE "kind" = 'dunning'`);
  const problems = [
    Number(runs.n) !== count && `${runs.n} runs, not ${count}`,
    Number(runs.customers) !== count && `runs of ${runs.customers} customers, not ${count}`,
    Number(runs.not_one) && `${runs.not_one} runs with another count of attempts than 1`,
    Number(attempts.n) !== count && `${attempts.n} attempt rows, not ${count}`,
    Number(attempts.distinct_numbers) !== Number(attempts.n) && `attempts written twice for a run and number`,
    Number(attempts.not_first) && `${attempts.not_first} attempts numbered other than 1`,
    Number(payments.n) !== count && `${payments.n} payments, not ${count}`,
    Number(payments.invoices) !== count && `payments of ${payments.invoices} invoices, not ${count}`,
    Number(payments.charges) && `${payments.charges} payments not charged exactly once`,
    Number(payments.unrecorded) && `${payments.unrecorded} payments no attempt names`,
    Number(paidTwice.n) && `${paidTwice.n} invoices charged successfully twice`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`check failed: ${problems.join("; ")}`);
  return { emails: Number(emails.n) };
}

/** One size: a fresh database seeded in its own process, then the round in a runner process. */
async function measure(count: number) {
  const name = `dunning_bench_${process.pid}_${count}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  await withClient(server.toString(), (c) => c.query(`CREATE DATABASE "${name}"`));
  let analyzer: Awaited<ReturnType<typeof standInForAutovacuum>> | undefined;
  try {
    await migrateTarget({ kind: "postgres", url: url.toString() });
    const seeder = child(["seed", "--url", url.toString(), "--count", String(count)]);
    const seed = JSON.parse(await seeder.next()) as { seconds: number; maxRssMb: number };
    await seeder.exited;
    await withClient(url.toString(), (c) => c.query(`VACUUM ANALYZE ${SEEDED_TABLES.map((t) => `"${t}"`).join(", ")}`));
    const flags = options.profile ? ["--cpu-prof", `--cpu-prof-dir=${options.profile}`] : [];
    const runner = child(["run", "--url", url.toString(), "--until", UNTIL], flags);
    if ((await runner.next()) !== "ready") throw new Error("runner not ready");
    const result = runner.next();
    analyzer = await standInForAutovacuum(url.toString());
    runner.proc.stdin.end("go\n");
    const run = JSON.parse(await result) as RunResult;
    const analyzes = await analyzer.stop();
    await runner.exited;
    const problems = summaryProblems(count, run);
    if (problems.length) throw new Error(`the round did not do what it should: ${problems.join("; ")}`);
    const { emails } = await withClient(url.toString(), (c) => checkOnce(c, count));
    return {
      count,
      seed,
      run,
      emails,
      analyzes,
      rate: run.attempts.attempts / run.attemptSeconds,
      rateWithSweep: run.attempts.attempts / (run.attemptSeconds + run.sweepSeconds),
    };
  } finally {
    await analyzer?.stop(); // before the drop, which would end its connection under it
    await withClient(server.toString(), (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
console.log(
  `dunning bench: ${sizes.join(", ")} customers with an overdue invoice each (half the cards decline); ` +
    `${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), load average ${load()}`,
);
const results = [];
for (const count of sizes) {
  const r = await measure(count);
  results.push(r);
  const x = r.run;
  console.log(
    `${count} customers: seeded in ${r.seed.seconds.toFixed(1)} s; sweep ${x.sweep.overdue} overdue in ` +
      `${x.sweepSeconds.toFixed(2)} s; attempts: ${x.attempts.attempts} in ${x.attemptSeconds.toFixed(2)} s = ` +
      `${r.rate.toFixed(0)} attempts/s (${r.rateWithSweep.toFixed(0)}/s with the sweep; ${x.attempts.charged} ` +
      `charged, ${x.attempts.declined} declined, ${x.attempts.paid} runs paid); ` +
      `dunning e-mails queued ${r.emails}; second round ${x.again.attempts} attempts in ` +
      `${x.againSeconds.toFixed(2)} s; runner peak RSS ${x.maxRssMb} MB (V8 heap used ${x.heapUsedMb} MB of ` +
      `${x.heapTotalMb} MB, external ${x.externalMb} MB); runner CPU ${(x.cpuMs / count).toFixed(2)} ms per ` +
      `customer; every attempt made once: checks passed; ` +
      (r.analyzes
        ? `${r.analyzes} tables analyzed in the round (autovacuum's stand-in: it is off on this server); `
        : "") +
      `load average ${load()}` +
      (options.profile ? `; profile from --since-us ${x.startUs}` : ""),
  );
}
const smallest = results[0];
const largest = results[results.length - 1];
const rssRatio = largest.run.maxRssMb / smallest.run.maxRssMb;
if (results.length > 1)
  console.log(
    `peak RSS ${largest.count} / ${smallest.count} customers: ${largest.run.maxRssMb} MB / ` +
      `${smallest.run.maxRssMb} MB = ${rssRatio.toFixed(2)} (target at most 1.20); attempts/s at ${largest.count}: ` +
      `${largest.rate.toFixed(0)} (target at least 500)`,
  );
console.log(
  JSON.stringify({
    date: new Date().toISOString(),
    cores: os.cpus().length,
    sizes: results.map((r) => ({
      customers: r.count,
      attemptsPerSecond: Math.round(r.rate),
      attemptsPerSecondWithSweep: Math.round(r.rateWithSweep),
      analyzes: r.analyzes,
      attemptSeconds: r.run.attemptSeconds,
      sweepSeconds: r.run.sweepSeconds,
      charged: r.run.attempts.charged,
      declined: r.run.attempts.declined,
      dunningEmails: r.emails,
      maxRssMb: r.run.maxRssMb,
      heapUsedMb: r.run.heapUsedMb,
    })),
    rssRatio: Number(rssRatio.toFixed(3)),
  }),
);
