/**
 * An invoice's payment state over REST and GraphQL (docs/dunning.md "Invoice payment state"): `amount_paid`,
 * `amount_due` and `payment_status` through docs/dunning.md's worked example; marking an invoice uncollectible
 * (`POST /v1/invoices/{id}/mark_uncollectible/`, `markInvoiceUncollectible`) with its event, only for a finalized
 * invoice with something due (409 otherwise, 404 unknown); a later payment still counts.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { finalizedInvoice } from "../helpers/portal.js";

let s: TestServer;
let customer: string;
let card: string;
beforeAll(async () => {
  // the key seals webhook endpoints' signing secrets
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } });
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  card = (await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token: "tok_visa" } } }))
    .body.id;
});
afterAll(async () => s?.close());

/** A succeeded card payment of `amount` on `invoice`. */
async function pay(invoice: string, amount: number) {
  const payment = await s.rest("POST", "/v1/payments/", { body: { invoice, amount } });
  expect(payment.status, payment.text).toBe(201);
  const charged = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, { body: { source: card } });
  expect(charged.body.status, charged.text).toBe("succeeded");
}

const state = async (invoice: string) => {
  const res = await s.rest("GET", `/v1/invoices/${invoice}/`);
  expect(res.status).toBe(200);
  const { amount_paid, amount_due, payment_status, marked_uncollectible_at, updated } = res.body;
  return { amount_paid, amount_due, payment_status, marked_uncollectible_at, updated };
};

/** The events of `invoice`, oldest first. */
async function eventsOf(invoice: string) {
  const res = await s.rest("GET", "/v1/events/?page_size=100");
  return res.body.results.filter((e: any) => e.data.object.id === invoice).reverse();
}

describe("payment_status through the worked example", () => {
  it("draft, finalized, partly paid, marked uncollectible, then paid: a later payment still counts", async () => {
    const endpoint = await s.rest("POST", "/v1/webhook_endpoints/", {
      body: { url: "http://127.0.0.1:9/hooks", enabled_events: ["invoice.marked_uncollectible"] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    expect(endpoint.body.enabled_events).toEqual(["invoice.marked_uncollectible"]);

    const draft = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        lines: [
          { name: "Consultoría", quantity: 2, amount: 1000 },
          { name: "Soporte", amount: 500, discount: 10 },
        ],
      },
    });
    expect(draft.status, draft.text).toBe(201);
    const invoice = draft.body.id as string;
    expect(draft.body).toMatchObject({
      total: 2916,
      amount_paid: 0,
      amount_due: 2916,
      payment_status: "unpaid",
      marked_uncollectible_at: null,
    });
    const onDraft = await s.rest("POST", `/v1/invoices/${invoice}/mark_uncollectible/`);
    expect(onDraft.status).toBe(409);
    expect(onDraft.body.error.code).toBe("invalid_state");

    expect((await s.rest("GET", `/v1/invoices/${invoice}/finalize/`)).body.payment_status).toBe("unpaid");
    await pay(invoice, 1000);
    const partly = await state(invoice);
    expect(partly).toMatchObject({ amount_paid: 1000, amount_due: 1916, payment_status: "partially_paid" });

    const marked = await s.rest("POST", `/v1/invoices/${invoice}/mark_uncollectible/`);
    expect(marked.status, marked.text).toBe(200);
    expect(marked.body).toMatchObject({
      id: invoice,
      status: "finalized",
      amount_paid: 1000,
      amount_due: 1916,
      payment_status: "uncollectible",
      // the document does not change
      updated: partly.updated,
    });
    expect(marked.body.marked_uncollectible_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const row = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: invoice } });
    expect(row.markedUncollectibleAt?.toISOString().slice(0, 19).replace("T", " ")).toBe(
      marked.body.marked_uncollectible_at,
    );
    expect(await state(invoice)).toEqual({
      amount_paid: 1000,
      amount_due: 1916,
      payment_status: "uncollectible",
      marked_uncollectible_at: marked.body.marked_uncollectible_at,
      updated: partly.updated,
    });

    // the event, written with the change, carries the invoice as REST prints it; the endpoint gets a message
    const [event] = (await eventsOf(invoice)).filter((e: any) => e.type === "invoice.marked_uncollectible");
    expect(event.data.object).toEqual(marked.body);
    const messages = await s.database.prisma.webhookMessage.count({
      where: { eventId: event.id, endpointId: endpoint.body.id },
    });
    expect(messages).toBe(1);

    // marked already: 409, nothing written
    const again = await s.rest("POST", `/v1/invoices/${invoice}/mark_uncollectible/`);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain("already");
    const count = await s.database.prisma.event.count({ where: { type: "invoice.marked_uncollectible" } });
    expect(count).toBe(1);

    // a later payment still counts: paid, invoice.paid
    await pay(invoice, 1916);
    expect(await state(invoice)).toMatchObject({ amount_paid: 2916, amount_due: 0, payment_status: "paid" });
    expect((await eventsOf(invoice)).map((e: any) => e.type)).toEqual([
      "invoice.created",
      "invoice.finalized",
      "invoice.marked_uncollectible",
      "invoice.paid",
    ]);
    // nothing due: 409
    expect((await s.rest("POST", `/v1/invoices/${invoice}/mark_uncollectible/`)).status).toBe(409);
  });

  it("an invoice covered by a credit note is paid; a partial credit note leaves it unpaid", async () => {
    const whole = await finalizedInvoice(s, customer);
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: whole, lines: [{ name: "Anulación", amount: 2450 }] },
    });
    expect(note.status, note.text).toBe(201);
    await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
    expect(await state(whole)).toMatchObject({ amount_paid: 0, amount_due: 0, payment_status: "paid" });
    const part = await finalizedInvoice(s, customer);
    const partial = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: part, lines: [{ name: "Descuento", amount: 1000 }] },
    });
    await s.rest("GET", `/v1/creditnotes/${partial.body.id}/finalize/`);
    expect(await state(part)).toMatchObject({ amount_paid: 0, amount_due: 1726, payment_status: "unpaid" });
    // an unpaid invoice can be marked: payments on it still go through
    expect((await s.rest("POST", `/v1/invoices/${part}/mark_uncollectible/`)).body.payment_status).toBe(
      "uncollectible",
    );
    await pay(part, 726);
    expect(await state(part)).toMatchObject({ amount_paid: 726, amount_due: 1000, payment_status: "uncollectible" });
  });

  it("404 for an unknown invoice, or another organization's or mode's; the list prints payment_status", async () => {
    const invoice = await finalizedInvoice(s, customer);
    expect((await s.rest("POST", "/v1/invoices/inv_000000000000000000000000/mark_uncollectible/")).status).toBe(404);
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      const res = await s.rest("POST", `/v1/invoices/${invoice}/mark_uncollectible/`, { key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect(await state(invoice)).toMatchObject({ payment_status: "unpaid", marked_uncollectible_at: null });
    const list = await s.rest("GET", "/v1/invoices/?page_size=100");
    const listed = list.body.results.find((r: { id: string }) => r.id === invoice);
    expect(listed).toMatchObject({ payment_status: "unpaid", amount_due: 2916, marked_uncollectible_at: null });
  });
});

describe("GraphQL", () => {
  it("paymentStatus and markInvoiceUncollectible", async () => {
    const invoice = await finalizedInvoice(s, customer);
    const mark = `mutation($id: ID!) { markInvoiceUncollectible(id: $id) { id paymentStatus amountDue amountPaid
      markedUncollectibleAt } }`;
    const marked = await s.graphql(mark, { id: invoice });
    expect(marked.body.errors).toBeUndefined();
    expect(marked.body.data.markInvoiceUncollectible).toMatchObject({
      id: invoice,
      paymentStatus: "uncollectible",
      amountDue: "2916",
      amountPaid: "0",
    });
    expect(marked.body.data.markInvoiceUncollectible.markedUncollectibleAt).toMatch(/Z$/);
    const again = await s.graphql(mark, { id: invoice });
    expect(again.body.errors[0].extensions.code).toBe("invalid_state");
    const missing = await s.graphql(mark, { id: "inv_000000000000000000000000" });
    expect(missing.body.errors[0].extensions.code).toBe("not_found");
    const read = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Invoice { paymentStatus } } }`, {
      id: invoice,
    });
    expect(read.body.data.node.paymentStatus).toBe("uncollectible");
    const types = await s.graphql(`{ events(first: 1, where: { type: { equals: invoice_marked_uncollectible } }) {
      edges { node { type } } } }`);
    expect(types.body.data.events.edges[0].node.type).toBe("invoice_marked_uncollectible");
  });
});
