/**
 * `npm run bench`: latency of the main paths over real HTTP against an in-process server, on the
 * embedded database (default) or PostgreSQL (BENCH_DATABASE_URL, a database it may fill).
 * Prints p50/p95/max per operation. Sizes: BENCH_INVOICES (default 2000) rows seeded for the list
 * measurements, BENCH_REQUESTS (default 200) timed requests per operation.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDatabase } from "../src/infra/database.js";
import type { DatabaseTarget } from "../src/infra/driver-adapter.js";
import { createLogger } from "../src/infra/logger.js";
import { migrateTarget } from "../src/infra/database.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";
import { createApp, createHttpServer, listen } from "../src/server.js";

const SEEDED = Number(process.env.BENCH_INVOICES ?? 2000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-bench-"));
const target: DatabaseTarget = process.env.BENCH_DATABASE_URL
  ? { kind: "postgres", url: process.env.BENCH_DATABASE_URL }
  : { kind: "pglite", dir: path.join(dir, "pglite") };
console.log(`database: ${target.kind}; seeding ${SEEDED} invoices; ${REQUESTS} requests per operation`);
await migrateTarget(target);
const database = await createDatabase(target);
const { key, organization } = await createApiKey(database.prisma, {
  organizationName: `Bench ${Date.now()}`,
  email: "bench@example.cl",
  mode: "test",
});
// rate limits off: this bench times the paths with one key sending as fast as it can (docs/limits.md)
const server = createHttpServer(
  createApp({ database, logger: createLogger("silent"), settings: { rateLimitRequests: 0 } }),
);
const url = await listen(server, 0, "127.0.0.1");

async function call(method: string, pathname: string, body?: unknown) {
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = res.status === 204 ? null : await res.json();
  if (!res.ok) throw new Error(`${method} ${pathname} -> ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function measure(name: string, n: number, op: (i: number) => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await op(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))].toFixed(1);
  console.log(
    `${name.padEnd(44)} p50 ${pct(50).padStart(7)} ms   p95 ${pct(95).padStart(7)} ms   ` +
      `max ${times[times.length - 1].toFixed(1).padStart(7)} ms`,
  );
}

try {
  const customer = await call("POST", "/v1/customers/", {
    name: "Bench SpA",
    country: "CL",
    state: "RM",
    tax_id: "76042235-5",
  });
  // seed rows directly (the measured paths are the reads below)
  const batch = 500;
  for (let done = 0; done < SEEDED; done += batch) {
    const rows = Array.from({ length: Math.min(batch, SEEDED - done) }, () => ({
      id: newId("inv"),
      organizationId: organization,
      testMode: true,
      customerId: customer.id,
      documentTypeId: "CL33",
      currencyId: "CLP",
      date: new Date("2026-11-01T00:00:00Z"),
      userEmail: "bench@example.cl",
      amount: "1000",
      tax: "190",
      taxPercent: "19",
      subtotal: "1000",
      total: "1190",
    }));
    await database.prisma.invoice.createMany({ data: rows });
  }
  const lines = [
    { name: "Servicio", quantity: 2, amount: 1000 },
    { name: "Soporte", quantity: 1, amount: 500, discount: 10 },
    { name: "Exento", quantity: 1, amount: 300, exempt: true },
  ];
  const created: string[] = [];
  await measure("POST /v1/invoices/ (3 lines)", REQUESTS, async () => {
    created.push((await call("POST", "/v1/invoices/", { customer: customer.id, lines })).id);
  });
  await measure("GET /v1/invoices/{id}/", REQUESTS, (i) => call("GET", `/v1/invoices/${created[i % created.length]}/`));
  await measure("PATCH /v1/invoices/{id}/ (replace lines)", REQUESTS, (i) =>
    call("PATCH", `/v1/invoices/${created[i % created.length]}/`, { lines }),
  );
  await measure("GET /v1/invoices/{id}/finalize/", REQUESTS, (i) =>
    call("GET", `/v1/invoices/${created[i]}/finalize/`),
  );
  await measure("GET /v1/invoices/{id}/pdf/", Math.min(REQUESTS, 50), (i) =>
    call("GET", `/v1/invoices/${created[i]}/pdf/`),
  );
  await measure(`GraphQL invoices(first: 20) + totalCount of ${SEEDED + REQUESTS}`, REQUESTS, () =>
    fetch(`${url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        query: "{ invoices(first: 20) { totalCount edges { node { id total customer { name } lines { total } } } } }",
      }),
    }).then((r) => r.json()),
  );
  // orders: create (embedded customer aggregations in every response), finalize
  const orders: string[] = [];
  await measure("POST /v1/orders/ (3 lines)", REQUESTS, async () => {
    orders.push(
      (await call("POST", "/v1/orders/", { customer: customer.id, lines: lines.map(({ discount: _d, ...l }) => l) }))
        .id,
    );
  });
  await measure("GET /v1/orders/{id}/finalize/", REQUESTS, (i) => call("GET", `/v1/orders/${orders[i]}/finalize/`));
  // credit notes against the finalized invoices (locks the invoice, sums its notes)
  await measure("POST /v1/creditnotes/ (1 line)", REQUESTS, (i) =>
    call("POST", "/v1/creditnotes/", {
      invoice: created[i],
      lines: [{ name: "Devolución", quantity: 1, amount: 100 }],
    }),
  );
  // payments: create and charge a test card (two transactions around the gateway call)
  const payments: string[] = [];
  await measure("POST /v1/payments/", REQUESTS, async () => {
    payments.push((await call("POST", "/v1/payments/", { customer: customer.id, amount: 1000, currency: "CLP" })).id);
  });
  const card = await call("POST", "/v1/sources/", {
    customer: customer.id,
    gateway: "test",
    data: { token: "tok_visa" },
  });
  await measure("POST /v1/payments/{id}/authorize/ (tok_visa)", REQUESTS, (i) =>
    call("POST", `/v1/payments/${payments[i]}/authorize/`, { source: card.id }),
  );
  await measure("GET /v1/customers/?page_size=20", REQUESTS, () => call("GET", "/v1/customers/?page_size=20"));
  await measure("GET /v1/generals/documents/", REQUESTS, () => call("GET", "/v1/generals/documents/"));
  const concurrent = await Promise.all(
    Array.from({ length: 20 }, async () => (await call("POST", "/v1/invoices/", { customer: customer.id, lines })).id),
  );
  const start = performance.now();
  await Promise.all(concurrent.map((id) => call("GET", `/v1/invoices/${id}/finalize/`)));
  console.log(`${"20 concurrent finalizes (wall time)".padEnd(44)} ${(performance.now() - start).toFixed(1)} ms`);
} finally {
  await new Promise((r) => server.close(r));
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
