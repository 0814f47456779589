/**
 * Revenue analytics (docs/analytics.md): the page's worked example, built through the API on a test clock from
 * January to April 2026, read back with GraphQL `revenueAnalytics` and checked to the peso; mode and currency
 * isolation; bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorkedExample, ok as okOf, WORKED_EXAMPLE } from "../helpers/revenue-example.js";
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

const ok = (method: string, path: string, body?: unknown) => okOf(s, method, path, body);

describe("revenueAnalytics", () => {
  it("answers docs/analytics.md's worked example to the peso", async () => {
    await buildWorkedExample(s);
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
    const figures = WORKED_EXAMPLE;
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
