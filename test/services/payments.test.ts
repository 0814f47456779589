/**
 * services/payments.ts createPayment and authorizePayment (with the built-in test gateway's cards) called directly
 * against a finalized invoice: the stored payment and charge, what is paid and due on the invoice after it
 * (services/invoice-balances.ts) and its payment status (domain/payments.ts invoicePaymentStatus, as the API
 * prints it), the events each transaction writes, and the overpayments refused both at create and at the charge.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoicePaymentStatus } from "../../src/domain/payments.js";
import { invoiceBalances } from "../../src/services/invoice-balances.js";
import { createInvoice, finalizeInvoice } from "../../src/services/invoices.js";
import { authorizePayment, createPayment, createSource } from "../../src/services/payments.js";
import {
  chileanCustomerOf,
  rejection,
  startServiceDatabase,
  type ServiceDatabase,
} from "../helpers/service-context.js";

let s: ServiceDatabase;
let customerId: string;
beforeAll(async () => {
  s = await startServiceDatabase();
  customerId = await chileanCustomerOf(s);
});
afterAll(async () => s?.close());

/** A finalized CL33 of 10 000 taxable: total 11 900 CLP. */
async function finalizedInvoice() {
  const draft = await createInvoice(s.acme, { customer: customerId, lines: [{ name: "Plan Pro", amount: 10000 }] });
  return finalizeInvoice(s.acme, draft.id);
}

/** A reusable test card of the customer (infra/gateways/test-cards.ts). */
async function card(token = "tok_visa") {
  return createSource(s.acme, { gateway: "test", customer: customerId, data: { token } });
}

/** What is paid and due on the invoice, and its payment status, as the API reads them. */
async function balance(invoiceId: string) {
  const [b] = await invoiceBalances(s.acme, [invoiceId]);
  const invoice = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
  const status = invoicePaymentStatus({
    status: invoice.status,
    due: b.due,
    paid: b.paid,
    markedUncollectible: invoice.markedUncollectibleAt !== null,
  });
  return { paid: b.paid, due: b.due, inFlight: b.inFlight, status };
}

/** The events of an invoice before it is paid. */
const DRAFTING = ["invoice.created", "invoice.finalized"];

/** The events of `objectIds`, oldest first: type, object and the time of the transaction that wrote them. */
async function eventsOf(...objectIds: string[]) {
  const events = await s.database.prisma.event.findMany({
    where: { objectId: { in: objectIds } },
    orderBy: { sequence: "asc" },
  });
  return events.map((e) => ({
    type: e.type,
    objectId: e.objectId,
    at: e.createdAt.getTime(),
    data: JSON.parse(e.data),
  }));
}

describe("createPayment against a finalized invoice", () => {
  it("takes the invoice's customer and currency, awaits a payment method, and changes nothing due", async () => {
    const invoice = await finalizedInvoice();
    const payment = await createPayment(s.acme, { invoice: invoice.id, amount: 4000, metadata: { ref: "A-1" } });
    const row = await s.database.prisma.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(row).toMatchObject({
      organizationId: s.acme.auth.organizationId,
      testMode: true,
      invoiceId: invoice.id,
      customerId,
      currencyId: "CLP",
      status: "requires_payment_method",
      sourceId: null,
      paymentDate: null,
      metadata: { ref: "A-1" },
      userEmail: "ops@acme.cl",
    });
    expect(row.amount.toString()).toBe("4000");
    expect(await balance(invoice.id)).toEqual({ paid: "0", due: "11900", inFlight: "0", status: "unpaid" });
    expect((await eventsOf(payment.id)).map((e) => e.type)).toEqual(["payment.created"]);
  });

  it("refuses more than is due (400 on amount, naming what is due) and a draft invoice, storing nothing", async () => {
    const invoice = await finalizedInvoice();
    const draft = await createInvoice(s.acme, { customer: customerId, lines: [{ name: "x", amount: 1000 }] });
    const before = [await s.database.prisma.payment.count(), await s.database.prisma.event.count()];
    const over = await rejection(createPayment(s.acme, { invoice: invoice.id, amount: 11901 }));
    expect([over.code, over.status]).toEqual(["validation_error", 400]);
    expect(over.fields).toEqual({ amount: [`exceeds what is due on invoice ${invoice.id}: 11900 CLP`] });
    const drafted = await rejection(createPayment(s.acme, { invoice: draft.id, amount: 100 }));
    expect(drafted.fields).toEqual({ invoice: [`${draft.id} is a draft; only finalized invoices are paid`] });
    const other = await rejection(createPayment(s.acme, { invoice: invoice.id, amount: 100, currency: "USD" }));
    expect(other.fields).toEqual({ currency: ["must be the invoice's currency CLP"] });
    expect([await s.database.prisma.payment.count(), await s.database.prisma.event.count()]).toEqual(before);
  });
});

describe("authorizePayment with a test card", () => {
  it("a partial payment succeeds: one succeeded charge, 4 000 paid, 7 900 due, partially_paid", async () => {
    const invoice = await finalizedInvoice();
    const payment = await createPayment(s.acme, { invoice: invoice.id, amount: 4000 });
    const source = await card();
    const paid = await authorizePayment(s.acme, payment.id, source.id);
    expect(paid).toMatchObject({ status: "succeeded", sourceId: source.id, failureReason: null });
    expect(paid.paymentDate).toBeInstanceOf(Date);
    const charges = await s.database.prisma.paymentCharge.findMany({ where: { paymentId: payment.id } });
    expect(charges.map((c) => [c.attempt, c.status, String(c.amount), c.gateway, c.reference])).toEqual([
      [1, "succeeded", "4000", "test", `test_${charges[0].id}`],
    ]);
    expect(await balance(invoice.id)).toEqual({ paid: "4000", due: "7900", inFlight: "0", status: "partially_paid" });
    // something is still due: no invoice.paid
    const events = await eventsOf(payment.id, invoice.id);
    expect(events.map((e) => [e.type, e.objectId])).toEqual([
      ["invoice.created", invoice.id],
      ["invoice.finalized", invoice.id],
      ["payment.created", payment.id],
      ["payment.succeeded", payment.id],
    ]);
    // the event prints the payment as the transaction that settled it left it
    expect(events[3].data.object).toMatchObject({ id: payment.id, status: "succeeded", amount: 4000 });
  });

  it("the payment of what is left makes it paid: invoice.paid written in the settling transaction", async () => {
    const invoice = await finalizedInvoice();
    const first = await createPayment(s.acme, { invoice: invoice.id, amount: 4000 });
    await authorizePayment(s.acme, first.id, (await card()).id);
    const rest = await createPayment(s.acme, { invoice: invoice.id, amount: 7900 });
    await authorizePayment(s.acme, rest.id, (await card("tok_mastercard")).id);
    expect(await balance(invoice.id)).toEqual({ paid: "11900", due: "0", inFlight: "0", status: "paid" });
    const events = (await eventsOf(rest.id, invoice.id)).filter((e) => !DRAFTING.includes(e.type));
    expect(events.map((e) => [e.type, e.objectId])).toEqual([
      ["payment.created", rest.id],
      ["payment.succeeded", rest.id],
      ["invoice.paid", invoice.id],
    ]);
    // the time of an event is its transaction's start (now()): the two of the settlement share it
    expect(events[2].at).toBe(events[1].at);
    // nothing is due any more: even 1 peso is refused
    const more = await rejection(createPayment(s.acme, { invoice: invoice.id, amount: 1 }));
    expect(more.fields).toEqual({ amount: [`exceeds what is due on invoice ${invoice.id}: 0 CLP`] });
  });

  it("refuses at the charge a payment that no longer fits what is due (400 on amount), writing nothing", async () => {
    const invoice = await finalizedInvoice();
    // both fit when created (11 900 due each time); the first one charged leaves 3 900
    const a = await createPayment(s.acme, { invoice: invoice.id, amount: 8000 });
    const b = await createPayment(s.acme, { invoice: invoice.id, amount: 8000 });
    await authorizePayment(s.acme, a.id, (await card()).id);
    const source = await card();
    const eventsBefore = await s.database.prisma.event.count();
    const error = await rejection(authorizePayment(s.acme, b.id, source.id));
    expect([error.code, error.status]).toEqual(["validation_error", 400]);
    expect(error.fields).toEqual({ amount: [`exceeds what is due on invoice ${invoice.id}: 3900 CLP`] });
    expect(await s.database.prisma.payment.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({
      status: "requires_payment_method",
      sourceId: null,
    });
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: b.id } })).toBe(0);
    expect(await s.database.prisma.event.count()).toBe(eventsBefore);
    expect(await balance(invoice.id)).toEqual({ paid: "8000", due: "3900", inFlight: "0", status: "partially_paid" });
  });

  it("a declined card leaves the payment awaiting a method with the reason, and nothing paid", async () => {
    const invoice = await finalizedInvoice();
    const payment = await createPayment(s.acme, { invoice: invoice.id, amount: 11900 });
    const declined = await authorizePayment(s.acme, payment.id, (await card("tok_chargeDeclinedInsufficientFunds")).id);
    expect(declined).toMatchObject({ status: "requires_payment_method", paymentDate: null });
    expect(declined.failureReason).toMatch(/^insufficient_funds: /);
    const charges = await s.database.prisma.paymentCharge.findMany({ where: { paymentId: payment.id } });
    expect(charges.map((c) => [c.attempt, c.status, c.failureCode])).toEqual([[1, "declined", "insufficient_funds"]]);
    expect(await balance(invoice.id)).toEqual({ paid: "0", due: "11900", inFlight: "0", status: "unpaid" });
    const events = (await eventsOf(payment.id, invoice.id)).filter((e) => !DRAFTING.includes(e.type));
    expect(events.map((e) => [e.type, e.objectId])).toEqual([
      ["payment.created", payment.id],
      ["payment.failed", payment.id],
      ["invoice.payment_failed", invoice.id],
    ]);
    expect(events[2].at).toBe(events[1].at);
  });
});
