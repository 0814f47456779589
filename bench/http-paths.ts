/**
 * The seeded data, the paths and the load of `npm run bench:http` (bench/http.ts), shared with
 * `npm run bench:scale` (bench/scale.ts), which loads the same paths through nginx.
 */
import { isDeepStrictEqual } from "node:util";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { serviceEnv, startChild } from "./harness.js";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";

/** The GraphQL page measured: 50 invoices with customer, country, lines and payments. */
export const INVOICES_QUERY = `query BenchInvoices {
  invoices(first: 50) {
    edges {
      node {
        id number date total
        customer { id name country { id name } }
        lines { id name quantity amount total }
        payments { id amount status }
      }
    }
  }
}`;

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface Seed {
  key: string;
  invoiceId: string;
  subscriptionLineId: string;
}

/**
 * Migrates and seeds through Prisma's createMany (bulk inserts; the reads are what is measured): an organization, an
 * API key, `customers` customers, `invoices` finalized invoices of 3 lines and 1 payment each, one metered
 * subscription line.
 */
export async function seed(
  url: string,
  { customers: CUSTOMERS, invoices: INVOICES }: { customers: number; invoices: number },
): Promise<Seed> {
  await migrateTarget({ kind: "postgres", url });
  const database = await createDatabase({ kind: "postgres", url });
  try {
    const prisma = database.prisma;
    const { key, organization } = await createApiKey(prisma, {
      organizationName: "Bench HTTP",
      email: "bench@example.cl",
      mode: "test",
    });
    const tenant = { organizationId: organization, testMode: true };
    const countries = ["CL", "AR", "PE", "MX", "CO"];
    const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
      id: newId("cus"),
      ...tenant,
      name: `Cliente ${i} SpA`,
      address: "Av. Siempre Viva 123",
      countryId: countries[i % countries.length],
      email: `pagos${i}@cliente.cl`,
      taxId: "76042235-5",
      metadata: { seq: i },
    }));
    await prisma.customer.createMany({ data: customers });
    const start = Date.UTC(2026, 0, 1);
    const invoices = Array.from({ length: INVOICES }, (_, i) => ({
      id: newId("inv"),
      ...tenant,
      customerId: customers[i % customers.length].id,
      documentTypeId: "CL33",
      currencyId: "CLP",
      number: i + 1,
      date: new Date(start + (i % 300) * 86_400_000),
      dueDate: new Date(start + ((i % 300) + 30) * 86_400_000),
      userEmail: "bench@example.cl",
      amount: "3600",
      tax: "684",
      taxPercent: "19",
      subtotal: "3600",
      total: "4284",
      status: "finalized",
      note: i % 2 ? `Nota ${i}` : null,
      metadata: { order: `OC-${i}` },
      createdAt: new Date(start + i * 60_000),
      updatedAt: new Date(start + i * 60_000 + 1000),
    }));
    const CHUNK = 1000;
    for (let i = 0; i < invoices.length; i += CHUNK)
      await prisma.invoice.createMany({ data: invoices.slice(i, i + CHUNK) });
    const lines = invoices.flatMap((inv, n) =>
      [0, 1, 2].map((position) => ({
        id: newId("lin"),
        invoiceId: inv.id,
        organizationId: inv.organizationId,
        position,
        name: `Servicio ${position + 1}`,
        description: position === 0 ? "Mensualidad del servicio" : null,
        quantity: String(position + 1),
        amount: String(600 + (n % 5)),
        total: String((position + 1) * (600 + (n % 5))),
        exempt: position === 2,
      })),
    );
    for (let i = 0; i < lines.length; i += CHUNK)
      await prisma.invoiceLine.createMany({ data: lines.slice(i, i + CHUNK) });
    const payments = invoices.map((inv, n) => ({
      id: newId("pay"),
      ...tenant,
      customerId: inv.customerId,
      invoiceId: inv.id,
      amount: "4284",
      currencyId: "CLP",
      date: inv.date,
      description: `Pago factura ${n + 1}`,
      paymentDate: new Date(inv.date.getTime() + 3_600_000),
      status: "succeeded",
      userEmail: "bench@example.cl",
      createdAt: new Date(inv.createdAt.getTime() + 5000),
      updatedAt: new Date(inv.createdAt.getTime() + 6000),
    }));
    for (let i = 0; i < payments.length; i += CHUNK)
      await prisma.payment.createMany({ data: payments.slice(i, i + CHUNK) });
    // one metered subscription line for POST /v1/usages/
    const productId = newId("pro");
    await prisma.product.create({ data: { id: productId, ...tenant, name: "API" } });
    const planId = newId("pla");
    await prisma.plan.create({
      data: {
        id: planId,
        ...tenant,
        productId,
        position: 0,
        name: "API calls",
        amount: "7",
        usageScheme: "metered",
        currencyId: "CLP",
        frequency: "monthly",
        usageAggregation: "sum",
      } as never,
    });
    const subscriptionId = newId("sub");
    await prisma.subscription.create({
      data: {
        id: subscriptionId,
        ...tenant,
        documentTypeId: "CL33",
        customerId: customers[0].id,
        dateStart: new Date(start),
        nextBilling: new Date(start + 31 * 86_400_000),
        userEmail: "bench@example.cl",
      } as never,
    });
    const subscriptionLineId = newId("lin");
    await prisma.subscriptionLine.create({
      data: {
        id: subscriptionLineId,
        subscriptionId,
        organizationId: tenant.organizationId,
        planId,
        quantity: "1",
      } as never,
    });
    await prisma.$executeRawUnsafe("ANALYZE");
    return { key, invoiceId: invoices[Math.floor(INVOICES / 2)].id, subscriptionLineId };
  } finally {
    await database.close();
  }
}

/** The bare baseline (bench/baseline.mjs) on `databaseUrl`. */
export const startBaseline = (databaseUrl: string) => startChild(["bench/baseline.mjs"], serviceEnv(databaseUrl));

export interface Path {
  name: string;
  id: string;
  connections: number;
  request: (s: Seed) => { method: "GET" | "POST"; path: string; body?: string; expect: number };
}

export const PATHS: Path[] = [
  {
    name: "GET /v1/invoices/{id}/, 1 connection",
    id: "get1",
    connections: 1,
    request: (s) => ({ method: "GET", path: `/v1/invoices/${s.invoiceId}/`, expect: 200 }),
  },
  {
    name: "GET /v1/invoices/{id}/, 32 connections",
    id: "get32",
    connections: 32,
    request: (s) => ({ method: "GET", path: `/v1/invoices/${s.invoiceId}/`, expect: 200 }),
  },
  {
    name: "GraphQL invoices(first: 50) + customer, country, lines, payments, 8 connections",
    id: "graphql",
    connections: 8,
    request: () => ({ method: "POST", path: "/graphql", body: JSON.stringify({ query: INVOICES_QUERY }), expect: 200 }),
  },
  {
    name: "POST /v1/usages/, 32 connections",
    id: "usages",
    connections: 32,
    request: (s) => ({
      method: "POST",
      path: "/v1/usages/",
      body: JSON.stringify({
        subscription_line: s.subscriptionLineId,
        quantity: "1.5",
        date_time: "2026-01-15T12:00:00.000+00:00",
      }),
      expect: 201,
    }),
  },
];

export interface Run {
  /** CPU time (user + system) the process serving the run used per request answered, in ms */
  cpu?: number;
  rps: number;
  /** requests answered in the run */
  total: number;
  p50: number;
  p99: number;
  errors: number;
}

export async function load(url: string, seedData: Seed, p: Path, seconds: number): Promise<Run> {
  const r = p.request(seedData);
  let wrongStatus = 0;
  const result = await autocannon({
    url: `${url}${r.path}`,
    method: r.method,
    body: r.body,
    headers: { authorization: `Bearer ${seedData.key}`, "content-type": "application/json" },
    connections: p.connections,
    duration: seconds,
    setupClient: (client: { on: (e: string, f: (status: number) => void) => void }) =>
      client.on("response", (status: number) => void (status !== r.expect && wrongStatus++)),
  } as autocannon.Options);
  return {
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + wrongStatus,
  };
}

export async function call(url: string, seedData: Seed, p: Path): Promise<{ status: number; body: unknown }> {
  const r = p.request(seedData);
  const res = await fetch(`${url}${r.path}`, {
    method: r.method,
    body: r.body,
    headers: { authorization: `Bearer ${seedData.key}`, "content-type": "application/json" },
  });
  return { status: res.status, body: await res.json() };
}

/** The baseline must serve what the service serves: the same JSON, or for a write the same fields. */
export async function assertSameBodies(service: string, baseline: string, seedData: Seed): Promise<void> {
  for (const p of PATHS) {
    const a = await call(service, seedData, p);
    const b = await call(baseline, seedData, p);
    const expect = p.request(seedData).expect;
    if (a.status !== expect || b.status !== expect)
      throw new Error(
        `${p.name}: status ${a.status} (service), ${b.status} (baseline), expected ${expect}` +
          `\n${JSON.stringify(a.body)}\n${JSON.stringify(b.body)}`,
      );
    if (p.id === "usages") {
      const keys = (o: unknown) =>
        Object.keys(o as object)
          .sort()
          .join(",");
      if (keys(a.body) !== keys(b.body))
        throw new Error(
          `${p.name}: the baseline's fields differ\nservice:  ${keys(a.body)}\nbaseline: ${keys(b.body)}`,
        );
      continue;
    }
    if (!isDeepStrictEqual(a.body, b.body)) {
      fs.writeFileSync(path.join(os.tmpdir(), "bench-http-service.json"), JSON.stringify(a.body, null, 2));
      fs.writeFileSync(path.join(os.tmpdir(), "bench-http-baseline.json"), JSON.stringify(b.body, null, 2));
      throw new Error(
        `${p.name}: the baseline's JSON differs from the service's (both written to ${os.tmpdir()}` +
          `/bench-http-{service,baseline}.json): update bench/baseline.mjs`,
      );
    }
  }
}

export const fmtMs = (v: number) => `${v.toFixed(0)} ms`;
export const fmtRow = (r: Run) => `${r.rps.toFixed(0)} req/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}`;
