/**
 * The printed representation of a stored invoice, order or credit note (docs/sii-dte.md "The printed timbre" for DTEs;
 * issuer, customer, lines, totals, number, dates) as PDF bytes: this module turns the stored rows
 * into the formatted values infra/pdf.ts draws. Each kind adds its own dates and notes.
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import type { PdfTaxStamp } from "../infra/pdf.js";
import { renderDocumentPdfOffThread } from "../infra/pdf-pool.js";
import { cedibleLabel, compactTed, decodeIso88591, dteParties, timbreCaption, timbrePng, type DteParty } from "../infra/taxagency/sii/index.js";
import type { PdfParty } from "../infra/pdf.js";
import type { CustomerColumns } from "../domain/issued-parties.js";
import { documentCustomer, documentIssuer } from "./issued-parties.js";
import { tenant, type ServiceContext } from "./context.js";
import { fileNameOfUrl } from "./files.js";
import { formatAmount, formatMoney, formatQuantity } from "../domain/format-money.js";

/** What a printed document loads with it, besides its customer. */
export const PDF_DOCUMENT_INCLUDE = {
  lines: { orderBy: { position: "asc" } },
  documentType: true,
  currency: true,
} as const;

/** The customer as printed (with its country's name). */
export const PDF_CUSTOMER_INCLUDE = { include: { country: true } } as const;

/** What an invoice or order loads to be printed. */
export const PDF_INCLUDE = { ...PDF_DOCUMENT_INCLUDE, customer: PDF_CUSTOMER_INCLUDE } as const;

type Decimal = Prisma.Decimal;

/** A document row loaded with PDF_INCLUDE (the columns invoices, orders and credit notes share). */
export interface PrintableDocument {
  /** the document's organization and mode: the issuer printed is that mode's tax profile */
  organizationId: string;
  testMode: boolean;
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
  /** the parties as issued (domain/issued-parties.ts), null on drafts */
  customerSnapshot: unknown;
  issuerSnapshot: unknown;
  /** the live customer (a credit note's: its invoice's); a finalized document prints its snapshot */
  customer: CustomerColumns & { country: { name: string } | null };
  lines: { name: string; description: string | null; quantity: Decimal; amount: Decimal; discount: Decimal; discountScheme: string; exempt: boolean; total: Decimal }[];
}

/** The stored tax-agency file of `doc` (`local_file`) as text, or null when it has none. */
async function storedTaxFile(ctx: ServiceContext, doc: PrintableDocument): Promise<string | null> {
  if (!doc.localFile) return null;
  const name = fileNameOfUrl(doc.localFile);
  const file = await ctx.prisma.storedFile.findFirst({ where: { name, ...tenant(ctx) }, select: { content: true } });
  return file ? decodeIso88591(Buffer.from(file.content)) : null;
}

/**
 * The printed timbre of a document whose stored file (`local_file`) is a DTE with a TED
 * (chile-dte.md §9; docs/sii-dte.md "The printed timbre"): the PDF417 barcode, its caption with
 * the issuer's SII resolution (as issued), and the CEDIBLE copy's label for its type. Undefined
 * for a document without one.
 */
async function taxStampOf(xml: string | null, doc: PrintableDocument, resolution: { number: number | null; date: string | null }): Promise<PdfTaxStamp | undefined> {
  if (!xml || !/<TED\b/.test(xml)) return undefined;
  return {
    barcodePng: await timbrePng(compactTed(xml)),
    caption: timbreCaption({ number: resolution.number, date: resolution.date ? new Date(`${resolution.date}T00:00:00Z`) : null }),
    cedible: cedibleLabel(doc.documentType.code),
  };
}

/** A DTE's party as printed: its name, RUT, address (DirX, CmnaX, CiudadX), e-mail and activity (Giro), as the DTE says them. */
function printedDteParty(p: DteParty): PdfParty {
  return { name: p.name, taxId: p.rut, address: [p.address, p.commune, p.city].filter(Boolean).join(", ") || null, email: p.email, lines: p.activity ? [p.activity] : [] };
}

/**
 * Issuer and customer as printed on `doc`. A document with a stored DTE prints the DTE's own
 * `Emisor` and `Receptor` (so the PDF and the DTE agree field for field); otherwise the parties
 * as issued (services/issued-parties.ts: the snapshot once finalized, live data on drafts).
 */
async function printedParties(ctx: ServiceContext, doc: PrintableDocument, xml: string | null): Promise<{ issuer: PdfParty; customer: PdfParty }> {
  const fromDte = xml ? dteParties(xml) : null;
  if (fromDte) return { issuer: printedDteParty(fromDte.issuer), customer: printedDteParty(fromDte.receiver) };
  const [issuer, customer] = await Promise.all([documentIssuer(ctx, doc), documentCustomer(ctx, doc, doc.customer)]);
  return {
    issuer: {
      name: issuer.name,
      taxId: issuer.taxId,
      address: [issuer.address, issuer.commune, issuer.city].filter(Boolean).join(", ") || null,
      lines: issuer.activity ? [issuer.activity] : [],
    },
    customer: {
      name: customer.name ?? customer.email ?? customer.id,
      taxId: customer.taxId,
      address: [customer.address, customer.country?.name].filter(Boolean).join(", ") || null,
      email: customer.email,
    },
  };
}

/**
 * Renders `doc` with pdfkit. `dates`: label/value rows printed beside the customer (dates,
 * references, transport); `notes`: paragraphs under the totals. A document with a stored DTE also
 * gets its timbre (and the CEDIBLE copy where its type has one).
 */
export async function printDocument(ctx: ServiceContext, doc: PrintableDocument, extra: { dates: [string, string][]; notes?: (string | null | undefined)[] }): Promise<Buffer> {
  const { currency } = doc;
  const xml = await storedTaxFile(ctx, doc);
  const [{ issuer, customer }, issuedBy] = await Promise.all([printedParties(ctx, doc, xml), documentIssuer(ctx, doc)]);
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
    issuer,
    customer,
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
    taxStamp: await taxStampOf(xml, doc, { number: issuedBy.resolutionNumber, date: issuedBy.resolutionDate }),
  });
}
