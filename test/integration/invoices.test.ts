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

describe("GET /v1/invoices/ (the list)", () => {
  let listed: string;
  /** A (finalized, dated Oct 1, created in January), B (finalized, Oct 15), C (draft, Nov 1); B and C tie on created */
  let a: any, b: any, c: any;
  const list = async (query: string, key?: string) => {
    const res = await s.rest("GET", `/v1/invoices/?${query}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const ids = (page: { results: { id: string }[] }) => page.results.map((r) => r.id);

  beforeAll(async () => {
    listed = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Lista SpA" }) })).body.id;
    const made = [];
    for (const date of ["2026-10-01", "2026-10-15", "2026-11-01"])
      made.push(await createInvoice({ customer: listed, date }));
    for (const inv of made.slice(0, 2))
      expect((await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`)).status).toBe(200);
    // another customer's invoice on B's date, in the same organization
    await createInvoice({ date: "2026-10-15" });
    await s.database.prisma.invoice.update({
      where: { id: made[0].id },
      data: { createdAt: new Date("2026-01-10T09:00:00.000Z") },
    });
    const tie = new Date("2026-11-20T10:00:00.000Z");
    await s.database.prisma.invoice.updateMany({
      where: { id: { in: [made[1].id, made[2].id] } },
      data: { createdAt: tie },
    });
    [a, b, c] = await Promise.all(made.map(async (inv) => (await s.rest("GET", `/v1/invoices/${inv.id}/`)).body));
  });

  it("pages newest first (a tie of created: the draft, then by number) as retrieve prints them", async () => {
    const first = await list(`customer=${listed}&page_size=2`);
    expect(first).toEqual({
      count: 3,
      next: `${s.url}/v1/invoices/?customer=${listed}&page_size=2&page=2`,
      previous: null,
      results: [c, b],
    });
    expect(b.number).toEqual(a.number + 1);
    const second = await list(`customer=${listed}&page_size=2&page=2`);
    expect(second).toEqual({
      count: 3,
      next: null,
      previous: `${s.url}/v1/invoices/?customer=${listed}&page_size=2&page=1`,
      results: [a],
    });
    // every printed field of the list is the retrieve's, amounts included
    expect(first.results[1]).toMatchObject({ status: "finalized", total: 2916, amount_due: 2916, amount_paid: 0 });
    const everything = await list("page_size=100");
    expect(everything.count).toBe(
      await s.database.prisma.invoice.count({ where: { organizationId: s.orgs.acme, testMode: true } }),
    );
  });

  it("filters by customer, status, number, date, created and document, each with its operators", async () => {
    const cases: [string, string[]][] = [
      ["status=finalized", [b.id, a.id]],
      ["status=draft", [c.id]],
      ["status__in=draft,finalized", [c.id, b.id, a.id]],
      [`number=${a.number}`, [a.id]],
      [`number__exact=${b.number}`, [b.id]],
      [`number__in=${a.number}, ${b.number}`, [b.id, a.id]],
      ["date=2026-10-15", [b.id]],
      ["date__exact=2026-10-01", [a.id]],
      ["date__gte=2026-10-15", [c.id, b.id]],
      ["date__lte=2026-10-15", [b.id, a.id]],
      ["date__gte=2026-10-02&date__lte=2026-10-31", [b.id]],
      ["created=2026-01-10", [a.id]],
      ["created__lte=2026-01-31", [a.id]],
      ["created__gte=2026-11-20T10:00:00Z", [c.id, b.id]],
      ["created__gte=2026-11-20T10:00:00.001Z", []],
      ["document=cl33", [c.id, b.id, a.id]],
      ["document=CL34", []],
    ];
    for (const [query, expected] of cases)
      expect(ids(await list(`customer=${listed}&${query}`)), query).toEqual(expected);
    // customer alone, and several customers
    expect(ids(await list(`customer__in=${listed},cus_000000000000000000000000`))).toEqual([c.id, b.id, a.id]);
    expect((await list(`date=2026-10-15`)).results.map((r: any) => r.customer.id)).toContain(customerId);
  });

  it("refuses an unknown filter, an unknown operator and a bad value with a 400 naming the parameter", async () => {
    const cases: [string, Record<string, string[]>][] = [
      [
        "colour=red",
        { colour: ["unknown filter; filterable fields: customer, document, number, status, created, date"] },
      ],
      ["total__gte=1", { total__gte: [expect.stringContaining("unknown filter") as unknown as string] }],
      ["number=seven", { number: ["must be a whole number"] }],
      ["number=1.5", { number: ["must be a whole number"] }],
      ["number=99999999999", { number: ["must be a whole number"] }],
      ["number__in=1,x", { number__in: ["must be whole numbers separated by commas"] }],
      ["number__gte=1", { number__gte: ["unknown operator gte; use exact or in"] }],
      ["date=2026-02-30", { date: ["must be a date yyyy-mm-dd"] }],
      ["date=2026-11-20T10:00:00Z", { date: ["must be a date yyyy-mm-dd"] }],
      ["date__in=2026-10-01", { date__in: ["unknown operator in; use exact, gte or lte"] }],
      ["status=void", { status: ["must be one of draft, finalized"] }],
      ["created__gte=yesterday", { created__gte: ["must be a date yyyy-mm-dd or an ISO 8601 timestamp"] }],
    ];
    for (const [query, fields] of cases) {
      const res = await s.rest("GET", `/v1/invoices/?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("validation_error");
      expect(res.body.error.fields, query).toEqual(fields);
    }
    expect((await s.rest("GET", "/v1/invoices/?page=0")).status).toBe(400);
    expect((await s.rest("GET", "/v1/invoices/?page_size=101")).status).toBe(400);
  });

  it("lists only the caller's organization and mode", async () => {
    expect((await list(`customer=${listed}`, s.keys.other)).count).toBe(0);
    expect((await list(`customer=${listed}`, s.keys.acmeLive)).count).toBe(0);
    expect((await s.rest("GET", "/v1/invoices/", { key: null })).status).toBe(401);
  });
});

describe("amount_paid, amount_due and tax_agency (beyond the spec's invoice)", () => {
  it("print what payments paid and what is left after credit notes, as JSON numbers, in reads and lists", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Saldos SpA" }) })).body
      .id;
    const draft = await createInvoice({ customer });
    // a draft: nothing paid, its total due (no statement for it: drafts have no payments or notes)
    expect(draft).toMatchObject({ total: 2916, amount_paid: 0, amount_due: 2916, tax_agency: {} });
    const inv = (await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`)).body;
    expect(inv).toMatchObject({ status: "finalized", amount_paid: 0, amount_due: 2916, tax_agency: {} });
    // domain/payments.ts's worked example: a payment of 1000 and a credit note of 1190 leave 726 due
    const card = await s.rest("POST", "/v1/sources/", {
      body: { gateway: "test", customer, data: { token: "tok_visa" } },
    });
    const pay = await s.rest("POST", "/v1/payments/", {
      body: { amount: 1000, currency: "CLP", customer, invoice: inv.id, description: "Abono" },
    });
    const paid = await s.rest("POST", `/v1/payments/${pay.body.id}/authorize/`, { body: { source: card.body.id } });
    expect(paid.body.status).toBe("succeeded");
    // a payment that did not succeed counts for nothing
    await s.rest("POST", "/v1/payments/", {
      body: { amount: 500, currency: "CLP", customer, invoice: inv.id, description: "Pendiente" },
    });
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: inv.id, lines: [{ name: "Devolución", amount: 1000 }] },
    });
    expect(note.body.total).toBe(1190);
    // a draft credit note does not count yet
    expect((await s.rest("GET", `/v1/invoices/${inv.id}/`)).body).toMatchObject({
      amount_paid: 1000,
      amount_due: 1916,
    });
    expect((await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`)).status).toBe(200);
    const read = await s.rest("GET", `/v1/invoices/${inv.id}/`);
    expect(read.body).toMatchObject({ total: 2916, amount_paid: 1000, amount_due: 726 });
    expect(read.text).toContain('"amount_paid":1000,"amount_due":726');
    const listed = await s.rest("GET", `/v1/invoices/?customer=${customer}`);
    expect(listed.body.results).toEqual([read.body]);
    // GraphQL's fields are the same numbers
    const gql = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Invoice { amountPaid amountDue } } }`, {
      id: inv.id,
    });
    expect(gql.body.data.node).toEqual({ amountPaid: "1000", amountDue: "726" });
    // printed-only: sent back in a body they are accepted and ignored
    const echoed = await s.rest("POST", "/v1/invoices/", {
      body: { customer, lines: workedExampleLines, amount_paid: 5, amount_due: 5, tax_agency: { status: "x" } },
    });
    expect(echoed.status).toBe(201);
    expect(echoed.body).toMatchObject({ amount_paid: 0, amount_due: 2916, tax_agency: {} });
  });
});
