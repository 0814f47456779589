/**
 * Starts the real service on a random port over a fresh database, with two organizations and
 * their keys: `acme` (test and live keys) and `other` (test key). Requests go over real HTTP.
 */
import { inject } from "vitest";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { createLogger, type Logger } from "../../src/infra/logger.js";
import { createApp, createHttpServer, listen } from "../../src/server.js";
import type { AppSettings } from "../../src/infra/config.js";
import { contractProblem } from "./contract.js";
import { cloneTemplate } from "./databases.js";
import type { DatabaseTarget } from "../../src/infra/driver-adapter.js";
import { createTestOrganizations } from "./acme.js";

/**
 * The table a statement of `TestServer.statements` reads or writes first: transaction control as
 * itself (`BEGIN`, `COMMIT`, `ROLLBACK`, `SET CONSTRAINTS`), a joined read (infra/sql/joined-reads.ts)
 * as its root table (alias t1) with ` (joined)`, else the first table after FROM, INTO or UPDATE;
 * anything else by its first 40 characters.
 */
export const statementTable = (sql: string): string =>
  /^\s*(BEGIN|COMMIT|ROLLBACK|SET CONSTRAINTS)\b/.exec(sql)?.[1] ??
  (/^SELECT row_to_json\(s\) AS r FROM/.test(sql) ? `${/FROM "(\w+)" t1 /.exec(sql)?.[1]} (joined)` : null) ??
  /(?:FROM|INTO|UPDATE)\s+(?:"public"\.)?"(\w+)"/.exec(sql)?.[1] ??
  sql.slice(0, 40);

/** METRICS_TOKEN of test servers (unless a test's settings give another): /metrics and /readyz's detail need it. */
export const TEST_METRICS_TOKEN = "test-metrics-token-0123456789";

export interface TestServer {
  url: string;
  database: Database;
  keys: { acme: string; acmeLive: string; other: string };
  /**
   * `Model.operation` of every Prisma query the app ran, in order (tests may clear it), except the
   * API key lookup (`ApiKey.findUnique`): whether a request runs it depends on the key cache's
   * timing (services/api-key-cache.ts); `statements` has it when it runs.
   */
  queries: string[];
  /** SQL text of every statement sent to the database (BEGIN/COMMIT included), in order (tests may clear it) */
  statements: string[];
  orgs: { acme: string; other: string };
  /**
   * REST call with a key; returns status and parsed JSON (null for empty bodies). Throws when the
   * answer is not the one the OpenAPI document declares (the contract test: helpers/contract.ts).
   */
  rest(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; raw?: string },
  ): Promise<{ status: number; body: any; text: string }>;
  /** GraphQL call with a key */
  graphql(query: string, variables?: Record<string, unknown>, key?: string): Promise<{ status: number; body: any }>;
  /**
   * Bytes the server has written to its connections since it started (status lines, headers and
   * bodies as sent, compressed when they were): what its clients received over the network.
   */
  bytesSent(): number;
  close(): Promise<void>;
}

/**
 * `settings`: run-time settings for this server (SMTP URL, session lifetime, ...), as createApp takes them;
 * `outboxIntervalMs`: how often the mail outbox worker runs (createApp's default when absent);
 * `billingRunIntervalMs`: the billing run's interval inside the server (default off).
 */
export async function startTestServer(
  options: {
    settings?: Partial<AppSettings>;
    outboxIntervalMs?: number;
    billingRunIntervalMs?: number;
    /** the revenue analytics drain's interval inside the server (default off) */
    analyticsDrainIntervalMs?: number;
    /** where the app logs (default: TEST_LOG_LEVEL, silent) */
    logger?: Logger;
    /**
     * run the webhook delivery worker (default false: its statements would mix with the ones tests count; the
     * webhook tests turn it on)
     */
    webhookWorker?: boolean;
    /** the built customer portal to serve (createApp's default: dist/portal) */
    portalDir?: string;
    /** events a live stream may have waiting before it is cut off (createApp's default when absent) */
    eventStreamBacklog?: number;
    /** PUBLIC_URL: the absolute base of links in answers (default: each request's origin) */
    publicUrl?: string;
    /**
     * serve this migrated database instead of a fresh clone; `close` leaves it in place (tests that hand it to child
     * processes afterwards: test/integration/sigkill-*.test.ts)
     */
    target?: DatabaseTarget;
  } = {},
): Promise<TestServer> {
  const { target, drop } = options.target
    ? { target: options.target, drop: async () => {} }
    : await cloneTemplate(inject("template"));
  const statements: string[] = [];
  const database = await createDatabase(target, { onStatement: (sql) => statements.push(sql) });
  const { acme, acmeLive, other } = await createTestOrganizations(database.prisma);
  // every Prisma operation the app runs is recorded, so tests can catch N+1 queries
  const queries: string[] = [];
  const counted = recordingOperations(database.prisma, (model, operation) => {
    if (model !== "ApiKey" || operation !== "findUnique") queries.push(`${model}.${operation}`);
  });
  const settings: Partial<AppSettings> = { metricsToken: TEST_METRICS_TOKEN, ...options.settings };
  const app = createApp({
    database: { ...database, prisma: counted },
    logger: options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? "silent"),
    settings,
    publicUrl: options.publicUrl,
    outboxIntervalMs: options.outboxIntervalMs,
    billingRunIntervalMs: options.billingRunIntervalMs,
    analyticsDrainIntervalMs: options.analyticsDrainIntervalMs,
    webhookWorker: options.webhookWorker ?? false,
    eventRetentionIntervalMs: 0,
    portalDir: options.portalDir,
    eventStreamBacklog: options.eventStreamBacklog,
  });
  // keys are cached once the app listens to other processes' revocations (services/api-key-cache.ts)
  await app.listening;
  const server: Server = createHttpServer(app);
  // Keep-alive: the client must always be the side that drops an idle connection. With Node's 5 s
  // default the server announces `Keep-Alive: timeout=5` and fetch (undici) keeps idle sockets 4 s;
  // in a test process the event loop can be busy for seconds (PGlite runs in this thread), so both
  // timers come due together and fetch could send a request on a socket the server is closing
  // (ECONNRESET). With 120 s the server never closes a socket fetch may still reuse.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  let closedBytes = 0;
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      closedBytes += socket.bytesWritten;
    });
  });
  const url = await listen(server, 0, "127.0.0.1");

  const rest: TestServer["rest"] = async (method, path, options = {}) => {
    const key = options.key === undefined ? acme.key : options.key;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const text = await res.text();
    const contentType = res.headers.get("content-type");
    const body = text ? JSON.parse(text) : null;
    // the contract test: every answer must be the OpenAPI document's (test/helpers/contract.ts)
    const problem = contractProblem(method, path, { status: res.status, contentType, body });
    if (problem) throw new Error(`REST contract: ${problem}`);
    return { status: res.status, body, text };
  };
  const graphql: TestServer["graphql"] = async (query, variables, key = acme.key) => {
    const res = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, body: await res.json() };
  };
  return {
    url,
    database,
    keys: { acme: acme.key, acmeLive: acmeLive.key, other: other.key },
    queries,
    statements,
    orgs: { acme: acme.organization, other: other.organization },
    rest,
    graphql,
    bytesSent: () => [...sockets].reduce((sum, socket) => sum + socket.bytesWritten, closedBytes),
    async close() {
      // open live event streams end first, or they would hold server.close()
      app.endStreams();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      await database.close();
      await drop();
    },
  };
}

/** A valid Chilean customer body. */
export function chileanCustomer(overrides: Record<string, unknown> = {}) {
  return {
    name: "Cliente SpA",
    address: "Av. Siempre Viva 123",
    country: "CL",
    state: "RM",
    tax_id: "76.042.235-5",
    email: "pagos@cliente.cl",
    ...overrides,
  };
}

/**
 * A Chilean customer subscribed from 2026-11-01 to one monthly metered plan (CLP 3 per unit, `sum`
 * of the period's usage): the id of its one subscription line, for usage records.
 */
export async function meteredSubscriptionLine(s: TestServer): Promise<string> {
  return (await meteredSubscriptionLines(s, 1))[0];
}

/** As meteredSubscriptionLine, with `count` lines of that plan on the one subscription: their ids, in order. */
export async function meteredSubscriptionLines(s: TestServer, count: number): Promise<string[]> {
  const product = await s.rest("POST", "/v1/products/", {
    body: {
      name: "API",
      plans: [
        {
          name: "Llamadas",
          amount: "3",
          currency: "CLP",
          frequency: "monthly",
          usage_scheme: "metered",
          usage_aggregation: "sum",
        },
      ],
    },
  });
  if (product.status !== 201) throw new Error(`product: ${JSON.stringify(product.body)}`);
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  const sub = await s.rest("POST", "/v1/subscriptions/", {
    body: {
      customer,
      date_start: "2026-11-01",
      lines: Array.from({ length: count }, () => ({ plan: product.body.plans[0].id })),
    },
  });
  if (sub.status !== 201) throw new Error(`subscription: ${JSON.stringify(sub.body)}`);
  return (sub.body.lines as { id: string }[]).map((line) => line.id);
}

/**
 * `client` calling `record(model, operation)` for each model operation the app calls on it (or on
 * the transaction clients of its `$transaction(fn)`), however it is answered (infra/sql/joined-reads.ts
 * answers some reads with raw SQL).
 */
function recordingOperations<C extends object>(client: C, record: (model: string, operation: string) => void): C {
  const modelOf = (prop: string) => prop[0].toUpperCase() + prop.slice(1);
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop !== "string") return value;
      if (prop === "$transaction" && typeof value === "function") {
        return (arg: unknown, options?: unknown) =>
          typeof arg === "function"
            ? value.call(
                target,
                (tx: object) => (arg as (tx: object) => unknown)(recordingOperations(tx, record)),
                options,
              )
            : value.call(target, arg, options);
      }
      if (typeof value === "function") return value.bind(target);
      if (prop.startsWith("$") || prop.startsWith("_") || typeof value !== "object" || value === null) return value;
      return new Proxy(value, {
        get(delegate, operation, r) {
          const fn = Reflect.get(delegate, operation, r);
          if (typeof operation !== "string" || typeof fn !== "function") return fn;
          return (...args: unknown[]) => {
            record(modelOf(prop), operation);
            return fn.apply(delegate, args);
          };
        },
      });
    },
  });
}
