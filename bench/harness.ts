/**
 * What the HTTP benchmarks (bench/http.ts, bench/usage.ts, bench/usage-scale.ts) share: a fresh PostgreSQL
 * database, the service as a child process (`node dist/main.js`, as bench/http.ts runs it), a TCP
 * proxy counting the SQL statements clients send, and a check that dist/ is current.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { buildState, root } from "../scripts/build-state.mjs";
import { newId } from "../src/infra/ids.js";
import type { PrismaClient } from "../src/infra/prisma/generated/client.js";

export const ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres";

/** Exits when dist/ is missing or older than the sources: the service runs as `node dist/main.js`. */
export function requireFreshBuild(): void {
  if (buildState() !== "fresh") {
    console.error("dist/ is missing or stale: run `npm run build` first");
    process.exit(1);
  }
}

/**
 * A fresh database `<prefix>_<pid>` on the local PostgreSQL (dropped by `drop`), or BENCH_DATABASE_URL as given (not
 * dropped). While it is open, standInForAutovacuum analyzes its tables as autovacuum would, when the server has
 * autovacuum off.
 */
export async function openDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, drop: async () => undefined };
  const name = `${prefix}_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = `postgresql://postgres@127.0.0.1:5432/${name}`;
  const autovacuum = await standInForAutovacuum(url);
  return {
    url,
    drop: async () => {
      const analyzed = await autovacuum.stop();
      if (analyzed)
        console.log(`(autovacuum is off on this server: the bench analyzed ${analyzed} tables as it would)`);
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Seconds between the stand-in's looks at the tables (BENCH_AUTOVACUUM_SECONDS; 0 turns it off). */
const AUTOVACUUM_SECONDS = Number(process.env.BENCH_AUTOVACUUM_SECONDS ?? 10);

/**
 * Stands in for autovacuum's analyzes on a server that has autovacuum off (this machine's PostgreSQL does, in its
 * conf.d, for the test suites; docs/performance.md "Autovacuum's stand-in"). Without them a benchmark's new database
 * keeps the statistics of its empty tables for the whole run, and the plans cached in the service's connections
 * (its named prepared statements, the foreign keys' checks) stay those made for empty tables: sequential scans of
 * tables that grow by thousands of rows. Every AUTOVACUUM_SECONDS it analyzes the tables that autovacuum's own rule
 * picks (`autovacuum_analyze_threshold` 50 rows plus `autovacuum_analyze_scale_factor` 0.1 of the table changed
 * since its last analyze). Production's autovacuum looks every minute; a production database has been analyzed all
 * along, and a bench's is new, so the stand-in looks more often. On a server with autovacuum on it does nothing.
 * `stop` resolves with how many tables it analyzed.
 */
export async function standInForAutovacuum(url: string): Promise<{ stop(): Promise<number> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const on = (await client.query("SHOW autovacuum")).rows[0].autovacuum === "on";
  let analyzed = 0;
  let running: Promise<unknown> = Promise.resolve();
  const look = async () => {
    const { rows } = await client.query<{ name: string }>(`
      SELECT quote_ident(s.relname) AS name FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.n_mod_since_analyze > 50 + 0.1 * GREATEST(c.reltuples, 0)`);
    if (rows.length === 0) return;
    await client.query(`ANALYZE ${rows.map((r) => r.name).join(", ")}`);
    analyzed += rows.length;
  };
  const timer =
    on || AUTOVACUUM_SECONDS <= 0
      ? undefined
      : setInterval(() => {
          // stop() ends it before a database is dropped; an error here is the stand-in's own, said and not fatal
          running = running
            .then(look)
            .catch((e: unknown) => console.error(`autovacuum stand-in: ${e instanceof Error ? e.message : e}`));
        }, AUTOVACUUM_SECONDS * 1000);
  timer?.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await client.end().catch(() => undefined);
      return analyzed;
    },
  };
}

export interface Child {
  url: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}

// below Linux's ephemeral range (32768-60999), where the bench's own outgoing connections (to PostgreSQL, to the
// service) take their local ports: a service told to listen on one of those failed with EADDRINUSE
let nextPort = 20000 + Math.floor(Math.random() * 10000);

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.join(" ")} exited ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${url} did not become healthy in 60 s`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The service's environment for a benchmark: PostgreSQL, production, logs silent, rate limits and workers off. */
export function serviceEnv(databaseUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NODE_ENV: "production",
    LOG_LEVEL: "silent",
    RATE_LIMIT_REQUESTS: "0",
    AUTH_FAILURE_LIMIT: "0",
    BILLING_RUN_INTERVAL_SECONDS: "0",
    SII_SEND_INTERVAL_SECONDS: "0",
  };
  delete env.BILLING_DATA_DIR;
  delete env.NODE_OPTIONS;
  return env;
}

/**
 * Starts `node <args>` (cwd: the repository) on a free port and waits for /healthz. Its stdout (the logs) is
 * dropped unless `output.stdout` is "inherit"; its stderr goes to the bench's, or, with `output.stderr`, to that
 * function as text from the start.
 */
export async function startChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  output: { stdout?: "ignore" | "inherit"; stderr?: (text: string) => void } = {},
): Promise<Child> {
  const port = nextPort++;
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", output.stdout ?? "ignore", output.stderr ? "pipe" : "inherit"],
  });
  if (output.stderr) child.stderr!.setEncoding("utf8").on("data", output.stderr);
  await waitHealthy(url, child);
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The service (`node [nodeArgs] dist/main.js`) on `databaseUrl`. */
export const startService = (databaseUrl: string, nodeArgs: string[] = []) =>
  startChild([...nodeArgs, "dist/main.js"], serviceEnv(databaseUrl));

/**
 * A TCP proxy to PostgreSQL counting the statements clients send: each Execute ('E', extended
 * protocol) and each simple Query ('Q'). The first message of a connection (startup, or an
 * SSLRequest then the startup) has no type byte.
 */
export async function countingProxy(
  databaseUrl: string,
): Promise<{ url: string; statements: () => number; close: () => Promise<void> }> {
  const target = new URL(databaseUrl);
  let statements = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let buffer = Buffer.alloc(0);
    let untyped = 1;
    client.on("data", (chunk) => {
      upstream.write(chunk);
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (untyped > 0) {
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          if (buffer.readInt32BE(4) === 80877103) untyped++; // SSLRequest: the startup follows
          untyped--;
          buffer = buffer.subarray(length);
          continue;
        }
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) break;
        const type = String.fromCharCode(buffer[0]);
        if (type === "E" || type === "Q") statements++;
        buffer = buffer.subarray(1 + length);
      }
    });
    upstream.on("data", (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    statements: () => statements,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The 1, 5 and 15-minute load averages, formatted "a, b, c". */
export const loadAverage = () =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(", ");

/**
 * Seeds, for `customerId` of the tenant, a metered product and plan (CLP 7 per unit, summed monthly)
 * and a CL33 subscription from 2026-01-01 with one line of it; returns the line's `lin_` id, the
 * line usage records are sent for (bench/usage.ts, bench/usage-service.ts).
 */
export async function seedMeteredLine(
  prisma: PrismaClient,
  tenant: { organizationId: string; testMode: boolean },
  customerId: string,
): Promise<string> {
  const productId = newId("pro");
  await prisma.product.create({ data: { id: productId, ...tenant, name: "API" } });
  const planId = newId("pla");
  await prisma.plan.create({
    data: {
      id: planId,
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
  const subscriptionId = newId("sub");
  const start = Date.UTC(2026, 0, 1);
  await prisma.subscription.create({
    data: {
      id: subscriptionId,
      ...tenant,
      documentTypeId: "CL33",
      customerId,
      dateStart: new Date(start),
      nextBilling: new Date(start + 31 * 86_400_000),
      userEmail: "bench@example.cl",
    } as never,
  });
  const line = newId("lin");
  await prisma.subscriptionLine.create({
    data: { id: line, subscriptionId, organizationId: tenant.organizationId, planId, quantity: "1" } as never,
  });
  return line;
}

/**
 * CPU time (user + system, ms) process `pid` has used so far: utime and stime of /proc/<pid>/stat (Linux, 100 ticks
 * a second).
 */
export function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // the fields after the command name in parentheses; utime and stime are fields 14 and 15
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * One load of the service under `node --cpu-prof` (profiles into `dir`): starts it on `databaseUrl`, runs `warmUp`
 * then `measure` against its URL, stops it (V8 writes the profile at exit). Returns the profile files it wrote, the
 * monotonic clock's microseconds when `measure` began (the summary's `--since-us`: V8's profile timestamps use that
 * clock) and what `measure` returned.
 */
export async function profiledLoad<R>(
  databaseUrl: string,
  dir: string,
  warmUp: (url: string) => Promise<unknown>,
  measure: (url: string) => Promise<R>,
): Promise<{ files: string[]; sinceUs: bigint; run: R }> {
  fs.mkdirSync(dir, { recursive: true });
  const before = new Set(fs.readdirSync(dir));
  const profiled = await startService(databaseUrl, ["--cpu-prof", "--cpu-prof-dir", path.resolve(dir)]);
  let measured: { sinceUs: bigint; run: R };
  try {
    await warmUp(profiled.url);
    const sinceUs = process.hrtime.bigint() / 1000n;
    measured = { sinceUs, run: await measure(profiled.url) };
  } finally {
    await profiled.stop();
  }
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile") && !before.has(f))
    .map((f) => path.join(dir, f));
  return { files, ...measured };
}

/** CPU time (ms, /proc) of each PostgreSQL backend connected to `db`'s database, by process id. */
export async function backendsCpuMs(db: pg.Client): Promise<Map<number, number>> {
  const rows = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`,
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows.rows) {
    try {
      cpu.set(pid, processCpuMs(pid));
    } catch {
      // ended meanwhile
    }
  }
  return cpu;
}

/** The CPU the backends used between two readings (a backend that appeared counts from its start). */
export const cpuDelta = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
