/**
 * Printed summary of a swap (spec: GET /billers/built_in/swaps/{id}/pdf/): the receiving
 * organization, when the envelope was received, the reply, and one row per received document
 * (type, folio, issuer, date, net, exempt, VAT, total in whole pesos). pdfkit, like infra/pdf.ts.
 */
import PDFDocument from "pdfkit";
import { formatAmount } from "../domain/format-money.js";

/** Received DTE amounts are whole Chilean pesos. */
const CLP = { id: "CLP", rounded: true, decimals: 0 };

export interface SwapPdfData {
  id: string;
  receiver: string;
  receiverTaxId: string | null;
  received: Date;
  status: string | null;
  replyBy: string | null;
  replyDate: Date | null;
  /** amounts as whole-peso decimal strings */
  purchases: {
    type: number;
    folio: number;
    issuerTaxId: string;
    issuerName: string | null;
    date: string;
    amount: string;
    exempt: string;
    tax: string;
    total: string;
  }[];
}

/** Renders the swap; resolves to the PDF bytes. */
export function renderSwapPdf(data: SwapPdfData): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: "A4", layout: "landscape", margin: 40, info: { Title: `Swap ${data.id}` } });
    const chunks: Buffer[] = [];
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    const left = 40;
    const width = doc.page.width - 80;

    doc.font("Helvetica-Bold").fontSize(14).text("Documentos recibidos (swap)", left, 40);
    doc.font("Helvetica").fontSize(9);
    doc.text(`${data.id}`);
    doc.text(`Receptor: ${data.receiver}${data.receiverTaxId ? ` (RUT ${data.receiverTaxId})` : ""}`);
    doc.text(`Recibido: ${data.received.toISOString()}`);
    doc.text(
      `Respuesta: ${data.status ?? "sin respuesta"}${data.replyBy ? ` por ${data.replyBy}` : ""}` +
        (data.replyDate ? ` el ${data.replyDate.toISOString()}` : ""),
    );

    const cols = [
      { title: "Tipo", w: 0.06, align: "left" as const },
      { title: "Folio", w: 0.08, align: "right" as const },
      { title: "Emisor", w: 0.3, align: "left" as const },
      { title: "Fecha", w: 0.1, align: "left" as const },
      { title: "Neto", w: 0.11, align: "right" as const },
      { title: "Exento", w: 0.11, align: "right" as const },
      { title: "IVA", w: 0.11, align: "right" as const },
      { title: "Total", w: 0.13, align: "right" as const },
    ];
    let y = doc.y + 15;
    const row = (values: string[], bold = false) => {
      doc.font(bold ? "Helvetica-Bold" : "Helvetica").fontSize(9);
      let x = left;
      let bottom = y;
      cols.forEach((c, i) => {
        doc.text(values[i], x + 2, y, { width: c.w * width - 4, align: c.align });
        bottom = Math.max(bottom, doc.y);
        x += c.w * width;
      });
      y = bottom + 5;
    };
    doc
      .rect(left, y - 4, width, 18)
      .fill("#eeeeee")
      .fillColor("black");
    row(
      cols.map((c) => c.title),
      true,
    );
    for (const p of data.purchases) {
      if (y > doc.page.height - 60) {
        doc.addPage();
        y = 40;
      }
      row([
        String(p.type),
        String(p.folio),
        `${p.issuerName ?? ""} (${p.issuerTaxId})`,
        p.date,
        formatAmount(p.amount, CLP),
        formatAmount(p.exempt, CLP),
        formatAmount(p.tax, CLP),
        formatAmount(p.total, CLP),
      ]);
    }
    doc.end();
  });
}
