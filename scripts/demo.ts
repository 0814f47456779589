/**
 * `npm run demo`: a real scenario against the service. With BILLING_URL and BILLING_API_KEY set it
 * talks to that running server; otherwise it starts one in-process on a fresh embedded database.
 * Creates a Chilean customer (valid RUT), an invoice with several lines and a discount, finalizes
 * it, writes its PDF to out/ and prints the totals.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDatabase } from "../src/infra/database.js";
import { createLogger } from "../src/infra/logger.js";
import { migrateDeploy } from "../src/infra/migrate.js";
import { createApiKey } from "../src/services/api-keys.js";
import { createApp, createHttpServer, listen } from "../src/server.js";

async function inProcessServer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-demo-"));
  const target = { kind: "pglite" as const, dir: path.join(dir, "pglite") };
  console.log("starting an in-process server on a fresh embedded database ...");
  await migrateDeploy(target);
  const database = await createDatabase(target);
  const { key } = await createApiKey(database.prisma, { organizationName: "Demo SpA", email: "demo@example.cl", mode: "test" });
  await database.prisma.organization.updateMany({
    data: { taxId: "76042235-5", taxBusinessName: "Demo SpA", taxAddress: "Av. Apoquindo 3000", taxCommune: "Las Condes", taxCity: "Santiago", taxActivity: "Desarrollo de software" },
  });
  const server = createHttpServer(createApp({ database, logger: createLogger("warn") }));
  const url = await listen(server, 0, "127.0.0.1");
  return {
    url,
    key,
    close: async () => {
      await new Promise((r) => server.close(r));
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const external = process.env.BILLING_URL && process.env.BILLING_API_KEY;
const service = external ? { url: process.env.BILLING_URL!.replace(/\/$/, ""), key: process.env.BILLING_API_KEY!, close: async () => {} } : await inProcessServer();

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

try {
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
      { name: "Implementación", description: "Horas de consultoría", quantity: 12.5, amount: 18990, discount: 10, discount_scheme: "%" },
      { name: "Capacitación (exenta)", quantity: 1, amount: 60000, exempt: true },
    ],
    discount: 5000,
    discount_scheme: "$",
    note: "Gracias por su preferencia",
  });
  const invoice = await call("GET", `/v1/invoices/${draft.id}/finalize/`);
  const { file } = await call("GET", `/v1/invoices/${invoice.id}/pdf/`);
  fs.mkdirSync("out", { recursive: true });
  const pdfPath = path.join("out", `invoice-${invoice.document.id}-${invoice.number}.pdf`);
  fs.writeFileSync(pdfPath, Buffer.from(file, "base64"));
  console.log(`invoice ${invoice.id}  ${invoice.document.name} N° ${invoice.number}  status ${invoice.status}`);
  for (const line of invoice.lines) console.log(`  ${line.name.padEnd(24)} ${String(line.quantity).padStart(6)} x ${String(line.amount).padStart(8)}  = ${line.total}`);
  const currency = invoice.document.currency;
  for (const field of ["amount", "exempt", "subtotal", "tax", "total"]) console.log(`${field.padStart(10)}: ${currency} ${invoice[field]}`);
  console.log(`pdf written to ${pdfPath}`);
} finally {
  await service.close();
}
