/**
 * The upcoming invoice of a subscription (GraphQL upcomingInvoice, GET
 * /v1/subscriptions/{id}/upcoming_invoice/): the next cycle computed by domain/billing-cycle.ts
 * from stored plans, addons, coupons and usage; at the end of a subscription it equals what the
 * billing run does (nothing, or the final invoice).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { runBilling } from "../../src/services/billing-run.js";

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
    })
  ).body;
  const setup = (
    await s.rest("POST", "/v1/addons/", {
      body: {
        name: "Setup",
        amount: 9000,
        currency: "CLP",
        rates: [
          { cycle: 1, percent: 50 },
          { cycle: 2, percent: 25 },
          { cycle: 3, percent: 25 },
        ],
      },
    })
  ).body;
  const welcome = (
    await s.rest("POST", "/v1/coupons/", {
      body: { name: "Bienvenida", amount: 10, discount_scheme: "%", duration_scheme: "once" },
    })
  ).body;
  const res = await s.rest("POST", "/v1/subscriptions/", {
    body: {
      customer,
      date_start: "2026-11-01",
      lines: [{ plan: product.plans[0].id, quantity: 2 }, { plan: product.plans[1].id }],
      addons: [{ addon: setup.id, quantity: 1 }],
      coupon: welcome.id,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  subscription = res.body;
});
afterAll(async () => s?.close());

describe("upcoming invoice", () => {
  it("cycle 1: licensed seats in advance, the first setup share, the welcome coupon; no usage yet", async () => {
    const res = await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      subscription: subscription.id,
      cycle: 1,
      date: "2026-11-01",
      period_start: "2026-11-01",
      period_end: "2026-12-01",
      currency: "CLP",
      document: "CL33",
      discount: 10,
      discount_scheme: "%",
    });
    expect(res.body.lines.map((l: any) => [l.name, l.quantity, l.amount, l.total, l.period_start])).toEqual([
      ["Nube - Pro", 2, 10000, 20000, "2026-11-01"],
      ["Setup (share 1 of 3)", 1, 4500, 4500, "2026-11-01"],
    ]);
    // (20 000 + 4 500) - 10 % = 22 050; tax 4 190 (4 189.5 rounded half away from zero); total 26 240
    expect([res.body.amount, res.body.tax, res.body.total]).toEqual([22050, 4190, 26240]);
  });

  it(
    "cycle 2: November's usage billed in arrears (not December's, nor billed usage), the second share, " + "no coupon",
    async () => {
      const meteredLine = subscription.lines[1].id;
      for (const [quantity, at] of [
        [30, "2026-11-05T12:00:00-03:00"],
        [12, "2026-11-21T23:00:00-03:00"],
      ] as const) {
        expect(
          (await s.rest("POST", "/v1/usages/", { body: { subscription_line: meteredLine, quantity, date_time: at } }))
            .status,
        ).toBe(201);
      }
      // December's usage (recorded later) and a usage an earlier invoice already billed are not in it
      const base = { organizationId: s.orgs.acme, testMode: true, subscriptionLineId: meteredLine };
      const billedBy = (
        await s.rest("POST", "/v1/invoices/", {
          body: { customer: subscription.customer.id, lines: [{ name: "x", amount: 1 }] },
        })
      ).body.id;
      await s.database.prisma.usage.createMany({
        data: [
          { ...base, id: "usa_december0000000000000000", quantity: "500", dateTime: new Date("2026-12-01T03:00:00Z") },
          {
            ...base,
            id: "usa_billed000000000000000000",
            quantity: "7",
            dateTime: new Date("2026-11-10T12:00:00Z"),
            invoiceId: billedBy,
          },
        ],
      });
      await s.database.prisma.subscription.update({
        where: { id: subscription.id },
        data: { nextBillingCycle: 2, couponRedemptions: 1 },
      });
      const addonRow = await s.database.prisma.subscriptionAddon.findFirstOrThrow({
        where: { subscriptionId: subscription.id },
      });
      await s.database.prisma.subscriptionAddon.update({ where: { id: addonRow.id }, data: { addonRedemptions: 1 } });

      const gql = await s.graphql(
        `query($id: ID!) { upcomingInvoice(subscription: $id) { cycle periodStart periodEnd discount lines { name ` +
          `quantity amount total periodStart periodEnd subscriptionLine } amount tax total } }`,
        { id: subscription.id },
      );
      expect(gql.body.errors).toBeUndefined();
      expect(gql.body.data.upcomingInvoice).toEqual({
        cycle: 2,
        periodStart: "2026-12-01",
        periodEnd: "2027-01-01",
        discount: "0",
        lines: [
          {
            name: "Nube - Pro",
            quantity: "2",
            amount: "10000",
            total: "20000",
            periodStart: "2026-12-01",
            periodEnd: "2027-01-01",
            subscriptionLine: subscription.lines[0].id,
          },
          {
            name: "Nube - API",
            quantity: "42",
            amount: "100",
            total: "4200",
            periodStart: "2026-11-01",
            periodEnd: "2026-12-01",
            subscriptionLine: meteredLine,
          },
          {
            name: "Setup (share 2 of 3)",
            quantity: "1",
            amount: "2250",
            total: "2250",
            periodStart: "2026-12-01",
            periodEnd: "2027-01-01",
            subscriptionLine: null,
          },
        ],
        amount: "26450",
        tax: "5026",
        total: "31476",
      });
    },
  );

  it("answers 409 for a paused or cancelled subscription and 404 for another organization's", async () => {
    expect(
      (await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`, { key: s.keys.other })).status,
    ).toBe(404);
    await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id, reason: "vacaciones") { status } }`, {
      id: subscription.id,
    });
    const paused = await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`);
    expect(paused.status).toBe(409);
    expect(paused.body.error.message).toContain("is paused");
    await s.graphql(`mutation($id: ID!) { resumeSubscription(id: $id) { status } }`, { id: subscription.id });
    await s.rest("DELETE", `/v1/subscriptions/${subscription.id}/`);
    expect((await s.rest("GET", `/v1/subscriptions/${subscription.id}/upcoming_invoice/`)).status).toBe(409);
  });
});

describe("upcoming invoice at the end of a subscription (issue 15: the preview equals the run)", () => {
  const plan = async (body: Record<string, unknown>) => {
    const res = await s.rest("POST", "/v1/products/", {
      body: { name: "Fin", plans: [{ currency: "CLP", frequency: "monthly", ...body }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.plans[0].id as string;
  };
  const subscribe = async (body: Record<string, unknown>) => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const res = await s.rest("POST", "/v1/subscriptions/", { body: { customer, date_start: "2026-01-01", ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const preview = (id: string) => s.rest("GET", `/v1/subscriptions/${id}/upcoming_invoice/`);
  const run = (until: string) => runBilling({ prisma: s.database.prisma, until });
  const invoicesOf = (subscriptionId: string) =>
    s.database.prisma.invoice.findMany({ where: { subscriptionId }, orderBy: { billingCycle: "asc" } });

  it(
    "cancel at period end and end_date: the preview answers 409 with the date, and the run bills nothing (it showed " +
      "11 900 before)",
    async () => {
      const basic = await plan({ name: "Básico", amount: 10000 });
      const scheduled = await subscribe({ lines: [{ plan: basic }] });
      const ending = await subscribe({ lines: [{ plan: basic }], end_date: "2026-02-01" });
      await run("2026-01-01");
      expect((await s.rest("DELETE", `/v1/subscriptions/${scheduled.id}/?at_period_end=true`)).status).toBe(200);
      for (const [sub, words] of [
        [scheduled, "set to cancel at the end of its period"],
        [ending, "its end_date is reached"],
      ] as const) {
        const res = await preview(sub.id);
        expect(res.status, res.text).toBe(409);
        expect(res.body.error.code).toBe("invalid_state");
        expect(res.body.error.message).toContain(words);
        expect(res.body.error.message).toContain("cancels it on 2026-02-01 instead of billing cycle 2");
      }
      await run("2026-02-01");
      for (const sub of [scheduled, ending]) {
        expect((await invoicesOf(sub.id)).map((i) => [i.billingCycle, i.total.toString()])).toEqual([[1, "11900"]]);
        expect((await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body.status).toBe("cancelled");
      }
    },
  );

  it(
    "no card: an unpaid, past-due previous invoice and no card make the preview a 409, as the run cancels " +
      "with no_card",
    async () => {
      const basic = await plan({ name: "Básico", amount: 10000 });
      const sub = await subscribe({ lines: [{ plan: basic }], expiration_days: 10 });
      await run("2026-01-01");
      const res = await preview(sub.id);
      expect(res.status, res.text).toBe(409);
      expect(res.body.error.message).toContain("no_card");
      await run("2026-02-01");
      expect((await invoicesOf(sub.id)).map((i) => i.billingCycle)).toEqual([1]);
      expect((await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body.cancel_reason).toBe("no_card");
    },
  );

  it(
    "the final invoice: a metered plan cancelled at period end bills its last period's usage, previewed and " +
      "billed alike",
    async () => {
      const api = await plan({ name: "API", amount: 100, usage_scheme: "metered" });
      const basic = await plan({ name: "Básico", amount: 10000 });
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
      expect(
        (
          await s.rest("POST", "/v1/sources/", {
            body: { customer, gateway: "test", usage: "reusable", data: { token: "tok_visa" } },
          })
        ).status,
      ).toBe(201);
      const sub = (
        await s.rest("POST", "/v1/subscriptions/", {
          body: { customer, date_start: "2026-01-01", lines: [{ plan: basic }, { plan: api }] },
        })
      ).body;
      await run("2026-01-01");
      for (const [quantity, at] of [
        [30, "2026-01-05T12:00:00-03:00"],
        [12, "2026-01-31T20:59:59-03:00"],
      ] as const) {
        expect(
          (
            await s.rest("POST", "/v1/usages/", {
              body: { subscription_line: sub.lines[1].id, quantity, date_time: at },
            })
          ).status,
        ).toBe(201);
      }
      expect(
        (await s.rest("DELETE", `/v1/subscriptions/${sub.id}/?at_period_end=true&cancel_reason=too_expensive`)).status,
      ).toBe(200);
      const res = await preview(sub.id);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        cycle: 2,
        final: true,
        date: "2026-02-01",
        period_start: "2026-01-01",
        period_end: "2026-02-01",
      });
      expect(res.body.lines.map((l: any) => [l.name, l.description, l.quantity, l.amount, l.total])).toEqual([
        ["Fin - API", "usage 2026-01-01 to 2026-02-01", 42, 100, 4200],
      ]);
      expect([res.body.amount, res.body.tax, res.body.total]).toEqual([4200, 798, 4998]);

      const summary = await run("2026-02-01");
      expect(summary.errors).toEqual([]);
      const [, last] = await invoicesOf(sub.id);
      const invoice = (await s.rest("GET", `/v1/invoices/${last.id}/`)).body;
      expect([
        last.billingCycle,
        invoice.status,
        invoice.date,
        invoice.period_start,
        invoice.period_end,
        invoice.total,
      ]).toEqual([2, "finalized", "2026-02-01", "2026-01-01", "2026-02-01", 4998]);
      expect(invoice.lines.map((l: any) => [l.name, l.description, l.quantity, l.amount, l.total])).toEqual(
        res.body.lines.map((l: any) => [l.name, l.description, l.quantity, l.amount, l.total]),
      );
      const after = (await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body;
      expect([after.status, after.cancel_reason, after.next_billing_cycle]).toEqual(["cancelled", "too_expensive", 2]);
      const usages = await s.database.prisma.usage.findMany({ where: { subscriptionLineId: sub.lines[1].id } });
      expect(usages.every((u) => u.invoiceId === last.id)).toBe(true);
    },
  );
});
