/**
 * `npm run demo` (`node dist/demo.js`): a real scenario against the service. Creates a Chilean
 * customer (valid RUT), an invoice with several lines and a discount, finalizes it; dispatches
 * goods with an order (guía de despacho) and bills it with a second invoice (GraphQL
 * invoiceOrders); credits part of the first invoice with a credit note and pays what is left with a
 * test card. Then recurring billing: a product with a licensed and a metered plan, a subscription
 * started a month ago, usage records, and the billing run (services/billing-run.ts, in-process
 * only) that finalizes its cycle invoices and charges the saved card. Last, Chile's SII
 * (docs/sii-setup.md): a generated test certificate (PKCS#12) and CAF (never a real taxpayer's),
 * and a signed invoice (DTE) whose PDF carries the timbre. Writes every PDF and the DTE to out/ and
 * prints the totals.
 *
 * Where it runs (docs/tour.md "The demo"):
 * - without BILLING_URL: an in-process server on a fresh embedded database in a temporary
 *   directory, removed at the end;
 * - with BILLING_URL and no BILLING_API_KEY: that running server, in an organization of the demo's
 *   own ("Demo SpA <date time>") with a test key, created as `api-key create` creates them
 *   (cli/run.ts): through the running server's control socket when it holds the embedded database
 *   configured here, or in PostgreSQL (DATABASE_URL); then the key must be accepted by BILLING_URL;
 * - with BILLING_URL and BILLING_API_KEY: the key's organization, only with a test key whose
 *   organization has no data in test mode (no customer, document, catalogue entry, payment,
 *   subscription, tax profile RUT, certificate or CAF); otherwise it stops before changing
 *   anything, saying why and what to do.
 * In every case the demo's test-mode tax profile gets `sii_sending: "off"` (docs/sii-sending.md
 * "Turning sending off") before its generated certificate and CAF go in: its DTEs are signed and
 * stored but never queued for SII, so no server ever tries to upload them to SII's hosts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDatabase, migrate } from "./infra/database.js";
import { createLogger } from "./infra/logger.js";
import { createApiKey } from "./services/api-keys.js";
import { createApp, createHttpServer, listen } from "./server.js";
import { runBilling } from "./services/billing-run.js";
import type { Database } from "./infra/database.js";
import { randomBytes } from "node:crypto";
import { generateCaf, generatePkcs12 } from "./infra/taxagency/sii/test-material.js";
import { createTestOrganization, graphqlAs, stamp, TryStop } from "./cli/test-organization.js";

/** The demo cannot run where it was pointed: the message says why and what to do; nothing was changed. */
class DemoStop extends TryStop {}

/** The service the demo talks to. */
interface DemoService {
  url: string;
  key: string;
  /** the in-process server's database (the billing run runs on it); null for a running server */
  database: Database | null;
  close(): Promise<void>;
}

async function inProcessServer(): Promise<DemoService> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-demo-"));
  const target = { kind: "pglite" as const, dir: path.join(dir, "pglite") };
  console.log("starting an in-process server on a fresh embedded database ...");
  const database = await createDatabase(target);
  await migrate(database);
  const { key } = await createApiKey(database.prisma, {
    organizationName: "Demo SpA",
    email: "demo@example.cl",
    mode: "test",
  });
  // the key that seals the demo's certificate and CAF (a real server takes CERTIFICATE_ENCRYPTION_KEY or a key file)
  const server = createHttpServer(
    createApp({ database, logger: createLogger("warn"), settings: { certificateEncryptionKey: randomBytes(32) } }),
  );
  const url = await listen(server, 0, "127.0.0.1");
  return {
    url,
    key,
    database,
    close: async () => {
      await new Promise((r) => server.close(r));
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** "2026-11-28 17:30:05" in this machine's time zone: the demo organization's name tells one run from another. */
/**
 * A new organization of the demo's own on the running server at `url`, with a test key: created by
 * `api-key create` run where the command line runs it (through the server's control socket when it
 * holds the embedded database configured here; in PostgreSQL with DATABASE_URL). Stops, changing
 * nothing, when the configured embedded database is held by no running server (the organization
 * would go into a database BILLING_URL's server does not use).
 */
async function ownOrganization(url: string): Promise<DemoService> {
  const name = `Demo SpA ${stamp()}`;
  const created = await createTestOrganization(url, name, "demo@example.cl", "the demo");
  console.log(`demo organization ${created.organization} "${name}", test key ${created.key.slice(0, 12)}...`);
  return { url, key: created.key, database: null, close: async () => {} };
}

/** What a test key's organization holds in test mode: a count per kind (zero: none). */
const ORGANIZATION_DATA = [
  ["customers", "customers"],
  ["invoices", "invoices"],
  ["orders", "orders"],
  ["creditNotes", "credit notes"],
  ["payments", "payments"],
  ["products", "products"],
  ["plans", "plans"],
  ["addons", "addons"],
  ["coupons", "coupons"],
  ["subscriptions", "subscriptions"],
  ["purchases", "received documents"],
  ["cafs", "CAFs"],
] as const;

/**
 * The organization of the test key `key` on the server at `url`, when it has no data in test mode;
 * else stops before changing anything, naming what it has and what to do instead.
 */
async function givenKey(url: string, key: string): Promise<DemoService> {
  if (!key.startsWith("sk_test_"))
    throw new DemoStop(
      "BILLING_API_KEY is not a test key (sk_test_...): the demo runs in test mode only. Give it a test key of " +
        "an organization without data, or no key: it then creates an organization of its own.",
    );
  const query =
    "{ taxProfile { organization taxId activity address } certificates { id } " +
    ORGANIZATION_DATA.map(([field]) => `${field}(first: 1) { count(limit: 1000) { count precision } }`).join(" ") +
    " }";
  type Counts = Record<string, { count: { count: number; precision: string } }> & {
    taxProfile: { organization: string; taxId: string | null; activity: string | null; address: string | null };
    certificates: { id: string }[];
  };
  const answer = await graphqlAs<Counts>(url, key, query);
  if (answer.status === 401)
    throw new DemoStop(`the server at ${url} does not accept BILLING_API_KEY (401): check the key and the URL.`);
  const data = answer.body.data;
  if (!data) throw new Error(`reading the organization: ${answer.status} ${JSON.stringify(answer.body.errors)}`);
  const found = ORGANIZATION_DATA.filter(([field]) => data[field].count.count > 0).map(
    ([field, label]) => `${label}: ${data[field].count.precision === "exact" ? "" : "over "}${data[field].count.count}`,
  );
  const profile = data.taxProfile;
  if (profile.taxId || profile.activity || profile.address)
    found.push(`a tax profile${profile.taxId ? ` (RUT ${profile.taxId})` : ""}`);
  if (data.certificates.length) found.push(`certificates: ${data.certificates.length}`);
  if (found.length)
    throw new DemoStop(
      `the organization of BILLING_API_KEY (${profile.organization}) already has data in test mode: ` +
        `${found.join(", ")}. The demo changes the organization it runs in (its test tax profile, a test ` +
        "certificate and CAF, which number its invoices with SII folios), so it runs only in one of its own or " +
        "in one without data; it changed nothing. Run it without BILLING_API_KEY (it creates an organization " +
        "of its own), or give it a test key of a new organization: npm run --silent cli -- api-key create " +
        '--organization "Demo SpA" --email you@example.com --mode test',
    );
  console.log(
    `organization ${profile.organization} has no data in test mode: the demo runs in it (its test-mode tax ` +
      "profile becomes Demo SpA's, with SII sending off)",
  );
  return { url, key, database: null, close: async () => {} };
}

/** The service to run against (module comment: where the demo runs). */
async function demoService(): Promise<DemoService> {
  const url = process.env.BILLING_URL?.replace(/\/+$/, "");
  if (!url) return inProcessServer();
  return process.env.BILLING_API_KEY ? givenKey(url, process.env.BILLING_API_KEY) : ownOrganization(url);
}

let service: DemoService;
try {
  service = await demoService();
} catch (e) {
  if (!(e instanceof TryStop)) throw e;
  process.stderr.write(`demo: ${e.message}\n`);
  process.exit(1);
}

async function call(method: string, pathname: string, body?: unknown) {
  const res = await fetch(`${service.url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${pathname} -> ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** POSTs a GraphQL query; resolves to its `data`, typed by the caller (`T`), or throws on `errors`. */
async function graphql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${service.url}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const json = (await res.json()) as { data?: T; errors?: unknown[] };
  if (json.errors || json.data === undefined) throw new Error(`GraphQL ${JSON.stringify(json.errors)}`);
  return json.data;
}

async function savePdf(pathname: string, name: string) {
  const { file } = await call("GET", pathname);
  fs.mkdirSync("out", { recursive: true });
  const pdfPath = path.join("out", name);
  fs.writeFileSync(pdfPath, Buffer.from(file, "base64"));
  console.log(`  pdf written to ${pdfPath}`);
}

/** The fields of a REST document (invoice, order, credit note) the demo prints; amounts are decimal strings. */
interface PrintedDocument {
  id: string;
  number: number | null;
  /** `internal` or `tax_agency` (docs/sii-setup.md) */
  numbering?: string;
  status: string;
  lines: { name: string; quantity: string | number; amount: string | number; total: string; exempt?: boolean }[];
  amount: string;
  exempt: string;
  tax: string;
  total: string;
}

function printDocument(what: string, documentName: string, doc: PrintedDocument, currency: string) {
  // before the SII set-up a Chilean document is numbered in the internal series, no tax document (docs/sii-setup.md)
  const heading =
    doc.numbering === "internal"
      ? `Documento no tributario (${documentName}) N° interno ${doc.number}`
      : `${documentName} N° ${doc.number}`;
  console.log(`${what} ${doc.id}  ${heading}  status ${doc.status}`);
  for (const line of doc.lines)
    console.log(
      `  ${line.name.padEnd(28)} ${String(line.quantity).padStart(6)} x ${String(line.amount).padStart(8)}  ` +
        `= ${line.total}${line.exempt ? " (exempt)" : ""}`,
    );
  for (const field of ["amount", "exempt", "tax", "total"] as const)
    console.log(`${field.padStart(10)}: ${currency} ${doc[field]}`);
}

try {
  // the issuer (test mode's tax profile), with SII sending off before any certificate or CAF goes in: the demo's
  // DTEs are signed and stored, never queued for SII (docs/sii-sending.md "Turning sending off")
  const profile = await call("PATCH", "/v1/billers/built_in/tax_profile/", {
    tax_id: "76042235-5",
    business_name: "Demo SpA",
    activity: "Desarrollo de software",
    activity_codes: ["620200"],
    address: "Av. Apoquindo 3000",
    commune: "Las Condes",
    city: "Santiago",
    resolution_number: 0,
    resolution_date: "2026-01-15",
    sii_sending: "off",
  });
  if (profile.sii_sending !== "off") throw new Error("the server did not turn SII sending off; the demo stops here");
  console.log(`tax profile of test mode: ${profile.business_name} RUT ${profile.tax_id}, SII sending off`);
  const customer = await call("POST", "/v1/customers/", {
    name: "Comercial Los Andes Ltda.",
    tax_id: "77.879.240-0",
    country: "CL",
    state: "RM",
    address: "Av. Libertador Bernardo O'Higgins 1449, Santiago",
    email: "facturas@losandes.cl",
  });
  console.log(`customer ${customer.id}  ${customer.name}  RUT ${customer.tax_id}`);
  const draft = await call("POST", "/v1/invoices/", {
    customer: customer.id,
    document: "CL33",
    lines: [
      { name: "Licencia anual", quantity: 2, amount: 45000 },
      {
        name: "Implementación",
        description: "Horas de consultoría",
        quantity: 12.5,
        amount: 18990,
        discount: 10,
        discount_scheme: "%",
      },
      { name: "Capacitación (exenta)", quantity: 1, amount: 60000, exempt: true },
    ],
    discount: 5000,
    discount_scheme: "$",
    note: "Gracias por su preferencia",
  });
  const invoice = await call("GET", `/v1/invoices/${draft.id}/finalize/`);
  printDocument("invoice", invoice.document.name, invoice, invoice.document.currency);
  await savePdf(`/v1/invoices/${invoice.id}/pdf/`, `invoice-${invoice.document.id}-${invoice.number}.pdf`);

  // an order (guía de despacho): goods leave now, the invoice follows
  const orderDraft = await call("POST", "/v1/orders/", {
    customer: customer.id,
    shipping_type: "1",
    address: "Camino Lo Boza 120, Pudahuel",
    state: "RM",
    carrier_id: "76.042.235-5",
    carrier_name: "Transportes Demo",
    licence_plate: "GHJK12",
    lines: [
      { name: "Servidor rack 2U", quantity: 2, amount: 1250000 },
      { name: "Flete", quantity: 1, amount: 35000, exempt: true },
    ],
  });
  const order = await call("GET", `/v1/orders/${orderDraft.id}/finalize/`);
  printDocument("order", order.document.name, order, order.document.currency.id);
  console.log(`  customer balance ${order.customer.aggregations.balance}, sales ${order.customer.aggregations.sales}`);
  await savePdf(`/v1/orders/${order.id}/pdf/`, `order-${order.document.id}-${order.number}.pdf`);

  const billed = await graphql<{ invoiceOrders: { id: string } }>(
    `mutation($ids: [ID!]!) { invoiceOrders(orderIds: $ids) { id total } }`,
    {
      ids: [order.id],
    },
  );
  const orderInvoice = await call("GET", `/v1/invoices/${billed.invoiceOrders.id}/finalize/`);
  printDocument("invoice for the order", orderInvoice.document.name, orderInvoice, orderInvoice.document.currency);

  // a credit note: one licence returned
  const noteDraft = await call("POST", "/v1/creditnotes/", {
    invoice: invoice.id,
    lines: [{ name: "Licencia anual (devolución)", quantity: 1, amount: 45000 }],
    note: "Devolución de una licencia",
    internal_note: "ticket 1024",
  });
  const note = await call("GET", `/v1/creditnotes/${noteDraft.id}/finalize/?expand=invoice`);
  printDocument(`credit note for invoice N° ${note.invoice.number}`, note.document, note, invoice.document.currency);
  await savePdf(`/v1/creditnotes/${note.id}/pdf/`, `creditnote-${note.document}-${note.number}.pdf`);

  // pay what is left of the first invoice with a test card (test gateway, tok_visa)
  const due = await graphql<{ node: { amountDue: string } }>(
    `query($id: ID!) { node(id: $id) { ... on Invoice { amountDue } } }`,
    { id: invoice.id },
  );
  const payment = await call("POST", "/v1/payments/", {
    invoice: invoice.id,
    amount: due.node.amountDue,
    description: `Factura N° ${invoice.number}`,
  });
  const card = await call("POST", "/v1/sources/", {
    gateway: "test",
    customer: customer.id,
    data: { token: "tok_visa" },
  });
  const paid = await call("POST", `/v1/payments/${payment.id}/authorize/`, { source: card.id });
  const after = await graphql<{ node: { amountPaid: string; amountDue: string } }>(
    `query($id: ID!) { node(id: $id) { ... on Invoice { amountPaid amountDue } } }`,
    {
      id: invoice.id,
    },
  );
  console.log(
    `payment ${paid.id}  ${paid.currency} ${paid.amount} with ${card.data.brand} ${card.data.last4}: ${paid.status}; ` +
      `invoice N° ${invoice.number} paid ${after.node.amountPaid}, due ${after.node.amountDue}`,
  );

  // recurring billing: a licensed and a metered plan, a subscription started a month ago, usage
  const product = await call("POST", "/v1/products/", {
    name: "Plataforma Nube",
    plans: [
      { name: "Pro", amount: 29990, currency: "CLP", frequency: "monthly" },
      {
        name: "Llamadas API",
        amount: 2,
        currency: "CLP",
        frequency: "monthly",
        usage_scheme: "metered",
        usage_aggregation: "sum",
      },
    ],
  });
  const day = (offset: number, from = new Date()) =>
    new Date(from.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  const start = new Date();
  start.setUTCMonth(start.getUTCMonth() - 1);
  const subscription = await call("POST", "/v1/subscriptions/", {
    customer: customer.id,
    date_start: day(0, start),
    lines: [{ plan: product.plans[0].id, quantity: 3 }, { plan: product.plans[1].id }],
  });
  for (const [offset, quantity] of [
    [2, 1200],
    [9, 850],
    [20, 2310],
  ] as const) {
    await call("POST", "/v1/usages/", {
      subscription_line: subscription.lines[1].id,
      quantity,
      date_time: `${day(offset, start)}T15:00:00-03:00`,
    });
  }
  console.log(
    `subscription ${subscription.id} from ${subscription.date_start}: 3 x Pro, metered API calls (4 360 used)`,
  );
  if (service.database) {
    const summary = await runBilling({ prisma: service.database.prisma, until: day(0) });
    const { errors, ...counts } = summary;
    console.log(`billing run: ${JSON.stringify(counts)}${errors.length ? ` errors: ${errors.join("; ")}` : ""}`);
    const invoices = await service.database.prisma.invoice.findMany({
      where: { subscriptionId: subscription.id },
      orderBy: { billingCycle: "asc" },
    });
    for (const row of invoices) {
      const cycleInvoice = await call("GET", `/v1/invoices/${row.id}/`);
      printDocument(
        `cycle ${row.billingCycle} invoice (${cycleInvoice.period_start} to ${cycleInvoice.period_end})`,
        cycleInvoice.document.name,
        cycleInvoice,
        cycleInvoice.document.currency,
      );
      console.log(
        `  payments: ${
          cycleInvoice.payments
            .map((p: { id: string; amount: string; status: string }) => `${p.id} ${p.amount} ${p.status}`)
            .join(", ") || "none"
        }`,
      );
    }
  } else {
    console.log(
      "running server: the demo does not run the billing run (it bills every organization's due subscriptions); " +
        "the server's own billing run (BILLING_RUN_INTERVAL_SECONDS) or `npm run --silent cli -- billing run` " +
        "bills this subscription's cycle",
    );
  }

  const customerAfter = await call("GET", `/v1/customers/${customer.id}/`);
  console.log(`customer aggregations: ${JSON.stringify(customerAfter.aggregations)}`);

  // Chile's SII: a test certificate and CAF (the tax profile is set above, with sending off), then a signed
  // invoice with its timbre
  const pkcs12 = generatePkcs12({ rut: "12345678-5", commonName: "Firmante Demo" });
  const certificate = await call("POST", "/v1/billers/built_in/certificates/", {
    file: pkcs12.file.toString("base64"),
    password: pkcs12.password,
  });
  // SII's first CAF starts at folio 1: the earlier invoices' internal numbers are another series
  const caf = generateCaf({ rut: "76042235-5", type: 33, from: 1, to: 50, authorizedOn: day(-1), idk: 100 });
  const uploaded = await call("POST", "/v1/billers/built_in/cafs/", { file: caf.file.toString("base64") });
  console.log(
    `SII: certificate of ${certificate.subject_rut ?? "12345678-5"} uploaded; CAF ${uploaded.id} ` +
      `for ${uploaded.document} folios ${uploaded.range_from}..${uploaded.range_to} (test mode)`,
  );
  const dteDraft = await call("POST", "/v1/invoices/", {
    customer: customer.id,
    document: "CL33",
    lines: [
      { name: "Implementación DTE", quantity: 1, amount: 250000 },
      { name: "Capacitación", quantity: 2, amount: 60000 },
    ],
  });
  const signed = await call("GET", `/v1/invoices/${dteDraft.id}/finalize/`);
  printDocument("signed invoice", signed.document.name, signed, signed.document.currency);
  const xml = await fetch(signed.local_file, { headers: { authorization: `Bearer ${service.key}` } });
  fs.mkdirSync("out", { recursive: true });
  const xmlPath = path.join("out", `dte-33-${signed.number}.xml`);
  fs.writeFileSync(xmlPath, Buffer.from(await xml.arrayBuffer()));
  console.log(`  folio ${signed.number}, DTE ${signed.local_file} written to ${xmlPath}`);
  await savePdf(`/v1/invoices/${signed.id}/pdf/`, `dte-33-${signed.number}.pdf`);
  console.log("  the PDF prints the timbre (PDF417 of the TED) and a CEDIBLE copy");
  console.log("  SII sending is off in the demo's test mode: this DTE is stored, never uploaded to SII");
} finally {
  await service.close();
}
