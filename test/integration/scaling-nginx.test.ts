/**
 * The deployment of docs/scaling.md "Behind a reverse proxy", started on this machine: Debian's
 * nginx with deploy/nginx.conf in front of two `api` processes (`node dist/main.js`,
 * SERVICE_ROLE=api), one `worker` process (SERVICE_ROLE=worker) and PostgreSQL, every process with
 * the same environment but its role. A mixed workload runs through nginx (customers, invoices
 * finalized, payments, usage) while the worker bills subscriptions with three cycles due; one
 * `api` process is killed with SIGKILL mid-load, nginx sends the load to the other, the killed
 * process is started again (as systemd or compose would) and nginx sends it requests again.
 * Then: every acknowledged write is in the database, invoice numbers are gapless, every due cycle
 * is billed exactly once, and by the worker only. PostgreSQL only (the embedded database is one
 * process's).
 */
import { afterAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";
import { freePort, startNginx, type Proxy } from "../helpers/proxies.js";
import { chileanCustomer } from "../helpers/server.js";
import { subscribe } from "../helpers/sse.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { createApiKey } from "../../src/services/api-keys.js";
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

/** Requests a process logged for /v1 paths (its request log lines). */
const apiRequests = (p: ServiceProcess) =>
  p.logs().filter((l) => l.msg === "request" && String(l.path).startsWith("/v1")).length;

async function start(env: NodeJS.ProcessEnv) {
  const service = await startService(env);
  running.push(service);
  return service;
}

describe.runIf(TEST_DB === "postgres")("nginx, two api processes and a worker on one PostgreSQL", () => {
  it(
    "fails over when an api process is killed mid-load; nothing acknowledged is lost, numbers stay gapless, " +
      "every due cycle is billed once by the worker, and the restarted process rejoins",
    { timeout: 120_000 },
    async () => {
      const { target, drop } = await cloneTemplate(inject("template"));
      cleanups.push(drop);
      const env = serviceEnv({
        DATABASE_URL: (target as { url: string }).url,
        DATABASE_POOL_SIZE: "4",
        TRUST_PROXY: "true",
        BILLING_RUN_INTERVAL_SECONDS: "1",
        RATE_LIMIT_REQUESTS: "0",
        SHUTDOWN_GRACE_SECONDS: "5",
      });
      const database: Database = await createDatabase(target);
      cleanups.push(() => database.close());
      const { key, organization } = await createApiKey(database.prisma, {
        organizationName: "Escala SpA",
        email: "ops@escala.cl",
        mode: "test",
      });

      const ports = [await freePort(), await freePort()];
      const apiEnv = (port: number) => ({ ...env, SERVICE_ROLE: "api", PORT: String(port) });
      const [api1, api2, worker] = await Promise.all([
        start(apiEnv(ports[0])),
        start(apiEnv(ports[1])),
        start({ ...env, SERVICE_ROLE: "worker" }),
      ]);
      const nginx: Proxy = await startNginx(ports);
      cleanups.push(() => nginx.stop());
      const url = `http://127.0.0.1:${nginx.port}`;

      // the worker answers the probes only
      expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${worker.url}/readyz`)).status).toBe(200);
      const refused = await fetch(`${worker.url}/v1/customers/`, { headers: { authorization: `Bearer ${key}` } });
      expect(refused.status).toBe(404);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/SERVICE_ROLE=worker/);

      const client = new Client(url, key);

      const product = await client.create("/v1/products/", {
        name: "Nube",
        plans: [
          { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
          { name: "API", amount: 10, currency: "CLP", frequency: "monthly", usage_scheme: "metered" },
        ],
      });
      const [pro, metered] = product.plans.map((p: { id: string }) => p.id);
      // subscriptions with three cycles due: the worker bills them while the load runs
      const dateStart = startWithThreeCyclesDue();
      const subscriptions: { id: string; lines: { id: string }[] }[] = [];
      for (let i = 0; i < 4; i++) {
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
      // a GraphQL subscription through nginx (unbuffered Server-Sent Events) sees a write made through the other
      // api process: LISTEN/NOTIFY between processes
      const events = await subscribe(
        url,
        "subscription { events(types: [customer_created]) { type data } }",
        {},
        { authorization: `Bearer ${key}` },
      );
      expect(events.status).toBe(200);
      const seen = await client.create("/v1/customers/", chileanCustomer({ name: "Visto" }));
      const [message] = await events.waitFor(1, 10_000);
      expect(JSON.parse(message.data.data.events.data).object.id).toBe(seen.id);
      events.close();

      // the load: four writers through nginx
      const ack = acknowledged();
      let stop = false;
      let rounds = 0;
      const writers = [0, 1, 2, 3].map(async () => {
        while (!stop) {
          const n = rounds++;
          await round(client, ack, subscriptions[n % 4].lines[1].id, n);
        }
      });
      const failed = Promise.all(writers).then(
        () => null,
        (e: unknown) => e,
      );
      const whileWriting = async (done: () => boolean, what: string, ms = 30_000) => {
        const deadline = Date.now() + ms;
        while (!done()) {
          if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
          const error = await Promise.race([failed, new Promise((r) => setTimeout(() => r(null), 50))]);
          if (error) throw error;
        }
      };
      await whileWriting(() => ack.invoices.size >= 8 && apiRequests(api1) > 0, "8 invoices through both");
      api1.child.kill("SIGKILL");

      expect(await api1.exited).toBe("SIGKILL");
      // nginx sends everything to the other process meanwhile
      const atKill = ack.usages.size;
      await whileWriting(() => ack.usages.size >= atKill + 4, "4 rounds while one api process is down");
      const restarted = await start(apiEnv(ports[0]));

      await whileWriting(() => apiRequests(restarted) >= 3, "the restarted process serves requests through nginx");
      stop = true;
      expect(await failed).toBeNull();

      // the worker billed the three due cycles of every subscription, once
      const ids = subscriptions.map((s) => s.id);
      const deadline = Date.now() + 20_000;
      while ((await database.prisma.subscription.count({ where: { id: { in: ids }, nextBillingCycle: 4 } })) < 4) {
        if (Date.now() > deadline) throw new Error("the worker did not bill the due cycles within 20 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      await expectBilledOnce(database.prisma, ids, dateStart, 3);

      const billedBy = (p: ServiceProcess) => p.logs().filter((l) => l.msg === "billing run" && l.cycles > 0);
      expect(billedBy(worker).reduce((n, l) => n + l.cycles, 0)).toBe(12);
      for (const api of [api1, api2, restarted]) expect(billedBy(api)).toEqual([]);

      await expectAcknowledgedKept(database.prisma, ack);
      expect(await expectGaplessNumbers(database.prisma, organization)).toBe(ack.invoices.size + 12);

      // a rolling stop: each process drains and exits 0
      for (const p of [restarted, api2, worker]) p.child.kill("SIGTERM");
      expect(await Promise.all([restarted, api2, worker].map((p) => p.exited))).toEqual([0, 0, 0]);
    },
  );
});
