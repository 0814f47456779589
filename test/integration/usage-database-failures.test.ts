/**
 * A database failure on the usage ingestion path (services/usages.ts: its statements go straight to the pg
 * pool on PostgreSQL, infra/sql/prepared-sql.ts) answers in the surface's error shape, never with internals:
 * a database that cannot serve is 503 `service_unavailable` with Retry-After (infra/database-errors.ts), any
 * other failure of a statement a masked 500 `internal_error`. Single records and batches, REST and GraphQL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/infra/logger.js";
import { createApp } from "../../src/server.js";
import { adminQuery, TEST_DB } from "../helpers/databases.js";
import { meteredSubscriptionLine, startTestServer, type TestServer } from "../helpers/server.js";

const logger = createLogger("silent");
const INTERNALS =
  /prisma|ECONNREFUSED|127\.0\.0\.1|at .*\.(ts|js)|pg_|SELECT|INSERT|test_no_usage|violates|constraint|sqlstate/i;

/** A server with one metered subscription line; its key cached by a first usage. */
async function serverWithLine(): Promise<{ s: TestServer; line: string }> {
  const s = await startTestServer();
  const line = await meteredSubscriptionLine(s);
  expect((await s.rest("POST", "/v1/usages/", { body: { subscription_line: line, quantity: 1 } })).status).toBe(201);
  return { s, line };
}

/**
 * The usage path's requests through `handle`: a single record and a batch over REST, createUsage and recordUsages
 * over GraphQL. Each must answer `status` with `code` in its surface's shape, and no internals.
 */
async function expectUsageErrors(
  handle: (r: Request) => Promise<Response>,
  key: string,
  line: string,
  status: number,
  code: string,
  base = "http://test.local",
) {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const record = (i: number) => ({ subscription_line: line, quantity: "1.5", transaction_id: `failure-${i}` });
  for (const body of [record(1), { usages: [record(2), record(3)] }]) {
    const res = await handle(
      new Request(`${base}/v1/usages/`, { method: "POST", headers, body: JSON.stringify(body) }),
    );
    const text = await res.text();
    expect(res.status, text).toBe(status);
    expect(JSON.parse(text).error.code).toBe(code);
    if (status === 503) expect(res.headers.get("retry-after")).toBe("5");
    expect(text).not.toMatch(INTERNALS);
  }
  const usage = (tx: string) => `{ subscriptionLine: "${line}", quantity: "1", transactionId: "${tx}" }`;
  for (const query of [
    `mutation { createUsage(input: ${usage("failure-4")}) { id } }`,
    `mutation { recordUsages(input: { usages: [${usage("failure-5")}] }) { created } }`,
  ]) {
    const res = await handle(
      new Request(`${base}/graphql`, { method: "POST", headers, body: JSON.stringify({ query }) }),
    );
    const text = await res.text();
    const body = JSON.parse(text);
    expect(body.errors?.[0]?.extensions?.code, text).toBe(code);
    if (status === 503) {
      expect(res.status, text).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
    } else expect(body.errors[0].message).toBe("Unexpected error.");
    expect(text).not.toMatch(INTERNALS);
  }
}

describe("a statement of the usage path that fails", () => {
  let s: TestServer;
  let line: string;
  beforeAll(async () => ({ s, line } = await serverWithLine()));
  afterAll(async () => s?.close());

  it("is a masked 500 internal_error (a constraint the INSERT violates), and nothing is written", async () => {
    const before = await s.database.prisma.usage.count();
    await s.database.session((db) =>
      db.exec(`ALTER TABLE "Usage" ADD CONSTRAINT "test_no_usage" CHECK ("quantity" < 0) NOT VALID`),
    );
    try {
      await expectUsageErrors((r) => fetch(r), s.keys.acme, line, 500, "internal_error", s.url);
    } finally {
      await s.database.session((db) => db.exec(`ALTER TABLE "Usage" DROP CONSTRAINT "test_no_usage"`));
    }
    expect(await s.database.prisma.usage.count()).toBe(before);
    const again = await s.rest("POST", "/v1/usages/", { body: { subscription_line: line, quantity: 2 } });
    expect(again.status).toBe(201);
  });
});

describe("a database that cannot serve the usage path", () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!().catch(() => undefined);
  });

  it.skipIf(TEST_DB !== "pglite")("the embedded database closed under the app: 503", async () => {
    const { s, line } = await serverWithLine();
    closers.push(() => s.close());
    const app = createApp({ database: s.database, logger, outboxIntervalMs: 0 });
    closers.push(() => app.close());
    await s.database.close();
    await expectUsageErrors(app.handle, s.keys.acme, line, 503, "service_unavailable");
  });

  it.skipIf(TEST_DB !== "postgres")(
    "PostgreSQL refusing connections, the pool's terminated: 503, then it recovers",
    async () => {
      const { s, line } = await serverWithLine();
      closers.push(() => s.close());
      const name = new URL((s.database.target as { url: string }).url).pathname.slice(1);
      await adminQuery(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      try {
        await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
        await expectUsageErrors((r) => fetch(r), s.keys.acme, line, 503, "service_unavailable", s.url);
      } finally {
        await adminQuery(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      }
      const again = await s.rest("POST", "/v1/usages/", { body: { subscription_line: line, quantity: 2 } });
      expect(again.status).toBe(201);
    },
  );
});
