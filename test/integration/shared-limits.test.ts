/**
 * Several processes on one PostgreSQL share what must agree (docs/scaling.md "Shared state"): two app instances on
 * one database hold a key to its configured rate together and count one client address's failed authentications
 * together (the RateLimit table, src/infra/rate-limit.ts), and a key revoked from another process (the command
 * line) is refused by a running instance within a second (API_KEYS_CHANNEL, services/api-key-cache.ts), also when
 * its listening connection broke meanwhile. On PostgreSQL only: the embedded database has one process.
 */
import path from "node:path";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { createLogger } from "../../src/infra/logger.js";
import { createApp, createHttpServer, listen, type App } from "../../src/server.js";
import type { AppSettings } from "../../src/infra/config.js";
import { createApiKey } from "../../src/services/api-keys.js";
import { startTestServer, statementTable, type TestServer } from "../helpers/server.js";
import { TEST_DB } from "../helpers/databases.js";
import { ROOT, runToEnd, serviceEnv } from "../helpers/processes.js";

const SETTINGS: Partial<AppSettings> = {
  rateLimitRequests: 10,
  rateLimitWindowSeconds: 3600,
  rateLimitBurst: 5,
  authFailureLimit: 4,
  authFailureWindowSeconds: 3600,
  // the client address is the test's X-Forwarded-For, the same through both instances
  trustProxy: true,
  // a revocation must not wait for the cache: an hour
  apiKeyCacheTtlSeconds: 3600,
};

/** A second instance of the app on the database of `first`: its own pool, listener, caches and limits. */
async function secondInstance(first: TestServer): Promise<{ url: string; close(): Promise<void> }> {
  const database: Database = await createDatabase(first.database.target);
  const app: App = createApp({
    database,
    logger: createLogger("silent"),
    settings: SETTINGS,
    webhookWorker: false,
    outboxIntervalMs: 0,
    eventRetentionIntervalMs: 0,
  });
  await app.listening;
  const server: Server = createHttpServer(app);
  const url = await listen(server, 0, "127.0.0.1");
  return {
    url,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await app.close();
      await database.close();
    },
  };
}

const get = (url: string, key: string, address = "203.0.113.7") =>
  fetch(`${url}/v1/customers/`, { headers: { authorization: `Bearer ${key}`, "x-forwarded-for": address } });

/** Polls GET /v1/customers/ on `url` with `key` until it answers 401; the ms it took (or Infinity after 5 s). */
async function msUntilRefused(url: string, key: string): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 5_000) {
    const res = await get(url, key);
    await res.body?.cancel();
    if (res.status === 401) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Infinity;
}

describe.runIf(TEST_DB === "postgres")("two instances on one PostgreSQL", () => {
  let a: TestServer;
  let b: Awaited<ReturnType<typeof secondInstance>>;
  beforeAll(async () => {
    a = await startTestServer({ settings: SETTINGS });
    b = await secondInstance(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("hold a key to its rate and burst together: 15 of 30 requests alternating between them, then 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await get(i % 2 ? b.url : a.url, a.keys.acme);
      await res.body?.cancel();
      statuses.push(res.status);
    }
    // 10 in the window and 5 of the burst, wherever they went; each instance alone would have let 15 through
    expect(statuses.filter((s) => s === 200)).toHaveLength(15);
    expect(statuses.slice(15)).toEqual(Array(15).fill(429));
    // other keys have their own buckets
    expect((await get(b.url, a.keys.other)).status).toBe(200);
  });

  it("refuse a key past its bucket from memory once they have seen it empty: no statement", async () => {
    const created = await createApiKey(a.database.prisma, {
      organizationName: "Acme SpA",
      email: "busy@acme.cl",
      mode: "test",
    });
    for (let i = 0; i < 15; i++) expect((await get(b.url, created.key)).status).toBe(200);
    // A never served the key (it does not hold it): its first refusal reads the counts, the next ones nothing
    expect((await get(a.url, created.key)).status).toBe(429);
    a.statements.length = 0;
    for (let i = 0; i < 5; i++) expect((await get(a.url, created.key)).status).toBe(429);
    expect(a.statements).toEqual([]);
  });

  it("count one address's failed authentications together; past the limit its valid keys still pass", async () => {
    const address = "198.51.100.9";
    const bad = (i: number) => `sk_test_${String(i).padStart(32, "0")}`;
    for (let i = 0; i < 4; i++) expect((await get(i % 2 ? b.url : a.url, bad(i), address)).status).toBe(401);
    // the 4 failures are spent between them: both refuse the address's bad keys now
    expect((await get(a.url, bad(4), address)).status).toBe(429);
    expect((await get(b.url, bad(5), address)).status).toBe(429);
    expect((await get(b.url, a.keys.acmeLive, address)).status).toBe(200);
    expect((await get(a.url, a.keys.acmeLive, address)).status).toBe(200);
    // another address is not limited
    expect((await get(a.url, bad(6), "198.51.100.10")).status).toBe(401);
  });

  it("refuse a key revoked by the command line within a second, though each had it cached for an hour", async () => {
    const created = await createApiKey(a.database.prisma, {
      organizationName: "Acme SpA",
      email: "revoked-elsewhere@acme.cl",
      mode: "test",
    });
    for (const url of [a.url, b.url]) expect((await get(url, created.key)).status).toBe(200);
    a.statements.length = 0;
    expect((await get(a.url, created.key)).status).toBe(200);
    expect(a.statements.map(statementTable)).not.toContain("ApiKey"); // served from the cache
    const revoke = await runToEnd(
      process.execPath,
      [path.join(ROOT, "dist", "cli.js"), "api-key", "revoke", created.id],
      serviceEnv({ DATABASE_URL: (a.database.target as { url: string }).url, LOG_LEVEL: "warn" }),
      ROOT,
    );
    expect(revoke.status, revoke.stderr).toBe(0);
    const [msA, msB] = await Promise.all([msUntilRefused(a.url, created.key), msUntilRefused(b.url, created.key)]);
    expect(msA).toBeLessThan(1_000);
    expect(msB).toBeLessThan(1_000);
  });

  it("when the listening connection breaks, cache nothing until it listens again, then start empty", async () => {
    const created = await createApiKey(a.database.prisma, {
      organizationName: "Acme SpA",
      email: "missed@acme.cl",
      mode: "test",
    });
    expect((await get(a.url, created.key)).status).toBe(200);
    // every listener of this database loses its connection (as when PostgreSQL restarts), and the key is revoked
    // without a notification: as if the notification had been sent while they were not listening
    const [{ terminated }] = await a.database.prisma.$queryRaw<{ terminated: number }[]>`
      SELECT count(pg_terminate_backend(pid))::int AS "terminated" FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
    expect(terminated).toBe(2);
    await a.database.prisma.apiKey.update({ where: { id: created.id }, data: { revokedAt: new Date() } });
    expect(await msUntilRefused(a.url, created.key)).toBeLessThan(1_000);
  });
});
