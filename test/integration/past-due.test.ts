/**
 * Past-due subscriptions (docs/dunning.md "Past-due subscriptions"), driven by test clocks: a declined renewal
 * charge makes the subscription `past_due` (`subscription.past_due`); it keeps being billed; paying its latest cycle
 * invoice makes it `active` again (`subscription.updated`, previous_attributes `status: past_due`), paying an older
 * one does not. Without a card, the overdue sweep makes it past due the day after the invoice's due date, and
 * marking that invoice uncollectible makes it active again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let plan: string;
beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
  });
  expect(product.status, product.text).toBe(201);
  plan = product.body.plans[0].id;
});
afterAll(async () => s?.close());

/** A clock at `time`, a customer on it (with a card of `token`, when given) and a subscription to the plan. */
async function subscribed(time: string, token: string | null, extra: Record<string, unknown> = {}) {
  const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: time } })).body.id as string;
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock }) })).body
    .id as string;
  if (token) {
    const card = await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token } } });
    expect(card.status, card.text).toBe(201);
  }
  const sub = await s.rest("POST", "/v1/subscriptions/", { body: { customer, lines: [{ plan }], ...extra } });
  expect(sub.status, sub.text).toBe(201);
  return { clock, customer, subscription: sub.body.id as string };
}

async function advance(clock: string, time: string) {
  const res = await s.rest("POST", `/v1/test_clocks/${clock}/advance/`, { body: { frozen_time: time } });
  expect(res.body.status, res.text).toBe("ready");
}

const statusOf = async (subscription: string) =>
  (await s.rest("GET", `/v1/subscriptions/${subscription}/`)).body.status as string;

/** The subscription's invoices, oldest cycle first, with what is due on each (REST). */
async function invoicesOf(subscription: string): Promise<{ id: string; amount_due: number }[]> {
  const rows = await s.database.prisma.invoice.findMany({
    where: { subscriptionId: subscription },
    orderBy: { billingCycle: "asc" },
    select: { id: true },
  });
  const invoices = [];
  for (const { id } of rows)
    invoices.push({ id, amount_due: (await s.rest("GET", `/v1/invoices/${id}/`)).body.amount_due });
  return invoices;
}

/** The subscription events of `subscription`, oldest first: [type, previous status when given]. */
async function subscriptionEvents(subscription: string): Promise<[string, string | undefined][]> {
  const res = await s.rest("GET", "/v1/events/?page_size=100&type__in=subscription.past_due,subscription.updated");
  return (
    res.body.results
      // renewals write subscription.updated too (a new period): only the status changes here
      .filter((e: any) => e.data.object.id === subscription)
      .filter((e: any) => e.type === "subscription.past_due" || e.data.previous_attributes?.status !== undefined)
      .reverse()
      .map((e: any) => [e.type, e.data.previous_attributes?.status])
  );
}

/** Pauses `subscription` (GraphQL pauseSubscription); its status after. */
async function pause(subscription: string): Promise<string> {
  const res = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { status } }`, { id: subscription });
  expect(res.body.errors, JSON.stringify(res.body)).toBeUndefined();
  return res.body.data.pauseSubscription.status;
}

/** Pays what is due on `invoice` with a new card of the customer's. */
async function payWithNewCard(customer: string, invoice: string, amount: number) {
  const card = await s.rest("POST", "/v1/sources/", {
    body: { gateway: "test", customer, data: { token: "tok_visa" } },
  });
  const payment = await s.rest("POST", "/v1/payments/", { body: { invoice, amount } });
  expect(payment.status, payment.text).toBe(201);
  const charged = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, {
    body: { source: card.body.id },
  });
  expect(charged.body.status, charged.text).toBe("succeeded");
}

describe("past-due subscriptions", () => {
  it("a declined renewal makes it past_due; still billed; paying the latest cycle invoice: active", async () => {
    const { clock, customer, subscription } = await subscribed(
      "2026-03-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
    );
    expect(await statusOf(subscription)).toBe("active");
    await advance(clock, "2026-03-01T13:00:00Z");
    // cycle 1 billed, its charge declined: past due
    expect(await statusOf(subscription)).toBe("past_due");
    expect(await subscriptionEvents(subscription)).toEqual([["subscription.past_due", undefined]]);
    // the next renewal still bills it (and declines again: no second event, it was past due already)
    await advance(clock, "2026-04-01T13:00:00Z");
    const invoices = await invoicesOf(subscription);
    expect(invoices).toHaveLength(2);
    expect(invoices.map((i) => i.amount_due)).toEqual([11900, 11900]);
    expect(await statusOf(subscription)).toBe("past_due");
    expect(await subscriptionEvents(subscription)).toHaveLength(1);
    // paying the older cycle's invoice: the latest is still unpaid
    await payWithNewCard(customer, invoices[0].id, 11900);
    expect(await statusOf(subscription)).toBe("past_due");
    // paying the latest: active again, with subscription.updated saying what it was
    await payWithNewCard(customer, invoices[1].id, 11900);
    expect(await statusOf(subscription)).toBe("active");
    expect(await subscriptionEvents(subscription)).toEqual([
      ["subscription.past_due", undefined],
      ["subscription.updated", "past_due"],
    ]);
  });

  it("without a card, past_due the day after the due date; marking the invoice uncollectible ends it", async () => {
    const { clock, subscription } = await subscribed("2026-05-01T12:00:00Z", null, { expiration_days: 5 });
    await advance(clock, "2026-05-01T13:00:00Z");
    const [invoice] = await invoicesOf(subscription);
    expect(invoice.amount_due).toBe(11900);
    // due 2026-05-06: on the due date it is not overdue yet
    await advance(clock, "2026-05-06T20:00:00Z");
    expect(await statusOf(subscription)).toBe("active");
    await advance(clock, "2026-05-07T12:00:00Z");
    expect(await statusOf(subscription)).toBe("past_due");
    expect(await subscriptionEvents(subscription)).toEqual([["subscription.past_due", undefined]]);
    const marked = await s.rest("POST", `/v1/invoices/${invoice.id}/mark_uncollectible/`);
    expect(marked.status, marked.text).toBe(200);
    expect(await statusOf(subscription)).toBe("active");
    expect(await subscriptionEvents(subscription)).toEqual([
      ["subscription.past_due", undefined],
      ["subscription.updated", "past_due"],
    ]);
  });

  it("a past-due subscription can be paused and cancelled, and a paused one is not made past due", async () => {
    const { clock, subscription } = await subscribed("2026-06-01T12:00:00Z", "tok_chargeDeclined");
    await advance(clock, "2026-06-01T13:00:00Z");
    expect(await statusOf(subscription)).toBe("past_due");
    expect(await pause(subscription)).toBe("paused");
    const other = await subscribed("2026-06-01T12:00:00Z", null, { expiration_days: 1 });
    await advance(other.clock, "2026-06-01T13:00:00Z");
    expect(await pause(other.subscription)).toBe("paused");
    await advance(other.clock, "2026-06-05T12:00:00Z");
    expect(await statusOf(other.subscription)).toBe("paused");
    const cancelled = await s.rest("DELETE", `/v1/subscriptions/${subscription}/`);
    expect([200, 204]).toContain(cancelled.status);
    expect(await statusOf(subscription)).toBe("cancelled");
  });
});
