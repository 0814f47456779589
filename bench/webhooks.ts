/**
 * `npm run bench:webhooks` (docs/performance.md "Webhook delivery"): the webhook worker
 * (src/services/webhook-delivery.ts) of the service (`node dist/main.js`, a child process, on a fresh PostgreSQL
 * database `bench_webhooks_<pid>` dropped at the end, or BENCH_DATABASE_URL) delivering to a local receiver
 * (bench/webhook-receiver.mjs, a child process: `node:http` with keep-alive, one port per endpoint, every signature
 * verified with the `standardwebhooks` package). Needs a current build (`npm run build`).
 *
 * 1. **Throughput** (`throughput`): the receiver holds its answers (each message is received and verified, its
 *    answer waits) while BENCH_MESSAGES messages (default 10,000) are made: the worker sends its first 16 per endpoint
 *    and waits, the rest stay due in the database. Then the receiver answers, and the bench times the delivery of the
 *    backlog, from the release to the last new message answered 2xx, then waits for every outcome to be recorded.
 *    Once with 1 endpoint, once with 20 (two organizations of 10; one organization has at most 16 in one mode;
 *    BENCH_ENDPOINTS=1,20 sets the counts). The messages are `customer.created` events: one customer created over
 *    REST per organization, then the rest inserted with SQL in the shape services/events.ts writes them (that
 *    customer's event data, one message per endpoint, a NOTIFY per 1,000 events); BENCH_GENERATE=rest creates them
 *    all over REST (16 requests at a time; about 110 a second on the 2-core machine). Every message is counted by
 *    endpoint and `webhook-id` against the WebhookMessage rows: none lost, none answered 2xx twice.
 * 2. **Latency** (`latency`): BENCH_LATENCY_SAMPLES customers (default 200) created over REST one every
 *    BENCH_LATENCY_INTERVAL_MS (default 100), one endpoint. For each, the time to the message's arrival at the
 *    receiver from the commit (when the bench's own LISTEN got the event's notification, which PostgreSQL sends on
 *    commit), from the 201 answer and from the request's start (an upper bound of the commit).
 * 3. **Writes beside deliveries** (`invoices`): `POST /v1/invoices/` (3 lines) with autocannon at
 *    BENCH_INVOICE_CONNECTIONS (default 8) in alternating rounds of BENCH_ROUND_SECONDS (default 8): A with the
 *    organization's 3 `invoice.created` endpoints disabled (no messages written), B with them enabled, BENCH_ROUNDS
 *    pairs (default 3), A/B/A/B after one short warm-up round of each. Between rounds the backlog is left to drain
 *    (not timed). Ratio: B's req/s over A's, overall and per pair.
 * 4. **Memory** (`memory`): two new service processes, each with WEBHOOK_RETRY_SCHEDULE of twenty `1s` steps, 10
 *    endpoints and a warm-up of 5,000 messages delivered, after which its RSS with nothing pending (VmRSS) is taken
 *    and VmHWM reset (/proc/<pid>/clear_refs). Then BENCH_MEMORY_MESSAGES messages (default 100,000, inserted with
 *    SQL as in part 1). `control`: inserted 1,000 at a time as they are delivered (at most about 2,000 pending).
 *    `backlog`: all inserted while the receiver is down (BENCH_DOWN: `503`, the default, answers every message 503
 *    without Retry-After; `refused` closes its ports) for BENCH_DOWN_SECONDS (default 10), then delivered when it is
 *    back. The peak RSS (VmRSS sampled every 100 ms, and VmHWM) of each, from the warm-up's end to the last message.
 *
 * The service of parts 1-3 runs with WEBHOOK_TIMEOUT_SECONDS=120 (held answers must not time out while the backlog
 * is made); every service has a CERTIFICATE_ENCRYPTION_KEY (endpoint secrets are sealed). Its stderr is copied
 * without request-filtering-agent's warnings, which are counted (one per new connection to a test-mode endpoint:
 * infra/webhook-http.ts LINK_LOCAL). BENCH_ONLY=throughput,latency,invoices,memory runs a subset;
 * BENCH_DIST=<dir> runs another build copied under the repository root (e.g. `dist-before`); BENCH_PROFILE=<dir>
 * runs each service under `node --cpu-prof` (written when it stops; the bench prints when each measurement began,
 * for bench/profile-summary.ts --since-us); BENCH_NODE_ARGS adds node flags (e.g. `--trace-gc`) and BENCH_LOG_LEVEL
 * shows the service's logs. Ends with a summary table (figure, this run, target, met); figures go to stdout only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import pg from "pg";
import {
  backendsCpuMs,
  countingProxy,
  cpuDelta,
  loadAverage,
  openDatabase,
  processCpuMs,
  requireFreshBuild,
  serviceEnv,
  startChild,
  type Child,
} from "./harness.js";
import { root } from "../scripts/build-state.mjs";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";
import { EVENTS_CHANNEL, WEBHOOKS_CHANNEL } from "../src/services/events.js";

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const MANY_ENDPOINTS = 20;
/** the endpoint counts of part 1 (BENCH_ENDPOINTS, default `1,20`; at most 20) */
const ENDPOINT_COUNTS = (process.env.BENCH_ENDPOINTS ?? `1,${MANY_ENDPOINTS}`)
  .split(",")
  .map((n) => Math.min(MANY_ENDPOINTS, Number(n)));
/** how part 1 makes its messages: `sql` (default: as services/events.ts writes them) or `rest` (customers) */
const GENERATE = process.env.BENCH_GENERATE === "rest" ? "rest" : "sql";
const GENERATE_CONCURRENCY = 16;
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 200);
const LATENCY_INTERVAL_MS = Number(process.env.BENCH_LATENCY_INTERVAL_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 8);
const INVOICE_CONNECTIONS = Number(process.env.BENCH_INVOICE_CONNECTIONS ?? 8);
const MEMORY_MESSAGES = Number(process.env.BENCH_MEMORY_MESSAGES ?? 100_000);
const MEMORY_ENDPOINTS = 10;
const MEMORY_WARM_UP_MESSAGES = 5_000;
const DOWN_SECONDS = Number(process.env.BENCH_DOWN_SECONDS ?? 10);
/** how the receiver is down in the memory part: answering 503 (default) or refusing connections (`refused`) */
const DOWN_MODE = process.env.BENCH_DOWN === "refused" ? "refused" : "503";
const PROFILE_DIR = process.env.BENCH_PROFILE;
/** the build the service runs from: `dist`, or another copied under the repository root (e.g. `dist-before`) */
const DIST = process.env.BENCH_DIST ?? "dist";
const ONLY = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const runs = (part: string) => !ONLY || ONLY.includes(part);

/** The retry schedule of the memory part: twenty retries a second apart (a message is not failed while measured). */
const FAST_RETRIES = Array.from({ length: 20 }, () => "1s").join(",");
/** Targets of the issue. */
const TARGET_RATE = 1_000;
const TARGET_P99_MS = 500;
const TARGET_WRITE_RATIO = 0.9;
const TARGET_RSS_RATIO = 1.2;

requireFreshBuild();

/** The bench's clock, as the receiver's: ms since the epoch with fractions. */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const f0 = (v: number) => Math.round(v).toLocaleString("en-US");
const f1 = (v: number) => v.toFixed(1);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

// ---------------------------------------------------------------------------------------------------------------
// the receiver child

interface ReceiverStats {
  received: number;
  unique: number;
  duplicates: number;
  invalid: number;
  held: number;
  firstAt: number;
  lastAt: number;
  releasedAt: number;
}

/** bench/webhook-receiver.mjs in a child process, driven over IPC (its commands are described there). */
class Receiver {
  private seq = 0;
  private readonly waiting = new Map<number, (reply: Record<string, unknown>) => void>();
  ports: number[] = [];

  /** the receiver's process id (its CPU time is read from /proc) */
  get pid(): number {
    return this.child.pid!;
  }

  private constructor(private readonly child: ChildProcess) {
    child.on("message", (m: { seq?: number }) => {
      if (m.seq === undefined) return;
      this.waiting.get(m.seq)?.(m as Record<string, unknown>);
      this.waiting.delete(m.seq);
    });
  }

  /** Starts the receiver with `ports` listening ports. */
  static async start(ports: number): Promise<Receiver> {
    const child = spawn(process.execPath, [path.join(root, "bench/webhook-receiver.mjs")], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`the receiver exited ${code}`)));
    });
    const receiver = new Receiver(child);
    receiver.ports = (await receiver.call<{ ports: number[] }>("listen", { count: ports })).ports;
    return receiver;
  }

  call<R = Record<string, never>>(cmd: string, args: Record<string, unknown> = {}): Promise<R> {
    const seq = ++this.seq;
    return new Promise<R>((resolve, reject) => {
      this.waiting.set(seq, (reply) => (reply.error ? reject(new Error(String(reply.error))) : resolve(reply as R)));
      this.child.send({ seq, cmd, ...args });
    });
  }

  stats = () => this.call<ReceiverStats>("stats");

  /** The URL of endpoint slot `i` (its own port) with path `/hooks/<label>`. */
  url = (i: number, label: string) => `http://127.0.0.1:${this.ports[i % this.ports.length]}/hooks/${label}`;

  stop(): void {
    this.child.kill("SIGTERM");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the service and its REST API

interface Organization {
  id: string;
  key: string;
}

interface Endpoint {
  id: string;
  organization: Organization;
  /** the receiver's key prefix: the URL path */
  path: string;
}

/** The bench's REST calls; throws on an unexpected status. */
async function rest<T = Record<string, unknown>>(
  base: string,
  key: string,
  method: string,
  pathname: string,
  body?: unknown,
  expected = [200, 201, 204],
): Promise<T> {
  const res = await fetch(`${base}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!expected.includes(res.status)) throw new Error(`${method} ${pathname}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as T;
}

/** Creates an endpoint of `organization` to the receiver's slot `slot` and gives the receiver its secret. */
async function createEndpoint(
  base: string,
  receiver: Receiver,
  organization: Organization,
  slot: number,
  label: string,
  events: string[],
): Promise<Endpoint> {
  const url = receiver.url(slot, label);
  const created = await rest<{ id: string; secret: string }>(base, organization.key, "POST", "/v1/webhook_endpoints/", {
    url,
    enabled_events: events,
  });
  const pathname = new URL(url).pathname;
  await receiver.call("secret", { path: pathname, secret: created.secret });
  return { id: created.id, organization, path: pathname };
}

const deleteEndpoints = (base: string, endpoints: Endpoint[]) =>
  Promise.all(endpoints.map((e) => rest(base, e.organization.key, "DELETE", `/v1/webhook_endpoints/${e.id}/`)));

let customerSeq = 0;
const customerBody = () => ({
  name: `Cliente ${++customerSeq} SpA`,
  address: "Av. Siempre Viva 123",
  country: "CL",
  state: "RM",
  tax_id: "76.042.235-5",
  email: `pagos${customerSeq}@cliente.cl`,
  metadata: { seq: customerSeq },
});

/** Creates `count` customers of `organization` over REST, `concurrency` requests at a time; returns their ids. */
async function createCustomers(base: string, organization: Organization, count: number, concurrency: number) {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const created = await rest<{ id: string }>(base, organization.key, "POST", "/v1/customers/", customerBody());
        ids.push(created.id);
      }
    }),
  );
  return ids;
}

/**
 * Warnings of request-filtering-agent on the service's stderr: one per new connection of a test-mode endpoint (its
 * IPv6 link-local CIDR does not parse against an IPv4 address; infra/webhook-http.ts LINK_LOCAL). Counted and not
 * printed (each is a stack trace of 20 lines).
 */
let filterWarnings = 0;

/** A service's stderr to the bench's, without request-filtering-agent's CIDR warnings (counted). */
function filteredStderr(): (text: string) => void {
  let rest = "";
  let skipping = false;
  return (text) => {
    const lines = (rest + text).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      if (line.includes("[request-filtering-agent] Invalid CIDR")) {
        filterWarnings++;
        skipping = true;
      } else if (skipping) {
        if (line === "}") skipping = false;
      } else process.stderr.write(`${line}\n`);
    }
  };
}

/**
 * The service on `url` with the bench's settings (and `extra`), under `--cpu-prof` with BENCH_PROFILE, with
 * BENCH_NODE_ARGS (e.g. `--trace-gc`) and its logs on the bench's stdout at BENCH_LOG_LEVEL (default none).
 */
async function startBenchService(url: string, encryptionKey: string, extra: NodeJS.ProcessEnv = {}): Promise<Child> {
  const nodeArgs = PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(PROFILE_DIR)] : [];
  if (PROFILE_DIR) fs.mkdirSync(PROFILE_DIR, { recursive: true });
  if (process.env.BENCH_NODE_ARGS) nodeArgs.push(...process.env.BENCH_NODE_ARGS.split(" ").filter(Boolean));
  const start = () =>
    startChild(
      [...nodeArgs, `${DIST}/main.js`],
      {
        ...serviceEnv(url),
        CERTIFICATE_ENCRYPTION_KEY: encryptionKey,
        ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
        ...extra,
      },
      {
        stdout: process.env.BENCH_LOG_LEVEL || process.env.BENCH_NODE_ARGS ? "inherit" : "ignore",
        stderr: filteredStderr(),
      },
    );
  // the harness's port may be taken (by another process on this shared machine, or an ephemeral port of the
  // receiver's): the service exits at start (its log line says so); the next port is tried
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (attempt === 3 || !/exited/.test(String(e))) throw e;
      console.error(`the service did not start (${(e as Error).message}); trying the next port`);
    }
  }
}

/** Notes, under BENCH_PROFILE, when a measurement began (bench/profile-summary.ts --since-us). */
function profileMark(what: string): void {
  if (PROFILE_DIR) console.log(`  (profile: ${what} began at --since-us ${process.hrtime.bigint() / 1000n})`);
}

/** A process's resident set now and its peak (kB), from /proc/<pid>/status. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** Waits until `done()` holds, polling every `everyMs`; throws when nothing progresses for `stallMs`. */
async function waitFor(
  what: string,
  progress: () => Promise<number>,
  done: (n: number) => boolean,
  everyMs = 100,
  stallMs = 60_000,
): Promise<void> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const n = await progress();
    if (done(n)) return;
    if (n !== last) {
      last = n;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) throw new Error(`${what}: stuck at ${n} for ${stallMs / 1000} s`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the parts

interface Summary {
  figure: string;
  value: string;
  target: string;
  met: boolean | null;
}
const summary: Summary[] = [];

/** Endpoint and webhook-id keys of the messages to `endpoints` (what the receiver must have answered 2xx once). */
async function expectedKeys(db: pg.Client, endpoints: Endpoint[]): Promise<Set<string>> {
  const pathOf = new Map(endpoints.map((e) => [e.id, e.path]));
  const rows = await db.query<{ eventId: string; endpointId: string }>(
    `SELECT "eventId", "endpointId" FROM "WebhookMessage" WHERE "endpointId" = ANY($1::text[])`,
    [endpoints.map((e) => e.id)],
  );
  return new Set(rows.rows.map((r) => `${pathOf.get(r.endpointId)} ${r.eventId}`));
}

/** Messages to `endpoints` still pending (not yet delivered, or their outcome not yet written). */
const pendingOf = async (db: pg.Client, endpoints: Endpoint[]) =>
  Number(
    (
      await db.query(
        `SELECT count(*) AS n FROM "WebhookMessage" WHERE "endpointId" = ANY($1::text[]) AND "status" = 'pending'`,
        [endpoints.map((e) => e.id)],
      )
    ).rows[0].n,
  );

/** The data text of customer `objectId`'s customer.created event. */
const eventData = async (db: pg.Client, objectId: string) =>
  (
    await db.query<{ data: string }>(
      `SELECT "data" FROM "Event" WHERE "objectId" = $1 AND "type" = 'customer.created'`,
      [objectId],
    )
  ).rows[0].data;

/** Compares what the receiver answered 2xx with the messages written: lost and unknown keys. */
async function checkDelivered(db: pg.Client, receiver: Receiver, endpoints: Endpoint[]) {
  const expected = await expectedKeys(db, endpoints);
  const { keys } = await receiver.call<{ keys: string[] }>("keys");
  const got = new Set(keys.filter((k) => endpoints.some((e) => k.startsWith(`${e.path} `))));
  const lost = [...expected].filter((k) => !got.has(k)).length;
  const unknown = [...got].filter((k) => !expected.has(k)).length;
  const statuses = await db.query<{ status: string; n: string; attempts: string }>(
    `SELECT "status", count(*) AS n, sum("attempts") AS attempts FROM "WebhookMessage"
     WHERE "endpointId" = ANY($1::text[]) GROUP BY 1`,
    [endpoints.map((e) => e.id)],
  );
  return { expected: expected.size, lost, unknown, statuses: statuses.rows };
}

/** Part 1: the delivery rate of a backlog of MESSAGES messages to `count` endpoints. */
async function throughput(
  service: Child,
  db: pg.Client,
  receiver: Receiver,
  organizations: Organization[],
  count: number,
): Promise<void> {
  const label = `${count} endpoint${count === 1 ? "" : "s"}`;
  await receiver.call("reset");
  await receiver.call("hold");
  // endpoints split evenly between the organizations needed (at most 16 per organization and mode)
  const perOrganization = Math.min(count, 10);
  const used = organizations.slice(0, Math.ceil(count / perOrganization));
  const endpoints: Endpoint[] = [];
  for (let i = 0; i < count; i++)
    endpoints.push(
      await createEndpoint(service.url, receiver, used[Math.floor(i / perOrganization)], i, `t${count}-${i}`, [
        "customer.created",
      ]),
    );
  const eventsPerOrganization = Math.ceil(MESSAGES / count);
  const made = now();
  if (GENERATE === "rest")
    await Promise.all(
      used.map((o) => createCustomers(service.url, o, eventsPerOrganization, GENERATE_CONCURRENCY / used.length)),
    );
  else
    for (const o of used) {
      // one customer over REST, its event's data the template of the rest
      const [objectId] = await createCustomers(service.url, o, 1, 1);
      const template = await eventData(db, objectId);
      const own = endpoints.filter((e) => e.organization === o);
      await insertMessages(db, o, own, eventsPerOrganization - 1, template, objectId);
    }
  const madeSeconds = (now() - made) / 1000;
  const total = (await expectedKeys(db, endpoints)).size;
  // the worker has sent what it may (16 per endpoint, 256 in all) and waits for the held answers
  await waitFor(
    "held messages",
    async () => (await receiver.stats()).held,
    (n) => n >= Math.min(total, 16 * count, 256),
    50,
    30_000,
  );
  const held = (await receiver.stats()).held;
  const cpuBefore = processCpuMs(service.child.pid!);
  profileMark(`throughput, ${label}`);
  await receiver.call("release");
  await waitFor(
    `delivery to ${label}`,
    async () => (await receiver.stats()).unique,
    (n) => n >= total,
  );
  const stats = await receiver.stats();
  const cpuMs = processCpuMs(service.child.pid!) - cpuBefore;
  const seconds = (stats.lastAt - stats.releasedAt) / 1000;
  const rate = stats.unique / seconds;
  // every outcome written (the worker records them in batches after the answers)
  await waitFor(
    "outcomes recorded",
    () => pendingOf(db, endpoints),
    (n) => n === 0,
    50,
  );
  const recordedSeconds = (now() - stats.releasedAt) / 1000;
  await sleep(500); // late duplicates, if any
  const after = await receiver.stats();
  const check = await checkDelivered(db, receiver, endpoints);
  console.log(
    `\nthroughput, ${label}: ${total} messages (${eventsPerOrganization * used.length} customer.created events made ` +
      `${GENERATE === "rest" ? "over REST" : "with SQL"} in ${f1(madeSeconds)} s while the receiver held ${held} ` +
      `answers), delivered in ${f1(seconds)} s after the release (outcomes recorded after ${f1(recordedSeconds)} s)` +
      `: ${f0(rate)} messages/s; service CPU ${f1(cpuMs / stats.unique)} ms per message; lost ${check.lost}, ` +
      `unknown ${check.unknown}, duplicates ${after.duplicates}, invalid signatures ${after.invalid}; messages ` +
      `${check.statuses.map((s) => `${s.status} ${s.n} (${s.attempts} attempts)`).join(", ")}; load ${loadAverage()}`,
  );
  summary.push({
    figure: `deliveries/s, ${label} (${f0(total)} messages, all verified)`,
    value: f0(rate),
    target: `>= ${f0(TARGET_RATE)}/s`,
    met: rate >= TARGET_RATE,
  });
  summary.push({
    figure: `lost / duplicated (2xx twice) / bad signatures, ${label}`,
    value: `${check.lost + check.unknown} / ${after.duplicates} / ${after.invalid}`,
    target: "0 / 0 / 0",
    met: check.lost + check.unknown + after.duplicates + after.invalid === 0,
  });
  await deleteEndpoints(service.url, endpoints);
}

/**
 * Part 2: commit to first attempt, one customer at a time. The commit's time is when the bench's own LISTEN gets the
 * event's notification (services/events.ts EVENTS_CHANNEL, sent by PostgreSQL at commit, as the worker's wake-up).
 */
async function latency(
  service: Child,
  dbUrl: string,
  db: pg.Client,
  receiver: Receiver,
  organization: Organization,
): Promise<void> {
  await receiver.call("reset");
  const endpoint = await createEndpoint(service.url, receiver, organization, 0, "latency", ["customer.created"]);
  await createCustomers(service.url, organization, 20, 1); // warm-up
  const listener = new pg.Client({ connectionString: dbUrl });
  await listener.connect();
  const committed = new Map<string, number>();
  listener.on("notification", (n) => {
    const at = now();
    const eventId = n.payload?.split(" ")[2];
    if (eventId) committed.set(eventId, at);
  });
  await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
  await receiver.call("track", { on: true });
  const samples: { customer: string; started: number; answered: number }[] = [];
  profileMark("latency");
  const begin = now();
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    await sleep(Math.max(0, begin + i * LATENCY_INTERVAL_MS - now()));
    const started = now();
    const created = await rest<{ id: string }>(service.url, organization.key, "POST", "/v1/customers/", customerBody());
    samples.push({ customer: created.id, started, answered: now() });
  }
  const eventOf = new Map(
    (
      await db.query<{ id: string; objectId: string }>(
        `SELECT "id", "objectId" FROM "Event" WHERE "objectId" = ANY($1::text[]) AND "type" = 'customer.created'`,
        [samples.map((s) => s.customer)],
      )
    ).rows.map((r) => [r.objectId, r.id]),
  );
  let arrivals = new Map<string, number>();
  await waitFor(
    "latency samples",
    async () => {
      arrivals = new Map((await receiver.call<{ arrivals: [string, number][] }>("arrivals")).arrivals);
      return samples.filter((s) => arrivals.has(eventOf.get(s.customer)!)).length;
    },
    (n) => n >= samples.length,
  );
  await receiver.call("track", { on: false });
  await listener.end();
  const arrival = (s: (typeof samples)[number]) => arrivals.get(eventOf.get(s.customer)!)!;
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const fromCommit = sorted(samples.map((s) => arrival(s) - committed.get(eventOf.get(s.customer)!)!));
  const fromAnswer = sorted(samples.map((s) => arrival(s) - s.answered));
  const fromStart = sorted(samples.map((s) => arrival(s) - s.started));
  const request = sorted(samples.map((s) => s.answered - s.started));
  const line = (xs: number[]) =>
    `p50 ${f1(percentile(xs, 50))} ms, p99 ${f1(percentile(xs, 99))} ms, max ${f1(xs[xs.length - 1])} ms`;
  console.log(
    `\nlatency, ${samples.length} customers ${LATENCY_INTERVAL_MS} ms apart, to the message's arrival: from the ` +
      `commit's notification ${line(fromCommit)}; from the 201 answer ${line(fromAnswer)}; from the request's start ` +
      `${line(fromStart)} (the request itself: ${line(request)}); load ${loadAverage()}`,
  );
  summary.push({
    figure: "commit to first attempt, p50 (from the commit's NOTIFY; from the request's start)",
    value: `${f1(percentile(fromCommit, 50))} ms; ${f1(percentile(fromStart, 50))} ms`,
    target: "-",
    met: null,
  });
  const p99 = percentile(fromCommit, 99);
  summary.push({
    figure: "commit to first attempt, p99 (from the commit's NOTIFY; from the request's start)",
    value: `${f1(p99)} ms; ${f1(percentile(fromStart, 99))} ms`,
    target: `<= ${TARGET_P99_MS} ms`,
    met: p99 <= TARGET_P99_MS,
  });
  await deleteEndpoints(service.url, [endpoint]);
}

interface Round {
  enabled: boolean;
  rate: number;
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
  cpuMs: number;
  /** CPU ms per invoice of the receiver, of the database's backends serving this database, of the bench (autocannon) */
  receiverCpuMs: number;
  databaseCpuMs: number;
  benchCpuMs: number;
  /** SQL statements the service sent per invoice (BENCH_COUNT_STATEMENTS=1), during the round */
  statements: number | null;
  /** messages answered by the end of the round, and written during it (B rounds) */
  delivered: number;
  written: number;
  /** seconds the backlog took to drain after the round */
  drainSeconds: number;
}

/** Part 3: POST /v1/invoices/ with 3 invoice.created endpoints disabled (A) and enabled (B), alternating. */
async function invoices(
  service: Child,
  db: pg.Client,
  receiver: Receiver,
  organization: Organization,
  proxy?: { statements: () => number },
) {
  await receiver.call("reset");
  const customer = (await createCustomers(service.url, organization, 1, 1))[0];
  const endpoints: Endpoint[] = [];
  for (let i = 0; i < 3; i++)
    endpoints.push(await createEndpoint(service.url, receiver, organization, i, `inv-${i}`, ["invoice.created"]));
  const body = JSON.stringify({
    customer,
    lines: [
      { name: "Plan mensual", amount: 1000 },
      { name: "Soporte", amount: 2000, quantity: 2 },
      { name: "Horas extra", amount: 300, quantity: 3 },
    ],
  });
  const setEnabled = (enabled: boolean) =>
    Promise.all(
      endpoints.map((e) =>
        rest(service.url, organization.key, "PATCH", `/v1/webhook_endpoints/${e.id}/`, {
          status: enabled ? "enabled" : "disabled",
        }),
      ),
    );
  const pending = () => pendingOf(db, endpoints);
  const written = async () =>
    Number(
      (
        await db.query(`SELECT count(*) AS n FROM "WebhookMessage" WHERE "endpointId" = ANY($1::text[])`, [
          endpoints.map((e) => e.id),
        ])
      ).rows[0].n,
    );
  const load = async (seconds: number) => {
    let created = 0;
    let errors = 0;
    const started = now();
    const instance = autocannon({
      url: `${service.url}/v1/invoices/`,
      method: "POST",
      connections: INVOICE_CONNECTIONS,
      duration: seconds,
      headers: { authorization: `Bearer ${organization.key}`, "content-type": "application/json" },
      body,
    }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    instance.on("response", (_client: unknown, status: number) => (status === 201 ? created++ : errors++));
    const result = await instance;
    const elapsed = (now() - started) / 1000;
    return { created, elapsed, p50: result.latency.p50, p99: result.latency.p99, errors: errors + result.errors };
  };
  const round = async (enabled: boolean, seconds: number): Promise<Round> => {
    await setEnabled(enabled);
    await waitFor("backlog before the round", pending, (n) => n === 0);
    await sleep(500);
    const writtenBefore = await written();
    const deliveredBefore = (await receiver.stats()).unique;
    const cpuBefore = processCpuMs(service.child.pid!);
    const receiverBefore = processCpuMs(receiver.pid);
    const databaseBefore = await backendsCpuMs(db);
    const benchBefore = process.cpuUsage();
    const statementsBefore = proxy?.statements() ?? 0;
    const r = await load(seconds);
    const cpuMs = processCpuMs(service.child.pid!) - cpuBefore;
    const receiverMs = processCpuMs(receiver.pid) - receiverBefore;
    const databaseMs = cpuDelta(databaseBefore, await backendsCpuMs(db));
    const bench = process.cpuUsage(benchBefore);
    const statements = (proxy?.statements() ?? 0) - statementsBefore;
    const per = (ms: number) => ms / Math.max(1, r.created);
    const delivered = (await receiver.stats()).unique - deliveredBefore;
    const writtenInRound = (await written()) - writtenBefore;
    const drainStart = now();
    await waitFor("backlog after the round", pending, (n) => n === 0);
    return {
      enabled,
      rate: r.created / r.elapsed,
      requests: r.created,
      seconds: r.elapsed,
      p50: r.p50,
      p99: r.p99,
      errors: r.errors,
      cpuMs: per(cpuMs),
      receiverCpuMs: per(receiverMs),
      databaseCpuMs: per(databaseMs),
      benchCpuMs: per((bench.user + bench.system) / 1000),
      statements: proxy ? per(statements) : null,
      delivered,
      written: writtenInRound,
      drainSeconds: (now() - drainStart) / 1000,
    };
  };
  // warm-up, both ways
  await round(false, 3);
  await round(true, 3);
  profileMark("invoices");
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++)
    for (const enabled of [false, true]) rounds.push(await round(enabled, ROUND_SECONDS));
  console.log(`\nPOST /v1/invoices/ (3 lines), ${INVOICE_CONNECTIONS} connections, ${ROUND_SECONDS} s rounds:`);
  for (const r of rounds)
    console.log(
      `  ${r.enabled ? "B, 3 endpoints" : "A, none      "}: ${f0(r.rate)} req/s (${r.requests}), p50 ${r.p50} ms, ` +
        `p99 ${r.p99} ms, CPU ms per invoice: service ${f1(r.cpuMs)}, PostgreSQL ${f1(r.databaseCpuMs)}, receiver ` +
        `${f1(r.receiverCpuMs)}, bench ${f1(r.benchCpuMs)}` +
        (r.statements === null ? "" : `; SQL statements per invoice ${f1(r.statements)}`) +
        `; errors ${r.errors}` +
        (r.enabled
          ? `; messages written ${r.written}, answered during the round ${r.delivered}, rest drained in ` +
            `${f1(r.drainSeconds)} s`
          : ""),
    );
  const rateOf = (rs: Round[]) => rs.reduce((s, r) => s + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0);
  const a = rounds.filter((r) => !r.enabled);
  const b = rounds.filter((r) => r.enabled);
  const ratio = rateOf(b) / rateOf(a);
  // each B round over the A round before it
  const pairs = b.map((r, i) => r.rate / a[i].rate);
  const cpuOf = (rs: Round[], of: (r: Round) => number) =>
    rs.reduce((s, r) => s + of(r) * r.requests, 0) / rs.reduce((s, r) => s + r.requests, 0);
  const cpuLine = (rs: Round[]) =>
    `service ${f1(cpuOf(rs, (r) => r.cpuMs))}, PostgreSQL ${f1(cpuOf(rs, (r) => r.databaseCpuMs))}, receiver ` +
    `${f1(cpuOf(rs, (r) => r.receiverCpuMs))}, bench ${f1(cpuOf(rs, (r) => r.benchCpuMs))}`;
  const check = await checkDelivered(db, receiver, endpoints);
  const dup = (await receiver.stats()).duplicates;
  console.log(
    `  A ${f0(rateOf(a))} req/s, B ${f0(rateOf(b))} req/s: ratio ${ratio.toFixed(3)} (pairs: ` +
      `${pairs.map((x) => x.toFixed(3)).join(", ")}); CPU ms per invoice, A: ${cpuLine(a)}; B: ${cpuLine(b)}; ` +
      `messages ${check.expected}, lost ${check.lost + check.unknown}, duplicates ${dup}; load ${loadAverage()}`,
  );
  summary.push({
    figure: `POST /v1/invoices/ req/s with 3 endpoints / none (${f0(rateOf(b))} / ${f0(rateOf(a))})`,
    value: ratio.toFixed(3),
    target: `>= ${TARGET_WRITE_RATIO}`,
    met: ratio >= TARGET_WRITE_RATIO,
  });
  await deleteEndpoints(service.url, endpoints);
}

/** Inserts `events` customer.created events with one message to each of `endpoints`, as services/events.ts does. */
async function insertMessages(
  db: pg.Client,
  organization: Organization,
  endpoints: Endpoint[],
  events: number,
  data: string,
  objectId: string,
): Promise<void> {
  const BATCH = 1_000;
  for (let done = 0; done < events; done += BATCH) {
    const n = Math.min(BATCH, events - done);
    const ids = Array.from({ length: n }, () => newId("evt"));
    const objects = Array.from({ length: n }, () => newId("cus"));
    await db.query("BEGIN");
    await db.query(
      `INSERT INTO "Event" ("id", "organizationId", "testMode", "type", "objectId", "data")
       SELECT v."id", $1::text, true, 'customer.created', v."objectId", replace($4::text, $5::text, v."objectId")
       FROM unnest($2::text[], $3::text[]) AS v("id", "objectId")`,
      [organization.id, ids, objects, data, objectId],
    );
    await db.query(
      `INSERT INTO "WebhookMessage" ("eventId", "organizationId", "endpointId")
       SELECT e, $3::text, w FROM unnest($1::text[]) AS e CROSS JOIN unnest($2::text[]) AS w`,
      [ids, endpoints.map((e) => e.id), organization.id],
    );
    await db.query(`SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')`);
    await db.query("COMMIT");
  }
}

interface MemoryRun {
  /** VmRSS with nothing pending after the warm-up (kB, the median of 10 samples over a second) */
  idle: number;
  /** the highest VmRSS sampled every 100 ms (and VmHWM, reset after the warm-up) from the warm-up's end on (kB) */
  peak: number;
  /** the peak while the receiver was down (kB; the backlog run) */
  peakDown: number;
  /** VmRSS at the end (kB) */
  end: number;
  /** attempts that failed while the receiver was down */
  failedAttempts: number;
  /** seconds from the first new message (control) or from the receiver's return (backlog) to the last delivered */
  seconds: number;
  /** service CPU (ms) per message over that time */
  cpuMs: number;
  /** the most messages pending at once while measured */
  maxPending: number;
  insertSeconds: number;
  /** messages inserted after the warm-up */
  messages: number;
}

/**
 * One service process of the memory part: a warm-up of MEMORY_WARM_UP_MESSAGES, its RSS with nothing pending, then
 * `messages` messages: `backlog` inserts them all while the receiver is down (503 or connection refused,
 * BENCH_DOWN) and brings it back after BENCH_DOWN_SECONDS; `control` inserts them 1,000 at a time as fast as they
 * are delivered (at most about 2,000 pending). Its peak RSS throughout.
 */
async function memoryRun(
  kind: "control" | "backlog",
  messages: number,
  dbUrl: string,
  db: pg.Client,
  receiver: Receiver,
  organization: Organization,
  encryptionKey: string,
  setup: { endpoints: Endpoint[]; template: string; objectId: string } | null,
): Promise<{ run: MemoryRun; endpoints: Endpoint[]; template: string; objectId: string }> {
  const service = await startBenchService(dbUrl, encryptionKey, { WEBHOOK_RETRY_SCHEDULE: FAST_RETRIES });
  try {
    const pid = service.child.pid!;
    const endpoints = setup?.endpoints ?? [];
    let template = setup?.template ?? "";
    let objectId = setup?.objectId ?? "";
    if (!setup) {
      for (let i = 0; i < MEMORY_ENDPOINTS; i++)
        endpoints.push(await createEndpoint(service.url, receiver, organization, i, `mem-${i}`, ["customer.created"]));
      // a real event's data: the template of the inserted ones
      [objectId] = await createCustomers(service.url, organization, 1, 1);
      template = await eventData(db, objectId);
      await waitFor(
        "the first messages",
        async () => (await receiver.stats()).unique,
        (n) => n >= MEMORY_ENDPOINTS,
      );
    }
    // messages answered 2xx since this run began (the receiver keeps those of the run before, for the final check)
    const base = (await receiver.stats()).unique;
    const delivered = async () => (await receiver.stats()).unique - base;
    // warm-up: messages delivered with the receiver up, then the RSS with nothing pending
    await insertMessages(db, organization, endpoints, MEMORY_WARM_UP_MESSAGES / MEMORY_ENDPOINTS, template, objectId);
    await waitFor("warm-up", delivered, (n) => n >= MEMORY_WARM_UP_MESSAGES);
    await sleep(2_000);
    const idleSamples: number[] = [];
    for (let i = 0; i < 10; i++) {
      idleSamples.push(memoryOf(pid).rss);
      await sleep(100);
    }
    const idle = idleSamples.sort((a, b) => a - b)[idleSamples.length >> 1];
    let hwmReset = true;
    try {
      fs.writeFileSync(`/proc/${pid}/clear_refs`, "5"); // VmHWM starts again from the current RSS
    } catch {
      hwmReset = false;
    }
    let peak = memoryOf(pid).rss;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, memoryOf(pid).rss);
      } catch {
        // the process ended
      }
    }, 100);
    const events = Math.ceil(messages / MEMORY_ENDPOINTS);
    const total = MEMORY_WARM_UP_MESSAGES + events * MEMORY_ENDPOINTS;
    let maxPending = 0;
    let peakDown = 0;
    let failedAttempts = 0;
    let insertSeconds = 0;
    let from: number;
    let cpuBefore: number;
    profileMark(`memory, ${kind}`);
    if (kind === "control") {
      from = now();
      cpuBefore = processCpuMs(pid);
      const BATCH_EVENTS = 1_000 / MEMORY_ENDPOINTS;
      for (let inserted = 0; inserted < events; inserted += BATCH_EVENTS) {
        const sent = MEMORY_WARM_UP_MESSAGES + inserted * MEMORY_ENDPOINTS;
        // the next 1,000 once at most 1,000 of those before are pending
        await waitFor("control delivery", delivered, (n) => n >= sent - 1_000, 10);
        maxPending = Math.max(maxPending, sent - (await delivered()) + 1_000);
        const t = now();
        await insertMessages(
          db,
          organization,
          endpoints,
          Math.min(BATCH_EVENTS, events - inserted),
          template,
          objectId,
        );
        insertSeconds += (now() - t) / 1000;
      }
    } else {
      const attempts = async () => Number((await db.query(`SELECT count(*) AS n FROM "WebhookAttempt"`)).rows[0].n);
      if (DOWN_MODE === "refused") await receiver.call("close");
      else await receiver.call("unavailable", { on: true });
      const attemptsBefore = await attempts();
      const t = now();
      await insertMessages(db, organization, endpoints, events, template, objectId);
      insertSeconds = (now() - t) / 1000;
      maxPending = events * MEMORY_ENDPOINTS;
      await sleep(DOWN_SECONDS * 1000);
      failedAttempts = (await attempts()) - attemptsBefore;
      peakDown = peak;
      if (DOWN_MODE === "refused") await receiver.call("listen", { count: MEMORY_ENDPOINTS });
      else await receiver.call("unavailable", { on: false });
      from = now();
      cpuBefore = processCpuMs(pid);
    }
    await waitFor("delivery of every message", delivered, (n) => n >= total, 200);
    const stats = await receiver.stats();
    const cpuMs = processCpuMs(pid) - cpuBefore;
    clearInterval(sampler);
    const end = memoryOf(pid);
    if (hwmReset) peak = Math.max(peak, end.hwm);
    return {
      run: {
        idle,
        peak,
        peakDown,
        end: end.rss,
        failedAttempts,
        seconds: (stats.lastAt - from) / 1000,
        cpuMs: cpuMs / (events * MEMORY_ENDPOINTS),
        messages: events * MEMORY_ENDPOINTS,
        maxPending,
        insertSeconds,
      },
      endpoints,
      template,
      objectId,
    };
  } finally {
    await service.stop();
  }
}

/**
 * Part 4: the service's RSS with MEMORY_MESSAGES undelivered messages, then delivered (`backlog`), beside its RSS
 * with none (after the warm-up) and beside a second process that delivers as many with none waiting (`control`).
 */
async function memory(
  dbUrl: string,
  db: pg.Client,
  receiver: Receiver,
  organization: Organization,
  encryptionKey: string,
): Promise<void> {
  await receiver.call("reset");
  const backlog = await memoryRun("backlog", MEMORY_MESSAGES, dbUrl, db, receiver, organization, encryptionKey, null);
  // the control makes as many attempts, all delivered: the backlog's messages and its failed attempts
  const attempts = backlog.run.messages + backlog.run.failedAttempts;
  const control = await memoryRun("control", attempts, dbUrl, db, receiver, organization, encryptionKey, backlog);
  const stats = await receiver.stats();
  const check = await checkDelivered(db, receiver, backlog.endpoints);
  const messages = backlog.run.messages;
  const mb = (kb: number) => `${f0(kb / 1024)} MB`;
  const describe = (r: MemoryRun) =>
    `RSS with nothing pending ${mb(r.idle)}, peak ${mb(r.peak)}${r.peakDown ? ` (${mb(r.peakDown)} while down)` : ""}` +
    `, at the end ${mb(r.end)}; delivered in ${f1(r.seconds)} s (${f0(r.messages / r.seconds)} messages/s, service ` +
    `CPU ${f1(r.cpuMs)} ms per message)`;
  const c = control.run;
  const b = backlog.run;
  const down = DOWN_MODE === "refused" ? "connection refused" : "503";
  const statuses = check.statuses.map((s) => `${s.status} ${s.n} (${s.attempts} attempts)`).join(", ");
  console.log(
    `\nmemory, ${f0(messages)} messages to ${MEMORY_ENDPOINTS} endpoints (inserted with SQL, after a warm-up of ` +
      `${f0(MEMORY_WARM_UP_MESSAGES)}), each in a new service process:` +
      `\n  backlog, all inserted in ${f1(b.insertSeconds)} s while the receiver was down (${down}, ${DOWN_SECONDS} ` +
      `s: ${f0(b.failedAttempts)} attempts failed): ${describe(b)}` +
      `\n  control, ${f0(c.messages)} messages (as many attempts), at most ${f0(c.maxPending)} pending: ` +
      describe(c) +
      `\n  peak of the backlog run / its RSS with nothing pending ${(b.peak / b.idle).toFixed(3)}; / the control's ` +
      `peak ` +
      `${(b.peak / c.peak).toFixed(3)}; lost ${check.lost + check.unknown}, duplicates ${stats.duplicates}` +
      `, invalid ${stats.invalid}; messages ${statuses}; load ${loadAverage()}`,
  );
  summary.push({
    figure:
      `peak RSS with ${f0(messages)} undelivered then delivered / RSS with none pending, same process ` +
      `(${mb(b.peak)} / ${mb(b.idle)})`,
    value: (b.peak / b.idle).toFixed(3),
    target: `<= ${TARGET_RSS_RATIO}`,
    met: b.peak / b.idle <= TARGET_RSS_RATIO,
  });
  summary.push({
    figure:
      `the same peak / the peak of as many attempts with none waiting, another process ` +
      `(${mb(b.peak)} / ${mb(c.peak)})`,
    value: (b.peak / c.peak).toFixed(3),
    target: `<= ${TARGET_RSS_RATIO}`,
    met: b.peak / c.peak <= TARGET_RSS_RATIO,
  });
  summary.push({
    figure: `lost / duplicated / bad signatures, memory part`,
    value: `${check.lost + check.unknown} / ${stats.duplicates} / ${stats.invalid}`,
    target: "0 / 0 / 0",
    met: check.lost + check.unknown + stats.duplicates + stats.invalid === 0,
  });
}

// ---------------------------------------------------------------------------------------------------------------

async function seed(url: string): Promise<Organization[]> {
  await migrateTarget({ kind: "postgres", url });
  const database = await createDatabase({ kind: "postgres", url });
  try {
    const organizations: Organization[] = [];
    for (const name of ["Bench webhooks A", "Bench webhooks B"]) {
      const { key, organization } = await createApiKey(database.prisma, {
        organizationName: name,
        email: "bench@example.cl",
        mode: "test",
      });
      organizations.push({ id: organization, key });
    }
    return organizations;
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const database = await openDatabase("bench_webhooks");
  const encryptionKey = randomBytes(32).toString("base64");
  let receiver: Receiver | undefined;
  let service: Child | undefined;
  let proxy: Awaited<ReturnType<typeof countingProxy>> | undefined;
  const db = new pg.Client({ connectionString: database.url });
  try {
    const organizations = await seed(database.url);
    await db.connect();
    receiver = await Receiver.start(MANY_ENDPOINTS);
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}); PostgreSQL ` +
        `${(await db.query("SHOW server_version")).rows[0].server_version}; load ${loadAverage()}`,
    );
    if (runs("throughput") || runs("latency") || runs("invoices")) {
      // held answers must not time out while a backlog is made (part 1)
      // BENCH_COUNT_STATEMENTS=1: through the harness's counting proxy (its forwarding costs the bench CPU)
      proxy = process.env.BENCH_COUNT_STATEMENTS === "1" ? await countingProxy(database.url) : undefined;
      service = await startBenchService(proxy?.url ?? database.url, encryptionKey, { WEBHOOK_TIMEOUT_SECONDS: "120" });
      if (runs("throughput")) {
        for (const count of ENDPOINT_COUNTS) await throughput(service, db, receiver, organizations, count);
      }
      if (runs("latency")) await latency(service, database.url, db, receiver, organizations[0]);
      if (runs("invoices")) await invoices(service, db, receiver, organizations[0], proxy);
      await service.stop();
      service = undefined;
      await proxy?.close();
    }
    if (runs("memory")) await memory(database.url, db, receiver, organizations[1], encryptionKey);
    console.log(
      `\n${((Date.now() - started) / 1000).toFixed(0)} s in all; load ${loadAverage()}; request-filtering-agent ` +
        `warnings on the service's stderr (one per new connection to a test-mode endpoint): ${filterWarnings}\n`,
    );
    console.log("| figure | this run | target | met |");
    console.log("|---|---|---|---|");
    for (const s of summary)
      console.log(`| ${s.figure} | ${s.value} | ${s.target} | ${s.met === null ? "-" : s.met ? "yes" : "NO"} |`);
  } finally {
    await service?.stop().catch(() => undefined);
    receiver?.stop();
    await db.end().catch(() => undefined);
    await database.drop();
  }
}

await main();
