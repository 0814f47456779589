/**
 * The client's quickstart (docs/clients.md), compiled under `strict` with no non-null assertion and run against the
 * service by test/integration/typescript-client.test.ts: a customer, an invoice, its finalize, a filtered list read
 * a page at a time, and a 400 with its field errors. BILLING_URL and BILLING_API_KEY say where and as whom.
 */
import { BillingApiError, createBillingClient, listAll, unwrap } from "../src/index.js";

const client = createBillingClient({
  baseUrl: process.env.BILLING_URL ?? "http://localhost:3000",
  apiKey: process.env.BILLING_API_KEY ?? "",
});

const customer = await unwrap(
  client.POST("/v1/customers/", {
    body: { name: "Cliente Demo SpA", tax_id: "76.086.428-5", country: "CL", email: "pagos@demo.cl" },
  }),
);
for (const amount of [1000, 2000, 3000]) {
  const invoice = await unwrap(
    client.POST("/v1/invoices/", {
      body: { customer: customer.id, lines: [{ name: "Consultoría", quantity: 2, amount }] },
    }),
  );
  const finalized = await unwrap(client.GET("/v1/invoices/{id}/finalize/", { params: { path: { id: invoice.id } } }));
  console.log(`invoice ${finalized.number}: ${finalized.total} ${finalized.status}`);
}

// the customer's finalized invoices, two per page
const totals: number[] = [];
for await (const invoice of listAll(client, "/v1/invoices/", {
  customer: customer.id,
  status: "finalized",
  page_size: 2,
}))
  totals.push(invoice.total);
console.log(`listed: ${totals.join(", ")}`);

try {
  await unwrap(
    client.POST("/v1/invoices/", {
      body: { customer: customer.id, lines: [{ name: "Consultoría", quantity: -1, amount: 1000 }] },
    }),
  );
} catch (e) {
  if (!(e instanceof BillingApiError)) throw e;
  console.log(`refused: ${e.status} ${e.code} ${Object.keys(e.fields).join(", ")}`);
}
