/**
 * services/invoices.ts createInvoice and updateInvoice called directly (prepare's steps: customer,
 * document type and currency, dates, settings, lines and totals), and services/credit-notes.ts
 * createCreditNote (createCreditNoteIn's steps: the voided note, the invoice locked, the note type,
 * date and lines, totals and reference code, the credit that fits): stored rows with their totals to
 * the unit, and the 400's fields in the order the steps find them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInvoice, finalizeInvoice, updateInvoice } from "../../src/services/invoices.js";
import { createCreditNote } from "../../src/services/credit-notes.js";
import {
  chileanCustomerOf,
  rejection,
  startServiceDatabase,
  type ServiceDatabase,
} from "../helpers/service-context.js";

let s: ServiceDatabase;
let customerId: string;
beforeAll(async () => {
  s = await startServiceDatabase();
  customerId = await chileanCustomerOf(s);
});
afterAll(async () => s?.close());

/** docs/invoice-totals.md case 6: 1 x 10000 taxable and 1 x 5000 exempt on a CL33: tax 1900, total 16900. */
const MIXED = [
  { name: "Plan Pro", quantity: 1, amount: 10000 },
  { name: "Instalación", quantity: 1, amount: 5000, exempt: true },
];

const totalsOf = (row: { amount: unknown; exempt: unknown; tax: unknown; total: unknown }) =>
  [row.amount, row.exempt, row.tax, row.total].map(String);

describe("createInvoice", () => {
  it("stores a CL33 draft in CLP (the defaults for a Chilean customer) with its totals and lines", async () => {
    const invoice = await createInvoice(s.acme, { customer: customerId, date: "2026-11-20", lines: MIXED });
    const row = await s.database.prisma.invoice.findUniqueOrThrow({
      where: { id: invoice.id },
      include: { lines: { orderBy: { position: "asc" } } },
    });
    expect(row).toMatchObject({
      status: "draft",
      documentTypeId: "CL33",
      currencyId: "CLP",
      collectionMethod: "deferred",
    });
    expect(row.date.toISOString().slice(0, 10)).toBe("2026-11-20");
    // the due date defaults to the date
    expect(row.dueDate?.toISOString().slice(0, 10)).toBe("2026-11-20");
    expect(totalsOf(row)).toEqual(["10000", "5000", "1900", "16900"]);
    expect(row.lines.map((l) => [l.position, l.name, String(l.total), l.exempt])).toEqual([
      [0, "Plan Pro", "10000", false],
      [1, "Instalación", "5000", true],
    ]);
  });

  it("names every bad field in one 400, in the steps' order, and writes nothing", async () => {
    const before = await s.database.prisma.invoice.count();
    const error = await rejection(
      createInvoice(s.acme, {
        customer: customerId,
        currency: "XXX",
        date: "2026-11-20",
        dueDate: "2026-11-19",
        periodStart: "2026-11-01",
        periodEnd: "2026-10-31",
        collectionMethod: "automatic",
        lines: [{ name: "", quantity: 1, amount: 100 }],
      }),
    );
    expect([error.code, error.status]).toEqual(["validation_error", 400]);
    expect(Object.keys(error.fields)).toEqual([
      "currency",
      "due_date",
      "period_end",
      "collection_method",
      "lines.0.name",
    ]);
    expect(error.fields.due_date).toEqual(["must not be before date"]);
    expect(error.fields.collection_method).toEqual(["must be one of deferred"]);
    expect(error.message).toMatch(/^Invalid invoice: /);
    expect(await s.database.prisma.invoice.count()).toBe(before);
  });

  it("refuses another organization's customer as unknown", async () => {
    const error = await rejection(createInvoice(s.other, { customer: customerId, lines: MIXED }));
    expect(Object.keys(error.fields)).toEqual(["customer"]);
  });
});

describe("updateInvoice", () => {
  it("recomputes the totals from new lines and keeps what is not sent", async () => {
    const { id } = await createInvoice(s.acme, { customer: customerId, date: "2026-11-20", note: "Nov", lines: MIXED });
    const updated = await updateInvoice(s.acme, id, { lines: [{ name: "Plan Pro", quantity: 2, amount: 1175 }] });
    // 2 x 1175 = 2350: tax 446.5 rounds half away from zero to 447 (docs/invoice-totals.md case 3)
    expect(totalsOf(updated)).toEqual(["2350", "0", "447", "2797"]);
    expect(updated).toMatchObject({ note: "Nov", documentTypeId: "CL33" });
    expect(await s.database.prisma.invoiceLine.count({ where: { invoiceId: id } })).toBe(1);
  });
});

describe("createCreditNote", () => {
  async function finalized() {
    const { id } = await createInvoice(s.acme, { customer: customerId, date: "2026-11-20", lines: MIXED });
    return finalizeInvoice(s.acme, id);
  }

  it("stores a CL61 draft against a finalized CL33 with the invoice's tax, and reference code 3", async () => {
    const invoice = await finalized();
    const note = await createCreditNote(s.acme, {
      invoice: invoice.id,
      date: "2026-11-21",
      lines: [{ name: "Devolución", quantity: 1, amount: 4000 }],
    });
    const row = await s.database.prisma.creditNote.findUniqueOrThrow({
      where: { id: note.id },
      include: { lines: true },
    });
    expect(row).toMatchObject({
      status: "draft",
      invoiceId: invoice.id,
      documentTypeId: "CL61",
      currencyId: "CLP",
      referenceCode: 3,
      voidsCreditNoteId: null,
    });
    // 4000 taxable at 19 %: 760
    expect(totalsOf(row)).toEqual(["4000", "0", "760", "4760"]);
    expect(row.lines.map((l) => [l.name, String(l.total), String(l.tax), String(l.taxPercent)])).toEqual([
      ["Devolución", "4000", "760", "19"],
    ]);
  });

  it("refuses a credit beyond what is left of the invoice (total), naming the amount left", async () => {
    const invoice = await finalized();
    await createCreditNote(s.acme, { invoice: invoice.id, lines: [{ name: "Parte", quantity: 1, amount: 10000 }] });
    // 16900 - 11900 = 5000 left; a 5000 taxable line totals 5950
    const error = await rejection(
      createCreditNote(s.acme, { invoice: invoice.id, lines: [{ name: "Resto", quantity: 1, amount: 5000 }] }),
    );
    expect([error.code, Object.keys(error.fields)]).toEqual(["validation_error", ["total"]]);
    expect(error.fields.total.join(" ")).toContain("5000");
    expect(await s.database.prisma.creditNote.count({ where: { invoiceId: invoice.id } })).toBe(1);
  });

  it("names the invoice, document, date and lines problems in one 400", async () => {
    const draft = await createInvoice(s.acme, { customer: customerId, date: "2026-11-20", lines: MIXED });
    expect((await rejection(createCreditNote(s.acme, { invoice: draft.id, lines: MIXED }))).fields).toEqual({
      invoice: [`${draft.id} is a draft; only finalized invoices can be credited`],
    });
    const invoice = await finalized();
    const error = await rejection(
      createCreditNote(s.acme, { invoice: invoice.id, document: "CL33", date: "2026-11-19", lines: [] }),
    );
    expect(error.fields).toEqual({
      document: ["CL33 (Factura electrónica) is not a credit or debit note type"],
      date: ["must not be before the invoice's date 2026-11-20"],
      lines: ["a credit note needs at least one line"],
    });
  });
});
