import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/infra/ids.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

async function finalizedInvoice(customer: string, body: Record<string, unknown>) {
  const inv = (await s.rest("POST", "/v1/invoices/", { body: { customer, ...body } })).body;
  const fin = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`);
  expect(fin.status).toBe(200);
  return fin.body;
}

describe("customer aggregations", () => {
  it(
    "sums finalized invoices, this month's sales, and the balance after credit notes and succeeded " + "payments",
    async () => {
      const a = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "A" }) })).body.id;
      const b = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "B" }) })).body.id;
      const c = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "C" }) })).body.id;

      // A: 2916 this month, 2797 two months ago, a draft (not counted), 119 USD (other currency)
      const inv1 = await finalizedInvoice(a, {
        lines: [
          { name: "x", quantity: 2, amount: 1000 },
          { name: "y", amount: 500, discount: 10 },
        ],
      });
      expect(inv1.total).toBe(2916);
      await finalizedInvoice(a, { date: daysAgo(62), lines: [{ name: "z", amount: 2350 }] });
      await s.rest("POST", "/v1/invoices/", { body: { customer: a, lines: [{ name: "draft", amount: 1000 }] } });
      await finalizedInvoice(a, { currency: "USD", lines: [{ name: "usd", amount: 100 }] });
      // B: 1190 this month
      await finalizedInvoice(b, { lines: [{ name: "w", amount: 1000 }] });

      // credit notes of inv1: 420 + 80 tax = 500 finalized (counts), 252 + 48 tax = 300 draft (does not)
      const finalizedNote = (
        await s.rest("POST", "/v1/creditnotes/", { body: { invoice: inv1.id, lines: [{ name: "n", amount: 420 }] } })
      ).body;
      expect(finalizedNote.total).toBe(500);
      expect((await s.rest("GET", `/v1/creditnotes/${finalizedNote.id}/finalize/`)).status).toBe(200);
      expect(
        (await s.rest("POST", "/v1/creditnotes/", { body: { invoice: inv1.id, lines: [{ name: "d", amount: 252 }] } }))
          .body.total,
      ).toBe(300);

      // payments are rows until their API lands (issue 4)
      const base = {
        organizationId: s.orgs.acme,
        testMode: true,
        userEmail: "ops@acme.cl",
        currencyId: "CLP",
        date: new Date(),
      };
      await s.database.prisma.payment.createMany({
        data: [
          { ...base, id: newId("pay"), customerId: a, amount: "1000", status: "succeeded" },
          { ...base, id: newId("pay"), customerId: a, amount: "200", status: "processing" },
          { ...base, id: newId("pay"), customerId: b, amount: "50", currencyId: "USD", status: "succeeded" },
        ],
      });

      const aggregationsOf = async (id: string) => (await s.rest("GET", `/v1/customers/${id}/`)).body.aggregations;
      expect(await aggregationsOf(a)).toEqual({ balance: 4213, sales: 5713, sales_current_period: 2916 });
      expect(await aggregationsOf(b)).toEqual({ balance: 1190, sales: 1190, sales_current_period: 1190 });
      expect(await aggregationsOf(c)).toEqual({ balance: 0, sales: 0, sales_current_period: 0 });

      const list = await s.rest("GET", "/v1/customers/?name__in=A,B");
      const byName = Object.fromEntries(list.body.results.map((r: any) => [r.name, r.aggregations]));
      expect(byName).toEqual({
        A: { balance: 4213, sales: 5713, sales_current_period: 2916 },
        B: { balance: 1190, sales: 1190, sales_current_period: 1190 },
      });

      const gql = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on Customer { aggregations { currency balance sales ` +
          `salesCurrentPeriod } } } }`,
        { id: a },
      );
      expect(gql.body.data.node.aggregations).toEqual({
        currency: "CLP",
        balance: "4213",
        sales: "5713",
        salesCurrentPeriod: "2916",
      });
    },
  );

  it("computes every customer of a list page in one aggregation query", async () => {
    for (let i = 0; i < 3; i++) await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: `Q${i}` }) });
    s.queries.length = 0;
    const res = await s.graphql(`{ customers(first: 20) { edges { node { id aggregations { sales } } } } }`);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.customers.edges.length).toBeGreaterThanOrEqual(6);
    // the raw aggregation query is not a model operation; its organization lookup runs once
    expect(s.queries.filter((q) => q === "Organization.findUniqueOrThrow")).toHaveLength(1);
  });
});
