/**
 * Webhook delivery (docs/webhooks.md "Delivery") against real receivers over HTTP, each message
 * verified with the `standardwebhooks` package: retries on the schedule (shortened here) with the
 * same `webhook-id`, Retry-After, 410 Gone and five days of failures disabling an endpoint (an event
 * and an e-mail to its creator over a real SMTP server), redirects not followed, the time limit,
 * secret rotation (both signatures verify), redelivery, and live mode's refusal of private
 * addresses at delivery time.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TEST_DB } from "../helpers/databases.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.js";
import { startWebhookReceiver, until, verifies, type WebhookReceiver } from "../helpers/webhook-receiver.js";

let s: TestServer;
let receiver: WebhookReceiver;
let smtp: TestSmtpServer;
/** the retry schedule of this server: 150 ms, 300 ms, 450 ms (three retries, four attempts) */
const SCHEDULE = [150, 300, 450];
beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({
    settings: {
      certificateEncryptionKey: randomBytes(32),
      webhooks: { timeoutMs: 1_500, retrySchedule: SCHEDULE, allowPrivateNetworks: false },
      smtpUrl: smtp.url,
    },
    outboxIntervalMs: 100,
    webhookWorker: true,
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
  await smtp?.close();
});

let endpoint: { id: string; secret: string };
beforeEach(async () => {
  // one endpoint at a time: the previous test's is deleted
  for (const e of (await s.rest("GET", "/v1/webhook_endpoints/")).body.results)
    expect((await s.rest("DELETE", `/v1/webhook_endpoints/${e.id}/`)).status).toBe(204);
  receiver.received.length = 0;
  receiver.respond = () => ({ status: 204 });
  const created = await s.rest("POST", "/v1/webhook_endpoints/", {
    body: { url: receiver.url, enabled_events: ["customer.created"] },
  });
  expect(created.status, created.text).toBe(201);
  endpoint = created.body;
  receiver.secrets = [endpoint.secret];
});

/** Creates a customer (one customer.created event); returns its id. */
async function newCustomer(key?: string): Promise<string> {
  const res = await s.rest("POST", "/v1/customers/", { body: chileanCustomer(), key });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** The recorded attempts of the current endpoint, oldest first, once there are `count`. */
async function attempts(count: number) {
  const res = await until(
    () => s.rest("GET", `/v1/webhook_endpoints/${endpoint.id}/deliveries/?page_size=100`),
    // the count is read after the page (docs/graphql.md "Counting"): wait for the attempts to be listed
    (r) => r.status === 200 && r.body.results.length >= count,
  );
  return [...res.body.results].reverse();
}

describe("retries", () => {
  it("retries a failed message on the schedule, one webhook-id, until a 2xx, recording each attempt", async () => {
    let answers = [500, 502];
    receiver.respond = () => ({ status: answers.shift() ?? 204, body: "try again" });
    await newCustomer();
    const messages = await receiver.waitFor(3);
    expect(new Set(messages.map((m) => m.id)).size).toBe(1);
    expect(messages.every((m) => m.verifiedWith.length === 1)).toBe(true);
    // the same body every time; the timestamp is each attempt's
    expect(new Set(messages.map((m) => m.body)).size).toBe(1);
    // each retry waits at least its scheduled time after the previous attempt's end
    expect(messages[1].at - messages[0].at).toBeGreaterThanOrEqual(SCHEDULE[0] - 20);
    expect(messages[2].at - messages[1].at).toBeGreaterThanOrEqual(SCHEDULE[1] - 20);
    const recorded = await attempts(3);
    expect(recorded.map((a) => [a.attempt, a.status_code, a.succeeded, a.error])).toEqual([
      [1, 500, false, "HTTP 500"],
      [2, 502, false, "HTTP 502"],
      [3, 204, true, null],
    ]);
    expect(recorded[0].response_body).toBe("try again");
    expect(recorded.every((a) => a.event === messages[0].id)).toBe(true);
    answers = [];
    // delivered: no fourth attempt
    await new Promise((r) => setTimeout(r, SCHEDULE[2] + 300));
    expect(receiver.received).toHaveLength(3);
    const message = await s.database.prisma.webhookMessage.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect(message).toMatchObject({ status: "delivered", attempts: 3 });
    // a success ends the endpoint's failure streak
    const row = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.failingSince).toBeNull();
  });

  it("gives up after the last retry of the schedule: the message is failed, the endpoint stays enabled", async () => {
    receiver.respond = () => ({ status: 500 });
    await newCustomer();
    await receiver.waitFor(SCHEDULE.length + 1);
    const message = await until(
      () => s.database.prisma.webhookMessage.findFirstOrThrow({ where: { endpointId: endpoint.id } }),
      (m) => m.status !== "pending",
    );
    expect(message).toMatchObject({ status: "failed", attempts: SCHEDULE.length + 1 });
    await new Promise((r) => setTimeout(r, 600));
    expect(receiver.received).toHaveLength(SCHEDULE.length + 1);
    const row = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.status).toBe("enabled");
    expect(row.failingSince).not.toBeNull();
  });

  it("honours Retry-After on a 503: the retry waits that long, not the schedule's 150 ms", async () => {
    let first = true;
    receiver.respond = () => {
      if (!first) return { status: 204 };
      first = false;
      return { status: 503, headers: { "retry-after": "1" } };
    };
    await newCustomer();
    const [a, b] = await receiver.waitFor(2);
    expect(b.id).toBe(a.id);
    expect(b.at - a.at).toBeGreaterThanOrEqual(950);
  });

  it("does not follow a redirect, and cuts an attempt at the time limit", async () => {
    let n = 0;
    receiver.respond = () =>
      ++n === 1
        ? { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } }
        : n === 2
          ? { status: 204, delayMs: 3_000 }
          : { status: 204 };
    await newCustomer();
    const recorded = await attempts(3);
    expect(recorded.map((a) => [a.status_code, a.error && a.error.replace(/[\d.]+ s$/, "N s")])).toEqual([
      [302, "redirect (302) not followed"],
      [null, "no answer within N s"],
      [204, null],
    ]);
    expect(recorded[1].duration_ms).toBeGreaterThanOrEqual(1_400);
  });
});

describe("waking", () => {
  it("sends a message no notification announced (another process's retry) within 5 s of its due time", async () => {
    await newCustomer();
    await receiver.waitFor(1);
    // a retry another process wrote: a pending message due in a second, and no NOTIFY
    const row = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    const id = `evt_silent${Date.now()}`;
    const dueAt = Date.now() + 1_000;
    await s.database.prisma.event.create({
      data: {
        id,
        organizationId: row.organizationId,
        testMode: row.testMode,
        type: "customer.created",
        objectId: "cus_silent",
        data: JSON.stringify({ object: { id: "cus_silent", object: "customer" } }),
      },
    });
    await s.database.prisma.webhookMessage.create({
      data: {
        eventId: id,
        organizationId: row.organizationId,
        endpointId: endpoint.id,
        nextAttemptAt: new Date(dueAt),
      },
    });
    // notified messages: each makes a round that claims something
    await newCustomer();
    await receiver.waitFor(2);
    const messages = await receiver.waitFor(3, 15_000);
    const silent = messages.find((m) => m.id === id);
    expect(silent).toBeDefined();
    // the worker asks when the next message is due at least every 5 s (NEXT_DUE_REFRESH_MS)
    expect(silent!.at - dueAt).toBeGreaterThanOrEqual(-20);
    // (and a margin for a loaded machine: without that refresh a quiet worker sleeps up to a minute)
    expect(silent!.at - dueAt).toBeLessThan(5_000 + 3_000);
  });
});

describe("disabling", () => {
  it("410 Gone disables the endpoint at once: its event, an e-mail to its creator, nothing more sent", async () => {
    receiver.respond = () => ({ status: 410 });
    smtp.received.length = 0;
    await newCustomer();
    await receiver.waitFor(1);
    const read = await until(
      () => s.rest("GET", `/v1/webhook_endpoints/${endpoint.id}/`),
      (r) => r.body.status === "disabled",
    );
    expect(read.body).toMatchObject({ status: "disabled", disabled_reason: "gone" });
    const events = await s.rest("GET", "/v1/events/?type=webhook_endpoint.disabled");
    expect(events.body.results[0].data.object).toEqual(read.body);
    const mail = await until(
      async () => smtp.received,
      (r) => r.length > 0,
    );
    expect(mail[0].envelope.to).toEqual(["ops@acme.cl"]);
    expect(mail[0].parsed.subject).toBe(`Webhook endpoint disabled: ${receiver.url}`);
    expect(mail[0].parsed.text).toContain("410 Gone");
    // a disabled endpoint gets no new message; enabled again, it does
    await newCustomer();
    await new Promise((r) => setTimeout(r, 400));
    expect(receiver.received).toHaveLength(1);
    receiver.respond = () => ({ status: 204 });
    const enabled = await s.rest("PATCH", `/v1/webhook_endpoints/${endpoint.id}/`, { body: { status: "enabled" } });
    expect(enabled.body).toMatchObject({ status: "enabled", disabled_reason: null });
    await newCustomer();
    await receiver.waitFor(2);
  });

  it("disables an endpoint whose deliveries have all failed for 5 days", async () => {
    receiver.respond = () => ({ status: 500 });
    // the streak began six days ago (as if every attempt since had failed)
    await s.database.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { failingSince: new Date(Date.now() - 6 * 86_400_000) },
    });
    await newCustomer();
    await receiver.waitFor(1);
    const read = await until(
      () => s.rest("GET", `/v1/webhook_endpoints/${endpoint.id}/`),
      (r) => r.body.status === "disabled",
    );
    expect(read.body.disabled_reason).toBe("failing");
    // its undelivered message is failed, not retried
    const message = await s.database.prisma.webhookMessage.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect(message.status).toBe("failed");
    await new Promise((r) => setTimeout(r, 600));
    expect(receiver.received).toHaveLength(1);
  });

  it("a failure four days into a streak leaves the endpoint enabled", async () => {
    receiver.respond = () => ({ status: 500 });
    await s.database.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { failingSince: new Date(Date.now() - 4 * 86_400_000) },
    });
    await newCustomer();
    await receiver.waitFor(1);
    await attempts(1);
    const row = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.status).toBe("enabled");
  });
});

describe("secrets and redelivery", () => {
  it("after a rotation messages carry two signatures, the new secret's and the previous one's", async () => {
    const rotated = await s.rest("POST", `/v1/webhook_endpoints/${endpoint.id}/rotate_secret/`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    receiver.secrets = [endpoint.secret, rotated.body.secret];
    await newCustomer();
    const [message] = await receiver.waitFor(1);
    expect(message.signature.split(" ")).toHaveLength(2);
    expect(message.verifiedWith).toEqual([endpoint.secret, rotated.body.secret]);
    // each signature alone verifies with its own secret
    const [current, previous] = message.signature.split(" ");
    expect(verifies(rotated.body.secret, { ...message, signature: current })).toBe(true);
    expect(verifies(endpoint.secret, { ...message, signature: previous })).toBe(true);
    expect(verifies(rotated.body.secret, { ...message, signature: previous })).toBe(false);
    // 24 hours later the previous secret no longer signs
    await s.database.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { previousSecretExpiresAt: new Date(Date.now() - 1000) },
    });
    await newCustomer();
    const [, later] = await receiver.waitFor(2);
    expect(later.signature.split(" ")).toHaveLength(1);
    expect(later.verifiedWith).toEqual([rotated.body.secret]);
  });

  it("redelivers an event at once with the same webhook-id, to its endpoints or to the one named", async () => {
    await newCustomer();
    const [first] = await receiver.waitFor(1);
    const again = await s.rest("POST", `/v1/events/${first.id}/redeliver/`);
    expect(again.status, again.text).toBe(200);
    expect(again.body.id).toBe(first.id);
    const [, second] = await receiver.waitFor(2);
    expect(second.id).toBe(first.id);
    expect(second.body).toBe(first.body);
    const named = await s.rest("POST", `/v1/events/${first.id}/redeliver/`, { body: { endpoint: endpoint.id } });
    expect(named.status).toBe(200);
    await receiver.waitFor(3);
    // an unknown event, an unknown endpoint, a disabled endpoint
    expect((await s.rest("POST", "/v1/events/evt_000000000000000000000000/redeliver/")).status).toBe(404);
    const unknown = await s.rest("POST", `/v1/events/${first.id}/redeliver/`, {
      body: { endpoint: "we_000000000000000000000000" },
    });
    expect([unknown.status, unknown.body.error.fields]).toEqual([
      400,
      { endpoint: ["unknown webhook endpoint we_000000000000000000000000"] },
    ]);
    await s.rest("PATCH", `/v1/webhook_endpoints/${endpoint.id}/`, { body: { status: "disabled" } });
    const disabled = await s.rest("POST", `/v1/events/${first.id}/redeliver/`);
    expect([disabled.status, disabled.body.error.code]).toEqual([409, "invalid_state"]);
  });
});

describe("live mode", () => {
  it("refuses a private address at delivery time (its host now resolves to it)", async () => {
    const live = s.keys.acmeLive;
    // as if its host's DNS had changed: an endpoint row whose URL now points to loopback
    const { id } = (
      await s.rest("POST", "/v1/webhook_endpoints/", {
        key: live,
        body: { url: "https://93.184.215.14/hooks", enabled_events: ["customer.created"] },
      })
    ).body;
    const port = new URL(receiver.url).port;
    await s.database.prisma.webhookEndpoint.update({ where: { id }, data: { url: `https://127.0.0.1:${port}/hooks` } });
    await newCustomer(live);
    const res = await until(
      () => s.rest("GET", `/v1/webhook_endpoints/${id}/deliveries/`, { key: live }),
      // the page, not the count: on PostgreSQL the two are read by two statements, and the attempt's commit may fall
      // between them (count 1, no row yet)
      (r) => r.body.results.length > 0,
    );
    const [attempt] = res.body.results;
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toMatch(/127\.0\.0\.1.*not allowed/);
    expect(receiver.received).toHaveLength(0);
    await s.rest("DELETE", `/v1/webhook_endpoints/${id}/`, { key: live });
  });
});

describe.skipIf(TEST_DB !== "postgres")("an endpoint deleted while outcomes are written", () => {
  it("skips the deleted endpoint's outcome and records the rest of the batch: no deadlock, nothing lost", async () => {
    // three endpoints on one receiver: the first (`endpoint`) is answered first, the other two 600 ms later
    const more: { id: string; secret: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await s.rest("POST", "/v1/webhook_endpoints/", {
        body: { url: `${receiver.url}?n=${i}`, enabled_events: ["customer.created"] },
      });
      expect(res.status, res.text).toBe(201);
      more.push(res.body);
    }
    const [deleted, kept] = more;
    receiver.secrets = [endpoint.secret, deleted.secret, kept.secret];
    const delays = new Map([
      [endpoint.secret, 300],
      [deleted.secret, 900],
      [kept.secret, 900],
    ]);
    receiver.respond = (m) => ({ status: 204, delayMs: delays.get(m.verifiedWith[0]) });
    const a = new pg.Client({ connectionString: (s.database.target as { url: string }).url });
    const b = new pg.Client({ connectionString: (s.database.target as { url: string }).url });
    await Promise.all([a.connect(), b.connect()]);
    try {
      await newCustomer();
      const messages = await receiver.waitFor(3);
      // the first endpoint's outcome batch waits for its message, which `a` holds; the other two outcomes
      // arrive meanwhile and make the next batch together
      await a.query("BEGIN");
      await a.query(`SELECT 1 FROM "WebhookMessage" WHERE "endpointId" = $1 FOR UPDATE`, [endpoint.id]);
      await until(
        async () => messages.every((m) => m.answered),
        (answered) => answered,
      );
      await new Promise((r) => setTimeout(r, 200));
      // a delete of the second endpoint in progress (cascading to its messages), not committed yet
      await b.query("BEGIN");
      await b.query(`DELETE FROM "WebhookEndpoint" WHERE "id" = $1`, [deleted.id]);
      await a.query("COMMIT");
      // the next batch (the deleted endpoint's outcome and the kept one's) waits for the delete
      await until(
        async () =>
          (
            await a.query(
              `SELECT COUNT(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
            )
          ).rows[0].n,
        (n) => n > 0,
      );
      await b.query("COMMIT");
      const delivered = await until(
        () => s.database.prisma.webhookMessage.findMany({ where: { endpointId: { in: [endpoint.id, kept.id] } } }),
        (rows) => rows.length === 2 && rows.every((r) => r.status === "delivered"),
      );
      expect(delivered.map((r) => r.attempts)).toEqual([1, 1]);
      expect(await s.database.prisma.webhookAttempt.count({ where: { endpointId: kept.id } })).toBe(1);
      // the kept endpoint got its message once: its outcome was not lost with the deleted one's
      await new Promise((r) => setTimeout(r, 2_000));
      expect(receiver.received.filter((m) => m.verifiedWith[0] === kept.secret)).toHaveLength(1);
    } finally {
      await a.query("ROLLBACK").catch(() => undefined);
      await b.query("ROLLBACK").catch(() => undefined);
      await Promise.all([a.end(), b.end()]);
    }
  });
});
