/**
 * The service through PgBouncer in transaction pooling mode (docs/scaling.md "Through PgBouncer"):
 * Debian's PgBouncer (1.18: no prepared statements in transaction mode) with deploy/pgbouncer.ini
 * and three server connections, an `api` and a `worker` process (`node dist/main.js`) whose
 * DATABASE_URL goes through it with DATABASE_PREPARED_STATEMENTS=false, and DATABASE_LISTEN_URL
 * to PostgreSQL itself for LISTEN. Both start at once on an empty database and migrate it through
 * PgBouncer (each migration applied once); then the mixed workload (customers, invoices
 * finalized, payments, usage), a GraphQL subscription woken by LISTEN, and the worker's billing
 * run: everything acknowledged is kept, numbers are gapless, every due cycle is billed once.
 * PostgreSQL only.
 */
import { afterAll, describe, expect, it } from "vitest";
import { emptyTarget, TEST_DB, withDatabase } from "../helpers/databases.js";
import { serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";
import { startPgBouncer } from "../helpers/proxies.js";
import { chileanCustomer } from "../helpers/server.js";
import { subscribe } from "../helpers/sse.js";
import { createDatabase, databaseTarget } from "../../src/infra/database.js";
import { createApiKey } from "../../src/services/api-keys.js";
import { localMigrations } from "../../src/infra/migrate.js";
import {
  acknowledged,
  Client,
  expectAcknowledgedKept,
  expectBilledOnce,
  expectGaplessNumbers,
  round,
  startWithThreeCyclesDue,
} from "../helpers/workload.js";

const running: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.runIf(TEST_DB === "postgres")("through PgBouncer in transaction pooling mode", () => {
  it(
    "migrates at start, serves the workload with prepared statements off and LISTEN beside, bills once",
    { timeout: 120_000 },
    async () => {
      const { target, drop } = await emptyTarget("pgbouncer");
      cleanups.push(drop);
      const direct = (target as { url: string }).url;
      const pgbouncer = await startPgBouncer(direct, 3);
      cleanups.push(() => pgbouncer.stop());
      const database = new URL(direct).pathname.slice(1);
      const pooled = withDatabase(`postgresql://postgres@127.0.0.1:${pgbouncer.port}/`, database);
      const env = serviceEnv({
        DATABASE_URL: pooled,
        DATABASE_PREPARED_STATEMENTS: "false",
        DATABASE_LISTEN_URL: direct,
        DATABASE_POOL_SIZE: "4",
        BILLING_RUN_INTERVAL_SECONDS: "1",
        RATE_LIMIT_REQUESTS: "0",
      });
      // two processes start at once on the empty database: each migration is applied by one of them
      const started = await Promise.all(
        (["api", "worker"] as const).map(async (role) => {
          const service = await startService({ ...env, SERVICE_ROLE: role });
          running.push(service);
          return service;
        }),
      );
      const [api, worker] = started;
      const applied = started.flatMap((p) =>
        p.logs().flatMap((l) => (l.msg === "migrations applied" ? l.applied : [])),
      );
      expect(applied.sort()).toEqual((await localMigrations()).map((m) => m.name));
      expect(pgbouncer.process.lines.join("\n")).toMatch(new RegExp(`login attempt: db=${database} user=postgres`));

      // the test's own reads and writes go through PgBouncer too, as the command line's would (databaseTarget)
      const db = await createDatabase(databaseTarget(env));
      cleanups.push(() => db.close());
      const { key, organization } = await createApiKey(db.prisma, {
        organizationName: "Pool SpA",
        email: "ops@pool.cl",
        mode: "test",
      });
      const client = new Client(api.url, key);
      const product = await client.create("/v1/products/", {
        name: "Nube",
        plans: [
          { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
          { name: "API", amount: 10, currency: "CLP", frequency: "monthly", usage_scheme: "metered" },
        ],
      });
      const [pro, metered] = product.plans.map((p: { id: string }) => p.id);
      const dateStart = startWithThreeCyclesDue();
      const subscriptions: { id: string; lines: { id: string }[] }[] = [];
      for (let i = 0; i < 2; i++) {
        const customer = await client.create("/v1/customers/", chileanCustomer({ name: `Suscriptor ${i}` }));
        subscriptions.push(
          await client.create("/v1/subscriptions/", {
            customer: customer.id,
            date_start: dateStart,
            expiration_days: 120,
            lines: [{ plan: pro }, { plan: metered }],
          }),
        );
      }
      // LISTEN on PostgreSQL itself wakes the GraphQL subscription
      const events = await subscribe(
        api.url,
        "subscription { events(types: [customer_created]) { type data } }",
        {},
        { authorization: `Bearer ${key}` },
      );
      const seen = await client.create("/v1/customers/", chileanCustomer({ name: "Visto" }));
      const [message] = await events.waitFor(1, 10_000);
      expect(JSON.parse(message.data.data.events.data).object.id).toBe(seen.id);
      events.close();

      // the workload: three writers over the three server connections
      const ack = acknowledged();
      let rounds = 0;
      await Promise.all(
        [0, 1, 2].map(async () => {
          while (rounds < 12) {
            const n = rounds++;
            await round(client, ack, subscriptions[n % 2].lines[1].id, n);
          }
        }),
      );
      // a list through GraphQL: joined reads, unnamed
      const listed = await fetch(`${api.url}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ query: "{ invoices(first: 100) { edges { node { id number } } } }" }),
      });
      const page = (await listed.json()) as {
        data: { invoices: { edges: { node: { id: string; number: number } }[] } };
      };
      const listedNumbers = new Map(page.data.invoices.edges.map((e) => [e.node.id, e.node.number]));
      for (const [id, number] of ack.invoices) expect(listedNumbers.get(id)).toBe(number);

      const ids = subscriptions.map((s) => s.id);
      const deadline = Date.now() + 20_000;
      while ((await db.prisma.subscription.count({ where: { id: { in: ids }, nextBillingCycle: 4 } })) < ids.length) {
        if (Date.now() > deadline) throw new Error("the worker did not bill the due cycles within 20 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      await expectBilledOnce(db.prisma, ids, dateStart, 3);
      await expectAcknowledgedKept(db.prisma, ack);
      expect(await expectGaplessNumbers(db.prisma, organization)).toBe(ack.invoices.size + 3 * ids.length);

      for (const p of [api, worker]) p.child.kill("SIGTERM");
      expect(await Promise.all([api, worker].map((p) => p.exited))).toEqual([0, 0]);
    },
  );
});
