/**
 * `npm run bench:abuse` (docs/limits.md "Benchmark"): does one client's worst accepted GraphQL
 * query stall everyone else? The service runs in a child process (its own event loop, as in
 * production) on a fresh embedded database (or BENCH_DATABASE_URL, a PostgreSQL database it may
 * fill) with the default settings. This process:
 *
 * 1. times the refusals of the abusive queries of issue 15 (500 aliases of Invoice.pdf, 2000 aliases
 *    of node, depth 100): each must be refused with query_too_complex;
 * 2. baseline: ABUSE_HEALTHZ (default 400) sequential GET /healthz, one every 5 ms (at most
 *    ABUSE_PHASE_MS, default 30 s);
 * 3. the same /healthz measurement while ABUSE_CLIENTS (default 2) other clients, in a process of
 *    their own, each send one of the worst accepted queries in a loop (each scenario in turn): two
 *    PDFs of a 40-line invoice (the most PDFs a request may render), and a page of 100 invoices
 *    plus one of 66 with their lines' ids (996 rows, the most within the rows limit of 1,000);
 *
 * and prints p50/p95/p99/max of /healthz for each, the ratio of p99 under abuse to the baseline,
 * the abusive requests' own latency, and the server's largest event-loop delay (perf_hooks) in each
 * phase. Bounded: a fixed number of /healthz requests per phase, the loops stop with them; loopback only.
 */
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const HEALTHZ = Number(process.env.ABUSE_HEALTHZ ?? 400);
const CLIENTS = Number(process.env.ABUSE_CLIENTS ?? 2);
const INVOICES = 100;
/** a phase of /healthz measurement ends after this long even if ABUSE_HEALTHZ requests were not sent */
const PHASE_MS = Number(process.env.ABUSE_PHASE_MS ?? 30_000);
const PDF_LINES = 40;
/**
 * ABUSE_PAGES: pages of 100 invoices (with their lines' ids) per abusive request instead of the most rows accepted (1
 * is accepted, more only with a higher GRAPHQL_LIMITS.maxRows)
 */
const PAGES = Number(process.env.ABUSE_PAGES ?? 0);

type Stats = { maxMs: number; p99Ms: number };
type ToChild = { stats: true };
type ToAbuser = { url?: string; key?: string; query?: string; clients?: number; stop?: true };
type FromAbuser = { times: number[]; statuses: Record<string, number> };
type FromChild = { url: string; key: string; invoice: string } | { stats: Stats };

/** The child: the service with default settings on a seeded database; reports event-loop delay on request. */
async function serve(): Promise<void> {
  const { migrateTarget, createDatabase } = await import("../src/infra/database.js");
  const { createLogger } = await import("../src/infra/logger.js");
  const { newId } = await import("../src/infra/ids.js");
  const { createApiKey } = await import("../src/services/api-keys.js");
  const { createApp, createHttpServer, listen } = await import("../src/server.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-abuse-"));
  const target = process.env.BENCH_DATABASE_URL
    ? ({ kind: "postgres", url: process.env.BENCH_DATABASE_URL } as const)
    : ({ kind: "pglite", dir: path.join(dir, "pglite") } as const);
  const step = (what: string) => process.env.ABUSE_DEBUG && console.error(`server: ${what}`);
  await migrateTarget(target);
  step("migrated");
  const database = await createDatabase(target);
  const { key, organization } = await createApiKey(database.prisma, {
    organizationName: `Abuse ${Date.now()}`,
    email: "bench@example.cl",
    mode: "test",
  });
  const app = createApp({ database, logger: createLogger("silent") });
  const server = createHttpServer(app);
  const url = await listen(server, 0, "127.0.0.1");
  const call = async (method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${url}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${pathname} -> ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const customer = await call("POST", "/v1/customers/", {
    name: "Cliente SpA",
    address: "Av. Siempre Viva 123",
    country: "CL",
    state: "RM",
    tax_id: "76.042.235-5",
    email: "pagos@cliente.cl",
  });
  const lines = Array.from({ length: PDF_LINES }, (_, i) => ({
    name: `Servicio ${i + 1}`,
    description: "Mensualidad del servicio de facturación",
    quantity: 1 + (i % 3),
    amount: 1000 + i * 10,
  }));
  step("customer");
  const invoice = await call("POST", "/v1/invoices/", { customer: customer.id, document: "CL33", lines });
  step("invoice");
  // a page of invoices with five lines each, written directly (the reads are what is measured)
  const rows = Array.from({ length: INVOICES }, () => newId("inv"));
  await database.prisma.invoice.createMany({
    data: rows.map((id) => ({
      id,
      organizationId: organization,
      testMode: true,
      customerId: customer.id,
      documentTypeId: "CL33",
      currencyId: "CLP",
      date: new Date("2026-11-01T00:00:00Z"),
      userEmail: "bench@example.cl",
      amount: "5000",
      tax: "950",
      taxPercent: "19",
      subtotal: "5000",
      total: "5950",
    })),
  });
  await database.prisma.invoiceLine.createMany({
    data: rows.flatMap((invoiceId) =>
      Array.from({ length: 5 }, (_, position) => ({
        id: newId("lin"),
        invoiceId,
        organizationId: organization,
        position,
        name: `Línea ${position + 1}`,
        quantity: "1",
        amount: "1000",
        total: "1000",
      })),
    ),
  });
  step("seeded");
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  process.on("message", (message: ToChild) => {
    if (!message.stats) return;
    process.send!({ stats: { maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 } } satisfies FromChild);
    delay.reset();
  });
  process.on("disconnect", async () => {
    server.close();
    await app.close();
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
  process.send!({ url, key, invoice: invoice.id } satisfies FromChild);
}

function percentiles(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted[sorted.length - 1] };
}

const ms = (v: number) => `${v.toFixed(1).padStart(7)} ms`;

async function main(): Promise<void> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--server"], {
    execArgv: ["--import", "tsx", ...(process.env.ABUSE_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean)],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = () => new Promise<FromChild>((resolve) => child.once("message", (m) => resolve(m as FromChild)));
  const ready = (await next()) as { url: string; key: string; invoice: string };
  const { url, key, invoice } = ready;
  const serverStats = async () => {
    child.send({ stats: true } satisfies ToChild);
    return ((await next()) as { stats: Stats }).stats;
  };
  const graphql = async (query: string) => {
    const res = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] },
    };
  };

  console.log(
    `database: ${process.env.BENCH_DATABASE_URL ? "postgres" : "pglite"}; ${HEALTHZ} /healthz per phase; ${CLIENTS} ` +
      `abusive clients`,
  );
  try {
    // 1. refusals
    const pdfAlias = Array.from(
      { length: 500 },
      (_, i) => `a${i}: node(id: "${invoice}") { ... on Invoice { pdf } }`,
    ).join(" ");
    const nodeAlias = Array.from({ length: 2000 }, (_, i) => `a${i}: node(id: "${invoice}") { id }`).join(" ");
    let nested = "id";
    for (let i = 0; i < 50; i++) nested = `creditNotes { invoice { ${nested} } }`;
    nested = `node(id: "${invoice}") { ... on Invoice { ${nested} } }`;
    const refusals: [string, string][] = [
      ["500 aliases of Invoice.pdf", `{ ${pdfAlias} }`],
      ["2000 aliases of node", `{ ${nodeAlias} }`],
      ["depth over 100", `{ ${nested} }`],
    ];
    for (const [name, query] of refusals) {
      const times: number[] = [];
      let code = "";
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        const res = await graphql(query);
        times.push(performance.now() - started);
        code = res.body.errors
          ? [...new Set(res.body.errors.map((e) => e.extensions?.code))].join(",")
          : `accepted (${res.status})`;
      }
      const p = percentiles(times);
      console.log(`refused: ${name.padEnd(40)} ${code.padEnd(18)} p50 ${ms(p.p50)}  max ${ms(p.max)}`);
    }

    // 2. and 3. /healthz with and without abuse
    const healthz = async () => {
      const times: number[] = [];
      const until = performance.now() + PHASE_MS;
      for (let i = 0; i < HEALTHZ && performance.now() < until; i++) {
        const started = performance.now();
        const res = await fetch(`${url}/healthz`);
        await res.arrayBuffer();
        times.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 5));
      }
      return percentiles(times);
    };
    // the most rows within the limits: a page of 100 invoices with their lines' ids (600 rows, cost 202)
    // and one of 66 (396 rows): 996 rows of the 1,000 allowed (ABUSE_PAGES=n: n pages of 100, for comparison)
    const page = (n: number) => `invoices(first: ${n}) { edges { node { id lines { id } } } }`;
    const scenarios: [string, string][] = [
      [
        "two PDFs of a 40-line invoice",
        `{ a: node(id: "${invoice}") { ... on Invoice { pdf } } b: node(id: "${invoice}") { ... on Invoice { pdf } } }`,
      ],
      PAGES
        ? [
            `${PAGES} pages of 100 invoices with lines`,
            `{ ${Array.from({ length: PAGES }, (_, i) => `p${i}: ${page(100)}`).join(" ")} }`,
          ]
        : ["100 + 66 invoices with their lines (996 rows)", `{ p0: ${page(100)} p1: ${page(66)} }`],
    ];
    for (const [name, query] of scenarios) {
      await serverStats();
      const started = performance.now();
      const probe = query.startsWith("GET ")
        ? await fetch(`${url}${query.slice(4)}`, { headers: { authorization: `Bearer ${key}` } }).then(async (res) => ({
            status: res.status,
            body: (await res.json()) as { errors?: unknown[] },
          }))
        : await graphql(query);
      const took = performance.now() - started;
      if (probe.body.errors || probe.status !== 200)
        throw new Error(`${name} was refused: ${JSON.stringify(probe.body)}`);
      const alone = await serverStats();
      console.log(`one request alone: ${name.padEnd(38)} ${ms(took)}  server event-loop max ${ms(alone.maxMs)}`);
    }
    // a local monitor too: a slow /healthz must be the server's, not this process's
    const local = monitorEventLoopDelay({ resolution: 10 });
    local.enable();
    await serverStats();
    const baseline = await healthz();
    const baselineLoop = await serverStats();
    console.log(
      `\n/healthz baseline:                      p50 ${ms(baseline.p50)}  p95 ${ms(baseline.p95)}  ` +
        `p99 ${ms(baseline.p99)}  max ${ms(baseline.max)}  server event-loop max ${ms(baselineLoop.maxMs)}`,
    );
    for (const [name, query] of scenarios) {
      // the abusive clients run in their own process: parsing their answers must not delay this
      // process's /healthz timings (the server is what is measured)
      const abuser: ChildProcess = fork(fileURLToPath(import.meta.url), ["--abuser"], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      await new Promise((r) => abuser.once("message", r)); // loaded
      abuser.send({ url, key, query, clients: CLIENTS } satisfies ToAbuser);
      await new Promise((r) => setTimeout(r, 300)); // the abuse is under way
      await serverStats();
      const under = await healthz();
      const loop = await serverStats();
      const done = new Promise<FromAbuser>((r) => abuser.once("message", (m) => r(m as FromAbuser)));
      abuser.send({ stop: true } satisfies ToAbuser);
      const { times: abusive, statuses } = await done;
      abuser.disconnect();
      const a = percentiles(abusive);
      console.log(`/healthz under abuse (${name}):`);
      console.log(
        `  /healthz                              p50 ${ms(under.p50)}  p95 ${ms(under.p95)}  p99 ${ms(under.p99)}  ` +
          `max ${ms(under.max)}  p99 ratio ${(under.p99 / baseline.p99).toFixed(2)}  (${under.n} requests)`,
      );
      console.log(
        `  abusive request (${abusive.length} sent, ${Object.entries(statuses)
          .map(([k, v]) => `${k}: ${v}`)
          .join(", ")})  p50 ${ms(a.p50)}  max ${ms(a.max)}`,
      );
      console.log(`  server event loop                     p99 ${ms(loop.p99Ms)}  max ${ms(loop.maxMs)}`);
    }
    console.log(`\nthis process's event-loop max: ${ms(local.max / 1e6)}`);
  } finally {
    child.disconnect();
  }
}

/**
 * The abusive clients: `clients` loops each sending the request until told to stop; then the times and statuses go
 * back.
 */
async function abuse(): Promise<void> {
  process.send!({ loaded: true });
  const { url, key, query, clients } = await new Promise<ToAbuser & { url: string }>((r) =>
    process.once("message", (m) => r(m as ToAbuser & { url: string })),
  );
  let stop = false;
  process.once("message", () => (stop = true));
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: clients! }, async () => {
      while (!stop) {
        const started = performance.now();
        const res = query!.startsWith("GET ")
          ? await fetch(`${url}${query!.slice(4)}`, { headers: { authorization: `Bearer ${key}` } })
          : await fetch(`${url}/graphql`, {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({ query }),
            });
        const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[]; error?: { code?: string } };
        times.push(performance.now() - started);
        const label = body.errors
          ? (body.errors[0].extensions?.code ?? "error")
          : body.error
            ? (body.error.code ?? "error")
            : String(res.status);
        statuses[label] = (statuses[label] ?? 0) + 1;
      }
    }),
  );
  process.send!({ times, statuses } satisfies FromAbuser);
  process.once("disconnect", () => process.exit(0));
}

if (process.argv[2] === "--server") await serve();
else if (process.argv[2] === "--abuser") await abuse();
else await main();
