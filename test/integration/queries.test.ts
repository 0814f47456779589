import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const LIST =
  `{ invoices(first: 50) { totalCount edges { node { id total customer { name country { name } state { ` +
  `name } } document { name currency { id } } currency { id } lines { name total } payments { id } } } } }`;

async function queriesFor(query: string) {
  s.queries.length = 0;
  const res = await s.graphql(query);
  expect(res.body.errors).toBeUndefined();
  return [...s.queries];
}

describe("query counts (no N+1)", () => {
  it(
    "loads an invoice list with nested customer, document, lines and payments in the same number of queries for 2 " +
      "or 10 invoices",
    async () => {
      const addInvoices = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: `C${i}` }) })).body
            .id;
          await s.rest("POST", "/v1/invoices/", {
            body: {
              customer,
              lines: [
                { name: "a", amount: 100 },
                { name: "b", amount: 200 },
              ],
            },
          });
        }
      };
      await addInvoices(2);
      const withTwo = await queriesFor(LIST);
      await addInvoices(8);
      const withTen = await queriesFor(LIST);
      expect(withTen.length).toBe(withTwo.length);
      // one findMany for the page (relations are joined or batched) and one count for totalCount
      expect(withTen.filter((q) => q === "Invoice.findMany")).toHaveLength(1);
      expect(withTen.filter((q) => q === "Invoice.count")).toHaveLength(1);
      // no lookup by id (the API key's, when its cached entry has ended, is not listed: helpers/server.ts)
      expect(withTen.filter((q) => q.endsWith("findUnique") || q.endsWith("findUniqueOrThrow"))).toEqual([]);
    },
  );

  it(
    "loads an order list with customer aggregations, currency, lines and invoice in the same number of queries for " +
      "2 or 10 orders",
    async () => {
      const ORDERS =
        `{ orders(first: 50) { totalCount edges { node { id total customer { name aggregations { balance ` +
        `} } document { name } currency { id name } lines { name tax total } invoice { id } } } } }`;
      const addOrders = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: `O${i}` }) })).body
            .id;
          await s.rest("POST", "/v1/orders/", {
            body: {
              customer,
              lines: [
                { name: "a", amount: 100 },
                { name: "b", amount: 200 },
              ],
            },
          });
        }
      };
      await addOrders(2);
      const withTwo = await queriesFor(ORDERS);
      await addOrders(8);
      const withTen = await queriesFor(ORDERS);
      expect(withTen).toEqual(withTwo);
      expect(withTen.filter((q) => q === "Order.findMany")).toHaveLength(1);
    },
  );

  it(
    "loads a credit note list with its invoice, customer and lines in the same number of queries for 2 or " +
      "10 notes",
    async () => {
      const NOTES =
        `{ creditNotes(first: 50) { totalCount edges { node { id total invoice { number customer { name } ` +
        `} document { name } lines { name tax } } } } }`;
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "N" }) })).body.id;
      const addNotes = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const invoice = (
            await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "a", amount: 1000 }] } })
          ).body.id;
          await s.rest("GET", `/v1/invoices/${invoice}/finalize/`);
          await s.rest("POST", "/v1/creditnotes/", { body: { invoice, lines: [{ name: "n", amount: 100 }] } });
        }
      };
      await addNotes(2);
      const withTwo = await queriesFor(NOTES);
      await addNotes(8);
      const withTen = await queriesFor(NOTES);
      expect(withTen).toEqual(withTwo);
      expect(withTen.filter((q) => q === "CreditNote.findMany")).toHaveLength(1);
    },
  );

  it("loads a payment list with sources in the same number of queries for 2 or 10 payments", async () => {
    const PAYMENTS =
      `{ payments(first: 50) { totalCount edges { node { id amount status returnUrl source { id data ` + `} } } } }`;
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "P" }) })).body.id;
    const addPayments = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const payment = (
          await s.rest("POST", "/v1/payments/", { body: { customer, amount: 1000 + i, currency: "CLP" } })
        ).body.id;
        const source = (
          await s.rest("POST", "/v1/sources/", { body: { customer, gateway: "test", data: { token: "tok_visa" } } })
        ).body.id;
        await s.rest("POST", `/v1/payments/${payment}/authorize/`, { body: { source } });
      }
    };
    await addPayments(2);
    const withTwo = await queriesFor(PAYMENTS);
    await addPayments(8);
    const withTen = await queriesFor(PAYMENTS);
    expect(withTen).toEqual(withTwo);
    expect(withTen.filter((q) => q === "Payment.findMany")).toHaveLength(1);
  });

  it("does not count rows when totalCount is not selected", async () => {
    const queries = await queriesFor(`{ customers(first: 5) { edges { node { id country { id } } } } }`);
    expect(queries).toEqual(["Customer.findMany"]);
  });
});
