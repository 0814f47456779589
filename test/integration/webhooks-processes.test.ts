/**
 * Webhooks across real processes (docs/webhooks.md "Delivery"): the built service (`node
 * dist/main.js`) is killed with SIGKILL right after its writes were acknowledged, while messages are
 * in flight to a slow receiver, and started again: every acknowledged write's event is delivered,
 * with its original `webhook-id` (at least once); two service processes on one database deliver
 * every event exactly once per endpoint. On PostgreSQL only: an event is a row written in its
 * change's transaction, and that the embedded database keeps every acknowledged write through a
 * SIGKILL is runtime.test.ts's "kill -9 in the middle of a stream of writes".
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { createKey, serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";
import { chileanCustomer } from "../helpers/server.js";
import { startWebhookReceiver, until, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const running: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
  for (const cleanup of cleanups) await cleanup();
});

/** The service's environment on a database of its own, with webhooks' time limit and retries short. */
async function serviceDatabase(): Promise<NodeJS.ProcessEnv> {
  const webhooks = {
    WEBHOOK_TIMEOUT_SECONDS: "2",
    WEBHOOK_RETRY_SCHEDULE: "200ms,200ms,200ms,200ms,200ms",
    CERTIFICATE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  };
  const { target, drop } = await cloneTemplate(inject("template"));
  cleanups.push(drop);
  return serviceEnv({ DATABASE_URL: (target as { url: string }).url, ...webhooks });
}

async function post(url: string, key: string, pathname: string, body: unknown) {
  const res = await fetch(`${url}${pathname}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function start(env: NodeJS.ProcessEnv) {
  const service = await startService(env);
  running.push(service);
  return service;
}

describe.runIf(TEST_DB === "postgres")("webhooks when the service is killed", () => {
  it(
    "delivers every acknowledged write's event after SIGKILL and a restart, with its original webhook-id",
    { timeout: 180_000 },
    async () => {
      const env = await serviceDatabase();
      const key = createKey(env);
      const receiver: WebhookReceiver = await startWebhookReceiver();
      cleanups.push(() => receiver.close());
      // slow: messages are in flight (claimed, not answered) when the service dies
      receiver.respond = () => ({ status: 204, delayMs: 400 });
      let service = await start(env);
      const endpoint = await post(service.url, key, "/v1/webhook_endpoints/", {
        url: receiver.url,
        enabled_events: ["customer.created"],
      });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
      receiver.secrets.push(endpoint.body.secret);

      const acknowledged: string[] = [];
      await Promise.all(
        [0, 1, 2, 3].map(async (writer) => {
          for (let i = 0; i < 6; i++) {
            const res = await post(service.url, key, "/v1/customers/", chileanCustomer({ name: `W${writer} ${i}` }));
            expect(res.status).toBe(201);
            acknowledged.push(res.body.id);
          }
        }),
      );
      service.child.kill("SIGKILL");
      await service.exited;
      // some were not delivered when it died: not sent yet, or sent and not answered (their outcome is not recorded)
      const answered = new Set(
        receiver.received.filter((m) => m.answered).map((m) => m.payload.data.object.id as string),
      );
      expect(acknowledged.filter((id) => !answered.has(id)).length).toBeGreaterThan(0);

      receiver.respond = () => ({ status: 204 });
      service = await start(env);
      const events = await until(
        async () => {
          const res = await fetch(`${service.url}/v1/events/?type=customer.created&page_size=100`, {
            headers: { authorization: `Bearer ${key}` },
          });
          return (await res.json()) as { count: number; results: { id: string; data: { object: { id: string } } }[] };
        },
        (r) => r.count === acknowledged.length,
      );
      const eventOf = new Map(events.results.map((e) => [e.data.object.id, e.id]));
      expect([...eventOf.keys()].sort()).toEqual([...acknowledged].sort());
      // every event arrives (claims of the dead process run out: 2 x 2 s + 5 s), with its own webhook-id
      await until(
        async () => new Set(receiver.received.filter((m) => m.answered).map((m) => m.id)),
        (ids) => [...eventOf.values()].every((id) => ids.has(id)),
        60_000,
      );
      for (const m of receiver.received) {
        expect(m.id).toBe(eventOf.get(m.payload.data.object.id as string));
        expect(m.verifiedWith).toEqual([endpoint.body.secret]);
      }
      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
    },
  );
});

describe.runIf(TEST_DB === "postgres")("webhooks with two service processes on one PostgreSQL", () => {
  it("deliver every event exactly once per endpoint", { timeout: 180_000 }, async () => {
    const env = await serviceDatabase();
    const key = createKey(env);
    const receivers = [await startWebhookReceiver(), await startWebhookReceiver()];
    for (const r of receivers) cleanups.push(() => r.close());
    const a = await start(env);
    const b = await start(env);
    for (const r of receivers) {
      const endpoint = await post(a.url, key, "/v1/webhook_endpoints/", { url: r.url, enabled_events: ["*"] });
      expect(endpoint.status).toBe(201);
      r.secrets.push(endpoint.body.secret);
    }
    const created: string[] = [];
    await Promise.all(
      [a, b, a, b].map(async (service, writer) => {
        for (let i = 0; i < 15; i++) {
          const res = await post(service.url, key, "/v1/customers/", chileanCustomer({ name: `P${writer} ${i}` }));
          expect(res.status).toBe(201);
          created.push(res.body.id);
        }
      }),
    );
    for (const r of receivers) await r.waitFor(created.length, 60_000);
    // a while more: a message sent twice would arrive meanwhile
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const r of receivers) {
      const ids = r.received.map((m) => m.id);
      expect(ids).toHaveLength(created.length);
      expect(new Set(ids).size).toBe(created.length);
      expect(new Set(r.received.map((m) => m.payload.data.object.id))).toEqual(new Set(created));
      expect(r.received.every((m) => m.verifiedWith.length === 1)).toBe(true);
    }
    for (const service of [a, b]) {
      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
    }
  });
});
