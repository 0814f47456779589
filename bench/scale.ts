/**
 * `npm run bench:scale` (docs/performance.md "Many processes behind nginx"): the hot paths of
 * `npm run bench:http` through nginx, with one `api` process behind it and with two, and the bare
 * baseline (bench/baseline.mjs) behind the same nginx (deploy/nginx.conf), measured in one run. Needs a current build
 * (`npm run build`) and nginx (Debian's package: `apt-get install nginx`).
 *
 * 1. Creates a fresh database `bench_scale_<pid>` on postgresql://postgres@127.0.0.1:5432 and seeds
 *    it as bench:http does (bench/http-paths.ts: 200 customers, 1,000 invoices, a metered line).
 * 2. Starts two service processes with `SERVICE_ROLE=api` (rate limits off, logs silent) and the
 *    baseline, then one nginx (deploy/nginx.conf's proxy settings, rendered by bench/nginx.ts) with
 *    three ports: `one` proxies to the first api process only, `two` to both (round robin), and
 *    `baseline` to the baseline.
 * 3. For GET /v1/invoices/{id}/ and POST /v1/usages/ at 32 connections, BENCH_RUNS rounds (default
 *    3) of BENCH_SECONDS each (default 10), interleaved one / two / baseline, and prints the medians
 *    (req/s, p50, p99), two over one (target: at least 1.3 for req/s, at most 1.5 for p99), and the
 *    CPU time per request of each part, from /proc: the api processes (or the baseline), nginx's
 *    processes, the PostgreSQL backends of this database and the bench itself (autocannon).
 *
 * BENCH_ONLY=get32,usages runs a subset. Figures go to stdout only.
 */
import os from "node:os";
import autocannon from "autocannon";
import pg from "pg";
import {
  backendsCpuMs,
  cpuDelta,
  loadAverage,
  openDatabase,
  processCpuMs,
  requireFreshBuild,
  serviceEnv,
  startChild,
  type Child,
} from "./harness.js";
import { call, fmtMs, median, PATHS, seed, startBaseline, type Path, type Seed } from "./http-paths.js";
import { startNginx, type Nginx } from "./nginx.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ONLY = process.env.BENCH_ONLY?.split(",").map((s) => s.trim()) ?? ["get32", "usages"];

requireFreshBuild();

/** One load of a path through one of nginx's ports, with the CPU each part used per request answered (ms). */
interface Round {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
  cpu: { app: number; nginx: number; postgres: number; bench: number };
}

type Topology = "one" | "two" | "baseline";
const TOPOLOGIES: Topology[] = ["one", "two", "baseline"];

async function round(
  nginx: Nginx,
  topology: Topology,
  apps: Child[],
  db: pg.Client,
  seedData: Seed,
  p: Path,
  seconds: number,
): Promise<Round> {
  const r = p.request(seedData);
  const appPids = apps.map((a) => a.child.pid!);
  const appBefore = appPids.map(processCpuMs);
  const nginxBefore = nginx.cpuMs();
  const databaseBefore = await backendsCpuMs(db);
  const benchBefore = process.cpuUsage();
  let wrongStatus = 0;
  const result = await autocannon({
    url: `${nginx.url(topology)}${r.path}`,
    method: r.method,
    body: r.body,
    headers: { authorization: `Bearer ${seedData.key}`, "content-type": "application/json" },
    connections: p.connections,
    duration: seconds,
    setupClient: (client: { on: (e: string, f: (status: number) => void) => void }) =>
      client.on("response", (status: number) => void (status !== r.expect && wrongStatus++)),
  } as autocannon.Options);
  const bench = process.cpuUsage(benchBefore);
  const total = Math.max(1, result.requests.total);
  const app = appPids.reduce((sum, pid, i) => sum + processCpuMs(pid) - appBefore[i], 0);
  return {
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx + wrongStatus,
    cpu: {
      app: app / total,
      nginx: (nginx.cpuMs() - nginxBefore) / total,
      postgres: cpuDelta(databaseBefore, await backendsCpuMs(db)) / total,
      bench: (bench.user + bench.system) / 1000 / total,
    },
  };
}

/** The medians of each figure over `rounds`. */
function medians(rounds: Round[]): Round {
  const m = (f: (r: Round) => number) => median(rounds.map(f));
  return {
    rps: m((r) => r.rps),
    total: m((r) => r.total),
    p50: m((r) => r.p50),
    p99: m((r) => r.p99),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    cpu: {
      app: m((r) => r.cpu.app),
      nginx: m((r) => r.cpu.nginx),
      postgres: m((r) => r.cpu.postgres),
      bench: m((r) => r.cpu.bench),
    },
  };
}

async function main(): Promise<void> {
  const db = await openDatabase("bench_scale");
  const children: Child[] = [];
  let nginx: Nginx | null = null;
  const client = new pg.Client({ connectionString: db.url });
  try {
    const t0 = performance.now();
    const seedData = await seed(db.url, { customers: 200, invoices: 1000 });
    console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const apiEnv = { ...serviceEnv(db.url), SERVICE_ROLE: "api" };
    const api1 = await startChild(["dist/main.js"], apiEnv);
    const api2 = await startChild(["dist/main.js"], apiEnv);
    const baseline = await startBaseline(db.url);
    children.push(api1, api2, baseline);
    nginx = await startNginx({ one: [api1.url], two: [api1.url, api2.url], baseline: [baseline.url] });
    await client.connect();
    const paths = PATHS.filter((p) => ONLY.includes(p.id));
    for (const p of paths)
      for (const t of TOPOLOGIES) {
        const { status } = await call(nginx.url(t), seedData, p);
        if (status !== p.request(seedData).expect) throw new Error(`${p.name} through nginx (${t}): status ${status}`);
      }
    const appsOf = (t: Topology) => (t === "baseline" ? [baseline] : t === "one" ? [api1] : [api1, api2]);
    // warm-up: JIT, connection pools, nginx's upstream keep-alive connections
    for (const p of paths) for (const t of TOPOLOGIES) await round(nginx, t, appsOf(t), client, seedData, p, 2);
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${RUNS} interleaved rounds ` +
        `of ${SECONDS} s per path and topology, medians; load ${loadAverage()}`,
    );
    const table: string[] = [];
    const verdicts: string[] = [];
    for (const p of paths) {
      const rounds = new Map<Topology, Round[]>(TOPOLOGIES.map((t) => [t, []]));
      for (let i = 0; i < RUNS; i++)
        for (const t of TOPOLOGIES) rounds.get(t)!.push(await round(nginx, t, appsOf(t), client, seedData, p, SECONDS));
      const med = new Map(TOPOLOGIES.map((t) => [t, medians(rounds.get(t)!)]));
      const one = med.get("one")!;
      for (const t of TOPOLOGIES) {
        const r = med.get(t)!;
        const runs = rounds
          .get(t)!
          .map((x) => x.rps.toFixed(0))
          .join(", ");
        table.push(
          `| ${p.name} | ${t} | ${r.rps.toFixed(0)} (${runs}) | ${(r.rps / one.rps).toFixed(2)} | ` +
            `${fmtMs(r.p50)} / ${fmtMs(r.p99)} | ${r.cpu.app.toFixed(2)} | ${r.cpu.nginx.toFixed(2)} | ` +
            `${r.cpu.postgres.toFixed(2)} | ${r.cpu.bench.toFixed(2)} | ${r.errors} |`,
        );
      }
      const two = med.get("two")!;
      const ratio = two.rps / one.rps;
      const p99 = two.p99 / Math.max(1, one.p99);
      verdicts.push(
        `${p.name}: two api processes / one = ${ratio.toFixed(2)} ` +
          `(target ≥ 1.3: ${ratio >= 1.3 ? "met" : "NOT met"}); ` +
          `p99 two / one = ${p99.toFixed(2)} (target ≤ 1.5: ${p99 <= 1.5 ? "met" : "NOT met"}); ` +
          `baseline / one = ${(med.get("baseline")!.rps / one.rps).toFixed(2)}`,
      );
      console.log(verdicts.at(-1));
    }
    console.log(
      "\n| path | behind nginx | req/s (rounds) | / one | p50 / p99 | CPU ms per request: app | nginx | PostgreSQL " +
        "| bench | errors |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const line of table) console.log(line);
    console.log(`\n${verdicts.join("\n")}\nload ${loadAverage()}`);
  } finally {
    await client.end().catch(() => undefined);
    await nginx?.stop();
    for (const c of children) await c.stop().catch(() => undefined);
    await db.drop();
  }
}

await main();
