/**
 * The printed timbre (chile-dte.md §9): the TED of a signed DTE as a PDF417 barcode, decoded back
 * with an independent reader (@zxing/library) to the exact TED text, accents included.
 */
import { describe, it, expect } from "vitest";
import { PNG } from "pngjs";
import { PDFParse } from "pdf-parse";
import { renderDocumentPdf, type PdfDocumentData } from "../../src/infra/pdf.js";
import {
  cedibleLabel,
  compactTed,
  issueDte,
  parseCaf,
  timbreCaption,
  timbrePng,
  type DteInput,
} from "../../src/infra/taxagency/sii/index.js";
import { generateCaf, generateCertificate } from "../helpers/sii-fixtures.js";
import { decodePdf417, pdfTimbres } from "../helpers/pdf417.js";

const input: DteInput = {
  type: 33,
  folio: 1207,
  issueDate: "2026-11-20",
  emitter: {
    rut: "76042235-5",
    businessName: "Compañía Ñandú SpA",
    activity: "Software",
    activityCodes: [620200],
    address: "Teatinos 120",
    commune: "Santiago",
    city: "Santiago",
  },
  receiver: {
    rut: "77777777-7",
    name: "Pingüino Señalética Ltda",
    activity: "Comercio",
    address: "San Diego 2222",
    commune: "La Florida",
    city: "Santiago",
  },
  lines: [{ name: "Diseño de señalética", quantity: "2", unitPrice: "125000" }],
  timestamp: "2026-11-20T09:33:20",
};

let signedXml: string;
async function signed(): Promise<string> {
  if (!signedXml) {
    const caf = parseCaf(
      generateCaf({ rut: "76042235-5", type: 33, from: 1, to: 2000, authorizedOn: "2026-11-01" }).file,
    );
    signedXml = issueDte(input, caf, generateCertificate()).xml;
  }
  return signedXml;
}

const printed: PdfDocumentData = {
  documentName: "Factura electrónica",
  taxIdLine: "R.U.T.: 76.042.235-5",
  numberLine: "N° 1207",
  officeLine: "S.I.I. - PROVIDENCIA",
  status: "finalized",
  issuer: { name: "Compañía Ñandú SpA" },
  customer: [
    ["Señor(es)", "Pingüino Señalética Ltda"],
    ["RUT", "77.777.777-7"],
  ],
  dates: [["Fecha de emisión", "20-11-2026"]],
  columns: ["Código", "Descripción", "Cantidad", "Precio unitario", "Descuento", "Valor"],
  lines: [
    { code: "", name: "Diseño de señalética", quantity: "2", unitPrice: "125.000", discount: "", total: "250.000" },
  ],
  totals: [["Total", "CLP 297.500"]],
};

describe("timbre (PDF417 of the TED)", () => {
  it("is printed in the PDF under its caption, decodes back to the TED, and the cedible copy follows", async () => {
    const ted = compactTed(await signed());
    const pdf = await renderDocumentPdf({
      ...printed,
      taxStamp: {
        barcodePng: await timbrePng(ted),
        caption: timbreCaption({ number: 80, date: new Date("2014-08-22") }),
        cedible: "CEDIBLE",
      },
    });
    const parser = new PDFParse({ data: pdf });
    const text = await parser.getText();
    await parser.destroy();
    expect(text.pages).toHaveLength(2);
    for (const page of text.pages) {
      expect(page.text).toContain("Timbre Electrónico SII");
      expect(page.text).toContain("Res. 80 de 2014");
      expect(page.text).toContain("FACTURA ELECTRÓNICA");
      expect(page.text).toContain("N° 1207");
    }
    expect(text.pages[0].text).not.toContain("CEDIBLE");
    expect(text.pages[1].text).toContain("CEDIBLE");
    expect(text.pages[1].text).toContain("Ley 19.983");
    expect(await pdfTimbres(pdf)).toEqual([ted, ted]);
  });

  it("prints no cedible copy for a boleta", async () => {
    const ted = compactTed(await signed());
    const pdf = await renderDocumentPdf({
      ...printed,
      taxStamp: { barcodePng: await timbrePng(ted), caption: timbreCaption({ number: 80, date: null }), cedible: null },
    });
    const parser = new PDFParse({ data: pdf });
    const text = await parser.getText();
    await parser.destroy();
    expect(text.pages).toHaveLength(1);
    expect(text.text).not.toContain("CEDIBLE");
  });

  it("encodes the compact TED, decoded back byte for byte by zxing", async () => {
    const ted = compactTed(await signed());
    expect(ted).toMatch(/^<TED version="1\.0"><DD><RE>76042235-5<\/RE><TD>33<\/TD><F>1207<\/F>/);
    expect(ted).toContain("<RSR>Pingüino Señalética Ltda</RSR>");
    expect(ted).toContain("<IT1>Diseño de señalética</IT1>");
    expect(ted).toMatch(/<FRMT algoritmo="SHA1withRSA">[A-Za-z0-9+/=]+<\/FRMT><\/TED>$/);
    expect(ted).not.toMatch(/>\s+</);

    const png = PNG.sync.read(await timbrePng(ted));
    // 13 data columns: 17 x 13 + 69 start/stop/indicator modules, 2 px each, plus 2 + 2 padding modules
    expect(png.width).toBe((17 * 13 + 69 + 4) * 2);
    expect(png.height).toBeGreaterThan(100);
    expect(decodePdf417({ width: png.width, height: png.height, channels: 4, data: png.data })).toBe(ted);
  });

  it("captions the resolution and names the cedible copy per type", () => {
    expect(timbreCaption({ number: 80, date: new Date("2014-08-22T00:00:00Z") })).toEqual([
      "Timbre Electrónico SII",
      "Res. 80 de 2014",
      "Verifique documento: www.sii.cl",
    ]);
    expect(timbreCaption({ number: null, date: null })).toEqual([
      "Timbre Electrónico SII",
      "Verifique documento: www.sii.cl",
    ]);
    expect([33, 34, 39, 41, 52, 56, 61].map(cedibleLabel)).toEqual([
      "CEDIBLE",
      "CEDIBLE",
      null,
      null,
      "CEDIBLE CON SU FACTURA",
      null,
      null,
    ]);
  });
});
