/**
 * `npm run bench:usage` (docs/performance.md "Usage ingestion"): usage records through REST
 * `POST /v1/usages/` in batches of 1,000 and of 100 (`{"usages": [...]}`, Lago's batch size is 100)
 * and singly, beside a bare `node:http` + `pg` handler (bench/usage-baseline.mjs) measured in the
 * same run. Needs a current build (`npm run build`): the service runs as `node dist/main.js`.
 *
 * 1. On PostgreSQL (a fresh database `bench_usage_<pid>`, dropped at the end, or
 *    BENCH_DATABASE_URL) migrates and seeds an organization, an API key, a customer and one
 *    metered subscription line.
 * 2. Counts the SQL statements per request of each scenario (service and baseline) through a TCP
 *    proxy in front of PostgreSQL (bench/harness.ts), the mean of 5 requests after a warm-up.
 * 3. Loads each scenario with autocannon: the service for BENCH_SECONDS (default 60), then the
 *    baseline for BENCH_BASELINE_SECONDS (default 20). Every record carries a unique
 *    `transaction_id` (as Lago's events do; BENCH_TRANSACTION_IDS=0 sends none), so the
 *    idempotency index is part of what is measured. Prints events/s per 10 s window and overall,
 *    p50 and p99 per request, the ratio to the baseline and the load average, and checks that the
 *    rows written equal the records acknowledged (plus at most the requests in flight at the end).
 * 4. With BENCH_PROFILE=<dir>: afterwards each scenario once more for BENCH_PROFILE_SECONDS (default
 *    10) against the service under `node --cpu-prof`, and the command that summarises each profile.
 *
 * It prints, beside each rate, the CPU time (user + system, from /proc) the serving process used per
 * event. BENCH_COMPARE_DIST=<dir> (another build under the repository root, e.g. `dist-before`) runs it
 * as a third child, loaded after the service for as long: a before/after under the same load.
 *
 * BENCH_ONLY=batch1000,batch100,single runs a subset; BENCH_BATCH_CONNECTIONS (default 4) and
 * BENCH_SINGLE_CONNECTIONS (default 32) set the connections. Figures go to stdout only.
 */
import os from "node:os";
import autocannon from "autocannon";
import pg from "pg";
import {
  countingProxy,
  loadAverage,
  openDatabase,
  processCpuMs,
  profiledLoad,
  requireFreshBuild,
  seedMeteredLine,
  serviceEnv,
  startChild,
  startService,
  type Child,
} from "./harness.js";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
/** another build (e.g. `dist-before`, under the repository root) loaded after the service, as long, the same way */
const COMPARE_DIST = process.env.BENCH_COMPARE_DIST;
const BASELINE_SECONDS = Number(process.env.BENCH_BASELINE_SECONDS ?? 20);
const PROFILE_DIR = process.env.BENCH_PROFILE;
const PROFILE_SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const ONLY = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const SINGLE_CONNECTIONS = Number(process.env.BENCH_SINGLE_CONNECTIONS ?? 32);
const TRANSACTION_IDS = process.env.BENCH_TRANSACTION_IDS !== "0";
const WINDOW_MS = 10_000;

requireFreshBuild();

interface Scenario {
  id: string;
  name: string;
  /** records per request; 0: the single-record body */
  size: number;
  connections: number;
}

const SCENARIOS: Scenario[] = [
  { id: "batch1000", name: "batches of 1,000", size: 1000, connections: BATCH_CONNECTIONS },
  { id: "batch100", name: "batches of 100", size: 100, connections: BATCH_CONNECTIONS },
  { id: "single", name: "single records", size: 0, connections: SINGLE_CONNECTIONS },
];

interface Seed {
  key: string;
  line: string;
}

async function seed(url: string): Promise<Seed> {
  await migrateTarget({ kind: "postgres", url });
  const database = await createDatabase({ kind: "postgres", url });
  try {
    const prisma = database.prisma;
    const { key, organization } = await createApiKey(prisma, {
      organizationName: "Bench usage",
      email: "bench@example.cl",
      mode: "test",
    });
    const tenant = { organizationId: organization, testMode: true };
    const customerId = newId("cus");
    await prisma.customer.create({
      data: {
        id: customerId,
        ...tenant,
        name: "Cliente SpA",
        address: "Av. Siempre Viva 123",
        countryId: "CL",
        email: "pagos@cliente.cl",
        taxId: "76042235-5",
      },
    });
    const line = await seedMeteredLine(prisma, tenant, customerId);
    return { key, line };
  } finally {
    await database.close();
  }
}

/** Record bodies with unique transaction ids (`<run>-<n>`), dated over the last 20 days. */
function bodies(line: string, run: string) {
  let n = 0;
  const dates = Array.from({ length: 64 }, (_, i) => new Date(Date.now() - (i + 1) * 7_500_000).toISOString());
  const record = () => {
    n++;
    const tx = TRANSACTION_IDS ? `,"transaction_id":"${run}-${n}"` : "";
    return (
      `{"subscription_line":"${line}","quantity":"${(n % 17) + 0.5}` +
      `","date_time":"${dates[n % dates.length]}"${tx}}`
    );
  };
  return (size: number) => (size === 0 ? record() : `{"usages":[${Array.from({ length: size }, record).join(",")}]}`);
}

interface Run {
  seconds: number;
  events: number;
  requests: number;
  eventsPerSecond: number;
  windows: number[];
  p50: number;
  p99: number;
  errors: number;
}

let runCounter = 0;

/** `seconds` of load on `url`; events are the records of each 201 answer. */
async function load(url: string, s: Seed, sc: Scenario, seconds: number): Promise<Run> {
  const next = bodies(s.line, `${sc.id}-${process.pid}-${++runCounter}`);
  const perRequest = Math.max(sc.size, 1);
  let errors = 0;
  let ok = 0;
  const windows: number[] = [];
  const started = Date.now();
  const instance = autocannon({
    url: `${url}/v1/usages/`,
    connections: sc.connections,
    duration: seconds,
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    requests: [
      {
        method: "POST",
        path: "/v1/usages/",
        setupRequest: (req: autocannon.Request) => ({ ...req, body: next(sc.size) }),
      },
    ],
  }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  instance.on("response", (_client: unknown, status: number) => {
    if (status !== 201) {
      errors++;
      return;
    }
    ok++;
    const w = Math.floor((Date.now() - started) / WINDOW_MS);
    windows[w] = (windows[w] ?? 0) + perRequest;
  });
  const result = await instance;
  const elapsed = (Date.now() - started) / 1000;
  const events = ok * perRequest;
  const full = Math.floor((seconds * 1000) / WINDOW_MS);
  return {
    seconds: elapsed,
    events,
    requests: ok,
    eventsPerSecond: events / elapsed,
    windows: Array.from({ length: full }, (_, i) => (windows[i] ?? 0) / (WINDOW_MS / 1000)),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: errors + result.errors + result.timeouts,
  };
}

/** SQL statements per request of each scenario, the mean of `times` requests after one warm-up. */
async function countStatements(
  url: string,
  s: Seed,
  scenarios: Scenario[],
  times = 5,
): Promise<Map<string, { service: number; baseline: number }>> {
  const proxy = await countingProxy(url);
  const service = await startService(proxy.url);
  const baseline = await startChild(["bench/usage-baseline.mjs"], serviceEnv(proxy.url));
  const counted = new Map<string, { service: number; baseline: number }>();
  try {
    for (const sc of scenarios) {
      const perRequest = async (base: string) => {
        const next = bodies(s.line, `count-${sc.id}-${base.slice(-5)}`);
        const post = async () => {
          const res = await fetch(`${base}/v1/usages/`, {
            method: "POST",
            body: next(sc.size),
            headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
          });
          if (res.status !== 201)
            throw new Error(
              `${sc.name}: status ${res.status} while counting statements: ${(await res.text()).slice(0, 300)}`,
            );
          await res.arrayBuffer().catch(() => undefined);
        };
        await post();
        await new Promise((r) => setTimeout(r, 200));
        const before = proxy.statements();
        for (let i = 0; i < times; i++) await post();
        await new Promise((r) => setTimeout(r, 200));
        return (proxy.statements() - before) / times;
      };
      counted.set(sc.id, { service: await perRequest(service.url), baseline: await perRequest(baseline.url) });
    }
  } finally {
    await service.stop();
    await baseline.stop();
    await proxy.close();
  }
  return counted;
}

/**
 * The rows in "Usage" once writes have settled: autocannon stops at the duration without waiting
 * for the requests in flight, which the server still writes (their answers are not counted).
 */
const rowsIn = async (url: string) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    let last = -1;
    for (;;) {
      const n = Number((await c.query(`SELECT count(*) AS n FROM "Usage"`)).rows[0].n);
      if (n === last) return n;
      last = n;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await c.end();
  }
};

const f0 = (v: number) => v.toFixed(0);

async function main(): Promise<void> {
  const db = await openDatabase("bench_usage");
  const children: Child[] = [];
  try {
    const seedData = await seed(db.url);
    const scenarios = SCENARIOS.filter((sc) => !ONLY || ONLY.includes(sc.id));
    const statements = await countStatements(db.url, seedData, scenarios);
    for (const sc of scenarios)
      console.log(
        `SQL statements per request, ${sc.name}: service ${statements.get(sc.id)!.service}, ` +
          `baseline ${statements.get(sc.id)!.baseline}`,
      );
    const service = await startService(db.url);
    children.push(service);
    const baseline = await startChild(["bench/usage-baseline.mjs"], serviceEnv(db.url));
    children.push(baseline);
    const compare = COMPARE_DIST ? await startChild([`${COMPARE_DIST}/main.js`], serviceEnv(db.url)) : undefined;
    if (compare) children.push(compare);
    // warm-up
    for (const sc of scenarios) for (const c of [service, baseline, compare]) if (c) await load(c.url, seedData, sc, 2);
    // CPU time (user + system, ms) the serving process used per event of the run, from the kernel's accounting
    const measured = async (c: Child, sc: Scenario, seconds: number): Promise<Run & { cpu: number }> => {
      const before = processCpuMs(c.child.pid!);
      const run = await load(c.url, seedData, sc, seconds);
      return { ...run, cpu: (processCpuMs(c.child.pid!) - before) / Math.max(1, run.events) };
    };
    const cpu = (r: { cpu: number }) => `${(r.cpu * 1000).toFixed(0)} µs CPU per event`;
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}); service ${SECONDS} s, ` +
        `baseline ${BASELINE_SECONDS} s per scenario; transaction ids ${TRANSACTION_IDS ? "on" : "off"}`,
    );
    const rows: { sc: Scenario; service: Run; baseline: Run; load: string }[] = [];
    for (const sc of scenarios) {
      const before = await rowsIn(db.url);
      const s = await measured(service, sc, SECONDS);
      const written = (await rowsIn(db.url)) - before;
      const loadService = loadAverage();
      const c = compare ? await measured(compare, sc, SECONDS) : undefined;
      const loadCompare = loadAverage();
      const b = await measured(baseline, sc, BASELINE_SECONDS);
      const row = { sc, service: s, baseline: b, load: loadService };
      rows.push(row);
      console.log(`\n${sc.name} (${sc.connections} connections):`);
      console.log(
        `  service: ${f0(s.eventsPerSecond)} events/s overall (${s.events} events in ${s.seconds.toFixed(1)} s), per ` +
          `request p50 ${f0(s.p50)} ms, p99 ${f0(s.p99)} ms; per ${WINDOW_MS / 1000} s ` +
          `window: ${s.windows.map(f0).join(", ")}; ${cpu(s)}; load ${loadService}`,
      );
      // the requests in flight when the load stopped are written but not acknowledged: at most one per connection
      const inFlight = written - s.events;
      const consistent = inFlight >= 0 && inFlight <= sc.connections * Math.max(sc.size, 1);
      console.log(
        `  rows written ${written}, events acknowledged ${s.events} (in flight at the end: ${inFlight}` +
          `)${consistent ? "" : " MISMATCH"}; errors or other statuses ${s.errors}`,
      );
      console.log(
        `  baseline: ${f0(b.eventsPerSecond)} events/s, p50 ${f0(b.p50)} ms, p99 ${f0(b.p99)} ms (errors ${b.errors}` +
          `); ratio ${(s.eventsPerSecond / b.eventsPerSecond).toFixed(3)}; ${cpu(b)}; load ${loadAverage()}`,
      );
      if (c)
        console.log(
          `  ${COMPARE_DIST}: ${f0(c.eventsPerSecond)} events/s, p50 ${f0(c.p50)} ms, p99 ${f0(c.p99)} ms (errors ` +
            `${c.errors}); ratio to the baseline ${(c.eventsPerSecond / b.eventsPerSecond).toFixed(3)}; ${cpu(c)}; ` +
            `load ${loadCompare}`,
        );
    }
    console.log(
      "\n| scenario | connections | service events/s | slowest / fastest 10 s window | p50 / p99 per request | " +
        "baseline events/s | ratio | SQL statements per request (service / baseline) | load average (1, 5, 15 min) |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const r of rows) {
      const w = r.service.windows.length
        ? `${f0(Math.min(...r.service.windows))} / ${f0(Math.max(...r.service.windows))}`
        : "-";
      const st = statements.get(r.sc.id)!;
      console.log(
        `| ${r.sc.name} | ${r.sc.connections} | ${f0(r.service.eventsPerSecond)} | ${w} | ${f0(r.service.p50)} ms ` +
          `/ ${f0(r.service.p99)} ms | ${f0(r.baseline.eventsPerSecond)} ` +
          `| ${(r.service.eventsPerSecond / r.baseline.eventsPerSecond).toFixed(3)} | ${st.service} / ${st.baseline} ` +
          `| ${r.load} |`,
      );
    }
    if (PROFILE_DIR) {
      for (const c of children) await c.stop();
      children.length = 0;
      for (const sc of scenarios) {
        const { files, sinceUs, run } = await profiledLoad(
          db.url,
          PROFILE_DIR,
          (url) => load(url, seedData, sc, 2),
          (url) => load(url, seedData, sc, PROFILE_SECONDS),
        );
        console.log(
          `\nprofile, ${sc.name} (${f0(run.eventsPerSecond)} events/s while profiled): npx tsx ` +
            `bench/profile-summary.ts ${files.join(" ")} --since-us ${sinceUs} --requests ${run.requests}`,
        );
      }
    }
  } finally {
    for (const c of children) await c.stop().catch(() => undefined);
    await db.drop();
  }
}

await main();
