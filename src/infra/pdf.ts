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
}

/** Renders the document; resolves to the PDF bytes. */
export function renderDocumentPdf(data: PdfDocumentData): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: "A4", margin: 50, info: { Title: `${data.documentName} ${data.number ?? "draft"}` } });
    const chunks: Buffer[] = [];
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);

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
    doc.end();
  });
}

function partyLines(party: PdfParty): string[] {
  return [party.taxId ? `RUT/Tax id: ${party.taxId}` : null, party.address ?? null, party.email ?? null, ...(party.lines ?? [])].filter(
    (l): l is string => !!l,
  );
}
