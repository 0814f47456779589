/**
 * The live event stream (docs/webhooks.md "The live event stream (GraphQL)") over real HTTP: the
 * `events` subscription as Server-Sent Events, read with fetch as a client would. Events of the
 * key's organization and mode arrive in commit order with the fields the REST API prints; `types`
 * filters; another organization's and the other mode's never arrive; a portal credential and a bad
 * key are refused; shutting down ends every stream with an error. The feed behind it, with a
 * notification source the test drives, over the real database: its catch-up after missed
 * notifications, its dedupe, and a client too far behind cut off (the HTTP side of a slow client:
 * test/http-streams.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, TEST_METRICS_TOKEN, type TestServer } from "../helpers/server.js";
import { subscribe, type SseMessage, type SseStream } from "../helpers/sse.js";
import { openLink, sessionKey } from "../helpers/portal.js";
import { TEST_DB } from "../helpers/databases.js";
import { EventFeeds } from "../../src/graphql/event-feed.js";
import type { CommittedEvent, EventStream } from "../../src/services/event-stream.js";

const EVENTS = `subscription Events($types: [EventType!]) { events(types: $types) { id type created testMode data } }`;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** The events of `next` messages, in order. */
const events = (messages: SseMessage[]) => messages.filter((m) => m.event === "next").map((m) => m.data.data.events);

async function createCustomer(s: TestServer, key: string, name: string): Promise<string> {
  const res = await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer({ name }) });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function metric(s: TestServer, line: RegExp): Promise<number> {
  const res = await fetch(`${s.url}/metrics`, { headers: bearer(TEST_METRICS_TOKEN) });
  const match = line.exec(await res.text());
  return match ? Number(match[1]) : 0;
}

describe("the events subscription", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());

  it(
    "streams the key's organization's events of its mode in commit order, as the REST API prints them; types " +
      "filters; other organizations' and the other mode's never arrive",
    async () => {
      const all = await subscribe(s.url, EVENTS, {}, bearer(s.keys.acme));
      const updates = await subscribe(s.url, EVENTS, { types: ["customer_updated"] }, bearer(s.keys.acme));
      const live = await subscribe(s.url, EVENTS, {}, bearer(s.keys.acmeLive));
      const other = await subscribe(s.url, EVENTS, {}, bearer(s.keys.other));
      const streams = [all, updates, live, other];
      try {
        for (const stream of streams) {
          expect(stream.status).toBe(200);
          expect(stream.headers.get("content-type")).toBe("text/event-stream");
        }
        const x = await createCustomer(s, s.keys.acme, "Primero SpA");
        const renamed = await s.rest("PATCH", `/v1/customers/${x}/`, { body: { name: "Primero Renombrado SpA" } });
        expect(renamed.status).toBe(200);
        const liveOne = await createCustomer(s, s.keys.acmeLive, "Vivo SpA");
        const otherOne = await createCustomer(s, s.keys.other, "Otra SpA");
        const y = await createCustomer(s, s.keys.acme, "Segundo SpA");
        expect((await s.rest("PATCH", `/v1/customers/${y}/`, { body: { email: "nuevo@segundo.cl" } })).status).toBe(
          200,
        );
        // a second event for each of the other streams: what they got before it is all they get
        const liveTwo = await createCustomer(s, s.keys.acmeLive, "Vivo Dos SpA");
        const otherTwo = await createCustomer(s, s.keys.other, "Otra Dos SpA");

        const listed = await s.rest("GET", "/v1/events/?page_size=10");
        expect(listed.status).toBe(200);
        const rest = listed.body.results.slice().reverse(); // oldest first
        expect(rest.map((e: any) => [e.type, e.data.object.id])).toEqual([
          ["customer.created", x],
          ["customer.updated", x],
          ["customer.created", y],
          ["customer.updated", y],
        ]);
        const received = events(await all.waitFor(4));
        expect(received.map((e) => e.id)).toEqual(rest.map((e: any) => e.id));
        received.forEach((event, i) => {
          expect(event).toMatchObject({ type: rest[i].type.replace(".", "_"), testMode: true });
          expect(new Date(event.created).getTime()).toBe(new Date(rest[i].created).getTime());
          expect(JSON.parse(event.data)).toEqual(rest[i].data);
        });
        expect(events(await updates.waitFor(2)).map((e) => e.id)).toEqual([rest[1].id, rest[3].id]);

        const ids = (stream: SseStream, n: number) =>
          stream.waitFor(n).then((m) => events(m).map((e) => JSON.parse(e.data).object.id));
        expect(await ids(live, 2)).toEqual([liveOne, liveTwo]);
        expect(events(live.messages).every((e) => e.testMode === false)).toBe(true);
        expect(await ids(other, 2)).toEqual([otherOne, otherTwo]);
        // nothing more came meanwhile to any stream
        expect(all.messages).toHaveLength(4);
        expect(updates.messages).toHaveLength(2);
        expect(live.messages).toHaveLength(2);
        expect(other.messages).toHaveLength(2);
        expect(await metric(s, /^billing_event_streams_open (\d+)$/m)).toBe(4);
      } finally {
        for (const stream of streams) stream.close();
      }
      // a client that goes away stops its feed
      await expect.poll(() => metric(s, /^billing_event_streams_open (\d+)$/m)).toBe(0);
    },
  );

  it("refuses a customer-portal credential, a bad key, no key, and an empty types list", async () => {
    const customer = await createCustomer(s, s.keys.acme, "Portal SpA");
    const cookies = await openLink(s, (await sessionKey(s, customer)).key);
    expect(cookies.credential).not.toBe("");
    const portal = await subscribe(
      s.url,
      EVENTS,
      {},
      {
        cookie: `portal_credential=${cookies.credential}; portal_csrf=${cookies.csrf}`,
        "x-portal-csrf": cookies.csrf,
      },
    );
    expect(portal.status).toBe(200);
    const [refused, complete] = await portal.waitFor(2);
    expect(refused.data).toMatchObject({
      errors: [
        {
          message: "SubscriptionRoot.events is not available to the customer portal",
          extensions: { code: "permission_denied" },
        },
      ],
    });
    expect(complete.event).toBe("complete");
    await portal.ended;

    for (const headers of [bearer("sk_test_0000000000000000000000000000"), {}]) {
      const stream = await subscribe(s.url, EVENTS, {}, headers);
      expect(stream.status).toBe(401);
      const [error] = await stream.waitFor(2);
      expect(error.data.errors[0].extensions.code).toBe("authentication_required");
      await stream.ended;
    }

    const empty = await subscribe(s.url, EVENTS, { types: [] }, bearer(s.keys.acme));
    const [invalid] = await empty.waitFor(2);
    expect(invalid.data.errors[0]).toMatchObject({
      extensions: { code: "validation_error", fields: { types: [expect.stringContaining("at least one")] } },
    });
    await empty.ended;
    expect(await metric(s, /^billing_event_streams_open (\d+)$/m)).toBe(0);
  });
});

describe.skipIf(TEST_DB !== "postgres")("when PostgreSQL's listening connection breaks", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());

  it("a stream catches up from the database once the process listens again, streaming each event once", async () => {
    const stream = await subscribe(s.url, EVENTS, {}, bearer(s.keys.acme));
    try {
      const first = await createCustomer(s, s.keys.acme, "Antes SpA");
      await stream.waitFor(1);
      s.statements.length = 0;
      // the process's one LISTEN connection is cut (a restart of PostgreSQL, a network failure); it is made again
      // after 0.25 s, and what committed meanwhile was not notified
      const killed = await s.database.session((session) =>
        session.query<{ killed: boolean }>(
          `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
           WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
        ),
      );
      expect(killed).toEqual([{ killed: true }]);
      const during = await createCustomer(s, s.keys.acme, "Durante SpA");
      // the catch-up read ran (events above the stream's mark)
      await expect
        .poll(() => s.statements.some((sql) => /FROM "public"\."Event" WHERE .*"sequence" > /.test(sql)), {
          timeout: 20_000,
        })
        .toBe(true);
      const after = await createCustomer(s, s.keys.acme, "Después SpA");
      const objects = events(await stream.waitFor(3)).map((e) => JSON.parse(e.data).object.id);
      expect(objects).toEqual([first, during, after]);
      // and nothing twice
      await createCustomer(s, s.keys.acme, "Marca SpA");
      await stream.waitFor(4);
      expect(stream.messages).toHaveLength(4);
    } finally {
      stream.close();
    }
  });
});

describe("shutting down, and the rate limit", () => {
  let s: TestServer;
  beforeAll(async () => {
    // 2 requests an hour for each key, no burst
    s = await startTestServer({ settings: { rateLimitRequests: 2, rateLimitWindowSeconds: 3600, rateLimitBurst: 0 } });
  });

  it("counts opening a stream as one request of the key: over the limit it is a 429 before it opens", async () => {
    const first = await subscribe(s.url, EVENTS, {}, bearer(s.keys.other));
    const second = await subscribe(s.url, EVENTS, {}, bearer(s.keys.other));
    const third = await subscribe(s.url, EVENTS, {}, bearer(s.keys.other));
    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    first.close();
    second.close();
    await expect.poll(() => metric(s, /^billing_event_streams_open (\d+)$/m)).toBe(0);
  });

  afterAll(async () => s?.close());

  it("ends every open stream with service_unavailable when the server shuts down", async () => {
    const stream = await subscribe(s.url, EVENTS, {}, bearer(s.keys.acme));
    expect(stream.status).toBe(200);
    const closing = s.close();
    const [error, complete] = await stream.waitFor(2);
    expect(error.data.errors[0]).toMatchObject({
      message: expect.stringContaining("shutting down"),
      extensions: { code: "service_unavailable" },
    });
    expect(complete.event).toBe("complete");
    await stream.ended;
    await closing;
    s = undefined as unknown as TestServer;
  });
});

/** A notification source the test drives, in place of the process's LISTEN. */
function drivenStream() {
  const subscribers = new Set<(e: CommittedEvent) => void>();
  const gaps = new Set<() => void>();
  const stream: EventStream = {
    subscribe: (fn) => (subscribers.add(fn), () => subscribers.delete(fn)),
    onGap: (fn) => (gaps.add(fn), () => gaps.delete(fn)),
    onWebhookMessages: () => () => undefined,
    onLost: () => () => undefined,
    onApiKeyChange: () => () => undefined,
    close: async () => undefined,
  };
  return {
    stream,
    notify: (e: CommittedEvent) => subscribers.forEach((fn) => fn(e)),
    gap: () => gaps.forEach((fn) => fn()),
    listeners: () => subscribers.size + gaps.size,
  };
}

describe("the feed behind the subscription", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());

  const eventIds = async () =>
    (
      await s.database.prisma.event.findMany({ where: { organizationId: s.orgs.acme }, orderBy: { sequence: "asc" } })
    ).map((e) => e.id);

  it(
    "catches up after a gap with the events above its mark, in order, never twice, then goes on with " +
      "notifications; drops another tenant's notifications",
    async () => {
      await createCustomer(s, s.keys.acme, "Antes SpA");
      const driven = drivenStream();
      const feeds = new EventFeeds({ stream: Promise.resolve(driven.stream), maxBacklog: 10 });
      const tenant = { organizationId: s.orgs.acme, testMode: true };
      const feed = await feeds.open({ prisma: s.database.prisma, tenant, types: null });
      // committed while "notifications were missed": the driven stream heard nothing of them
      const missed = [await createCustomer(s, s.keys.acme, "Uno SpA"), await createCustomer(s, s.keys.acme, "Dos SpA")];
      const [before, one, two] = await eventIds();
      expect(missed).toHaveLength(2);
      driven.gap();
      // a late notification of an event the catch-up reads too, and one of another organization
      driven.notify({ ...tenant, eventId: two });
      driven.notify({ organizationId: s.orgs.other, testMode: true, eventId: before });
      driven.notify({ organizationId: s.orgs.acme, testMode: false, eventId: before });
      const three = await createCustomer(s, s.keys.acme, "Tres SpA");
      const threeEvent = (await eventIds()).at(-1)!;
      driven.notify({ ...tenant, eventId: threeEvent });
      const got = [];
      for (let i = 0; i < 3; i++) got.push((await feed.next()).value.id);
      expect(got).toEqual([one, two, threeEvent]);
      expect(three).toMatch(/^cus_/);
      expect(feeds.size).toBe(1);
      await feed.return!();
      expect(feeds.size).toBe(0);
      expect(driven.listeners()).toBe(0);
    },
  );

  it("fails a feed whose backlog overflows, and one open at shutdown; refuses new ones after", async () => {
    const driven = drivenStream();
    const ended: string[] = [];
    const feeds = new EventFeeds({
      stream: Promise.resolve(driven.stream),
      maxBacklog: 3,
      onEnd: (r) => ended.push(r),
    });
    const tenant = { organizationId: s.orgs.acme, testMode: true };
    const slow = await feeds.open({ prisma: s.database.prisma, tenant, types: null });
    const [id] = await eventIds();
    for (let i = 0; i < 4; i++) driven.notify({ ...tenant, eventId: id });
    expect(ended).toEqual(["behind"]);
    expect(driven.listeners()).toBe(0);
    await expect(slow.next()).rejects.toMatchObject({ code: "service_unavailable" });
    expect(await slow.next()).toEqual({ done: true, value: undefined });

    const open = await feeds.open({ prisma: s.database.prisma, tenant, types: ["customer.updated"] });
    const waiting = open.next();
    feeds.close();
    await expect(waiting).rejects.toMatchObject({ message: expect.stringContaining("shutting down") });
    expect(ended).toEqual(["behind", "shutdown"]);
    await expect(feeds.open({ prisma: s.database.prisma, tenant, types: null })).rejects.toMatchObject({
      code: "service_unavailable",
    });
    expect(driven.listeners()).toBe(0);
  });
});
