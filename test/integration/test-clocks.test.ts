/**
 * Test clocks (docs/test-clocks.md): create at a frozen time, attach a customer, its subscription
 * and usage live on the clock's time, the regular billing run leaves it alone, and advancing the
 * clock bills every cycle that came due. Live keys never see a clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBilling } from "../../src/services/billing-run.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let plans: { pro: string; api: string };
beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: {
      name: "Nube",
      plans: [
        { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
        {
          name: "API",
          amount: 100,
          currency: "CLP",
          frequency: "monthly",
          usage_scheme: "metered",
          usage_aggregation: "sum",
        },
      ],
    },
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  plans = { pro: product.body.plans[0].id, api: product.body.plans[1].id };
});
afterAll(async () => s?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

describe("test clocks", () => {
  it("are created, listed and read in test mode, and are a 403 for live keys", async () => {
    const res = await s.rest("POST", "/v1/test_clocks/", {
      body: { name: "Año uno", frozen_time: "2026-01-15T12:00:00Z" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^clk_/),
      name: "Año uno",
      frozen_time: "2026-01-15T12:00:00.000+00:00",
      status: "ready",
      customers: 0,
      created: expect.stringMatching(ISO),
      updated: expect.stringMatching(ISO),
    });
    expect((await s.rest("GET", `/v1/test_clocks/${res.body.id}/`)).body.frozen_time).toBe(
      "2026-01-15T12:00:00.000+00:00",
    );
    const list = await s.rest("GET", "/v1/test_clocks/");
    expect([list.status, list.body.count, list.body.results[0].id]).toEqual([200, 1, res.body.id]);

    const live = await s.rest("POST", "/v1/test_clocks/", {
      key: s.keys.acmeLive,
      body: { frozen_time: "2026-01-15T12:00:00Z" },
    });
    expect([live.status, live.body.error.code]).toEqual([403, "permission_denied"]);
    expect((await s.rest("GET", "/v1/test_clocks/", { key: s.keys.acmeLive })).status).toBe(403);
    expect((await s.rest("GET", `/v1/test_clocks/${res.body.id}/`, { key: s.keys.acmeLive })).status).toBe(404);
    expect((await s.rest("GET", `/v1/test_clocks/${res.body.id}/`, { key: s.keys.other })).status).toBe(404);
    expect(await s.database.prisma.testClock.count()).toBe(1);
  });

  it("refuses bad input with the field named, writing nothing", async () => {
    const before = await s.database.prisma.testClock.count();
    const missing = await s.rest("POST", "/v1/test_clocks/", { body: { name: "Sin hora" } });
    expect([missing.status, Object.keys(missing.body.error.fields)]).toEqual([400, ["frozen_time"]]);
    const bad = await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: "mañana" } });
    expect([bad.status, Object.keys(bad.body.error.fields)]).toEqual([400, ["frozen_time"]]);
    const liveCustomer = await s.rest("POST", "/v1/customers/", {
      key: s.keys.acmeLive,
      body: chileanCustomer({ test_clock: "clk_nope" }),
    });
    expect([liveCustomer.status, liveCustomer.body.error.fields.test_clock]).toEqual([
      400,
      ["test clocks exist in test mode only"],
    ]);
    const unknown = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: "clk_nope" }) });
    expect([unknown.status, unknown.body.error.fields.test_clock]).toEqual([400, ["no test clock clk_nope"]]);
    expect(await s.database.prisma.testClock.count()).toBe(before);
  });

  it("bills a year of renewals on the clock's time when advanced, and only then", async () => {
    const clock = (
      await s.rest("POST", "/v1/test_clocks/", { body: { name: "Renovaciones", frozen_time: "2026-01-15T12:00:00Z" } })
    ).body;
    const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock.id }) });
    expect([customer.status, customer.body.test_clock]).toEqual([201, clock.id]);
    // a card on file: the run collects each invoice with it (without one, the no-card rule would end the subscription)
    const card = await s.rest("POST", "/v1/sources/", {
      body: { gateway: "test", customer: customer.body.id, data: { token: "tok_visa" } },
    });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    const change = await s.rest("PATCH", `/v1/customers/${customer.body.id}/`, { body: { test_clock: null } });
    expect([change.status, change.body.error.fields.test_clock]).toEqual([
      400,
      ["is set when the customer is created and cannot change"],
    ]);

    // the subscription starts on the clock's day, not today (2026-11-23 when this was written)
    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: { customer: customer.body.id, lines: [{ plan: plans.pro }, { plan: plans.api }] },
    });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    expect([sub.body.date_start, sub.body.next_billing, sub.body.next_billing_cycle]).toEqual([
      "2026-01-15",
      "2026-01-15",
      1,
    ]);
    const meteredLine = sub.body.lines.find((l: any) => l.plan.id === plans.api).id;

    // usage without a time is recorded at the clock's time; "in the future" is measured from it
    const usage = await s.rest("POST", "/v1/usages/", { body: { subscription_line: meteredLine, quantity: 5 } });
    expect([usage.status, usage.body.date_time]).toEqual([201, "2026-01-15T12:00:00.000+00:00"]);
    const future = await s.rest("POST", "/v1/usages/", {
      body: { subscription_line: meteredLine, quantity: 1, date_time: "2026-01-20T12:00:00Z" },
    });
    expect([future.status, Object.keys(future.body.error.fields)]).toEqual([400, ["date_time"]]);

    // the regular run (real time) does not touch the clock's subscription
    const regular = await runBilling({ prisma: s.database.prisma, until: "2026-12-31", collect: false });
    expect(regular.invoices).toBe(0);
    expect(await s.database.prisma.invoice.count({ where: { subscriptionId: sub.body.id } })).toBe(0);

    const advanced = await s.rest("POST", `/v1/test_clocks/${clock.id}/advance/`, {
      body: { frozen_time: "2026-04-20T12:00:00Z" },
    });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect(advanced.body).toMatchObject({
      id: clock.id,
      frozen_time: "2026-04-20T12:00:00.000+00:00",
      status: "ready",
      customers: 1,
    });

    const invoices = await s.database.prisma.invoice.findMany({
      where: { subscriptionId: sub.body.id },
      orderBy: { billingCycle: "asc" },
    });
    expect(
      invoices.map((i) => [
        i.billingCycle,
        i.status,
        i.date.toISOString().slice(0, 10),
        i.amount.toString(),
        i.total.toString(),
      ]),
    ).toEqual([
      [1, "finalized", "2026-01-15", "10000", "11900"],
      // cycle 2 also bills January's 5 API calls (metered lines bill the period that ended): 10 000 + 500
      [2, "finalized", "2026-02-15", "10500", "12495"],
      [3, "finalized", "2026-03-15", "10000", "11900"],
      [4, "finalized", "2026-04-15", "10000", "11900"],
    ]);
    // billed in one request, so created at one instant: the lists break that tie by number, highest (newest) first
    expect(new Set(invoices.map((i) => i.createdAt.toISOString())).size).toBe(1);
    const numbers = invoices.map((i) => i.number!);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b)); // numbered cycle after cycle
    const newestFirst = invoices.map((i) => [i.id, i.number]).reverse();
    const listed = await s.graphql(
      `query($c: String!) { invoices(first: 10, where: { customer: { equals: $c } }) {
        edges { node { id number } } } }`,
      { c: customer.body.id },
    );
    expect(listed.body.data.invoices.edges.map((e: any) => [e.node.id, e.node.number])).toEqual(newestFirst);
    const ofCustomer = await s.graphql(
      `query($c: ID!) { node(id: $c) { ... on Customer { invoices(first: 10) { edges { node { id number } } } } } }`,
      { c: customer.body.id },
    );
    expect(ofCustomer.body.data.node.invoices.edges.map((e: any) => [e.node.id, e.node.number])).toEqual(newestFirst);
    const rest = await s.rest("GET", `/v1/invoices/?customer=${customer.body.id}`);
    expect(rest.body.results.map((i: any) => [i.id, i.number])).toEqual(newestFirst);
    // page by page too: two pages of two, and the second page from REST's page number
    const second = await s.rest("GET", `/v1/invoices/?customer=${customer.body.id}&page=2&page_size=2`);
    expect(second.body.results.map((i: any) => i.id)).toEqual(newestFirst.slice(2).map(([id]) => id));

    const payments = await s.database.prisma.payment.findMany({
      where: { invoiceId: { in: invoices.map((i) => i.id) } },
    });
    const paymentOf = (invoiceId: string) =>
      payments.filter((p) => p.invoiceId === invoiceId).map((p) => [p.status, p.amount.toString()]);
    expect(invoices.flatMap((i) => paymentOf(i.id))).toEqual([
      ["succeeded", "11900"],
      ["succeeded", "12495"],
      ["succeeded", "11900"],
      ["succeeded", "11900"],
    ]);
    expect((await s.database.prisma.usage.findUniqueOrThrow({ where: { id: usage.body.id } })).invoiceId).toBe(
      invoices[1].id,
    );
    const after = (await s.rest("GET", `/v1/subscriptions/${sub.body.id}/`)).body;
    expect([after.next_billing, after.next_billing_cycle, after.previous_billing]).toEqual([
      "2026-05-15",
      5,
      "2026-04-15",
    ]);

    // time only moves forward; a clock with customers is kept
    const back = await s.rest("POST", `/v1/test_clocks/${clock.id}/advance/`, {
      body: { frozen_time: "2026-03-01T00:00:00Z" },
    });
    expect([back.status, Object.keys(back.body.error.fields)]).toEqual([400, ["frozen_time"]]);
    const del = await s.rest("DELETE", `/v1/test_clocks/${clock.id}/`);
    expect([del.status, del.body.error.code]).toEqual([409, "invalid_state"]);
  });

  it("cancels and pauses a clock's customer's subscriptions at the clock's time", async () => {
    const clock = (
      await s.rest("POST", "/v1/test_clocks/", { body: { name: "Bajas", frozen_time: "2026-03-20T15:30:00Z" } })
    ).body;
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock.id }) })).body;
    const subscribe = async () =>
      (await s.rest("POST", "/v1/subscriptions/", { body: { customer: customer.id, lines: [{ plan: plans.pro }] } }))
        .body.id;
    const [cancelled, paused] = [await subscribe(), await subscribe()];
    const cancel = await s.rest("DELETE", `/v1/subscriptions/${cancelled}/`);
    expect([cancel.status, cancel.body.status, cancel.body.cancelled]).toEqual([
      200,
      "cancelled",
      "2026-03-20T15:30:00.000+00:00",
    ]);
    const pause = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { status paused } }`, {
      id: paused,
    });
    expect(pause.body.data.pauseSubscription).toEqual({ status: "paused", paused: "2026-03-20T15:30:00.000Z" });
    // a customer without a clock is cancelled now
    const plain = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body;
    const sub = (
      await s.rest("POST", "/v1/subscriptions/", { body: { customer: plain.id, lines: [{ plan: plans.pro }] } })
    ).body.id;
    const before = Date.now();
    const now = await s.rest("DELETE", `/v1/subscriptions/${sub}/`);
    expect(Date.parse(now.body.cancelled)).toBeGreaterThanOrEqual(before - 1000);
  });

  it("advances through GraphQL too, and deletes a clock without customers", async () => {
    const created = await s.graphql(
      `mutation { createTestClock(input: { frozenTime: "2026-06-01T00:00:00Z" }) { id frozenTime customers } }`,
    );
    const id = created.body.data.createTestClock.id;
    const advanced = await s.graphql(
      `mutation($id: ID!) { advanceTestClock(id: $id, input: { frozenTime: "2026-07-01T00:00:00Z" }) { frozenTime ` +
        `status } }`,
      { id },
    );
    expect(advanced.body.data.advanceTestClock).toEqual({ frozenTime: "2026-07-01T00:00:00.000Z", status: "ready" });
    expect((await s.rest("DELETE", `/v1/test_clocks/${id}/`)).status).toBe(204);
    expect(await s.database.prisma.testClock.count({ where: { id } })).toBe(0);
  });
});
