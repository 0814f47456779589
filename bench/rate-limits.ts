/**
 * `npm run bench:rate-limits` (docs/limits.md "Where the counts live"): what counting the rate limits in
 * PostgreSQL costs a request. Needs a current build (`npm run build`).
 *
 * On a fresh PostgreSQL database (or BENCH_DATABASE_URL) with one draft invoice of 3 lines, three services run as
 * child processes (`node dist/main.js`, logs silent, workers off), each with its own key (so no bucket is shared):
 * - `off`: no rate limits (RATE_LIMIT_REQUESTS=0, AUTH_FAILURE_LIMIT=0), as bench/http.ts measures;
 * - `memory`: RATE_LIMIT_STORE=memory, limits on but never reached (RATE_LIMIT_REQUESTS=1000000);
 * - `database`: RATE_LIMIT_STORE=database (the default), the same limits, counted in the RateLimit table.
 * Each loads GET /v1/invoices/{id}/ with autocannon at 1 and at 32 connections, interleaved (off, memory, database,
 * off, ...), BENCH_RUNS runs (default 3) of BENCH_SECONDS (default 5) each, and the medians are printed: req/s, p50,
 * p99, each store's req/s over `off`'s, and the service's CPU per request (from /proc). Then one more load on
 * `database` with a key past its limit (every request refused), through a proxy counting the SQL statements it sends:
 * the refusals' req/s and their statements (none once the process has seen the bucket empty:
 * `inMemoryBlockOnConsumed`).
 */
import os from "node:os";
import autocannon from "autocannon";
import {
  countingProxy,
  openDatabase,
  processCpuMs,
  requireFreshBuild,
  serviceEnv,
  startChild,
  type Child,
} from "./harness.js";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { createApiKey } from "../src/services/api-keys.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

requireFreshBuild();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Side {
  name: "off" | "memory" | "database";
  child: Child;
  key: string;
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpu: number;
  non2xx: number;
}

async function load(side: Side, path: string, connections: number, seconds = SECONDS): Promise<Run> {
  const pid = side.child.child.pid!;
  const cpuBefore = processCpuMs(pid);
  const result = await autocannon({
    url: `${side.child.url}${path}`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${side.key}` },
  });
  const cpu = processCpuMs(pid) - cpuBefore;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpu: cpu / Math.max(1, result.requests.total),
    non2xx: result.non2xx,
  };
}

async function main() {
  const { url, drop } = await openDatabase("bench_rate_limits");
  const children: Child[] = [];
  try {
    await migrateTarget({ kind: "postgres", url });
    const database = await createDatabase({ kind: "postgres", url });
    const keys: string[] = [];
    try {
      for (const email of ["off@bench.cl", "memory@bench.cl", "database@bench.cl", "refused@bench.cl"])
        keys.push((await createApiKey(database.prisma, { organizationName: "Bench limits", email, mode: "test" })).key);
    } finally {
      await database.close();
    }
    const limits = { RATE_LIMIT_REQUESTS: "1000000", RATE_LIMIT_WINDOW_SECONDS: "1", RATE_LIMIT_BURST: "0" };
    const off = await startChild(["dist/main.js"], serviceEnv(url));
    const memory = await startChild(["dist/main.js"], {
      ...serviceEnv(url),
      ...limits,
      AUTH_FAILURE_LIMIT: "20",
      RATE_LIMIT_STORE: "memory",
    });
    const shared = await startChild(["dist/main.js"], {
      ...serviceEnv(url),
      ...limits,
      AUTH_FAILURE_LIMIT: "20",
      RATE_LIMIT_STORE: "database",
    });
    children.push(off, memory, shared);
    const sides: Side[] = [
      { name: "off", child: off, key: keys[0] },
      { name: "memory", child: memory, key: keys[1] },
      { name: "database", child: shared, key: keys[2] },
    ];
    // one invoice to read, written through the API
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${off.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string };
    };
    const customer = await post("/v1/customers/", {
      name: "Cliente Bench SpA",
      country: "CL",
      state: "RM",
      tax_id: "76.042.235-5",
      address: "Av. Siempre Viva 123",
      email: "pagos@cliente.cl",
    });
    const invoice = await post("/v1/invoices/", {
      customer: customer.id,
      lines: [
        { name: "a", amount: 100 },
        { name: "b", amount: 200 },
        { name: "c", amount: 300 },
      ],
    });
    const path = `/v1/invoices/${invoice.id}/`;
    for (const side of sides) await load(side, path, 4, 1); // warm up
    const started = os.loadavg();
    for (const connections of [1, 32]) {
      const runs = new Map<string, Run[]>(sides.map((s) => [s.name, []]));
      for (let r = 0; r < RUNS; r++)
        for (const side of sides) runs.get(side.name)!.push(await load(side, path, connections));
      const offRps = median(runs.get("off")!.map((x) => x.rps));
      console.log(`GET ${path.replace(invoice.id, "{id}")}, ${connections} connection(s), medians of ${RUNS} runs:`);
      for (const side of sides) {
        const rs = runs.get(side.name)!;
        const rps = median(rs.map((x) => x.rps));
        console.log(
          `  ${side.name.padEnd(8)} ${rps.toFixed(0).padStart(6)} req/s  p50 ${median(rs.map((x) => x.p50))} ms  ` +
            `p99 ${median(rs.map((x) => x.p99))} ms  ratio to off ${(rps / offRps).toFixed(3)}  ` +
            `CPU ${median(rs.map((x) => x.cpu)).toFixed(2)} ms/request  ` +
            `non-2xx ${rs.reduce((n, x) => n + x.non2xx, 0)}`,
        );
      }
    }
    // refusals: a key with a bucket of 1 per hour, past it, on a service whose statements a proxy counts
    const proxy = await countingProxy(url);
    const refusing = await startChild(["dist/main.js"], {
      ...serviceEnv(proxy.url),
      RATE_LIMIT_REQUESTS: "1",
      RATE_LIMIT_WINDOW_SECONDS: "3600",
      RATE_LIMIT_BURST: "0",
      RATE_LIMIT_STORE: "database",
    });
    children.push(refusing);
    try {
      const refusedSide: Side = { name: "database", child: refusing, key: keys[3] };
      await load(refusedSide, path, 1, 1);
      const before = proxy.statements();
      const refused = await load(refusedSide, path, 32);
      const total = Math.round(refused.rps * SECONDS);
      console.log(
        `refusals (429) on database, 32 connections: ${refused.rps.toFixed(0)} req/s, p50 ${refused.p50} ms, ` +
          `${refused.non2xx} of about ${total} refused, SQL statements sent meanwhile: ${proxy.statements() - before}`,
      );
    } finally {
      await refusing.stop();
      await proxy.close();
    }
    const ended = os.loadavg();
    console.log(
      `load average: ${started.map((x) => x.toFixed(2)).join(", ")} -> ${ended.map((x) => x.toFixed(2)).join(", ")}`,
    );
  } finally {
    for (const c of children) await c.stop();
    await drop();
  }
}

await main();
