/**
 * Revenue analytics (docs/analytics.md): the page's worked example, built through the API on a test clock from
 * January to April 2026, read back with GraphQL `revenueAnalytics` and checked to the peso; mode and currency
 * isolation; bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { runContext } from "../../src/services/billing-run/run-context.js";
import { authorizePayment, createPayment } from "../../src/services/payments.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const ANALYTICS = `query($currency: String!, $from: Date!, $to: Date!) {
  revenueAnalytics(currency: $currency, from: $from, to: $to, interval: month) {
    currency
    months { month monthEnd mrr newMrr expansionMrr contractionMrr churnedMrr activeSubscriptions activeCustomers
      invoiced creditNotes debitNotes iva collected outstanding overdue }
  }
}`;

async function ok(method: string, path: string, body?: unknown) {
  const res = await s.rest(method, path, { body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** docs/analytics.md "A worked example", step by step. */
async function buildWorkedExample() {
  const product = await ok("POST", "/v1/products/", {
    name: "Nube",
    plans: [
      { name: "Básico", amount: 10000, currency: "CLP", frequency: "monthly" },
      { name: "Pro", amount: 25000, currency: "CLP", frequency: "monthly" },
      { name: "Anual", amount: 120000, currency: "CLP", frequency: "yearly" },
      { name: "API", amount: 100, currency: "CLP", frequency: "monthly", usage_scheme: "metered" },
    ],
  });
  const [basico, pro, anual, api] = product.plans.map((p: { id: string }) => p.id);
  const clock = await ok("POST", "/v1/test_clocks/", { name: "Analítica", frozen_time: "2026-01-10T12:00:00Z" });
  const advance = (at: string) => ok("POST", `/v1/test_clocks/${clock.id}/advance/`, { frozen_time: at });
  const customer = async (name: string) => {
    const c = await ok("POST", "/v1/customers/", chileanCustomer({ name, test_clock: clock.id }));
    const card = await ok("POST", "/v1/sources/", { gateway: "test", customer: c.id, data: { token: "tok_visa" } });
    return { id: c.id as string, card: card.id as string };
  };
  const subscribe = (c: { id: string }, lines: unknown[]) =>
    ok("POST", "/v1/subscriptions/", { customer: c.id, lines });

  // January 10: Ana (Básico), Beto (Anual), Caro (Pro) subscribe; their first cycles are billed and paid by card
  const [ana, beto, caro, eva] = [
    await customer("Ana"),
    await customer("Beto"),
    await customer("Caro"),
    await customer("Eva"),
  ];
  const anaSub = await subscribe(ana, [{ plan: basico }]);
  await subscribe(beto, [{ plan: anual }]);
  const caroSub = await subscribe(caro, [{ plan: pro }]);
  await advance("2026-01-10T13:00:00Z");
  // Ana goes to 3 seats from her next cycle (no proration)
  await ok("PATCH", `/v1/subscriptions/${anaSub.id}/`, {
    lines: [{ plan: basico, quantity: 3 }],
    proration_behavior: "none",
  });
  // Eva: an implementation invoice dated January 20, due February 5 (100,000 + IVA)
  const evaInvoice = await ok("POST", "/v1/invoices/", {
    customer: eva.id,
    date: "2026-01-20",
    due_date: "2026-02-05",
    lines: [{ name: "Implementación", amount: 100000 }],
  });
  expect((await ok("GET", `/v1/invoices/${evaInvoice.id}/finalize/`)).total).toBe(119000);

  // February 10: second cycles (Ana's 3 seats); Eva pays 50,000 by card that day
  await advance("2026-02-10T13:00:00Z");
  const february10 = runContext(s.database.prisma, DEFAULT_SETTINGS, () => new Date("2026-02-10T13:00:00Z"), {
    organizationId: s.orgs.acme,
    testMode: true,
    userEmail: "cobranza@acme.cl",
  });
  const partial = await createPayment(february10, { invoice: evaInvoice.id, amount: "50000" });
  expect((await authorizePayment(february10, partial.id, eva.card)).status).toBe("succeeded");
  // Dora subscribes to Básico and the metered API plan; Ana goes down to 2 seats from her next cycle
  const dora = await customer("Dora");
  const doraSub = await subscribe(dora, [{ plan: basico }, { plan: api }]);
  await ok("PATCH", `/v1/subscriptions/${anaSub.id}/`, {
    lines: [{ plan: basico, quantity: 2 }],
    proration_behavior: "none",
  });
  await advance("2026-02-10T14:00:00Z");
  await ok("POST", "/v1/usages/", { subscription_line: doraSub.lines[1].id, quantity: 5 });

  // March 5: a credit note of 10,000 + IVA for Eva's invoice
  const note = await ok("POST", "/v1/creditnotes/", {
    invoice: evaInvoice.id,
    date: "2026-03-05",
    lines: [{ name: "Descuento", amount: 10000 }],
  });
  expect((await ok("GET", `/v1/creditnotes/${note.id}/finalize/`)).total).toBe(11900);

  // March 10: third cycles (Dora's bills February's 5 API calls); Caro cancels at the end of her period
  await advance("2026-03-10T13:00:00Z");
  await ok("DELETE", `/v1/subscriptions/${caroSub.id}/?at_period_end=true`);
  // April 10: fourth cycles; Caro's subscription ends without an invoice
  await advance("2026-04-10T13:00:00Z");
  await advance("2026-04-30T13:00:00Z");
  expect((await ok("GET", `/v1/subscriptions/${caroSub.id}/`)).status).toBe("cancelled");
}

describe("revenueAnalytics", () => {
  it("answers docs/analytics.md's worked example to the peso", async () => {
    await buildWorkedExample();
    const res = await s.graphql(ANALYTICS, { currency: "CLP", from: "2026-01-01", to: "2026-04-30" });
    expect(res.body.errors).toBeUndefined();
    const months = res.body.data.revenueAnalytics.months;
    const columns = Object.keys(months[0]);
    expect(columns).toEqual([
      "month",
      "monthEnd",
      "mrr",
      "newMrr",
      "expansionMrr",
      "contractionMrr",
      "churnedMrr",
      "activeSubscriptions",
      "activeCustomers",
      "invoiced",
      "creditNotes",
      "debitNotes",
      "iva",
      "collected",
      "outstanding",
      "overdue",
    ]);
    expect(months.map((m: { month: string; monthEnd: string }) => [m.month, m.monthEnd])).toEqual([
      ["2026-01-01", "2026-01-31"],
      ["2026-02-01", "2026-02-28"],
      ["2026-03-01", "2026-03-31"],
      ["2026-04-01", "2026-04-30"],
    ]);
    // Decimal fields are JSON strings (exact), the counts Ints: compared as text
    const figures = [
      [45000, 45000, 0, 0, 0, 3, 3, 303450, 0, 0, 48450, 184450, 119000, 0],
      [75000, 10000, 20000, 0, 0, 4, 4, 77350, 0, 0, 12350, 127350, 69000, 69000],
      [65000, 0, 0, 10000, 0, 4, 4, 66045, 11900, 0, 8645, 66045, 57100, 57100],
      [40000, 0, 0, 0, 25000, 3, 3, 35700, 0, 0, 5700, 35700, 57100, 57100],
    ];
    expect(months.map((m: Record<string, unknown>) => Object.values(m).slice(2).map(String))).toEqual(
      figures.map((row) => row.map(String)),
    );
    expect(res.body.data.revenueAnalytics.currency).toBe("CLP");

    // one month before and after: December 2025 is empty; May 2026 keeps the subscriptions and the balance
    const wider = await s.graphql(ANALYTICS, { currency: "CLP", from: "2025-12-15", to: "2026-05-01" });
    const byMonth = Object.fromEntries(
      wider.body.data.revenueAnalytics.months.map((m: Record<string, unknown>) => [m.month, m]),
    );
    expect(Object.keys(byMonth)).toEqual([
      "2025-12-01",
      "2026-01-01",
      "2026-02-01",
      "2026-03-01",
      "2026-04-01",
      "2026-05-01",
    ]);
    expect([byMonth["2025-12-01"].mrr, byMonth["2025-12-01"].invoiced, byMonth["2025-12-01"].outstanding]).toEqual([
      "0",
      "0",
      "0",
    ]);
    // May 31: the April cycles covered up to May 10/12, and nothing bills after April 30 (the clock stopped)
    expect([byMonth["2026-05-01"].mrr, byMonth["2026-05-01"].churnedMrr, byMonth["2026-05-01"].outstanding]).toEqual([
      "10000",
      "30000",
      "57100",
    ]);
  });

  it("keeps currencies and modes apart", async () => {
    // a USD invoice in February (100 + IVA): USD's figures have it, CLP's do not change
    const customer = await ok("POST", "/v1/customers/", chileanCustomer({ name: "Importadora" }));
    const usdInvoice = await ok("POST", "/v1/invoices/", {
      customer: customer.id,
      currency: "USD",
      date: "2026-02-03",
      lines: [{ name: "Soporte", amount: 100 }],
    });
    expect((await ok("GET", `/v1/invoices/${usdInvoice.id}/finalize/`)).total).toBe(119);
    const usd = await s.graphql(ANALYTICS, { currency: "USD", from: "2026-01-01", to: "2026-04-30" });
    const pick = (m: { invoiced: string; iva: string; outstanding: string }) => [m.invoiced, m.iva, m.outstanding];
    expect(usd.body.data.revenueAnalytics.months.map(pick)).toEqual([
      ["0", "0", "0"],
      ["119", "19", "119"],
      ["0", "0", "119"],
      ["0", "0", "119"],
    ]);
    const clp = await s.graphql(ANALYTICS, { currency: "CLP", from: "2026-02-01", to: "2026-02-28" });
    expect(pick(clp.body.data.revenueAnalytics.months[0])).toEqual(["77350", "12350", "69000"]);
    const live = await s.graphql(ANALYTICS, { currency: "CLP", from: "2026-01-01", to: "2026-01-31" }, s.keys.acmeLive);
    expect(live.body.data.revenueAnalytics.months[0]).toMatchObject({ mrr: "0", invoiced: "0", collected: "0" });
    const other = await s.graphql(ANALYTICS, { currency: "CLP", from: "2026-01-01", to: "2026-01-31" }, s.keys.other);
    expect(other.body.data.revenueAnalytics.months[0]).toMatchObject({ mrr: "0", invoiced: "0", collected: "0" });
  });

  it("refuses bad input with the field named", async () => {
    const fieldOf = async (variables: Record<string, unknown>) => {
      const res = await s.graphql(ANALYTICS, variables);
      return [res.body.errors?.[0]?.extensions?.code, Object.keys(res.body.errors?.[0]?.extensions?.fields ?? {})];
    };
    expect(await fieldOf({ currency: "XXX", from: "2026-01-01", to: "2026-02-01" })).toEqual([
      "validation_error",
      ["currency"],
    ]);
    expect(await fieldOf({ currency: "CLP", from: "2026-03-01", to: "2026-02-01" })).toEqual([
      "validation_error",
      ["to"],
    ]);
    expect(await fieldOf({ currency: "CLP", from: "2016-01-01", to: "2026-02-01" })).toEqual([
      "validation_error",
      ["to"],
    ]);
  });
});
