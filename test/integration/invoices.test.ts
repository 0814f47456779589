import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customerId: string;
beforeAll(async () => {
  s = await startTestServer();
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

const workedExampleLines = [
  { name: "Consultoría", quantity: 2, amount: 1000 },
  { name: "Soporte", description: "Noviembre", quantity: 1, amount: 500, discount: 10, discount_scheme: "%" },
];

async function createInvoice(body: Record<string, unknown> = {}) {
  const res = await s.rest("POST", "/v1/invoices/", {
    body: { customer: customerId, document: "CL33", lines: workedExampleLines, ...body },
  });
  expect(res.status).toBe(201);
  return res.body;
}

describe("invoices over REST", () => {
  it("creates a draft with docs/invoice-totals.md's worked totals and the spec's shape", async () => {
    const inv = await createInvoice({
      date: "2026-11-20",
      due_date: "2026-12-20",
      metadata: { po: "123" },
      note: "Gracias",
    });
    expect(inv).toMatchObject({
      status: "draft",
      number: null,
      test_mode: true,
      date: "2026-11-20",
      due_date: "2026-12-20",
      collection_method: "deferred",
      amount: 2450,
      exempt: 0,
      tax: 466,
      tax_percent: 19,
      subtotal: 2450,
      discount: 0,
      discount_scheme: "%",
      total: 2916,
      local_file: null,
      payments: [],
      note: "Gracias",
      metadata: { po: "123" },
      user: "ops@acme.cl",
      document: { id: "CL33", name: "Factura electrónica", country: "CL", currency: "CLP" },
      customer: { id: customerId, name: "Cliente SpA", state: "RM", country: "CL", email: "pagos@cliente.cl" },
    });
    expect(inv.id).toMatch(/^inv_/);
    expect(inv.lines[1]).toMatchObject({
      name: "Soporte",
      description: "Noviembre",
      quantity: 1,
      amount: 500,
      discount: 10,
      discount_scheme: "%",
      total: 450,
    });
    expect(inv.lines[0].id).toMatch(/^lin_/);
    expect(inv.created).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(inv.customer.created).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const row = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: inv.id }, include: { lines: true } });
    expect(row.total.toString()).toBe("2916");
    expect(row.lines).toHaveLength(2);
  });

  it("applies a document discount to taxable lines only and keeps exempt lines apart", async () => {
    const inv = await createInvoice({
      lines: [
        { name: "Servicio", quantity: 1, amount: 10000 },
        { name: "Exento", quantity: 1, amount: 3000, exempt: true },
      ],
      discount: 10,
      discount_scheme: "%",
    });
    expect(inv).toMatchObject({ amount: 9000, exempt: 3000, subtotal: 12000, tax: 1710, total: 13710 });
  });

  it("retrieves, updates a draft (lines replaced, metadata merged) and recomputes totals", async () => {
    const inv = await createInvoice({ metadata: { a: "1", b: "2" } });
    expect((await s.rest("GET", `/v1/invoices/${inv.id}/`)).body.total).toBe(2916);
    const res = await s.rest("PATCH", `/v1/invoices/${inv.id}/`, {
      body: { lines: [{ name: "Único", quantity: 1, amount: 2350 }], metadata: { a: "" } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ amount: 2350, tax: 447, total: 2797, metadata: { b: "2" } });
    expect(res.body.lines).toHaveLength(1);
    expect(await s.database.prisma.invoiceLine.count({ where: { invoiceId: inv.id } })).toBe(1);
  });

  it("finalizes with consecutive numbers, then refuses update and delete with 409 and changes nothing", async () => {
    const a = await createInvoice();
    const b = await createInvoice();
    const fa = await s.rest("GET", `/v1/invoices/${a.id}/finalize/`);
    const fb = await s.rest("GET", `/v1/invoices/${b.id}/finalize/`);
    expect(fa.status).toBe(200);
    expect(fa.body.status).toBe("finalized");
    expect(fb.body.number).toBe(fa.body.number + 1);

    const before = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: a.id } });
    const patch = await s.rest("PATCH", `/v1/invoices/${a.id}/`, { body: { note: "changed" } });
    expect(patch.status).toBe(409);
    expect(patch.body.error.code).toBe("invalid_state");
    const del = await s.rest("DELETE", `/v1/invoices/${a.id}/`);
    expect(del.status).toBe(409);
    const again = await s.rest("GET", `/v1/invoices/${a.id}/finalize/`);
    expect(again.status).toBe(409);
    const after = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: a.id } });
    expect(after).toEqual(before);
  });

  it("deletes a draft with 204 and then reads 404", async () => {
    const inv = await createInvoice();
    const del = await s.rest("DELETE", `/v1/invoices/${inv.id}/`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await s.rest("GET", `/v1/invoices/${inv.id}/`)).status).toBe(404);
    expect(await s.database.prisma.invoiceLine.count({ where: { invoiceId: inv.id } })).toBe(0);
  });

  it("renders a PDF with issuer, customer, document name and number, dates, lines and totals", async () => {
    const inv = await createInvoice({ date: "2026-11-20", due_date: "2026-12-05" });
    const fin = (await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`)).body;
    const res = await s.rest("GET", `/v1/invoices/${inv.id}/pdf/`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["file"]);
    const pdf = Buffer.from(res.body.file, "base64");
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const text = (await new PDFParse({ data: new Uint8Array(pdf) }).getText()).text;
    for (const expected of [
      "Acme SpA",
      "R.U.T.: 76.042.235-5",
      "Señor(es): Cliente SpA",
      "RUT: 76.042.235-5",
      "DOCUMENTO NO TRIBUTARIO",
      `N° interno ${fin.number}`,
      "Fecha de emisión: 20-11-2026",
      "Fecha de vencimiento: 05-12-2026",
      "Condición de venta: Crédito",
      "Consultoría",
      "Soporte",
      "CLP 2.450",
      "CLP 466",
      "CLP 2.916",
    ]) {
      expect(text).toContain(expected);
    }
  });

  const badInputs: [string, Record<string, unknown>, string][] = [
    ["a negative quantity", { lines: [{ name: "x", quantity: -1, amount: 100 }] }, "lines.0.quantity"],
    [
      "a % line discount over 100",
      { lines: [{ name: "x", quantity: 1, amount: 100, discount: 101 }] },
      "lines.0.discount",
    ],
    ["a % document discount over 100", { discount: 150, discount_scheme: "%" }, "discount"],
    ["a line without a name", { lines: [{ quantity: 1, amount: 100 }] }, "lines.0.name"],
    ["an amount that is not a number", { lines: [{ name: "x", amount: "abc" }] }, "lines.0.amount"],
    ["an unknown field", { colour: "red" }, "colour"],
    ["an unknown document type", { document: "CL99" }, "document"],
    ["an order document type", { document: "CL52" }, "document"],
    ["a due date before the date", { date: "2026-11-20", due_date: "2026-11-01" }, "due_date"],
    ["a malformed date", { date: "20-11-2026" }, "date"],
    ["an unknown discount scheme", { discount_scheme: "x" }, "discount_scheme"],
  ];
  for (const [what, body, field] of badInputs) {
    it(`rejects ${what} with a 400 naming ${field}, writing nothing`, async () => {
      const before = await s.database.prisma.invoice.count();
      const res = await s.rest("POST", "/v1/invoices/", {
        body: { customer: customerId, document: "CL33", lines: workedExampleLines, ...body },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields)).toContain(field);
      expect(await s.database.prisma.invoice.count()).toBe(before);
    });
  }

  it("rejects an invoice without a customer as a 400 on customer", async () => {
    const res = await s.rest("POST", "/v1/invoices/", { body: { document: "CL33", lines: workedExampleLines } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual({ customer: ["is required"] });
  });

  it("rejects an invoice for another organization's customer as a 400 on customer", async () => {
    const foreign = (await s.rest("POST", "/v1/customers/", { key: s.keys.other, body: chileanCustomer() })).body;
    const res = await s.rest("POST", "/v1/invoices/", { body: { customer: foreign.id, lines: workedExampleLines } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toHaveProperty("customer");
  });

  it("keeps invoices inside their organization and mode (404 for others)", async () => {
    const inv = await createInvoice();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      for (const [method, path] of [
        ["GET", `/v1/invoices/${inv.id}/`],
        ["PATCH", `/v1/invoices/${inv.id}/`],
        ["DELETE", `/v1/invoices/${inv.id}/`],
        ["GET", `/v1/invoices/${inv.id}/finalize/`],
        ["GET", `/v1/invoices/${inv.id}/pdf/`],
      ]) {
        const res = await s.rest(method, path, { key, body: method === "PATCH" ? { note: "x" } : undefined });
        expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    expect((await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: inv.id } })).status).toBe("draft");
  });

  it("refuses to finalize an invoice without lines", async () => {
    const inv = await createInvoice({ lines: [] });
    const res = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`);
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toHaveProperty("lines");
  });

  it("answers 413 payload_too_large for a body over 5 MiB, writing nothing", async () => {
    const before = await s.database.prisma.invoice.count();
    const big = JSON.stringify({ customer: customerId, note: "x".repeat(5 * 1024 * 1024) });
    const res = await s.rest("POST", "/v1/invoices/", { raw: big });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect(await s.database.prisma.invoice.count()).toBe(before);
    // the server keeps serving
    expect((await s.rest("GET", "/v1/generals/currencies/")).status).toBe(200);
  });

  it("answers 405 for a wrong method and 404 for an unknown path", async () => {
    expect((await s.rest("PUT", `/v1/invoices/inv_x/`)).status).toBe(405);
    expect((await s.rest("GET", `/v1/nothing/`)).status).toBe(404);
    expect((await s.rest("GET", `/v1/invoices/%E0%A4%A/`)).status).toBe(404);
  });
});
