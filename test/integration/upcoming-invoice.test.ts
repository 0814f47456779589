/**
 * The upcoming invoice of a subscription (GraphQL upcomingInvoice, GET
 * /v1/subscriptions/{id}/upcoming_invoice/): the next cycle computed by domain/billing-cycle.ts
 * from stored plans, addons, coupons and usage.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let subscription: any;
beforeAll(async () => {
  s = await startTestServer();
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  const product = (
    await s.rest("POST", "/v1/products/", {
      body: {
        name: "Nube",
        plans: [
          { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
          { name: "API", amount: 100, currency: "CLP", frequency: "monthly", usage_scheme: "metered", usage_aggregation: "sum" },
        ],
      },
    })
  ).body;
  const setup = (await s.rest("POST", "/v1/addons/", { body: { name: "Setup", amount: 9000, currency: "CLP", rates: [{ cycle: 1, percent: 50 }, { cycle: 2, percent: 25 }, { cycle: 3, percent: 25 }] } })).body;
  const welcome = (await s.rest("POST", "/v1/coupons/", { body: { name: "Bienvenida", amount: 10, discount_scheme: "%", duration_scheme: "once" } })).body;
  const res = await s.rest("POST", "/v1/subscriptions/", {
    body: { customer, date_start: "2026-11-01", lines: [{ plan: product.plans[0].id, quantity: 2 }, { plan: product.plans[1].id }], addons: [{ addon: setup.id, quantity: 1 }], coupon: welcome.id },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  subscription = res.body;
});
afterAll(async () => s?.close());

describe("upcoming invoice", () => {
  it("cycle 1: licensed seats in advance, the first setup share, the welcome coupon; no usage yet", async () => {
    const res = await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ subscription: subscription.id, cycle: 1, date: "2026-11-01", period_start: "2026-11-01", period_end: "2026-12-01", currency: "CLP", document: "CL33", discount: 10, discount_scheme: "%" });
    expect(res.body.lines.map((l: any) => [l.name, l.quantity, l.amount, l.total, l.period_start])).toEqual([
      ["Nube - Pro", 2, 10000, 20000, "2026-11-01"],
      ["Setup (share 1 of 3)", 1, 4500, 4500, "2026-11-01"],
    ]);
    // (20 000 + 4 500) - 10 % = 22 050; tax 4 190 (4 189.5 rounded half away from zero); total 26 240
    expect([res.body.amount, res.body.tax, res.body.total]).toEqual([22050, 4190, 26240]);
  });

  it("cycle 2: November's usage billed in arrears (not December's, nor billed usage), the second share, no coupon", async () => {
    const meteredLine = subscription.lines[1].id;
    for (const [quantity, at] of [[30, "2026-11-05T12:00:00-03:00"], [12, "2026-11-21T23:00:00-03:00"]] as const) {
      expect((await s.rest("POST", "/v1/usages/", { body: { subscription_line: meteredLine, quantity, date_time: at } })).status).toBe(201);
    }
    // December's usage (recorded later) and a usage an earlier invoice already billed are not in it
    const base = { organizationId: s.orgs.acme, testMode: true, subscriptionLineId: meteredLine };
    const billedBy = (await s.rest("POST", "/v1/invoices/", { body: { customer: subscription.customer.id, lines: [{ name: "x", amount: 1 }] } })).body.id;
    await s.database.prisma.usage.createMany({
      data: [
        { ...base, id: "usa_december0000000000000000", quantity: "500", dateTime: new Date("2026-12-01T03:00:00Z") },
        { ...base, id: "usa_billed000000000000000000", quantity: "7", dateTime: new Date("2026-11-10T12:00:00Z"), invoiceId: billedBy },
      ],
    });
    await s.database.prisma.subscription.update({ where: { id: subscription.id }, data: { nextBillingCycle: 2, couponRedemptions: 1 } });
    const addonRow = await s.database.prisma.subscriptionAddon.findFirstOrThrow({ where: { subscriptionId: subscription.id } });
    await s.database.prisma.subscriptionAddon.update({ where: { id: addonRow.id }, data: { addonRedemptions: 1 } });

    const gql = await s.graphql(
      `query($id: ID!) { upcomingInvoice(subscription: $id) { cycle periodStart periodEnd discount lines { name quantity amount total periodStart periodEnd subscriptionLine } amount tax total } }`,
      { id: subscription.id },
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.upcomingInvoice).toEqual({
      cycle: 2,
      periodStart: "2026-12-01",
      periodEnd: "2027-01-01",
      discount: "0",
      lines: [
        { name: "Nube - Pro", quantity: "2", amount: "10000", total: "20000", periodStart: "2026-12-01", periodEnd: "2027-01-01", subscriptionLine: subscription.lines[0].id },
        { name: "Nube - API", quantity: "42", amount: "100", total: "4200", periodStart: "2026-11-01", periodEnd: "2026-12-01", subscriptionLine: meteredLine },
        { name: "Setup (share 2 of 3)", quantity: "1", amount: "2250", total: "2250", periodStart: "2026-12-01", periodEnd: "2027-01-01", subscriptionLine: null },
      ],
      amount: "26450",
      tax: "5026",
      total: "31476",
    });
  });

  it("answers 409 for a paused or cancelled subscription and 404 for another organization's", async () => {
    expect((await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`, { key: s.keys.other })).status).toBe(404);
    await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id, reason: "vacaciones") { status } }`, { id: subscription.id });
    const paused = await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`);
    expect(paused.status).toBe(409);
    expect(paused.body.error.message).toContain("is paused");
    await s.graphql(`mutation($id: ID!) { resumeSubscription(id: $id) { status } }`, { id: subscription.id });
    await s.rest("DELETE", `/v1/subscriptions/${subscription.id}/`);
    expect((await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`)).status).toBe(409);
  });
});
