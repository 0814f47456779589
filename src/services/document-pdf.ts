/**
 * The printed representation of a stored invoice, order or credit note (docs/sii-dte.md "The printed timbre" for DTEs;
 * issuer, customer, lines, totals, number, dates) as PDF bytes: this module turns the stored rows
 * into the formatted values infra/pdf.ts draws. Each kind adds its own dates and notes.
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import type { PdfTaxStamp } from "../infra/pdf.js";
import { renderDocumentPdfOffThread } from "../infra/pdf-pool.js";
import { cedibleLabel, compactTed, decodeIso88591, timbreCaption, timbrePng } from "../infra/taxagency/sii/index.js";
import { tenant, type ServiceContext } from "./context.js";
import { fileNameOfUrl } from "./files.js";
import { formatAmount, formatMoney, formatQuantity } from "../domain/format-money.js";

/** What a printed document loads with it, besides its customer. */
export const PDF_DOCUMENT_INCLUDE = {
  lines: { orderBy: { position: "asc" } },
  documentType: true,
  currency: true,
  organization: true,
} as const;

/** The customer as printed (with its country's name). */
export const PDF_CUSTOMER_INCLUDE = { include: { country: true } } as const;

/** What an invoice or order loads to be printed. */
export const PDF_INCLUDE = { ...PDF_DOCUMENT_INCLUDE, customer: PDF_CUSTOMER_INCLUDE } as const;

type Decimal = Prisma.Decimal;

/** A document row loaded with PDF_INCLUDE (the columns invoices, orders and credit notes share). */
export interface PrintableDocument {
  number: number | null;
  status: string;
  discount: Decimal;
  discountScheme: string;
  discountAmount: Decimal;
  subtotal: Decimal;
  exempt: Decimal;
  amount: Decimal;
  taxPercent: Decimal;
  tax: Decimal;
  total: Decimal;
  /** URL of the stored tax document (`<base>/v1/files/<name>`), when one was issued */
  localFile: string | null;
  documentType: { name: string; code: number };
  currency: { id: string; nameEn: string; rounded: boolean; decimals: number };
  organization: {
    name: string;
    businessName: string | null;
    taxBusinessName: string | null;
    taxId: string | null;
    taxAddress: string | null;
    taxCommune: string | null;
    taxCity: string | null;
    taxActivity: string | null;
    taxResolutionNumber: number | null;
    taxResolutionDate: Date | null;
  };
  customer: { id: string; name: string | null; email: string | null; taxId: string | null; address: string | null; country: { name: string } | null };
  lines: { name: string; description: string | null; quantity: Decimal; amount: Decimal; discount: Decimal; discountScheme: string; exempt: boolean; total: Decimal }[];
}

/**
 * The printed timbre of a document whose stored file (`local_file`) is a DTE with a TED
 * (chile-dte.md §9; docs/sii-dte.md "The printed timbre"): the PDF417 barcode, its caption with
 * the organization's SII resolution, and the CEDIBLE copy's label for its type. Undefined for a
 * document without one.
 */
async function taxStampOf(ctx: ServiceContext, doc: PrintableDocument): Promise<PdfTaxStamp | undefined> {
  if (!doc.localFile) return undefined;
  const name = fileNameOfUrl(doc.localFile);
  const file = await ctx.prisma.storedFile.findFirst({ where: { name, ...tenant(ctx) }, select: { content: true } });
  const xml = file ? decodeIso88591(Buffer.from(file.content)) : "";
  if (!/<TED\b/.test(xml)) return undefined;
  const org = doc.organization;
  return {
    barcodePng: await timbrePng(compactTed(xml)),
    caption: timbreCaption({ number: org.taxResolutionNumber, date: org.taxResolutionDate }),
    cedible: cedibleLabel(doc.documentType.code),
  };
}

/**
 * Renders `doc` with pdfkit. `dates`: label/value rows printed beside the customer (dates,
 * references, transport); `notes`: paragraphs under the totals. A document with a stored DTE also
 * gets its timbre (and the CEDIBLE copy where its type has one).
 */
export async function printDocument(ctx: ServiceContext, doc: PrintableDocument, extra: { dates: [string, string][]; notes?: (string | null | undefined)[] }): Promise<Buffer> {
  const { currency, organization: org, customer } = doc;
  const totals: [string, string][] = [["Subtotal", formatMoney(doc.subtotal.toString(), currency)]];
  if (!doc.discountAmount.isZero()) {
    const label = doc.discountScheme === "%" ? `Discount (${doc.discount.toString()} %)` : "Discount";
    totals.unshift([label, `-${formatMoney(doc.discountAmount.toString(), currency)}`]);
  }
  if (!doc.exempt.isZero()) totals.push(["Exempt", formatMoney(doc.exempt.toString(), currency)]);
  totals.push(["Net", formatMoney(doc.amount.toString(), currency)]);
  totals.push([`Tax (${doc.taxPercent.toString()} %)`, formatMoney(doc.tax.toString(), currency)]);
  totals.push(["Total", formatMoney(doc.total.toString(), currency)]);
  return renderDocumentPdfOffThread({
    documentName: doc.documentType.name,
    number: doc.number,
    status: doc.status,
    issuer: {
      name: org.taxBusinessName ?? org.businessName ?? org.name,
      taxId: org.taxId,
      address: [org.taxAddress, org.taxCommune, org.taxCity].filter(Boolean).join(", ") || null,
      lines: org.taxActivity ? [org.taxActivity] : [],
    },
    customer: {
      name: customer.name ?? customer.email ?? customer.id,
      taxId: customer.taxId,
      address: [customer.address, customer.country?.name].filter(Boolean).join(", ") || null,
      email: customer.email,
    },
    dates: extra.dates,
    currency: `${currency.id} (${currency.nameEn})`,
    lines: doc.lines.map((l) => ({
      name: l.exempt ? `${l.name} (exempt)` : l.name,
      description: l.description,
      quantity: formatQuantity(l.quantity.toString()),
      unitPrice: formatAmount(l.amount.toString(), { ...currency, rounded: false, decimals: Math.max(currency.decimals, l.amount.decimalPlaces()) }),
      discount: l.discount.isZero() ? "" : l.discountScheme === "%" ? `${l.discount.toString()} %` : formatAmount(l.discount.toString(), currency),
      total: formatAmount(l.total.toString(), currency),
    })),
    totals,
    notes: (extra.notes ?? []).filter((n): n is string => !!n),
    taxStamp: await taxStampOf(ctx, doc),
  });
}
