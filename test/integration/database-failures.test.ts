/**
 * A database that cannot serve answers 503 `service_unavailable` with `Retry-After` on REST and
 * GraphQL, never 500 (docs/input-limits.md "Database failures"): connection refused, connections
 * terminated and the database dropped, a statement timeout, an exhausted pool. Real databases,
 * no mocks: a pool pointing at a closed port, and on PostgreSQL a database of this test that goes away.
 */
import net from "node:net";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { nameAsTextPool } from "../../src/infra/driver-adapter.js";
import { PrismaClient } from "../../src/infra/prisma/generated/client.js";
import { createLogger } from "../../src/infra/logger.js";
import { createApp, type App } from "../../src/server.js";
import { POSTGRES_URL, TEST_DB } from "../helpers/databases.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const logger = createLogger("silent");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => undefined);
});
afterAll(async () => {
  while (closers.length) await closers.pop()!().catch(() => undefined);
});

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** REST and GraphQL through `handle`: both must be 503 service_unavailable with Retry-After. */
async function expectUnavailable(handle: (r: Request) => Promise<Response>, key: string, base = "http://test.local") {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const rest = await handle(new Request(`${base}/v1/customers/`, { headers }));
  const restBody = await rest.text();
  expect(rest.status, restBody).toBe(503);
  expect(rest.headers.get("retry-after")).toBe("5");
  expect(JSON.parse(restBody).error.code).toBe("service_unavailable");
  const post = await handle(
    new Request(`${base}/v1/customers/`, { method: "POST", headers, body: JSON.stringify({ name: "A" }) }),
  );
  expect(post.status).toBe(503);
  expect(post.headers.get("retry-after")).toBe("5");
  // a keyed write is refused the same way: it never runs without its key (server.ts idempotent())
  for (const path of ["/v1/customers/", "/graphql"]) {
    const body =
      path === "/graphql" ? { query: 'mutation { createCustomer(input: { name: "A" }) { id } }' } : { name: "A" };
    const keyed = await handle(
      new Request(`${base}${path}`, {
        method: "POST",
        headers: { ...headers, "idempotency-key": "db-down-1" },
        body: JSON.stringify(body),
      }),
    );
    const text = await keyed.text();
    expect(keyed.status, text).toBe(503);
    expect(keyed.headers.get("retry-after")).toBe("5");
    expect(text).toContain("service_unavailable");
  }
  const gql = await handle(
    new Request(`${base}/graphql`, {
      method: "POST",
      headers,
      body: JSON.stringify({ query: "{ customers(first: 1) { totalCount } }" }),
    }),
  );
  const gqlBody = await gql.text();
  expect(gql.status, gqlBody).toBe(503);
  expect(gql.headers.get("retry-after")).toBe("5");
  expect(JSON.parse(gqlBody).errors[0].extensions.code).toBe("service_unavailable");
  for (const text of [restBody, gqlBody])
    expect(text).not.toMatch(/prisma|ECONNREFUSED|127\.0\.0\.1|at .*\.ts|pg_|SELECT/i);
}

describe("database failures answer 503 with Retry-After", () => {
  it("connection refused (a pool pointing at a closed port)", async () => {
    const port = await closedPort();
    const database = await createDatabase({ kind: "postgres", url: `postgresql://postgres@127.0.0.1:${port}/nothing` });
    const app = createApp({ database, logger, outboxIntervalMs: 0 });
    closers.push(
      () => database.close(),
      () => app.close(),
    );
    await expectUnavailable(app.handle, "sk_test_whatever");
  });

  it.skipIf(TEST_DB !== "pglite")("the embedded database closed under the app", async () => {
    const s = await startTestServer();
    closers.push(() => s.close().catch(() => undefined));
    const app = createApp({ database: s.database, logger, outboxIntervalMs: 0 });
    closers.push(() => app.close());
    expect(
      (await app.handle(new Request("http://t/v1/customers/", { headers: { authorization: `Bearer ${s.keys.acme}` } })))
        .status,
    ).toBe(200);
    await s.database.close();
    await expectUnavailable(app.handle, s.keys.acme);
  });
});

describe.skipIf(TEST_DB !== "postgres")("PostgreSQL going away", () => {
  let s: TestServer;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const nameOf = (db: Database) => new URL((db.target as { url: string }).url).pathname.slice(1);

  it("connections terminated (pg_terminate_backend), then the database dropped: 503", async () => {
    s = await startTestServer();
    closers.push(() => s.close());
    const name = nameOf(s.database);
    expect((await s.rest("GET", "/v1/customers/")).status).toBe(200);
    // terminate every connection of the app's pool and refuse new ones until they are allowed again
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    await expectUnavailable((r) => fetch(r), s.keys.acme, s.url);
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    expect((await s.rest("GET", "/v1/customers/")).status).toBe(200); // the pool recovers by itself
    await admin(`DROP DATABASE "${name}" WITH (FORCE)`);
    await expectUnavailable((r) => fetch(r), s.keys.acme, s.url);
  });

  it("a statement timeout (a query waiting on a lock past statement_timeout) is a 503", async () => {
    s = await startTestServer();
    closers.push(() => s.close());
    const name = nameOf(s.database);
    await admin(`ALTER DATABASE "${name}" SET statement_timeout = '1s'`);
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`,
    ); // new sessions take the setting
    const locker = new pg.Client({ connectionString: (s.database.target as { url: string }).url });
    await locker.connect();
    closers.push(() => locker.end());
    await locker.query(`BEGIN; LOCK TABLE "ApiKey" IN ACCESS EXCLUSIVE MODE`);
    await expectUnavailable((r) => fetch(r), s.keys.acme, s.url);
    await locker.query("ROLLBACK");
    expect((await s.rest("GET", "/v1/customers/")).status).toBe(200);
  });

  it("an exhausted pool (no free connection within the connect timeout) is a 503", async () => {
    s = await startTestServer();
    closers.push(() => s.close());
    const pool = nameAsTextPool({
      connectionString: (s.database.target as { url: string }).url,
      max: 1,
      connectionTimeoutMillis: 200,
    });
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    const app: App = createApp({ database: { ...s.database, prisma }, logger, outboxIntervalMs: 0 });
    closers.push(async () => {
      await app.close();
      await prisma.$disconnect();
      await pool.end();
    });
    const ok = await app.handle(
      new Request("http://t/v1/customers/", { headers: { authorization: `Bearer ${s.keys.acme}` } }),
    );
    expect(ok.status).toBe(200);
    const held = await pool.connect(); // the pool's only connection, held by someone else
    try {
      await expectUnavailable(app.handle, s.keys.acme);
    } finally {
      held.release();
    }
    const again = await app.handle(
      new Request("http://t/v1/customers/", { headers: { authorization: `Bearer ${s.keys.acme}` } }),
    );
    expect(again.status).toBe(200);
  });
});
