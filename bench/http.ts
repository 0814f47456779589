/**
 * `npm run bench:http` (docs/performance.md): the service's hot HTTP paths beside a bare
 * `node:http` + `pg` handler (bench/baseline.mjs) serving the same JSON, measured in the same run.
 * Needs a current build (`npm run build`): the service runs as `node dist/main.js`.
 *
 * 1. On PostgreSQL (BENCH_DATABASE_URL, or a fresh database `bench_http_<pid>` it creates on
 *    postgresql://postgres@127.0.0.1:5432 and drops at the end) migrates and seeds an organization,
 *    an API key, BENCH_CUSTOMERS customers (default 200), BENCH_INVOICES invoices (default 1,000)
 *    of 3 lines and 1 payment each, and one metered subscription line for usage records.
 * 2. Starts the service (`node dist/main.js`, rate limits off, logs silent, workers off) and the
 *    baseline, each in a child process of its own, and asserts once that both serve the same
 *    JSON (deep equal) for GET /v1/invoices/{id}/ and the GraphQL page of 50 invoices, and the same
 *    field names for POST /v1/usages/.
 * 3. Loads each path with autocannon, interleaved (service, baseline, service, baseline, ...),
 *    BENCH_RUNS runs (default 3) of BENCH_SECONDS seconds (default 10) each, and prints the medians
 *    (req/s, p50, p99), the ratio service/baseline, the CPU time each side's process used per
 *    request (from /proc: not inflated by other processes sharing the CPUs, as wall time is), and
 *    the load average while measuring. BENCH_COMPARE_DIST=<dir> (another build, copied under the
 *    repository root so it finds node_modules and prisma/migrations, e.g. `dist-before`) runs it as a third child,
 *    interleaved with the other two, and prints its figures beside the service's: a before/after
 *    comparison under the same load.
 * 3b. Counts the SQL statements per request of each path, service and baseline, through a TCP
 *    proxy in front of PostgreSQL that counts the protocol's Execute and Query messages (a second
 *    pair of children, pointed at the proxy, so the load runs go straight to PostgreSQL).
 * 4. With BENCH_PROFILE=<dir>: afterwards, for each path measured (or those of
 *    BENCH_PROFILE_PATHS=get32,graphql,...), starts the service once more under `node --cpu-prof`
 *    during BENCH_SECONDS of that path's load and writes its .cpuprofile into <dir> (summarise it
 *    with `npx tsx bench/profile-summary.ts <file>`).
 *
 * BENCH_ONLY=get1,get32,graphql,usages runs a subset. Figures go to stdout only.
 */
import os from "node:os";
import {
  countingProxy,
  openDatabase,
  processCpuMs,
  profiledLoad,
  requireFreshBuild,
  serviceEnv,
  startChild,
  startService,
  type Child,
} from "./harness.js";
import {
  assertSameBodies,
  call,
  fmtMs,
  fmtRow,
  load,
  median,
  PATHS,
  seed,
  startBaseline,
  type Path,
  type Run,
  type Seed,
} from "./http-paths.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 200);
const INVOICES = Number(process.env.BENCH_INVOICES ?? 1000);
const PROFILE_DIR = process.env.BENCH_PROFILE;
const ONLY = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const PROFILE_PATHS = process.env.BENCH_PROFILE_PATHS?.split(",").map((s) => s.trim());

requireFreshBuild();

const COMPARE_DIST = process.env.BENCH_COMPARE_DIST;
const fmtCpu = (r: { cpu?: number }) => (r.cpu === undefined ? "-" : r.cpu.toFixed(2));

/** SQL statements per request of each path (the mean of `times` requests after one warm-up request). */
async function countStatements(
  databaseUrl: string,
  seedData: Seed,
  paths: Path[],
  times = 5,
): Promise<Map<string, { service: number; baseline: number }>> {
  const proxy = await countingProxy(databaseUrl);
  const counted = new Map<string, { service: number; baseline: number }>();
  const service = await startService(proxy.url);
  const baseline = await startBaseline(proxy.url);
  try {
    for (const p of paths) {
      const perRequest = async (url: string) => {
        await call(url, seedData, p);
        // let background writes of the warm-up (e.g. the key's last-used time) land first
        await new Promise((r) => setTimeout(r, 200));
        const before = proxy.statements();
        for (let i = 0; i < times; i++) {
          const { status } = await call(url, seedData, p);
          if (status !== p.request(seedData).expect)
            throw new Error(`${p.name}: status ${status} while counting statements`);
        }
        await new Promise((r) => setTimeout(r, 200));
        return (proxy.statements() - before) / times;
      };
      counted.set(p.id, { service: await perRequest(service.url), baseline: await perRequest(baseline.url) });
    }
  } finally {
    await service.stop();
    await baseline.stop();
    await proxy.close();
  }
  return counted;
}

async function main(): Promise<void> {
  const db = await openDatabase("bench_http");
  const children: Child[] = [];
  try {
    const t0 = performance.now();
    const seedData = await seed(db.url, { customers: CUSTOMERS, invoices: INVOICES });
    console.log(
      `seeded ${CUSTOMERS} customers, ${INVOICES} invoices (3 lines, 1 payment each) ` +
        `in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const service = await startService(db.url);
    children.push(service);
    const baseline = await startBaseline(db.url);
    children.push(baseline);
    const compare = COMPARE_DIST ? await startChild([`${COMPARE_DIST}/main.js`], serviceEnv(db.url)) : undefined;
    if (compare) children.push(compare);
    await assertSameBodies(service.url, baseline.url, seedData);
    console.log("baseline and service serve the same JSON (GET invoice, GraphQL page of 50) and the same usage fields");
    const paths = PATHS.filter((p) => !ONLY || ONLY.includes(p.id));
    const statements = await countStatements(db.url, seedData, paths);
    for (const p of paths)
      console.log(
        `SQL statements per request, ${p.name}: service ${statements.get(p.id)!.service}, ` +
          `baseline ${statements.get(p.id)!.baseline}`,
      );
    // warm-up: JIT, connection pools, Prisma's engine
    for (const p of paths) for (const c of [service, baseline, compare]) if (c) await load(c.url, seedData, p, 2);
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${RUNS} interleaved runs ` +
        `of ${SECONDS} s per path, medians`,
    );
    const rows: { p: Path; service: Run; baseline: Run; load: number[] }[] = [];
    for (const p of paths) {
      const s: Run[] = [];
      const b: Run[] = [];
      const loads: number[][] = [];
      const other: Run[] = [];
      // the CPU the serving process used, from the kernel's accounting: unlike wall time, not
      // inflated when other processes share the CPUs
      const measured = async (c: { url: string; child: { pid?: number } }): Promise<Run> => {
        const before = processCpuMs(c.child.pid!);
        const run = await load(c.url, seedData, p, SECONDS);
        return { ...run, cpu: (processCpuMs(c.child.pid!) - before) / Math.max(1, run.total) };
      };
      for (let i = 0; i < RUNS; i++) {
        s.push(await measured(service));
        loads.push(os.loadavg());
        b.push(await measured(baseline));
        loads.push(os.loadavg());
        if (compare) other.push(await measured(compare));
      }
      const m = (runs: Run[]): Run => ({
        rps: median(runs.map((r) => r.rps)),
        total: median(runs.map((r) => r.total)),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        errors: runs.reduce((n, r) => n + r.errors, 0),
        cpu: median(runs.map((r) => r.cpu ?? 0)),
      });
      const row = { p, service: m(s), baseline: m(b), load: loads.at(-1)! };
      rows.push(row);
      console.log(
        `${p.name}: service ${fmtRow(row.service)} [runs: ${s.map((r) => r.rps.toFixed(0)).join(", ")}]; ` +
          `baseline ${fmtRow(row.baseline)} [runs: ${b.map((r) => r.rps.toFixed(0)).join(", ")}]; ` +
          `ratio ${(row.service.rps / row.baseline.rps).toFixed(3)}; ` +
          `CPU per request: service ${fmtCpu(row.service)}, baseline ${fmtCpu(row.baseline)}; ` +
          `load ${row.load.map((l) => l.toFixed(2)).join(" ")}`,
      );
      if (compare) {
        const c = m(other);
        console.log(
          `  ${COMPARE_DIST}: ${fmtRow(c)} [runs: ${other.map((r) => r.rps.toFixed(0)).join(", ")}]; ` +
            `ratio to the baseline ${(c.rps / row.baseline.rps).toFixed(3)}; ` +
            `CPU per request ${fmtCpu(c)} (service ${fmtCpu(row.service)})`,
        );
      }
      if (row.service.errors || row.baseline.errors)
        console.log(`  errors or unexpected statuses: service ${row.service.errors}, baseline ${row.baseline.errors}`);
    }
    console.log(
      "\n| path | service req/s | service p50 / p99 | baseline req/s | baseline p50 / p99 | ratio (req/s) " +
        "| CPU ms per request (service / baseline) | SQL statements per request (service / baseline) " +
        "| load average (1, 5, 15 min) |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const r of rows) {
      console.log(
        `| ${r.p.name} | ${r.service.rps.toFixed(0)} | ${fmtMs(r.service.p50)} / ${fmtMs(r.service.p99)} ` +
          `| ${r.baseline.rps.toFixed(0)} | ${fmtMs(r.baseline.p50)} / ${fmtMs(r.baseline.p99)} ` +
          `| ${(r.service.rps / r.baseline.rps).toFixed(3)} | ${fmtCpu(r.service)} / ${fmtCpu(r.baseline)} ` +
          `| ${statements.get(r.p.id)!.service} / ${statements.get(r.p.id)!.baseline} ` +
          `| ${r.load.map((l) => l.toFixed(2)).join(", ")} |`,
      );
    }
    if (PROFILE_DIR) {
      // every child stopped (the compare build too: left running, its pool kept the database from
      // being dropped at the end and the benchmark waited for ever)
      for (const c of children) await c.stop();
      children.length = 0;
      // one profile per path measured (BENCH_PROFILE_PATHS narrows them; default: every path of BENCH_ONLY)
      const profiledPaths = PROFILE_PATHS ? paths.filter((p) => PROFILE_PATHS.includes(p.id)) : paths;
      for (const p of profiledPaths) {
        const { files, sinceUs, run } = await profiledLoad(
          db.url,
          PROFILE_DIR,
          (url) => load(url, seedData, p, 2),
          (url) => load(url, seedData, p, SECONDS),
        );
        const loadNow = os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ");
        console.log(`\nprofile of the service under ${p.name} (${fmtRow(run)} while profiled, load ${loadNow}):`);
        console.log(files.join(", "));
        console.log(
          `summarise with: npx tsx bench/profile-summary.ts ${files.join(" ")} ` +
            `--since-us ${sinceUs} --requests ${run.total}`,
        );
      }
    }
  } finally {
    for (const c of children) await c.stop().catch(() => undefined);
    await db.drop();
  }
}

await main();
