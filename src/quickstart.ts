/**
 * `npm run quickstart` (`node dist/quickstart.js`; README "Quickstart"): beside a running server
 * (`npm start`, BILLING_URL default http://localhost:3000), goes from nothing to a paid invoice and
 * an open customer portal in a few seconds, through the public API as any integration would:
 *
 * 1. an organization of its own ("Quickstart SpA <date time>") with a test API key, created as
 *    `api-key create` creates them (cli/test-organization.ts: through the running server's control
 *    socket on the embedded database, or in PostgreSQL with DATABASE_URL); or, with BILLING_API_KEY,
 *    that key's organization (a test key only);
 * 2. a Chilean customer (valid RUT), an invoice of two lines (2 x 1,000 and 500 with 10 % off,
 *    CLP), finalized (number 1 of its internal series: no SII set-up is needed in test mode);
 * 3. a test card (`tok_visa`) saved for the customer, a payment of the invoice's total authorized
 *    with it: the invoice is paid (`amount_due` 0);
 * 4. a customer session: the portal link where the customer sees the invoice and its PDF.
 *
 * It prints what it made and what to open next (GraphiQL, /docs, the portal), and the key to use
 * in the README's next commands (`export KEY=...`). `--json` prints one JSON object instead. Exit
 * code 1 with a one-line reason when it cannot go on (no server, a refused key); what it made until
 * then stays.
 */
import { createTestOrganization, stamp, TryStop } from "./cli/test-organization.js";

const url = (process.env.BILLING_URL ?? "http://localhost:3000").replace(/\/+$/, "");
const json = process.argv.includes("--json");

/** A REST call with `key`; throws TryStop with the answer on anything but `expected`. */
async function call(key: string, method: string, pathname: string, body: unknown, expected: number) {
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expected) throw new TryStop(`${method} ${pathname} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The key to work with: BILLING_API_KEY (a test key), else a new organization's. */
async function apiKey(): Promise<{ key: string; organization: string; database: string | null }> {
  const given = process.env.BILLING_API_KEY;
  if (given) {
    if (!given.startsWith("sk_test_"))
      throw new TryStop("BILLING_API_KEY must be a test key (sk_test_...): the quickstart pays with a test card");
    return { key: given, organization: "the organization of BILLING_API_KEY", database: null };
  }
  const created = await createTestOrganization(url, `Quickstart SpA ${stamp()}`, "you@example.com", "the quickstart");
  return { key: created.key, organization: created.organization, database: created.database };
}

async function quickstart() {
  try {
    await fetch(`${url}/healthz`);
  } catch {
    throw new TryStop(`no server answers at ${url}: start it first (npm start, in another terminal)`);
  }
  const { key, organization, database } = await apiKey();
  const customer = await call(
    key,
    "POST",
    "/v1/customers/",
    {
      name: "Cliente Ejemplo SpA",
      tax_id: "76.042.235-5",
      country: "CL",
      state: "RM",
      email: "pagos@cliente.cl",
      address: "Av. Providencia 1234",
      activity: "Servicios informáticos",
      commune: "Providencia",
      city: "Santiago",
    },
    201,
  );
  const draft = await call(
    key,
    "POST",
    "/v1/invoices/",
    {
      customer: customer.id,
      lines: [
        { name: "Consultoría", quantity: 2, amount: 1000 },
        { name: "Soporte", quantity: 1, amount: 500, discount: 10, discount_scheme: "%" },
      ],
    },
    201,
  );
  const invoice = await call(key, "GET", `/v1/invoices/${draft.id}/finalize/`, undefined, 200);
  const card = await call(
    key,
    "POST",
    "/v1/sources/",
    { gateway: "test", customer: customer.id, data: { token: "tok_visa" } },
    201,
  );
  const payment = await call(
    key,
    "POST",
    "/v1/payments/",
    { invoice: invoice.id, amount: invoice.total, description: `Factura ${invoice.number}` },
    201,
  );
  const paid = await call(key, "POST", `/v1/payments/${payment.id}/authorize/`, { source: card.id }, 200);
  if (paid.status !== "succeeded") throw new TryStop(`the test card's charge ended ${paid.status}`);
  const settled = await call(key, "GET", `/v1/invoices/${invoice.id}/`, undefined, 200);
  const session = await call(
    key,
    "POST",
    "/v1/customer_base/sessions/",
    { customer: customer.id, return_url: url },
    201,
  );
  return { key, organization, database, customer, invoice: settled, payment: paid, portal: session.url as string };
}

try {
  const made = await quickstart();
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        url,
        organization: made.organization,
        key: made.key,
        customer: made.customer.id,
        invoice: made.invoice.id,
        invoice_number: made.invoice.number,
        invoice_total: made.invoice.total,
        amount_due: made.invoice.amount_due,
        payment: made.payment.id,
        payment_status: made.payment.status,
        portal: made.portal,
      })}\n`,
    );
  } else {
    const { invoice } = made;
    const lines = [
      `Made on ${url}${made.database ? ` (${made.database})` : ""}, in test mode:`,
      `  organization  ${made.organization}`,
      `  API key       ${made.key}  (shown once; only its hash is stored)`,
      `  customer      ${made.customer.id}  ${made.customer.name}, RUT ${made.customer.tax_id}`,
      `  invoice       ${invoice.id}  number ${invoice.number}, total ${invoice.total} CLP, ${invoice.status}, ` +
        `amount due ${invoice.amount_due}`,
      `  payment       ${made.payment.id}  ${made.payment.amount} with the test card tok_visa: ${made.payment.status}`,
      `  portal        ${made.portal}`,
      "",
      "Open next:",
      `  ${made.portal}   the customer's portal: the invoice, its PDF, cards (valid one hour)`,
      `  ${url}/graphql   GraphiQL: paste the key after "Bearer " in the headers tab`,
      `  ${url}/docs      the REST reference`,
      "",
      "And in this shell, for the README's next commands:",
      `  export KEY=${made.key}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
} catch (e) {
  if (!(e instanceof TryStop)) throw e;
  process.stderr.write(`quickstart: ${e.message}\n`);
  process.exit(1);
}
