/**
 * The event log (docs/webhooks.md "Events"): each change writes its event in its own transaction,
 * with the resource as REST prints it; a change that is refused or rolled back writes none; lists
 * and filters over REST and GraphQL; a test clock's advance writes the events of what it bills;
 * endpoints' bad input and live mode's address rules.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteExpiredEvents } from "../../src/services/events.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let plans: { pro: string };
beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } });
  const product = await s.rest("POST", "/v1/products/", {
    body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
  });
  expect(product.status, product.text).toBe(201);
  plans = { pro: product.body.plans[0].id };
});
afterAll(async () => s?.close());

/** A finalized invoice of one line of 1,000 for `customerId` (a new customer when not given); its id. */
async function finalizedInvoice(customerId?: string): Promise<string> {
  const customer = customerId ?? (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  const invoice = (await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "x", amount: 1000 }] } }))
    .body.id as string;
  await s.rest("GET", `/v1/invoices/${invoice}/finalize/`);
  return invoice;
}

/** The events of `objectId`, oldest first, as REST lists them. */
async function eventsOf(objectId: string, key?: string): Promise<{ type: string; data: any; id: string }[]> {
  const all: any[] = [];
  for (let page = 1; ; page++) {
    const res = await s.rest("GET", `/v1/events/?page_size=100&page=${page}`, { key });
    expect(res.status, res.text).toBe(200);
    all.push(...res.body.results);
    if (!res.body.next) break;
  }
  return all.filter((e) => e.data.object.id === objectId).reverse();
}

const typesOf = (events: { type: string }[]) => events.map((e) => e.type);

describe("events of each change", () => {
  it("documents: created, updated, finalized, paid, deleted; payments; credit notes", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body;
    const created = await s.rest("POST", "/v1/invoices/", {
      body: { customer: customer.id, lines: [{ name: "Consultoría", quantity: 2, amount: 1000 }] },
    });
    const invoice = created.body.id as string;
    await s.rest("PATCH", `/v1/invoices/${invoice}/`, { body: { note: "Orden de compra 77" } });
    // nothing changed: no event
    await s.rest("PATCH", `/v1/invoices/${invoice}/`, { body: { note: "Orden de compra 77" } });
    const finalized = await s.rest("GET", `/v1/invoices/${invoice}/finalize/`);
    expect(finalized.status, finalized.text).toBe(200);

    // a declined card, then a successful one: payment_failed, then paid
    const declined = await s.rest("POST", "/v1/sources/", {
      body: { gateway: "test", customer: customer.id, data: { token: "tok_chargeDeclined" } },
    });
    const visa = await s.rest("POST", "/v1/sources/", {
      body: { gateway: "test", customer: customer.id, data: { token: "tok_visa" } },
    });
    const payment = await s.rest("POST", "/v1/payments/", { body: { invoice, amount: 2380 } });
    expect(payment.status, payment.text).toBe(201);
    const failed = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, {
      body: { source: declined.body.id },
    });
    expect(failed.body.status).toBe("requires_payment_method");
    const paid = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, { body: { source: visa.body.id } });
    expect(paid.body.status).toBe("succeeded");

    const invoiceEvents = await eventsOf(invoice);
    expect(typesOf(invoiceEvents)).toEqual([
      "invoice.created",
      "invoice.updated",
      "invoice.finalized",
      "invoice.payment_failed",
      "invoice.paid",
    ]);
    const [createdEvent, updatedEvent, finalizedEvent] = invoiceEvents;
    // each carries the invoice as REST printed it then
    expect(createdEvent.data.object).toEqual(created.body);
    expect(createdEvent.data).not.toHaveProperty("previous_attributes");
    expect(updatedEvent.data.previous_attributes).toEqual({ note: null });
    expect(updatedEvent.data.object.note).toBe("Orden de compra 77");
    expect(finalizedEvent.data.object).toEqual(finalized.body);
    expect(finalizedEvent.data.object).toMatchObject({ status: "finalized", number: 1, total: 2380 });
    expect(typesOf(await eventsOf(payment.body.id))).toEqual([
      "payment.created",
      "payment.failed",
      "payment.succeeded",
    ]);

    // a draft deleted: its event carries it as it was
    const draft = await s.rest("POST", "/v1/invoices/", {
      body: { customer: customer.id, lines: [{ name: "Soporte", amount: 500 }] },
    });
    expect((await s.rest("DELETE", `/v1/invoices/${draft.body.id}/`)).status).toBe(204);
    const deleted = await eventsOf(draft.body.id);
    expect(typesOf(deleted)).toEqual(["invoice.created", "invoice.deleted"]);
    expect(deleted[1].data.object).toEqual(draft.body);

    // a credit note: created, finalized; and one deleted
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice, lines: [{ name: "Devolución", quantity: 1, amount: 500 }] },
    });
    expect(note.status, note.text).toBe(201);
    await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
    expect(typesOf(await eventsOf(note.body.id))).toEqual(["credit_note.created", "credit_note.finalized"]);
    const other = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice, lines: [{ name: "Ajuste", amount: 100 }] },
    });
    await s.rest("DELETE", `/v1/creditnotes/${other.body.id}/`);
    expect(typesOf(await eventsOf(other.body.id))).toEqual(["credit_note.created", "credit_note.deleted"]);

    // a payment canceled
    const second = await finalizedInvoice(customer.id);
    const toCancel = await s.rest("POST", "/v1/payments/", { body: { invoice: second, amount: 100 } });
    expect((await s.rest("DELETE", `/v1/payments/${toCancel.body.id}/`)).status).toBe(204);
    expect(typesOf(await eventsOf(toCancel.body.id))).toEqual(["payment.created", "payment.canceled"]);
  });

  it("a credit note that leaves nothing due writes invoice.paid", async () => {
    const invoice = await finalizedInvoice();
    const note = await s.rest("POST", "/v1/creditnotes/", { body: { invoice, lines: [{ name: "x", amount: 1000 }] } });
    await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
    expect(typesOf(await eventsOf(invoice))).toEqual(["invoice.created", "invoice.finalized", "invoice.paid"]);
  });

  it("orders and customers; subscriptions created, updated, paused, resumed and canceled", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body;
    await s.rest("PATCH", `/v1/customers/${customer.id}/`, { body: { email: "nuevo@cliente.cl" } });
    const customerEvents = await eventsOf(customer.id);
    expect(typesOf(customerEvents)).toEqual(["customer.created", "customer.updated"]);
    expect(customerEvents[1].data.previous_attributes).toEqual({ email: customer.email });

    const order = await s.rest("POST", "/v1/orders/", {
      body: { customer: customer.id, shipping_type: "1", lines: [{ name: "Cajas", quantity: 2, amount: 1000 }] },
    });
    expect(order.status, order.text).toBe(201);
    await s.rest("PATCH", `/v1/orders/${order.body.id}/`, { body: { address: "Camino Lo Boza 120" } });
    await s.rest("GET", `/v1/orders/${order.body.id}/finalize/`);
    expect(typesOf(await eventsOf(order.body.id))).toEqual(["order.created", "order.updated", "order.finalized"]);

    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: { customer: customer.id, lines: [{ plan: plans.pro }] },
    });
    expect(sub.status, sub.text).toBe(201);
    const id = sub.body.id as string;
    await s.rest("PATCH", `/v1/subscriptions/${id}/`, { body: { note: "plan anual" } });
    const gql = (query: string) => s.graphql(query, { id });
    expect((await gql(`mutation($id: ID!) { pauseSubscription(id: $id) { id } }`)).body.errors).toBeUndefined();
    expect((await gql(`mutation($id: ID!) { resumeSubscription(id: $id) { id } }`)).body.errors).toBeUndefined();
    expect((await s.rest("DELETE", `/v1/subscriptions/${id}/`)).status).toBe(200);
    const events = await eventsOf(id);
    expect(typesOf(events)).toEqual([
      "subscription.created",
      "subscription.updated",
      "subscription.paused",
      "subscription.resumed",
      "subscription.canceled",
    ]);
    expect(events[1].data.previous_attributes).toEqual({ note: null });
    expect(events[4].data.object.status).toBe("cancelled");
  });

  it("a test clock's advance writes the events of what it bills, in one transaction each batch", async () => {
    const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: "2026-03-01T12:00:00Z" } })).body;
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock.id }) })).body;
    // a card: each cycle's invoice is paid, so the next one is billed (the no-card rule)
    await s.rest("POST", "/v1/sources/", {
      body: { gateway: "test", customer: customer.id, data: { token: "tok_visa" } },
    });
    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: { customer: customer.id, lines: [{ plan: plans.pro }], date_start: "2026-03-01" },
    });
    expect(sub.status, sub.text).toBe(201);
    const advanced = await s.rest("POST", `/v1/test_clocks/${clock.id}/advance/`, {
      body: { frozen_time: "2026-05-15T12:00:00Z" },
    });
    expect(advanced.status, advanced.text).toBe(200);
    const invoices = await s.database.prisma.invoice.findMany({
      where: { subscriptionId: sub.body.id },
      orderBy: { billingCycle: "asc" },
    });
    expect(invoices.map((i) => i.billingCycle)).toEqual([1, 2, 3]);
    for (const invoice of invoices) {
      const events = await eventsOf(invoice.id);
      // billed, then collected with the card
      expect(typesOf(events)).toEqual(["invoice.created", "invoice.finalized", "invoice.paid"]);
      expect(events[1].data.object).toMatchObject({ id: invoice.id, status: "finalized", number: invoice.number });
    }
    const renewals = (await eventsOf(sub.body.id)).filter((e) => e.type === "subscription.updated");
    expect(renewals).toHaveLength(1);
    expect(renewals[0].data.previous_attributes).toMatchObject({ next_billing_cycle: 1 });
    expect(renewals[0].data.object.next_billing_cycle).toBe(4);
  });
});

describe("changes that do not happen write no event", () => {
  it("a refused finalize writes no event", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body;
    const draft = await s.rest("POST", "/v1/invoices/", { body: { customer: customer.id, lines: [] } });
    expect(draft.status, draft.text).toBe(201);
    const refused = await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`);
    expect(refused.status).toBe(400);
    expect(typesOf(await eventsOf(draft.body.id))).toEqual(["invoice.created"]);
  });

  it("a transaction that fails after writing its first event rolls that event back with the change", async () => {
    const invoice = await finalizedInvoice();
    const note = await s.rest("POST", "/v1/creditnotes/", { body: { invoice, lines: [{ name: "x", amount: 1000 }] } });
    // the database refuses the invoice.paid event the finalize writes after credit_note.finalized
    await s.database.prisma.$executeRawUnsafe(`
      CREATE FUNCTION refuse_paid() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await s.database.prisma.$executeRawUnsafe(`
      CREATE TRIGGER refuse_paid BEFORE INSERT ON "Event" FOR EACH ROW
      WHEN (NEW."type" = 'invoice.paid') EXECUTE FUNCTION refuse_paid()`);
    try {
      const res = await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
      expect(res.status).toBe(500);
    } finally {
      await s.database.prisma.$executeRawUnsafe(`DROP TRIGGER refuse_paid ON "Event"`);
      await s.database.prisma.$executeRawUnsafe(`DROP FUNCTION refuse_paid()`);
    }
    // the credit note is still a draft, and neither its finalized event nor invoice.paid exists
    expect((await s.rest("GET", `/v1/creditnotes/${note.body.id}/`)).body.status).toBe("draft");
    expect(typesOf(await eventsOf(note.body.id))).toEqual(["credit_note.created"]);
    expect(typesOf(await eventsOf(invoice))).toEqual(["invoice.created", "invoice.finalized"]);
  });
});

describe("listing and reading events", () => {
  it("REST: newest first, filters type, type__in, created__gte, created__lt; retrieve; others' are 404", async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Filtros SpA" }) })).body;
    await s.rest("PATCH", `/v1/customers/${customer.id}/`, { body: { name: "Filtros Dos SpA" } });
    const after = new Date(Date.now() + 1000).toISOString();
    const page = await s.rest("GET", `/v1/events/?type__in=customer.created,customer.updated&created__gte=${before}`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.results.slice(0, 2).map((e: any) => [e.type, e.data.object.id])).toEqual([
      ["customer.updated", customer.id],
      ["customer.created", customer.id],
    ]);
    const none = await s.rest("GET", `/v1/events/?created__lt=${before}&type=customer.updated`);
    expect(none.body.results.every((e: any) => e.data.object.id !== customer.id)).toBe(true);
    const later = await s.rest("GET", `/v1/events/?created__gte=${after}`);
    expect(later.body.count).toBe(0);
    const [event] = page.body.results;
    const read = await s.rest("GET", `/v1/events/${event.id}/`);
    expect(read.body).toEqual(event);
    expect(read.body).toMatchObject({ test_mode: true, created: expect.any(String) });
    // another organization's or mode's event reads as unknown
    expect((await s.rest("GET", `/v1/events/${event.id}/`, { key: s.keys.other })).status).toBe(404);
    expect((await s.rest("GET", `/v1/events/${event.id}/`, { key: s.keys.acmeLive })).status).toBe(404);
    const bad = await s.rest("GET", "/v1/events/?type=invoice.exploded");
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.fields)).toEqual(["type"]);
  });

  it("GraphQL: the events connection with its filters, and node(id:)", async () => {
    const res = await s.graphql(
      `{ events(first: 3, where: { type: { in: [customer_created] } }) { edges { node { id type testMode data } } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    const [edge] = res.body.data.events.edges;
    expect(edge.node.type).toBe("customer_created");
    expect(JSON.parse(edge.node.data).object.id).toMatch(/^cus_/);
    const node = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Event { id type } } }`, {
      id: edge.node.id,
    });
    expect(node.body.data.node).toEqual({ id: edge.node.id, type: "customer_created" });
  });
});

describe("webhook endpoints' input", () => {
  it("400 naming the field: not http(s), too long, credentials, no or unknown event types, more than 16", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: "ftp://example.com/x", enabled_events: ["*"] }, "url", "must be an http(s) URL, not ftp"],
      [
        { url: "not a url", enabled_events: ["*"] },
        "url",
        "must be an absolute http(s) URL (https://example.com/webhooks)",
      ],
      [
        { url: `https://example.com/${"a".repeat(2049)}`, enabled_events: ["*"] },
        "url",
        "must have at most 2048 characters",
      ],
      [
        { url: "https://user:pass@example.com/x", enabled_events: ["*"] },
        "url",
        "must not contain credentials (user:password@); sign-in is the signature",
      ],
      [
        { url: "https://example.com/x", enabled_events: [] },
        "enabled_events",
        "must list at least one event type, or * for all",
      ],
      [{ url: "https://example.com/x" }, "enabled_events", 'is required (a list of event types, or ["*"] for all)'],
      [{ enabled_events: ["*"] }, "url", "is required"],
    ];
    for (const [body, field, reason] of cases) {
      const res = await s.rest("POST", "/v1/webhook_endpoints/", { body });
      expect([res.status, res.body.error?.fields?.[field]], JSON.stringify(body)).toEqual([400, [reason]]);
    }
    const unknown = await s.rest("POST", "/v1/webhook_endpoints/", {
      body: { url: "https://example.com/x", enabled_events: ["invoice.created", "invoice.exploded"] },
    });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body.error.fields)).toContain("enabled_events");
    expect(await s.database.prisma.webhookEndpoint.count({ where: { organizationId: s.orgs.other } })).toBe(0);
    // sixteen per organization and mode
    const other = s.keys.other;
    for (let i = 0; i < 16; i++) {
      const ok = await s.rest("POST", "/v1/webhook_endpoints/", {
        key: other,
        body: { url: `https://example.com/${i}`, enabled_events: ["*"] },
      });
      expect(ok.status, ok.text).toBe(201);
    }
    const seventeenth = await s.rest("POST", "/v1/webhook_endpoints/", {
      key: other,
      body: { url: "https://example.com/17", enabled_events: ["*"] },
    });
    expect([seventeenth.status, seventeenth.body.error.fields]).toEqual([
      400,
      { url: ["at most 16 webhook endpoints per organization and mode; delete one first"] },
    ]);
  });

  it("live mode: https only, and never a loopback, private, link-local or unique-local address", async () => {
    const live = s.keys.acmeLive;
    const refused: [string, RegExp][] = [
      ["http://example.com/hooks", /must use https in live mode/],
      ["https://127.0.0.1/hooks", /127\.0\.0\.1, a loopback address/],
      ["https://localhost/hooks", /localhost .*loopback/],
      ["https://10.1.2.3/hooks", /private/],
      ["https://192.168.0.10/hooks", /private/],
      ["https://169.254.169.254/latest/meta-data", /linkLocal/],
      ["https://[::1]/hooks", /loopback/],
      ["https://[fd00::1]/hooks", /uniqueLocal/],
      ["https://[::ffff:127.0.0.1]/hooks", /loopback/],
      ["https://0.0.0.0/hooks", /unspecified/],
    ];
    for (const [url, reason] of refused) {
      const res = await s.rest("POST", "/v1/webhook_endpoints/", { key: live, body: { url, enabled_events: ["*"] } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.fields.url[0], url).toMatch(reason);
    }
    // test mode may deliver to loopback and private networks (local development), never to link-local
    // addresses (where clouds serve instance metadata)
    for (const url of ["http://127.0.0.1:4000/hooks", "http://10.1.2.3/hooks", "http://localhost:4000/hooks"]) {
      const local = await s.rest("POST", "/v1/webhook_endpoints/", { body: { url, enabled_events: ["*"] } });
      expect(local.status, local.text).toBe(201);
      await s.rest("DELETE", `/v1/webhook_endpoints/${local.body.id}/`);
    }
    for (const url of ["http://169.254.169.254/latest/meta-data", "http://[fe80::1]/hooks"]) {
      const metadata = await s.rest("POST", "/v1/webhook_endpoints/", { body: { url, enabled_events: ["*"] } });
      expect(metadata.status, url).toBe(400);
      expect(metadata.body.error.fields.url[0], url).toMatch(/must not point to a link-local address/);
    }
  });

  it("WEBHOOK_ALLOW_PRIVATE_NETWORKS lets live endpoints point to internal addresses", async () => {
    const open = await startTestServer({
      settings: {
        certificateEncryptionKey: randomBytes(32),
        webhooks: { timeoutMs: 15_000, retrySchedule: [5_000], allowPrivateNetworks: true },
      },
    });
    try {
      const res = await open.rest("POST", "/v1/webhook_endpoints/", {
        key: open.keys.acmeLive,
        body: { url: "https://10.1.2.3/hooks", enabled_events: ["*"] },
      });
      expect(res.status, res.text).toBe(201);
    } finally {
      await open.close();
    }
  });

  it("updates, lists and deletes; another organization's endpoint is unknown", async () => {
    const created = await s.rest("POST", "/v1/webhook_endpoints/", {
      body: { url: "https://example.com/a", enabled_events: ["invoice.paid"], metadata: { crm: "hubspot" } },
    });
    const id = created.body.id as string;
    const patched = await s.rest("PATCH", `/v1/webhook_endpoints/${id}/`, {
      body: { url: "https://example.com/b", enabled_events: ["*"], description: "ERP", metadata: { team: "ops" } },
    });
    expect(patched.body).toMatchObject({
      url: "https://example.com/b",
      enabled_events: ["*"],
      description: "ERP",
      metadata: { crm: "hubspot", team: "ops" },
    });
    expect(patched.body).not.toHaveProperty("secret");
    const list = await s.rest("GET", "/v1/webhook_endpoints/");
    expect(list.body.results.map((e: any) => e.id)).toContain(id);
    expect(list.body.results.every((e: any) => !("secret" in e))).toBe(true);
    expect((await s.rest("GET", `/v1/webhook_endpoints/${id}/`, { key: s.keys.other })).status).toBe(404);
    expect((await s.rest("DELETE", `/v1/webhook_endpoints/${id}/`, { key: s.keys.acmeLive })).status).toBe(404);
    expect((await s.rest("DELETE", `/v1/webhook_endpoints/${id}/`)).status).toBe(204);
    expect((await s.rest("GET", `/v1/webhook_endpoints/${id}/`)).status).toBe(404);
  });
});

describe("retention", () => {
  it("deletes events older than EVENT_RETENTION_DAYS in batches, with their messages and attempts", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Viejo SpA" }) })).body;
    const [old] = await eventsOf(customer.id);
    const endpoint = await s.rest("POST", "/v1/webhook_endpoints/", {
      body: { url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] },
    });
    // a message and an attempt of the old event, as the delivery worker would have left them
    await s.database.prisma.webhookMessage.create({
      data: { eventId: old.id, organizationId: s.orgs.acme, endpointId: endpoint.body.id },
    });
    await s.database.prisma.webhookAttempt.create({
      data: {
        id: "del_retention000000000000001",
        eventId: old.id,
        endpointId: endpoint.body.id,
        organizationId: s.orgs.acme,
        testMode: true,
        attempt: 1,
        durationMs: 3,
      },
    });
    await s.database.prisma.event.update({
      where: { id: old.id },
      data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    const total = await s.database.prisma.event.count();
    const deleted = await deleteExpiredEvents(s.database.prisma, new Date(), 30);
    expect(deleted).toBe(1);
    expect(await s.database.prisma.event.count()).toBe(total - 1);
    expect((await s.rest("GET", `/v1/events/${old.id}/`)).status).toBe(404);
    expect(await s.database.prisma.webhookMessage.count({ where: { eventId: old.id } })).toBe(0);
    expect(await s.database.prisma.webhookAttempt.count({ where: { eventId: old.id } })).toBe(0);
    // nothing younger than the retention goes
    expect(await deleteExpiredEvents(s.database.prisma, new Date(), 30)).toBe(0);
    await s.rest("DELETE", `/v1/webhook_endpoints/${endpoint.body.id}/`);
  });
});
