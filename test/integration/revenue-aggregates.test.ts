/**
 * Revenue analytics' maintained aggregates (docs/analytics.md "How it is computed"): GraphQL `revenueAnalytics`
 * (the aggregates, drained before reading) answers what the live statements (`liveRevenueAnalytics`, the reference)
 * compute from the documents, for varied data built through the API (cycles, cancellations, a pause, credit and
 * debit notes, payments for invoices and on account, another currency, test and live mode) and again after more
 * writes following a first read; the server's background drain empties the marks; an interrupted drain leaves its
 * customers marked and the sums unchanged.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Decimal } from "decimal.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { runContext } from "../../src/services/billing-run/run-context.js";
import { liveRevenueAnalytics, type RevenueAnalytics } from "../../src/services/revenue-analytics.js";
import { drainRevenueCustomers, drainRevenueRound, lockRevenueTenant } from "../../src/services/revenue-aggregates.js";
import { buildWorkedExample, ok as okOf } from "../helpers/revenue-example.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

const ANALYTICS = `query($currency: String!, $from: Date!, $to: Date!) {
  revenueAnalytics(currency: $currency, from: $from, to: $to, interval: month) {
    months { month monthEnd mrr newMrr expansionMrr contractionMrr churnedMrr activeSubscriptions activeCustomers
      invoiced creditNotes debitNotes iva collected outstanding overdue }
  }
}`;

/** The live answer as GraphQL prints it (decimals without trailing zeros). */
const printed = (answer: RevenueAnalytics) =>
  answer.months.map((m) =>
    Object.fromEntries(
      Object.entries(m).map(([k, v]) => [
        k,
        typeof v === "string" && k !== "month" && k !== "monthEnd" ? new Decimal(v).toFixed() : v,
      ]),
    ),
  );

/** GraphQL's answer for `key`'s organization and mode equals the live statements'; returns its months. */
async function expectLiveAnswer(
  s: TestServer,
  variables: { currency: string; from: string; to: string },
  tenant: { key?: string; organizationId: string; testMode: boolean },
) {
  const res = await s.graphql(ANALYTICS, variables, tenant.key);
  expect(res.body.errors).toBeUndefined();
  const ctx = runContext(s.database.prisma, DEFAULT_SETTINGS, () => new Date(), {
    organizationId: tenant.organizationId,
    testMode: tenant.testMode,
    userEmail: "analytics@acme.cl",
  });
  const live = await liveRevenueAnalytics(ctx, variables);
  expect(res.body.data.revenueAnalytics.months).toEqual(printed(live));
  return res.body.data.revenueAnalytics.months as Record<string, string | number>[];
}

const dirty = (s: TestServer) =>
  s.database.prisma.revenueDirtyCustomer.count({ where: { organizationId: s.orgs.acme } });

describe("revenue analytics' maintained aggregates", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());
  const ok = (method: string, path: string, body?: unknown) => okOf(s, method, path, body);
  const RANGE = { currency: "CLP", from: "2025-12-01", to: "2027-02-28" };
  const acmeTest = () => ({ organizationId: s.orgs.acme, testMode: true });

  it("answer what the live statements compute, for varied data and after more writes", async () => {
    await buildWorkedExample(s);
    // Fede: an invoice with a debit note and a partial card payment, and a payment on account
    const fede = await ok("POST", "/v1/customers/", chileanCustomer({ name: "Fede" }));
    const card = await ok("POST", "/v1/sources/", { gateway: "test", customer: fede.id, data: { token: "tok_visa" } });
    const invoice = await ok("POST", "/v1/invoices/", {
      customer: fede.id,
      date: "2026-03-15",
      due_date: "2026-04-15",
      lines: [{ name: "Asesoría", amount: 50000 }],
    });
    await ok("GET", `/v1/invoices/${invoice.id}/finalize/`);
    const debit = await ok("POST", "/v1/creditnotes/", {
      invoice: invoice.id,
      document: "CL56",
      date: "2026-04-02",
      lines: [{ name: "Intereses", amount: 500 }],
    });
    await ok("GET", `/v1/creditnotes/${debit.id}/finalize/`);
    const paid = await ok("POST", "/v1/payments/", { invoice: invoice.id, amount: 20000 });
    await ok("POST", `/v1/payments/${paid.id}/authorize/`, { source: card.id });
    const onAccount = await ok("POST", "/v1/payments/", { customer: fede.id, amount: 7000, currency: "CLP" });
    await ok("POST", `/v1/payments/${onAccount.id}/authorize/`, { source: card.id });
    // another currency
    const usd = await ok("POST", "/v1/invoices/", {
      customer: fede.id,
      currency: "USD",
      date: "2026-02-03",
      lines: [{ name: "Soporte", amount: 100.5 }],
    });
    await ok("GET", `/v1/invoices/${usd.id}/finalize/`);
    // live mode (its CL33 needs SII set up, so a draft only): none of the test data shows there
    const liveCustomer = await s.rest("POST", "/v1/customers/", {
      key: s.keys.acmeLive,
      body: chileanCustomer({ name: "Cliente real" }),
    });
    const liveDraft = await s.rest("POST", "/v1/invoices/", {
      key: s.keys.acmeLive,
      body: { customer: liveCustomer.body.id, date: "2026-02-10", lines: [{ name: "Plan", amount: 9000 }] },
    });
    expect(liveDraft.status, liveDraft.text).toBe(201);

    expect(await dirty(s)).toBeGreaterThan(0);
    const first = await expectLiveAnswer(s, RANGE, acmeTest());
    expect(await dirty(s)).toBe(0);
    // the worked example's months are still the page's
    expect(first.find((m) => m.month === "2026-03-01")).toMatchObject({ mrr: "65000", contractionMrr: "10000" });
    await expectLiveAnswer(s, { ...RANGE, currency: "USD" }, acmeTest());
    const live = await expectLiveAnswer(s, RANGE, {
      key: s.keys.acmeLive,
      organizationId: s.orgs.acme,
      testMode: false,
    });
    expect(live.every((m) => m.mrr === "0" && m.invoiced === "0" && m.collected === "0")).toBe(true);

    // more writes after that first read: a pause and a cancellation (today, in December 2026), a credit note on
    // Fede's invoice, another payment, a narrower range
    const subscriptions = (await ok("GET", "/v1/subscriptions/?status=active")).results as { id: string }[];
    expect(subscriptions.length).toBeGreaterThanOrEqual(2);
    const pause = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { status } }`, {
      id: subscriptions[0].id,
    });
    expect(pause.body.data.pauseSubscription.status).toBe("paused");
    await ok("DELETE", `/v1/subscriptions/${subscriptions[1].id}/`);
    const credit = await ok("POST", "/v1/creditnotes/", {
      invoice: invoice.id,
      date: "2026-05-20",
      lines: [{ name: "Descuento", amount: 5000 }],
    });
    await ok("GET", `/v1/creditnotes/${credit.id}/finalize/`);
    const more = await ok("POST", "/v1/payments/", { invoice: invoice.id, amount: 1000 });
    await ok("POST", `/v1/payments/${more.id}/authorize/`, { source: card.id });
    expect(await dirty(s)).toBeGreaterThan(0);
    const after = await expectLiveAnswer(s, RANGE, acmeTest());
    expect(after).not.toEqual(first);
    await expectLiveAnswer(s, { currency: "CLP", from: "2026-04-10", to: "2026-06-01" }, acmeTest());
    expect(await dirty(s)).toBe(0);
  }, 240_000); // the worked example's four months of test clock, then more: minutes on PGlite on a loaded machine

  it("leave an interrupted drain's customers marked and the sums unchanged", async () => {
    const customer = await ok("POST", "/v1/customers/", chileanCustomer({ name: "Gabi" }));
    const invoice = await ok("POST", "/v1/invoices/", {
      customer: customer.id,
      date: "2026-06-01",
      lines: [{ name: "Licencia", amount: 1000 }],
    });
    await ok("GET", `/v1/invoices/${invoice.id}/finalize/`);
    const marked = await dirty(s);
    expect(marked).toBeGreaterThan(0);
    const sums = () =>
      s.database.prisma.revenueFlow.findMany({
        where: { organizationId: s.orgs.acme, testMode: true },
        orderBy: [{ currencyId: "asc" }, { month: "asc" }, { kind: "asc" }, { dueMonth: "asc" }],
      });
    const before = await sums();
    await expect(
      s.database.prisma.$transaction(async (tx) => {
        await lockRevenueTenant(tx, acmeTest(), false);
        expect(await drainRevenueCustomers(tx, acmeTest(), 500)).toBeGreaterThan(0);
        expect(await tx.revenueDirtyCustomer.count({ where: { organizationId: s.orgs.acme } })).toBe(0);
        throw new Error("the drain's process dies here");
      }),
    ).rejects.toThrow("dies here");
    expect(await dirty(s)).toBe(marked);
    expect(await sums()).toEqual(before);
    // the next drain takes them
    expect((await drainRevenueRound(s.database.prisma)).customers).toBeGreaterThan(0);
    expect(await dirty(s)).toBe(0);
    expect(await sums()).not.toEqual(before);
    await expectLiveAnswer(s, RANGE, acmeTest());
  });
});

describe("the server's background drain", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ analyticsDrainIntervalMs: 50 });
  });
  afterAll(async () => s?.close());

  it("drains the marks without a reader", async () => {
    const customer = await okOf(s, "POST", "/v1/customers/", chileanCustomer({ name: "Hugo" }));
    const invoice = await okOf(s, "POST", "/v1/invoices/", {
      customer: customer.id,
      date: "2026-07-08",
      lines: [{ name: "Licencia", amount: 100000 }],
    });
    await okOf(s, "GET", `/v1/invoices/${invoice.id}/finalize/`);
    await vi.waitFor(async () => expect(await dirty(s)).toBe(0), { timeout: 20_000, interval: 50 });
    // the sums have the invoice before anyone asked: July 2026 is month index 2026 * 12 + 6
    const july = await s.database.prisma.revenueFlow.findMany({
      where: { organizationId: s.orgs.acme, testMode: true, currencyId: "CLP", month: 2026 * 12 + 6, kind: "invoice" },
    });
    expect(july.map((f) => [f.total.toFixed(), f.tax.toFixed()])).toEqual([["119000", "19000"]]);
    await expectLiveAnswer(
      s,
      { currency: "CLP", from: "2026-06-01", to: "2026-08-31" },
      { organizationId: s.orgs.acme, testMode: true },
    );
  });
});
