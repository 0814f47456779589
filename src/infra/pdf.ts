/**
 * Printed representation of a document (invoice, order, credit note) with pdfkit, laid out as a
 * Chilean DTE prints (docs/sii-dte.md "The printed representation"): issuer at the top left; the
 * header box at the top right (tax id, document name, number) with the SII office under it; the
 * receiver's rows and the dates framed below; transport; an export's customs data; the lines
 * table; references beside the totals; notes; the timbre at the bottom left. Pure rendering:
 * callers pass already computed, formatted values and the labels in the document's language
 * (services/document-pdf.ts).
 */
import PDFDocument from "pdfkit";

export interface PdfParty {
  name: string;
  /** lines under the name (activity, address, e-mail), already formatted */
  lines?: string[];
}

export interface PdfLine {
  /** the item's code (Código), "" when it has none */
  code: string;
  name: string;
  description?: string | null;
  quantity: string;
  unitPrice: string;
  discount: string;
  total: string;
}

/** A titled table of texts (the references of a note). */
export interface PdfTable {
  title: string;
  columns: string[];
  rows: string[][];
}

/** The column titles of the lines table, in print order: code, description, quantity, unit price, discount, value. */
export type PdfLineColumns = [string, string, string, string, string, string];

export interface PdfDocumentData {
  /** e.g. "Factura electrónica" */
  documentName: string;
  /** the header box: the issuer's tax id line ("R.U.T.: 76.042.235-5"), null when it has none */
  taxIdLine: string | null;
  /** the header box's number line: "N° 12", or the draft label */
  numberLine: string;
  /** under the header box: "S.I.I. - PROVIDENCIA" (a DTE's issuing office), null for none */
  officeLine: string | null;
  /** false: the title and number print in black without the red header box (a non-tax document); default true */
  taxHeader?: boolean;
  status: string;
  issuer: PdfParty;
  /**
   * the receiver block: label -> value rows ("Señor(es)", "RUT", "Giro", "Dirección", "Comuna", "Ciudad", …); rows
   * without a value are left out by the caller
   */
  customer: [string, string][];
  /** beside the receiver: label -> value rows (dates, sale condition, currency) */
  dates: [string, string][];
  /** transport rows (guía de despacho), printed under a title when there are any */
  transport?: { title: string; rows: [string, string][] };
  /** an export document's customs rows (Datos de exportación), printed in two columns under a title */
  customs?: { title: string; rows: [string, string][] };
  columns: PdfLineColumns;
  lines: PdfLine[];
  /** references (Referencias), printed under the lines when there are rows */
  references?: PdfTable;
  /** label -> formatted amount, e.g. ["Total", "$ 2.916"]; the last one is printed bold */
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
  "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, y la letra " +
  "c) del Art. 5° " +
  "de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) prestado(s) ha(n) sido recibido(s).";

/** Renders the document; resolves to the PDF bytes. */
export function renderDocumentPdf(data: PdfDocumentData): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: "A4", margin: 50, info: { Title: `${data.documentName} ${data.numberLine}` } });
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

const RED = "#b00000";

/** `label: value` rows at x (bold label), each as one text run; returns the y under the last. */
function labelledRows(doc: PDFKit.PDFDocument, rows: [string, string][], x: number, y: number, width: number): number {
  doc.fontSize(9);
  doc.y = y;
  for (const [label, value] of rows) {
    doc.font("Helvetica-Bold").text(`${label}: `, x, doc.y, { width, continued: true }).font("Helvetica").text(value);
  }
  return doc.y;
}

/**
 * The page's horizontal frame, in PDF points (1/72 inch) on A4: the 50 pt margins, and the right
 * column (the header box, the dates, the totals) at 60 % of the width, 40 % wide.
 */
interface PageFrame {
  left: number;
  right: number;
  width: number;
  /** the right column's x and width */
  boxX: number;
  boxW: number;
}

function pageFrame(doc: PDFKit.PDFDocument): PageFrame {
  const left = 50;
  const right = doc.page.width - 50;
  const width = right - left;
  return { left, right, width, boxX: left + width * 0.6, boxW: width * 0.4 };
}

/** The issuer at the top left: its name (bold, 14 pt) and lines (9 pt); returns the y under them. */
function drawIssuer(doc: PDFKit.PDFDocument, issuer: PdfParty, frame: PageFrame): number {
  doc
    .font("Helvetica-Bold")
    .fontSize(14)
    .fillColor("black")
    .text(issuer.name, frame.left, 50, { width: frame.width * 0.55 });
  doc.font("Helvetica").fontSize(9);
  for (const line of issuer.lines ?? []) doc.text(line, { width: frame.width * 0.55 });
  return doc.y;
}

/**
 * The header box at the top right (docs/sii-dte.md "The printed representation"): tax id line,
 * document name in capitals and number, in red inside a red frame (black without it when
 * `taxHeader` is false), and the SII office under it; returns the y under them.
 */
function drawHeaderBox(doc: PDFKit.PDFDocument, data: PdfDocumentData, frame: PageFrame): number {
  const { boxX, boxW } = frame;
  const boxLines = [data.taxIdLine, data.documentName.toUpperCase(), data.numberLine].filter((l): l is string => !!l);
  const taxHeader = data.taxHeader !== false;
  doc
    .fillColor(taxHeader ? RED : "black")
    .font("Helvetica-Bold")
    .fontSize(11);
  let y = 60;
  for (const line of boxLines) {
    // a long document name ("FACTURA NO AFECTA O EXENTA ELECTRÓNICA") wraps inside the box
    doc.text(line, boxX + 4, y, { width: boxW - 8, align: "center" });
    y = doc.y + 4;
  }
  if (taxHeader)
    doc
      .rect(boxX, 50, boxW, y - 50 + 4)
      .lineWidth(1.5)
      .strokeColor(RED)
      .stroke();
  y += 8;
  if (data.officeLine) {
    doc.font("Helvetica-Bold").fontSize(10).text(data.officeLine, boxX, y, { width: boxW, align: "center" });
    y = doc.y;
  }
  doc.fillColor("black");
  return y;
}

/** The receiver's rows (left) and the dates (right) from `top`, framed; returns the y under the frame. */
function drawParties(doc: PDFKit.PDFDocument, data: PdfDocumentData, frame: PageFrame, top: number): number {
  const { left, width, boxX, boxW } = frame;
  const customerBottom = labelledRows(doc, data.customer, left + 6, top + 6, width * 0.6 - 12);
  const datesBottom = labelledRows(doc, data.dates, boxX + 6, top + 6, boxW - 12);
  const frameBottom = Math.max(customerBottom, datesBottom) + 6;
  doc
    .rect(left, top, width, frameBottom - top)
    .lineWidth(0.8)
    .strokeColor("#555555")
    .stroke();
  return frameBottom;
}

/**
 * The transport rows (a guía de despacho's) under their title, then an export's customs rows in
 * two columns under theirs, each when it has rows; returns the y under them.
 */
function drawTransportAndCustoms(doc: PDFKit.PDFDocument, data: PdfDocumentData, frame: PageFrame, y: number): number {
  const { left, width } = frame;
  if (data.transport?.rows.length) {
    doc.font("Helvetica-Bold").fontSize(10).text(data.transport.title, left, y);
    y = labelledRows(doc, data.transport.rows, left, doc.y + 2, width) + 10;
  }
  if (data.customs?.rows.length) {
    doc.font("Helvetica-Bold").fontSize(10).text(data.customs.title, left, y);
    const half = Math.ceil(data.customs.rows.length / 2);
    const top = doc.y + 2;
    const below = labelledRows(doc, data.customs.rows.slice(0, half), left, top, width / 2 - 10);
    const belowRight = labelledRows(doc, data.customs.rows.slice(half), left + width / 2, top, width / 2);
    y = Math.max(below, belowRight) + 10;
  }
  return y;
}

/** A column of the lines table: its title, x and width (points) and alignment. */
interface LineColumn {
  title: string;
  x: number;
  w: number;
  align: "left" | "right";
}

/** The lines table's columns in print order, as fractions of the width: 14, 32, 10, 16, 11 and 17 %. */
function lineColumns(columns: PdfLineColumns, frame: PageFrame): LineColumn[] {
  const { left, width } = frame;
  const [cCode, cDescription, cQuantity, cUnit, cDiscount, cValue] = columns;
  return [
    { title: cCode, x: left, w: width * 0.14, align: "left" as const },
    { title: cDescription, x: left + width * 0.14, w: width * 0.32, align: "left" as const },
    { title: cQuantity, x: left + width * 0.46, w: width * 0.1, align: "right" as const },
    { title: cUnit, x: left + width * 0.56, w: width * 0.16, align: "right" as const },
    { title: cDiscount, x: left + width * 0.72, w: width * 0.11, align: "right" as const },
    { title: cValue, x: left + width * 0.83, w: width * 0.17, align: "right" as const },
  ];
}

/** One line of the table at `y`, its description (grey) under the name; returns the y of the next line. */
function drawLineRow(doc: PDFKit.PDFDocument, line: PdfLine, cols: LineColumn[], y: number): number {
  const values = [line.code, line.name, line.quantity, line.unitPrice, line.discount, line.total];
  let rowBottom = y;
  cols.forEach((c, i) => {
    doc.text(values[i], c.x + 2, y, { width: c.w - 4, align: c.align });
    rowBottom = Math.max(rowBottom, doc.y);
  });
  if (line.description) {
    doc
      .fillColor("#555555")
      .text(line.description, cols[1].x + 2, rowBottom, { width: cols[1].w - 4 })
      .fillColor("black");
    rowBottom = doc.y;
  }
  return rowBottom + 6;
}

/**
 * The lines table from `y`: the titles on a grey band, then each line (a new page when less than
 * 150 pt are left), closed by a rule; returns the y under it.
 */
function drawLines(doc: PDFKit.PDFDocument, data: PdfDocumentData, frame: PageFrame, y: number): number {
  const { left, right, width } = frame;
  const cols = lineColumns(data.columns, frame);
  doc
    .rect(left, y - 4, width, 18)
    .fill("#eeeeee")
    .fillColor("black");
  doc.font("Helvetica-Bold").fontSize(9);
  for (const c of cols) doc.text(c.title, c.x + 2, y, { width: c.w - 4, align: c.align });
  y += 20;
  doc.font("Helvetica").fontSize(9);
  for (const line of data.lines) {
    if (y > doc.page.height - 150) {
      doc.addPage();
      y = 50;
    }
    y = drawLineRow(doc, line, cols, y);
  }
  doc.moveTo(left, y).lineTo(right, y).lineWidth(0.5).strokeColor("#999999").stroke();
  return y + 10;
}

/**
 * The references table at the left from `y` (58 % of the width; columns of 34, 14, 20 and 32 %
 * of it; 8 pt), when it has rows; returns the y under it.
 */
function drawReferences(doc: PDFKit.PDFDocument, refs: PdfTable | undefined, frame: PageFrame, y: number): number {
  if (!refs?.rows.length) return y;
  const { left, width } = frame;
  const refW = width * 0.58;
  const widths = [0.34, 0.14, 0.2, 0.32].map((f) => f * refW);
  doc.font("Helvetica-Bold").fontSize(9).text(refs.title, left, y);
  y = doc.y + 2;
  const row = (texts: string[], bold: boolean) => {
    doc.font(bold ? "Helvetica-Bold" : "Helvetica").fontSize(8);
    let x = left;
    let bottom = y;
    texts.forEach((t, i) => {
      doc.text(t, x, y, { width: widths[i] - 4 });
      bottom = Math.max(bottom, doc.y);
      x += widths[i];
    });
    y = bottom + 2;
  };
  row(refs.columns, true);
  for (const r of refs.rows) row(r, false);
  return y;
}

/**
 * The totals in the right column from `y`, label left and amount right, the last bold (11 pt);
 * returns the y under them.
 */
function drawTotals(doc: PDFKit.PDFDocument, totals: [string, string][], frame: PageFrame, y: number): number {
  const { boxX, boxW } = frame;
  totals.forEach(([label, value], i) => {
    const last = i === totals.length - 1;
    doc.font(last ? "Helvetica-Bold" : "Helvetica").fontSize(last ? 11 : 9);
    doc.text(label, boxX, y, { width: boxW * 0.5 });
    doc.text(value, boxX + boxW * 0.5, y, { width: boxW * 0.5, align: "right" });
    y = doc.y + 4;
  });
  return y;
}

/** The notes (9 pt, the full width) from 10 pt under `y`, when there are any; returns the y under them. */
function drawNotes(doc: PDFKit.PDFDocument, notes: string[] | undefined, frame: PageFrame, y: number): number {
  if (!notes?.length) return y;
  y += 10;
  doc.font("Helvetica").fontSize(9);
  for (const note of notes) {
    doc.text(note, frame.left, y, { width: frame.width });
    y = doc.y + 4;
  }
  return y;
}

/**
 * One copy of the document on the current page (and following ones when the lines need them),
 * top to bottom: issuer and header box, receiver and dates, transport and customs, lines,
 * references beside the totals, notes, the timbre (with `cedible`'s label and receipt box).
 */
function drawCopy(doc: PDFKit.PDFDocument, data: PdfDocumentData, cedible: string | null): void {
  const frame = pageFrame(doc);
  const issuerBottom = drawIssuer(doc, data.issuer, frame);
  const headerBottom = drawHeaderBox(doc, data, frame);
  let y = drawParties(doc, data, frame, Math.max(issuerBottom, headerBottom) + 14) + 10;
  y = drawTransportAndCustoms(doc, data, frame, y);
  y = drawLines(doc, data, frame, y);
  const refsBottom = drawReferences(doc, data.references, frame, y);
  y = Math.max(drawTotals(doc, data.totals, frame, y), refsBottom);
  y = drawNotes(doc, data.notes, frame, y);
  if (data.taxStamp) drawTaxStamp(doc, data.taxStamp, y + 10, cedible);
}

/**
 * The timbre at the bottom left, its caption under it, and on the cedible copy the label and receipt box at the right.
 */
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
  fields.forEach((label, i) =>
    doc.text(`${label} ____________________________`, boxX + 6, top + 6 + i * 12, { width: boxW - 12 }),
  );
  doc.fontSize(6.5).text(RECEIPT_TEXT, boxX + 6, top + 6 + fields.length * 12 + 2, { width: boxW - 12 });
  doc
    .font("Helvetica-Bold")
    .fontSize(14)
    .text(cedible, boxX, top + 114, { width: boxW, align: "right" });
}
