/**
 * Printed representation of a document (invoice, order, credit note) with pdfkit: issuer,
 * customer, document name and number, dates, lines and totals in the document currency.
 * Pure rendering: callers pass already computed, formatted values.
 */
import PDFDocument from "pdfkit";

export interface PdfParty {
  name: string;
  taxId?: string | null;
  address?: string | null;
  email?: string | null;
  lines?: string[];
}

export interface PdfLine {
  name: string;
  description?: string | null;
  quantity: string;
  unitPrice: string;
  discount: string;
  total: string;
}

export interface PdfDocumentData {
  /** e.g. "Factura electrónica" */
  documentName: string;
  /** null for drafts */
  number: number | null;
  status: string;
  issuer: PdfParty;
  customer: PdfParty;
  /** label -> formatted value, e.g. ["Date", "2026-11-22"] */
  dates: [string, string][];
  currency: string;
  lines: PdfLine[];
  /** label -> formatted amount, e.g. ["Total", "CLP 2.916"]; the last one is printed bold */
  totals: [string, string][];
  notes?: string[];
  /** a DTE's printed representation (chile-dte.md §9); absent for documents without one */
  taxStamp?: PdfTaxStamp;
}

/** The timbre of a DTE as printed: barcode, caption, and the assignable copy's label. */
export interface PdfTaxStamp {
  /** PNG of the PDF417 barcode of the TED (taxagency/sii/timbre.ts) */
  barcodePng: Buffer;
  /** lines under the barcode: "Timbre Electrónico SII", "Res. 80 de 2014", ... */
  caption: string[];
  /** when set ("CEDIBLE", "CEDIBLE CON SU FACTURA"), a second copy follows with this label and a receipt box */
  cedible: string | null;
}

/** Printed width of the timbre: about 7 cm (SII asks for at least about 2 x 5 cm). */
const TIMBRE_WIDTH = 200;

/** Ley 19.983's acknowledgement printed in the receipt box of the cedible copy. */
const RECEIPT_TEXT =
  "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, y la letra c) del Art. 5° " +
  "de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) prestado(s) ha(n) sido recibido(s).";

/** Renders the document; resolves to the PDF bytes. */
export function renderDocumentPdf(data: PdfDocumentData): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: "A4", margin: 50, info: { Title: `${data.documentName} ${data.number ?? "draft"}` } });
    const chunks: Buffer[] = [];
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    drawCopy(doc, data, null);
    if (data.taxStamp?.cedible) {
      doc.addPage();
      drawCopy(doc, data, data.taxStamp.cedible);
    }
    doc.end();
  });
}

/** One copy of the document on the current page (and following ones when the lines need them). */
function drawCopy(doc: PDFKit.PDFDocument, data: PdfDocumentData, cedible: string | null): void {
  const left = 50;
  const right = doc.page.width - 50;
  const width = right - left;

  // issuer (left) and document box (right)
  doc.font("Helvetica-Bold").fontSize(14).text(data.issuer.name, left, 50, { width: width * 0.55 });
  doc.font("Helvetica").fontSize(9);
  for (const line of partyLines(data.issuer)) doc.text(line, { width: width * 0.55 });

  const boxX = left + width * 0.6;
  const boxW = width * 0.4;
  doc.rect(boxX, 50, boxW, 70).lineWidth(1.5).strokeColor("#b00000").stroke();
  doc.fillColor("#b00000").font("Helvetica-Bold").fontSize(11);
  if (data.issuer.taxId) doc.text(`RUT ${data.issuer.taxId}`, boxX, 58, { width: boxW, align: "center" });
  doc.text(data.documentName.toUpperCase(), boxX, doc.y + 2, { width: boxW, align: "center" });
  doc.text(data.number === null ? `DRAFT` : `N° ${data.number}`, boxX, doc.y + 2, { width: boxW, align: "center" });
  doc.fillColor("black");

  // customer and dates
  let y = Math.max(doc.y, 130) + 15;
  doc.font("Helvetica-Bold").fontSize(10).text("Customer", left, y);
  doc.font("Helvetica").fontSize(9).text(data.customer.name, left, doc.y);
  for (const line of partyLines(data.customer)) doc.text(line);
  const customerBottom = doc.y;
  doc.y = y;
  for (const [label, value] of data.dates) {
    doc.font("Helvetica-Bold").text(`${label}: `, boxX, doc.y, { continued: true }).font("Helvetica").text(value);
  }
  doc.font("Helvetica-Bold").text("Currency: ", boxX, doc.y, { continued: true }).font("Helvetica").text(data.currency);
  y = Math.max(customerBottom, doc.y) + 20;

  // lines table
  const cols = [
    { title: "Item", x: left, w: width * 0.4, align: "left" as const },
    { title: "Quantity", x: left + width * 0.4, w: width * 0.12, align: "right" as const },
    { title: "Unit price", x: left + width * 0.52, w: width * 0.16, align: "right" as const },
    { title: "Discount", x: left + width * 0.68, w: width * 0.14, align: "right" as const },
    { title: "Total", x: left + width * 0.82, w: width * 0.18, align: "right" as const },
  ];
  doc.rect(left, y - 4, width, 18).fill("#eeeeee").fillColor("black");
  doc.font("Helvetica-Bold").fontSize(9);
  for (const c of cols) doc.text(c.title, c.x + 2, y, { width: c.w - 4, align: c.align });
  y += 20;
  doc.font("Helvetica").fontSize(9);
  for (const line of data.lines) {
    if (y > doc.page.height - 150) {
      doc.addPage();
      y = 50;
    }
    const values = [line.name, line.quantity, line.unitPrice, line.discount, line.total];
    let rowBottom = y;
    cols.forEach((c, i) => {
      doc.text(values[i], c.x + 2, y, { width: c.w - 4, align: c.align });
      rowBottom = Math.max(rowBottom, doc.y);
    });
    if (line.description) {
      doc.fillColor("#555555").text(line.description, left + 2, rowBottom, { width: cols[0].w - 4 }).fillColor("black");
      rowBottom = doc.y;
    }
    y = rowBottom + 6;
  }
  doc.moveTo(left, y).lineTo(right, y).lineWidth(0.5).strokeColor("#999999").stroke();
  y += 10;

  // totals
  data.totals.forEach(([label, value], i) => {
    const last = i === data.totals.length - 1;
    doc.font(last ? "Helvetica-Bold" : "Helvetica").fontSize(last ? 11 : 9);
    doc.text(label, boxX, y, { width: boxW * 0.5 });
    doc.text(value, boxX + boxW * 0.5, y, { width: boxW * 0.5, align: "right" });
    y = doc.y + 4;
  });

  if (data.notes?.length) {
    y += 10;
    doc.font("Helvetica").fontSize(9);
    for (const note of data.notes) {
      doc.text(note, left, y, { width });
      y = doc.y + 4;
    }
  }
  if (data.taxStamp) drawTaxStamp(doc, data.taxStamp, y + 10, cedible);
}

/** The timbre at the bottom left, its caption under it, and on the cedible copy the label and receipt box at the right. */
function drawTaxStamp(doc: PDFKit.PDFDocument, stamp: PdfTaxStamp, minY: number, cedible: string | null): void {
  const left = 50;
  const right = doc.page.width - 50;
  const bottom = doc.page.height - 50;
  // PNG IHDR: width and height are the big-endian words at bytes 16 and 20
  const height = (TIMBRE_WIDTH * stamp.barcodePng.readUInt32BE(20)) / stamp.barcodePng.readUInt32BE(16);
  const needed = Math.max(height + 14 * stamp.caption.length + 4, cedible ? 130 : 0);
  if (minY > bottom - needed) doc.addPage();
  const top = bottom - needed;
  let y = top;
  doc.image(stamp.barcodePng, left, y, { width: TIMBRE_WIDTH });
  y += height + 4;
  doc.font("Helvetica-Bold").fontSize(8).fillColor("black");
  for (const line of stamp.caption) {
    doc.text(line, left, y, { width: TIMBRE_WIDTH, align: "center" });
    y = doc.y + 2;
  }
  if (!cedible) return;
  const boxX = left + TIMBRE_WIDTH + 20;
  const boxW = right - boxX;
  doc.rect(boxX, top, boxW, 110).lineWidth(0.8).strokeColor("black").stroke();
  doc.font("Helvetica").fontSize(8);
  const fields = ["Nombre:", "RUT:", "Fecha:", "Recinto:", "Firma:"];
  fields.forEach((label, i) => doc.text(`${label} ____________________________`, boxX + 6, top + 6 + i * 12, { width: boxW - 12 }));
  doc.fontSize(6.5).text(RECEIPT_TEXT, boxX + 6, top + 6 + fields.length * 12 + 2, { width: boxW - 12 });
  doc.font("Helvetica-Bold").fontSize(14).text(cedible, boxX, top + 114, { width: boxW, align: "right" });
}

function partyLines(party: PdfParty): string[] {
  return [party.taxId ? `RUT/Tax id: ${party.taxId}` : null, party.address ?? null, party.email ?? null, ...(party.lines ?? [])].filter(
    (l): l is string => !!l,
  );
}
