/**
 * Credit notes (spec "Credit note"; SII 61/112) over REST and GraphQL: shape, `?expand=invoice`,
 * the amount-left rule (also under concurrency), bad inputs, lifecycle, PDF, aggregations; and
 * debit notes (56) through the same resource, which raise what is due.
 */
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

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

/** A finalized CL33 invoice of docs/invoice-totals.md's worked example: total 2916. */
async function finalizedInvoice(body: Record<string, unknown> = {}, key = s.keys.acme) {
  const customer =
    key === s.keys.acme
      ? customerId
      : (await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer() })).body.id;
  const inv = await s.rest("POST", "/v1/invoices/", {
    key,
    body: {
      customer,
      date: "2026-11-20",
      lines: [
        { name: "Consultoría", quantity: 2, amount: 1000 },
        { name: "Soporte", amount: 500, discount: 10 },
      ],
      ...body,
    },
  });
  expect(inv.status, JSON.stringify(inv.body)).toBe(201);
  const fin = await s.rest("GET", `/v1/invoices/${inv.body.id}/finalize/`, { key });
  expect(fin.status).toBe(200);
  return fin.body;
}

async function createCreditNote(body: Record<string, unknown>, query = "") {
  const res = await s.rest("POST", `/v1/creditnotes/${query}`, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe("credit notes over REST", () => {
  it("creates a draft against a finalized invoice with the spec's fields and invoice totals", async () => {
    const invoice = await finalizedInvoice();
    const note = await createCreditNote({
      invoice: invoice.id,
      document: "CL61",
      date: "2026-11-22",
      lines: [
        { name: "Devolución consultoría", quantity: 1, amount: 1000 },
        { name: "Ajuste", description: "descuento", quantity: 2, amount: 100, discount: 50, discount_scheme: "$" },
      ],
      internal_note: "ticket 4411",
      note: "Devolución parcial",
    });
    expect(note).toEqual({
      id: expect.stringMatching(/^cre_/),
      invoice: invoice.id,
      number: null,
      numbering: null,
      document: "CL61",
      date: "2026-11-22",
      lines: [
        {
          id: expect.stringMatching(/^lin_/),
          amount: 1000,
          description: null,
          discount: 0,
          discount_scheme: "%",
          exempt: false,
          name: "Devolución consultoría",
          quantity: 1,
          tax: 190,
          tax_percent: 19,
          total: 1000,
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
        },
        {
          id: expect.stringMatching(/^lin_/),
          amount: 100,
          description: "descuento",
          discount: 50,
          discount_scheme: "$",
          exempt: false,
          name: "Ajuste",
          quantity: 2,
          tax: 29,
          tax_percent: 19,
          total: 150,
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
        },
      ],
      amount: 1150,
      exempt: 0,
      tax: 219,
      tax_percent: 19,
      subtotal: 1150,
      total: 1369,
      discount: 0,
      discount_scheme: "%",
      local_file: null,
      internal_note: "ticket 4411",
      note: "Devolución parcial",
      credit_note: null,
      voided_by: null,
      tax_agency: {},
      status: "draft",
      imported: false,
      user: "ops@acme.cl",
      created: expect.stringMatching(ISO),
      updated: expect.stringMatching(ISO),
    });
    const row = await s.database.prisma.creditNote.findUniqueOrThrow({
      where: { id: note.id },
      include: { lines: true },
    });
    expect({
      invoiceId: row.invoiceId,
      currencyId: row.currencyId,
      total: row.total.toString(),
      lines: row.lines.length,
    }).toEqual({ invoiceId: invoice.id, currencyId: "CLP", total: "1369", lines: 2 });
    expect((await s.rest("GET", `/v1/creditnotes/${note.id}/`)).body).toEqual(note);
  });

  it(
    "prints the invoice object with ?expand=invoice on retrieve, create and finalize; other expansions " + "are a 400",
    async () => {
      const invoice = await finalizedInvoice();
      const created = await createCreditNote(
        { invoice: invoice.id, lines: [{ name: "x", amount: 100 }] },
        "?expand=invoice",
      );
      expect(created.invoice).toEqual((await s.rest("GET", `/v1/invoices/${invoice.id}/`)).body);
      const got = await s.rest("GET", `/v1/creditnotes/${created.id}/?expand=invoice`);
      expect(got.body.invoice).toMatchObject({
        id: invoice.id,
        number: invoice.number,
        total: 2916,
        status: "finalized",
        customer: { id: customerId },
      });
      const fin = await s.rest("GET", `/v1/creditnotes/${created.id}/finalize/?expand=invoice`);
      expect(fin.body.invoice.id).toBe(invoice.id);
      expect((await s.rest("GET", `/v1/creditnotes/${created.id}/`)).body.invoice).toBe(invoice.id);
      const bad = await s.rest("GET", `/v1/creditnotes/${created.id}/?expand=customer`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.fields).toEqual({ expand: ["cannot expand customer; expandable: invoice"] });
    },
  );

  it("defaults to CL61 in the invoice's currency and today's date, and to CL112 for an export invoice", async () => {
    const invoice = await finalizedInvoice();
    const note = await createCreditNote({ invoice: invoice.id, lines: [{ name: "x", amount: 1000 }] });
    expect(note).toMatchObject({ document: "CL61", total: 1190 });
    expect(note.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const usd = await finalizedInvoice({ document: "CL110", lines: [{ name: "Export", quantity: 3, amount: "2.50" }] });
    expect(usd.total).toBe(7.5);
    const exportNote = await createCreditNote({ invoice: usd.id, lines: [{ name: "Export", amount: "1.25" }] });
    expect(exportNote).toMatchObject({
      document: "CL112",
      amount: 0,
      exempt: 1.25,
      tax: 0,
      tax_percent: 0,
      total: 1.25,
    });
    expect((await s.database.prisma.creditNote.findUniqueOrThrow({ where: { id: exportNote.id } })).currencyId).toBe(
      "USD",
    );
  });

  it("is taxed as its invoice: none on a factura exenta, tax included on a boleta", async () => {
    const exenta = await finalizedInvoice({ document: "CL34", lines: [{ name: "Curso", amount: 10000 }] });
    expect(await createCreditNote({ invoice: exenta.id, lines: [{ name: "Curso", amount: 4000 }] })).toMatchObject({
      amount: 0,
      exempt: 4000,
      tax: 0,
      total: 4000,
    });
    const boleta = await finalizedInvoice({ document: "CL39", lines: [{ name: "Café", amount: 680 }] });
    expect(boleta.total).toBe(680);
    expect(await createCreditNote({ invoice: boleta.id, lines: [{ name: "Café", amount: 680 }] })).toMatchObject({
      amount: 571,
      tax: 109,
      total: 680,
    });
  });

  it(
    "credits at most the invoice total: a 400 names the amount left, and deleting a draft frees " + "its amount",
    async () => {
      const invoice = await finalizedInvoice();
      const first = await createCreditNote({ invoice: invoice.id, lines: [{ name: "a", amount: 1000 }] }); // 1190
      const before = await s.database.prisma.creditNote.count();
      const over = await s.rest("POST", "/v1/creditnotes/", {
        body: { invoice: invoice.id, lines: [{ name: "b", amount: 1451 }] },
      }); // 1727
      expect(over.status).toBe(400);
      expect(over.body.error).toMatchObject({
        code: "validation_error",
        fields: {
          total: [
            `1727 CLP exceeds what is left to credit on invoice ${invoice.id}: 1726 CLP (invoice total 2916 CLP, ` +
              `already credited 1190 CLP)`,
          ],
        },
      });
      expect(await s.database.prisma.creditNote.count()).toBe(before);

      // exactly what is left fits: net 1450 + tax 276 (275.5 rounded half away from zero) = 1726
      const rest = await createCreditNote({ invoice: invoice.id, lines: [{ name: "b", amount: 1450 }] });
      expect(rest.total).toBe(1726);
      const full = await s.rest("POST", "/v1/creditnotes/", {
        body: { invoice: invoice.id, lines: [{ name: "c", amount: 1 }] },
      });
      expect(full.status).toBe(400);
      expect(full.body.error.fields.total[0]).toContain(": 0 CLP");

      expect((await s.rest("DELETE", `/v1/creditnotes/${first.id}/`)).status).toBe(204);
      expect((await createCreditNote({ invoice: invoice.id, lines: [{ name: "c", amount: 1000 }] })).total).toBe(1190);
    },
  );

  it("lets concurrent credit notes together credit no more than the invoice total", async () => {
    const invoice = await finalizedInvoice(); // 2916: room for two notes of 1190, not three
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        s.rest("POST", "/v1/creditnotes/", { body: { invoice: invoice.id, lines: [{ name: "x", amount: 1000 }] } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    expect(results.filter((r) => r.status === 400)).toHaveLength(4);
    const credited = await s.database.prisma.creditNote.aggregate({
      where: { invoiceId: invoice.id },
      _sum: { total: true },
    });
    expect(credited._sum.total?.toString()).toBe("2380");
  });

  it("finalizes with its own numbering and then refuses delete and finalize with 409, changing nothing", async () => {
    const invoice = await finalizedInvoice();
    const a = await createCreditNote({ invoice: invoice.id, lines: [{ name: "a", amount: 100 }] });
    const b = await createCreditNote({ invoice: invoice.id, lines: [{ name: "b", amount: 100 }] });
    const fa = await s.rest("GET", `/v1/creditnotes/${a.id}/finalize/`);
    const fb = await s.rest("GET", `/v1/creditnotes/${b.id}/finalize/`);
    expect(fa.status).toBe(200);
    expect(fa.body.status).toBe("finalized");
    expect(fb.body.number).toBe(fa.body.number + 1);
    const counter = await s.database.prisma.documentCounter.findFirstOrThrow({
      where: { organizationId: s.orgs.acme, testMode: true, documentTypeId: "CL61" },
    });
    expect(counter).toMatchObject({ kind: "credit_note", lastNumber: fb.body.number });

    const before = await s.database.prisma.creditNote.findUniqueOrThrow({
      where: { id: a.id },
      include: { lines: true },
    });
    for (const [method, path] of [
      ["DELETE", `/v1/creditnotes/${a.id}/`],
      ["GET", `/v1/creditnotes/${a.id}/finalize/`],
    ]) {
      const res = await s.rest(method, path);
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.body.error.code).toBe("invalid_state");
    }
    expect(
      await s.database.prisma.creditNote.findUniqueOrThrow({ where: { id: a.id }, include: { lines: true } }),
    ).toEqual(before);
    // the spec has no update of credit notes
    expect((await s.rest("PATCH", `/v1/creditnotes/${b.id}/`, { body: {} })).status).toBe(405);
  });

  it("renders a PDF naming the invoice it corrects, with its number and date", async () => {
    const invoice = await finalizedInvoice();
    const note = await createCreditNote({
      invoice: invoice.id,
      date: "2026-11-22",
      lines: [{ name: "Devolución", amount: 1000 }],
      note: "Producto dañado",
      internal_note: "no imprimir",
    });
    const fin = (await s.rest("GET", `/v1/creditnotes/${note.id}/finalize/`)).body;
    const res = await s.rest("GET", `/v1/creditnotes/${note.id}/pdf/`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["file"]);
    const pdf = Buffer.from(res.body.file, "base64");
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const text = (await new PDFParse({ data: new Uint8Array(pdf) }).getText()).text;
    for (const expected of [
      "Acme SpA",
      "Cliente SpA",
      // test mode without SII set-up: a non-tax document of the internal series (docs/sii-setup.md)
      "DOCUMENTO NO TRIBUTARIO",
      `N° interno ${fin.number}`,
      "Fecha de emisión: 22-11-2026",
      "Referencias",
      `Documento no tributario ${invoice.number} 20-11-2026 Corrige montos:`,
      "Producto dañado",
      "Devolución",
      "CLP 1.000",
      "CLP 190",
      "CLP 1.190",
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain("no imprimir");
  });

  it("keeps credit notes inside their organization and mode (404 for others)", async () => {
    const invoice = await finalizedInvoice();
    const note = await createCreditNote({ invoice: invoice.id, lines: [{ name: "x", amount: 100 }] });
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      for (const [method, path] of [
        ["GET", `/v1/creditnotes/${note.id}/`],
        ["DELETE", `/v1/creditnotes/${note.id}/`],
        ["GET", `/v1/creditnotes/${note.id}/finalize/`],
        ["GET", `/v1/creditnotes/${note.id}/pdf/`],
      ]) {
        const res = await s.rest(method, path, { key });
        expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    expect((await s.database.prisma.creditNote.findUniqueOrThrow({ where: { id: note.id } })).status).toBe("draft");
  });
});

describe("credit notes: bad input (400 in docs/rest.md's shape, nothing written)", () => {
  let invoiceId: string;
  let draftInvoiceId: string;
  let foreignInvoiceId: string;
  let liveInvoiceId: string;
  beforeAll(async () => {
    invoiceId = (await finalizedInvoice()).id;
    draftInvoiceId = (
      await s.rest("POST", "/v1/invoices/", { body: { customer: customerId, lines: [{ name: "x", amount: 1000 }] } })
    ).body.id;
    foreignInvoiceId = (await finalizedInvoice({}, s.keys.other)).id;
    // a draft: live mode finalizes no CL33 before its SII set-up (docs/sii-setup.md); unknown to a test key either way
    const liveCustomer = (await s.rest("POST", "/v1/customers/", { key: s.keys.acmeLive, body: chileanCustomer() }))
      .body.id;
    liveInvoiceId = (
      await s.rest("POST", "/v1/invoices/", {
        key: s.keys.acmeLive,
        body: { customer: liveCustomer, lines: [{ name: "x", amount: 1000 }] },
      })
    ).body.id;
  });

  const cases: [string, () => Record<string, unknown>, string, string | RegExp][] = [
    [
      "a draft invoice",
      () => ({ invoice: draftInvoiceId }),
      "invoice",
      "is a draft; only finalized invoices can be credited",
    ],
    ["another organization's invoice", () => ({ invoice: foreignInvoiceId }), "invoice", "unknown invoice"],
    ["a live invoice from a test key", () => ({ invoice: liveInvoiceId }), "invoice", "unknown invoice"],
    ["no invoice", () => ({ invoice: undefined }), "invoice", "is required"],
    ["no lines", () => ({ lines: undefined }), "lines", "a credit note needs at least one line"],
    ["an empty lines list", () => ({ lines: [] }), "lines", "a credit note needs at least one line"],
    [
      "a negative quantity",
      () => ({ lines: [{ name: "x", quantity: -1, amount: 100 }] }),
      "lines.0.quantity",
      "must not be negative",
    ],
    ["a negative amount", () => ({ lines: [{ name: "x", amount: -100 }] }), "lines.0.amount", "must not be negative"],
    ["a line without a name", () => ({ lines: [{ amount: 100 }] }), "lines.0.name", "is required"],
    ["more than the invoice total", () => ({ lines: [{ name: "x", amount: 2451 }] }), "total", "left to credit"],
    ["an invoice document type", () => ({ document: "CL33" }), "document", "is not a credit or debit note type"],
    ["a purchase-only or invoice type", () => ({ document: "CL46" }), "document", "is not a credit or debit note type"],
    [
      "an export debit note for a national invoice",
      () => ({ document: "CL111" }),
      "document",
      "cannot debit a CL33 invoice",
    ],
    [
      "an export credit note for a national invoice",
      () => ({ document: "CL112" }),
      "document",
      "cannot credit a CL33 invoice",
    ],
    [
      "a date before the invoice's",
      () => ({ date: "2026-11-19" }),
      "date",
      "must not be before the invoice's date 2026-11-20",
    ],
    ["an unknown field", () => ({ customer: customerId }), "customer", "unknown field"],
  ];
  for (const [what, body, field, reason] of cases) {
    it(`rejects ${what} (${field})`, async () => {
      const before = await s.database.prisma.creditNote.count();
      const res = await s.rest("POST", "/v1/creditnotes/", {
        body: { invoice: invoiceId, lines: [{ name: "Devolución", amount: 100 }], ...body() },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.fields[field]?.join(" "), JSON.stringify(res.body)).toMatch(reason);
      expect(await s.database.prisma.creditNote.count()).toBe(before);
    });
  }
});

describe("credit notes over GraphQL, and the customer balance", () => {
  it("creates, lists per invoice, finalizes; a finalized note lowers the customer balance", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Balance" }) })).body.id;
    const invoice = (
      await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "x", amount: 10000 }] } })
    ).body;
    await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`);
    const balance = async () => (await s.rest("GET", `/v1/customers/${customer}/`)).body.aggregations;
    expect(await balance()).toMatchObject({ sales: 11900, balance: 11900 });

    const created = await s.graphql(
      `mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id status total currency { id } ` +
        `invoice { id } lines { tax taxPercent } } }`,
      { input: { invoice: invoice.id, lines: [{ name: "Devolución", amount: "2000" }], note: "parcial" } },
    );
    expect(created.body.errors).toBeUndefined();
    const note = created.body.data.createCreditNote;
    expect(note).toMatchObject({
      status: "draft",
      total: "2380",
      currency: { id: "CLP" },
      invoice: { id: invoice.id },
      lines: [{ tax: "380", taxPercent: "19" }],
    });
    expect(await balance()).toMatchObject({ balance: 11900 }); // drafts do not count

    const fin = await s.graphql(`mutation($id: ID!) { finalizeCreditNote(id: $id) { status number } }`, {
      id: note.id,
    });
    expect(fin.body.data.finalizeCreditNote.status).toBe("finalized");
    expect(await balance()).toMatchObject({ sales: 11900, balance: 9520 });

    const listed = await s.graphql(
      `query($inv: String) { creditNotes(where: { invoice: { equals: $inv } }) { totalCount edges { node { id ` +
        `total } } } }`,
      { inv: invoice.id },
    );
    expect(listed.body.data.creditNotes).toEqual({ totalCount: 1, edges: [{ node: { id: note.id, total: "2380" } }] });
    const viaInvoice = await s.graphql(
      `query($id: ID!) { node(id: $id) { ... on Invoice { creditNotes { id status } } } }`,
      { id: invoice.id },
    );
    expect(viaInvoice.body.data.node.creditNotes).toEqual([{ id: note.id, status: "finalized" }]);

    const over = await s.graphql(`mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id } }`, {
      input: { invoice: invoice.id, lines: [{ name: "x", amount: "8001" }] },
    });
    expect(over.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { total: [expect.stringContaining(": 9520 CLP")] },
    });
  });
});

describe("debit notes (CL56) through the credit note resource", () => {
  it("a finalized debit note raises the amount due, the customer balance and what can be credited", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Debit" }) })).body.id;
    const invoice = (
      await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "Servicio", amount: 10000 }] } })
    ).body;
    expect((await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`)).status).toBe(200);
    const state = async () => {
      const res = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on Invoice { amountDue customer { aggregations { balance sales ` +
          `} } } } }`,
        { id: invoice.id },
      );
      expect(res.body.errors).toBeUndefined();
      return res.body.data.node;
    };
    expect(await state()).toEqual({
      amountDue: "11900",
      customer: { aggregations: { balance: "11900", sales: "11900" } },
    });

    // a draft debit note (interest charged late: 500 net + 95 IVA) changes nothing yet
    const draft = await createCreditNote({
      invoice: invoice.id,
      document: "CL56",
      note: "Intereses por mora",
      lines: [{ name: "Intereses", amount: 500 }],
    });
    expect(draft).toMatchObject({
      document: "CL56",
      status: "draft",
      amount: 500,
      tax: 95,
      tax_percent: 19,
      total: 595,
      invoice: invoice.id,
    });
    expect(await state()).toMatchObject({ amountDue: "11900" });
    // the whole invoice can be credited, and not the draft debit on top
    const over = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: invoice.id, lines: [{ name: "x", amount: 10001 }] },
    });
    expect(over.body.error.fields.total[0]).toContain("left to credit on invoice");

    const fin = await s.rest("GET", `/v1/creditnotes/${draft.id}/finalize/`);
    expect(fin.status).toBe(200);
    expect(fin.body).toMatchObject({ status: "finalized", number: 1, document: "CL56" });
    expect(await state()).toEqual({
      amountDue: "12495",
      customer: { aggregations: { balance: "12495", sales: "11900" } },
    });

    // the debit note's 595 can now be credited as well: 11900 + 595 = 12495, and not a peso more
    const tooMuch = await s.rest("POST", "/v1/creditnotes/", {
      body: {
        invoice: invoice.id,
        lines: [
          { name: "x", amount: 10500 },
          { name: "y", amount: 1 },
        ],
      },
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.fields.total).toEqual([
      `12496 CLP exceeds what is left to credit on invoice ${invoice.id}: 12495 CLP (invoice total 11900 CLP, debit ` +
        `notes 595 CLP, already credited 0 CLP)`,
    ]);
    const credit = await createCreditNote({ invoice: invoice.id, lines: [{ name: "Anulación", amount: 10500 }] });
    expect(credit).toMatchObject({ document: "CL61", total: 12495 });
    expect((await s.rest("GET", `/v1/creditnotes/${credit.id}/finalize/`)).status).toBe(200);
    expect(await state()).toEqual({ amountDue: "0", customer: { aggregations: { balance: "0", sales: "11900" } } });

    const type = await s.graphql(
      `{ documentTypes(country: { equals: "CL" }, first: 50) { edges { node { id isNote isCreditNote ` +
        `isDebitNote } } } }`,
    );
    expect(type.body.errors).toBeUndefined();
    expect(type.body.data.documentTypes.edges.map((e: any) => e.node)).toEqual(
      expect.arrayContaining([
        { id: "CL33", isNote: false, isCreditNote: false, isDebitNote: false },
        { id: "CL56", isNote: true, isCreditNote: false, isDebitNote: true },
        { id: "CL61", isNote: true, isCreditNote: true, isDebitNote: false },
      ]),
    );
  });

  it("the debit note's PDF is titled as a debit note and names the invoice it corrects", async () => {
    const invoice = await finalizedInvoice();
    const note = await createCreditNote({
      invoice: invoice.id,
      document: "CL56",
      note: "Flete no facturado",
      lines: [{ name: "Flete", amount: 3000 }],
    });
    const pdf = await s.rest("GET", `/v1/creditnotes/${note.id}/pdf/`);
    expect(pdf.status).toBe(200);
    // the PDF wraps long lines: compare with whitespace collapsed
    const text = (
      await new PDFParse({ data: new Uint8Array(Buffer.from(pdf.body.file, "base64")) }).getText()
    ).text.replace(/\s+/g, " ");
    expect(text).toContain("NOTA DE DÉBITO ELECTRÓNICA");
    // Referencias: type, folio, date (dd-mm-yyyy), then the reference code's meaning and the note as reason
    // its invoice, of a mode not set up with SII, is a non-tax document (docs/sii-setup.md)
    expect(text).toContain(`Documento no tributario ${invoice.number} 20-11-2026 Corrige montos: Flete no facturado`);
  });
});

describe("reference codes (SII CodRef) over GraphQL", () => {
  const create = (input: Record<string, unknown>) =>
    s.graphql(`mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id total referenceCode } }`, {
      input,
    });

  it(
    "default 3; 1 cancels the whole invoice; 2 corrects text with total 0; mismatches are a 400 on reference_code " +
      "and store nothing",
    async () => {
      const invoice = await finalizedInvoice();
      const before = await s.database.prisma.creditNote.count();
      const partialCancel = await create({
        invoice: invoice.id,
        referenceCode: 1,
        lines: [{ name: "x", amount: "1000" }],
      });
      expect(partialCancel.body.errors[0].extensions).toMatchObject({
        code: "validation_error",
        fields: { reference_code: ["a cancelling credit note credits the whole invoice total 2916 CLP, not 1190 CLP"] },
      });
      const textWithAmount = await create({
        invoice: invoice.id,
        referenceCode: 2,
        lines: [{ name: "x", amount: "1000" }],
      });
      expect(textWithAmount.body.errors[0].extensions.fields.reference_code).toEqual([
        "a text correction (2) changes no amount: its total must be 0, not 1190 CLP",
      ]);
      const debitCancel = await create({
        invoice: invoice.id,
        document: "CL56",
        referenceCode: 1,
        lines: [{ name: "x", amount: "10" }],
      });
      expect(debitCancel.body.errors[0].extensions.fields.reference_code).toEqual([
        "1 (cancels) is for credit notes; a debit note corrects amounts (3) or text (2)",
      ]);
      expect(await s.database.prisma.creditNote.count()).toBe(before);

      const text = await create({
        invoice: invoice.id,
        referenceCode: 2,
        note: "Donde dice Consultoria debe decir Asesoria",
        lines: [{ name: "Corrige glosa", amount: "0" }],
      });
      expect(text.body.errors).toBeUndefined();
      expect(text.body.data.createCreditNote).toMatchObject({ total: "0", referenceCode: 2 });
      const plain = await create({ invoice: invoice.id, lines: [{ name: "x", amount: "100" }] });
      expect(plain.body.data.createCreditNote.referenceCode).toBe(3);
      await s.graphql(`mutation($id: ID!) { deleteCreditNote(id: $id) { deleted } }`, {
        id: plain.body.data.createCreditNote.id,
      });

      // the whole invoice (2 916: 2 450 net, of which the lines are 2 000 and 450) cancelled by one note
      const cancel = await create({
        invoice: invoice.id,
        referenceCode: 1,
        note: "Anula factura",
        lines: [
          { name: "Consultoría", quantity: "2", amount: "1000" },
          { name: "Soporte", amount: "450" },
        ],
      });
      expect(cancel.body.errors).toBeUndefined();
      expect(cancel.body.data.createCreditNote).toMatchObject({ total: "2916", referenceCode: 1 });
      const row = await s.database.prisma.creditNote.findUniqueOrThrow({
        where: { id: cancel.body.data.createCreditNote.id },
      });
      expect(row.referenceCode).toBe(1);
    },
  );
});

describe("GET /v1/creditnotes/ (the list)", () => {
  let listed: string;
  let invoice: any;
  /** A (finalized, Oct 1, created in January), B (finalized, Oct 15), C (draft, Nov 1); B and C tie on created */
  let a: any, b: any, c: any;
  const ids = (page: { results: { id: string }[] }) => page.results.map((r) => r.id);
  const list = async (query: string, key?: string) => {
    const res = await s.rest("GET", `/v1/creditnotes/?${query}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    listed = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Notas SpA" }) })).body.id;
    invoice = await finalizedInvoice({ customer: listed, date: "2026-09-01" });
    const made = [];
    for (const date of ["2026-10-01", "2026-10-15", "2026-11-01"])
      made.push(await createCreditNote({ invoice: invoice.id, date, lines: [{ name: "Ajuste", amount: 100 }] }));
    for (const note of made.slice(0, 2))
      expect((await s.rest("GET", `/v1/creditnotes/${note.id}/finalize/`)).status).toBe(200);
    await s.database.prisma.creditNote.update({
      where: { id: made[0].id },
      data: { createdAt: new Date("2026-01-10T09:00:00.000Z") },
    });
    const tie = new Date("2026-11-20T10:00:00.000Z");
    await s.database.prisma.creditNote.updateMany({
      where: { id: { in: [made[1].id, made[2].id] } },
      data: { createdAt: tie },
    });
    [a, b, c] = await Promise.all(made.map(async (n) => (await s.rest("GET", `/v1/creditnotes/${n.id}/`)).body));
  });

  it("pages newest first (a tie of created: the draft, then by number), each note as retrieve prints it", async () => {
    expect(await list(`customer=${listed}&page_size=2`)).toEqual({
      count: 3,
      next: `${s.url}/v1/creditnotes/?customer=${listed}&page_size=2&page=2`,
      previous: null,
      results: [c, b],
    });
    expect((await list(`customer=${listed}&page_size=2&page=2`)).results).toEqual([a]);
    // ?expand=invoice prints each note's invoice object, as on retrieve
    const expanded = await list(`customer=${listed}&expand=invoice`);
    expect(expanded.results.map((n: any) => n.invoice.id)).toEqual([invoice.id, invoice.id, invoice.id]);
    expect(expanded.results[0]).toEqual((await s.rest("GET", `/v1/creditnotes/${c.id}/?expand=invoice`)).body);
    expect((await s.rest("GET", `/v1/creditnotes/?expand=customer`)).status).toBe(400);
  });

  it("filters by customer (the invoice's), invoice, status, number, date, created and document", async () => {
    const cases: [string, string[]][] = [
      [`customer=${listed}`, [c.id, b.id, a.id]],
      [`customer=${customerId}&invoice=${invoice.id}`, []],
      [`invoice=${invoice.id}`, [c.id, b.id, a.id]],
      [`customer=${listed}&status=finalized`, [b.id, a.id]],
      [`customer=${listed}&status=draft`, [c.id]],
      [`customer=${listed}&number=${a.number}`, [a.id]],
      [`customer=${listed}&number__in=${a.number},${b.number}`, [b.id, a.id]],
      [`customer=${listed}&date=2026-10-15`, [b.id]],
      [`customer=${listed}&date__gte=2026-10-15`, [c.id, b.id]],
      [`customer=${listed}&date__lte=2026-10-15`, [b.id, a.id]],
      [`customer=${listed}&created__lte=2026-01-31`, [a.id]],
      [`customer=${listed}&document=cl61`, [c.id, b.id, a.id]],
      [`customer=${listed}&document=CL56`, []],
    ];
    for (const [query, expected] of cases) expect(ids(await list(query)), query).toEqual(expected);
  });

  it("refuses an unknown filter or operator and a bad value with a 400 naming the parameter", async () => {
    for (const [query, field] of [
      ["colour=red", "colour"],
      ["number=x", "number"],
      ["date=20261001", "date"],
      ["date__in=2026-10-01", "date__in"],
      ["status=void", "status"],
    ]) {
      const res = await s.rest("GET", `/v1/creditnotes/?${query}`);
      expect(res.status, query).toBe(400);
      expect(Object.keys(res.body.error.fields), query).toEqual([field]);
    }
  });

  it("lists only the caller's organization and mode", async () => {
    expect((await list(`customer=${listed}`, s.keys.other)).count).toBe(0);
    expect((await list(`invoice=${invoice.id}`, s.keys.acmeLive)).count).toBe(0);
  });
});
