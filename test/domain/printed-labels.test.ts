/** The printed document's language, labels, dates and RUTs (src/domain/printed-labels.ts). */
import { describe, expect, it } from "vitest";
import {
  documentLocale,
  printedDate,
  printedHeading,
  printedLabels,
  printedRut,
  printedShippingType,
} from "../../src/domain/printed-labels.js";

describe("printed documents", () => {
  it("print in Spanish for Chile, English otherwise, unless the organization's locale says", () => {
    expect(documentLocale("CL", null)).toBe("es");
    expect(documentLocale("US", null)).toBe("en");
    expect(documentLocale("CL", "en")).toBe("en");
    expect(documentLocale("US", "es")).toBe("es");
    expect(documentLocale("CL", "fr")).toBe("es");
  });

  it("use SII's labels in Spanish", () => {
    const l = printedLabels("es");
    expect([
      l.customer,
      l.taxId,
      l.activity,
      l.address,
      l.commune,
      l.city,
      l.issueDate,
      l.dueDate,
      l.saleCondition,
    ]).toEqual([
      "Señor(es)",
      "RUT",
      "Giro",
      "Dirección",
      "Comuna",
      "Ciudad",
      "Fecha de emisión",
      "Fecha de vencimiento",
      "Condición de venta",
    ]);
    expect([
      l.code,
      l.description,
      l.quantity,
      l.unitPrice,
      l.discount,
      l.value,
      l.net,
      l.exempt,
      l.tax("19"),
      l.total,
      l.references,
    ]).toEqual([
      "Código",
      "Descripción",
      "Cantidad",
      "Precio unitario",
      "Descuento",
      "Valor",
      "Monto neto",
      "Monto exento",
      "IVA 19 %",
      "Total",
      "Referencias",
    ]);
    expect(printedLabels("en").tax("19")).toBe("Tax (19 %)");
    expect(printedShippingType("1", l)).toBe("1 (Operación constituye venta)");
    expect(printedShippingType("5", printedLabels("en"))).toBe("5 (Internal transfer)");
    expect(printedShippingType("X", l)).toBe("X");
  });

  it("print dates as dd-mm-yyyy (or SII's long form) in Spanish, ISO in English", () => {
    expect(printedDate("2026-11-05", "es")).toBe("05-11-2026");
    expect(printedDate("2026-11-05", "es", true)).toBe("5 de noviembre de 2026");
    expect(printedDate("2026-11-05", "en")).toBe("2026-11-05");
  });

  it("print RUTs with thousands dots", () => {
    expect(printedRut("76042235-5")).toBe("76.042.235-5");
    expect(printedRut("60803000-K")).toBe("60.803.000-K");
    expect(printedRut("1234567-4")).toBe("1.234.567-4");
    expect(printedRut("12-3")).toBe("12-3");
    expect(printedRut("DE123456789")).toBe("DE123456789");
  });
});

describe("a document's printed heading", () => {
  const es = printedLabels("es");
  const en = printedLabels("en");
  const doc = { documentName: "Factura electrónica", number: 12, numbering: "sii_folio", hasLocalFormat: true };

  it("a folio prints its type's name and number in the tax header box", () => {
    expect(printedHeading(doc, es)).toEqual({
      title: "Factura electrónica",
      numberLine: "N° 12",
      taxHeader: true,
      note: null,
    });
  });

  it("a regulated type's internal number prints as a non-tax document, outside the box, with a note", () => {
    const heading = printedHeading({ ...doc, numbering: "internal" }, es);
    expect(heading).toEqual({
      title: "Documento no tributario",
      numberLine: "N° interno 12",
      taxHeader: false,
      note:
        "Sin validez tributaria: numerado en la serie interna del emisor, antes de su habilitación ante el SII " +
        "para emitir documentos tributarios.",
    });
    expect(JSON.stringify(heading)).not.toMatch(/electr[óo]nica/i);
    expect(printedHeading({ ...doc, numbering: "internal" }, en)).toMatchObject({
      title: "Non-tax document",
      numberLine: "Internal No. 12",
      taxHeader: false,
    });
  });

  it(
    "a draft prints its type's name and the draft label; a type without local format keeps its name when " + "internal",
    () => {
      expect(printedHeading({ ...doc, number: null, numbering: null }, es)).toEqual({
        title: "Factura electrónica",
        numberLine: "BORRADOR",
        taxHeader: true,
        note: null,
      });
      expect(
        printedHeading({ documentName: "Invoice", number: 3, numbering: "internal", hasLocalFormat: false }, en),
      ).toEqual({ title: "Invoice", numberLine: "N° 3", taxHeader: true, note: null });
    },
  );
});
