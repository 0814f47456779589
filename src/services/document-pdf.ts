/**
 * The printed representation of a stored invoice, order or credit note (docs/sii-dte.md "The
 * printed representation" and "The printed timbre"): this module turns the stored rows into the
 * formatted values infra/pdf.ts draws. The language is the document's (domain/printed-labels.ts:
 * the organization's `locale`, else Spanish for a Chilean document type, English otherwise), and
 * so are the labels (SII's on a Chilean document: Señor(es), RUT, Giro, Dirección, Comuna, Ciudad,
 * Fecha de emisión, …), dates (`dd-mm-yyyy`) and RUTs (`76.042.235-5`). A document issued as a DTE
 * prints its DTE's parties, `S.I.I. - <office>` under the header box (domain/chile-communes.ts) and
 * its timbre. Each kind adds its own dates, references and transport.
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import type { PdfLine, PdfTable, PdfTaxStamp } from "../infra/pdf.js";
import { renderDocumentPdfOffThread } from "../infra/threads/pool.js";
import {
  cedibleLabel,
  compactTed,
  decodeIso88591,
  dteExport,
  dteParties,
  timbreCaption,
  timbrePng,
  type DteParty,
} from "../infra/taxagency/sii/index.js";
import type { PdfParty } from "../infra/pdf.js";
import { issuedIssuerOf, readsSnapshot, receiverDetails, type CustomerColumns } from "../domain/issued-parties.js";
import {
  documentLocale,
  printedDate,
  printedHeading,
  printedLabels,
  printedRut,
  printedShippingType,
  type PrintedLabels,
  type PrintLocale,
} from "../domain/printed-labels.js";
import { siiOfficeOf } from "../domain/chile-communes.js";
import { printedExport, type PrintableExport } from "../domain/printed-export.js";
import {
  EXPORT_DTE_TYPES,
  exportSettingsOf,
  pesoAmounts,
  resolveExport,
  siiCurrencyName,
} from "../domain/sii-exports.js";
import { isoDate } from "../domain/formats.js";
import { documentCustomer, documentIssuer } from "./issued-parties.js";
import { tenant, type ServiceContext } from "./context.js";
import { fileNameOfUrl } from "./files.js";
import { readSettings } from "./organization-settings.js";
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
  /** the series of `number` (domain/document-numbering.ts), null on drafts */
  numbering: string | null;
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
  /** the issue date (@db.Date) */
  date: Date;
  documentType: { name: string; code: number; countryId: string; hasLocalFormat: boolean };
  currency: { id: string; name: string; nameEn: string; rounded: boolean; decimals: number };
  /** the parties as issued (domain/issued-parties.ts), null on drafts */
  customerSnapshot: unknown;
  issuerSnapshot: unknown;
  /** the live customer (a credit note's: its invoice's); a finalized document prints its snapshot */
  customer: CustomerColumns & { country: { name: string } | null };
  lines: {
    name: string;
    description: string | null;
    quantity: Decimal;
    amount: Decimal;
    discount: Decimal;
    discountScheme: string;
    exempt: boolean;
    total: Decimal;
    code?: string | null;
  }[];
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
async function taxStampOf(
  xml: string | null,
  doc: PrintableDocument,
  resolution: { number: number | null; date: string | null },
): Promise<PdfTaxStamp | undefined> {
  if (!xml || !/<TED\b/.test(xml)) return undefined;
  return {
    barcodePng: await timbrePng(compactTed(xml)),
    caption: timbreCaption({
      number: resolution.number,
      date: resolution.date ? new Date(`${resolution.date}T00:00:00Z`) : null,
    }),
    cedible: cedibleLabel(doc.documentType.code),
  };
}

/** A party as printed, whatever its source: name, RUT (or tax id), activity, address, commune, city, e-mail. */
interface PrintedParty {
  name: string;
  taxId: string | null;
  activity: string | null;
  address: string | null;
  commune: string | null;
  city: string | null;
  email: string | null;
}

function fromDte(p: DteParty): PrintedParty {
  return {
    name: p.name,
    taxId: p.rut,
    activity: p.activity ?? null,
    address: p.address ?? null,
    commune: p.commune ?? null,
    city: p.city ?? null,
    email: p.email ?? null,
  };
}

/**
 * Issuer and customer as printed on `doc`. A document with a stored DTE prints the DTE's own
 * `Emisor` and `Receptor` (so the PDF and the DTE agree field for field); otherwise the parties
 * as issued (services/issued-parties.ts: the snapshot once finalized, live data on drafts), the
 * customer's activity, commune and city by domain/issued-parties.ts receiverDetails, and a foreign
 * customer's country after its address.
 */
async function printedParties(
  ctx: ServiceContext,
  doc: PrintableDocument,
  xml: string | null,
): Promise<{ issuer: PrintedParty; customer: PrintedParty }> {
  const parties = xml ? dteParties(xml) : null;
  if (parties) return { issuer: fromDte(parties.issuer), customer: fromDte(parties.receiver) };
  const [issuer, customer] = await Promise.all([documentIssuer(ctx, doc), documentCustomer(ctx, doc, doc.customer)]);
  const details = receiverDetails(customer);
  const foreign = customer.countryId && customer.countryId !== "CL" ? customer.country?.name : null;
  return {
    issuer: {
      name: issuer.name,
      taxId: issuer.taxId,
      activity: issuer.activity,
      address: issuer.address,
      commune: issuer.commune,
      city: issuer.city,
      email: null,
    },
    customer: {
      name: customer.name ?? customer.email ?? customer.id,
      taxId: customer.taxId,
      activity: details.activity,
      address: [customer.address, foreign].filter(Boolean).join(", ") || null,
      commune: details.commune,
      city: details.city,
      email: customer.email,
    },
  };
}

/** The issuer's block under its name: activity, then address with commune and city, then e-mail. */
function issuerBlock(p: PrintedParty): PdfParty {
  const address = [p.address, p.commune, p.city].filter(Boolean).join(", ");
  return { name: p.name, lines: [p.activity, address, p.email].filter((l): l is string => !!l) };
}

/** The receiver's rows: Señor(es), RUT, Giro, Dirección, Comuna, Ciudad, Correo (empty ones left out). */
function receiverRows(p: PrintedParty, l: PrintedLabels): [string, string][] {
  const rows: [string, string | null][] = [
    [l.customer, p.name],
    [l.taxId, p.taxId && printedRut(p.taxId)],
    [l.activity, p.activity],
    [l.address, p.address],
    [l.commune, p.commune],
    [l.city, p.city],
    [l.email, p.email],
  ];
  return rows.filter((r): r is [string, string] => !!r[1]);
}

/** A reference of a note as printed: the referenced document's name, number, date and the reason. */
export interface PrintedReference {
  document: string;
  folio: string;
  /** yyyy-mm-dd */
  date: string | null;
  /** SII's CodRef (1 cancels, 2 corrects text, 3 corrects amounts), printed by its meaning before the reason */
  code: number | null;
  /** the referenced document is a non-tax document of the internal series (printedHeading): printed as such */
  internal?: boolean;
  reason: string | null;
}

/** What each kind adds to the common content. Dates are `yyyy-mm-dd`; labels come from the document's locale. */
export interface PrintExtras {
  dueDate?: string | null;
  period?: { start: string; end: string } | null;
  /** invoices: SII's Condición de venta (contado, or crédito when due after the issue date) */
  saleCondition?: boolean;
  references?: PrintedReference[];
  /** a guía's transport (Transporte): shipping type (IndTraslado, described), destination, carrier, licence plate */
  transport?: {
    shippingType: string | null;
    destination: string | null;
    carrierName: string | null;
    carrierId: string | null;
    licencePlate: string | null;
  };
  notes?: (string | null | undefined)[];
  /**
   * an export document's (CL110, CL111, CL112) fiscal settings whose `export` applies (the
   * invoice's; a note's invoice's): printed before the document has its DTE, which is read after
   */
  exportSettings?: unknown;
}

/**
 * The export data `doc` prints (CL110, CL111, CL112; domain/printed-export.ts): as its DTE says it
 * once issued, else from `exportSettings` and the customer as resolveExport reads them (the sale
 * clause total is the document's total, the peso total its total at the exchange rate). Null for
 * other documents and for settings that do not resolve (the 400 they give on finalize says why).
 */
async function exportOf(
  ctx: ServiceContext,
  doc: PrintableDocument,
  xml: string | null,
  exportSettings: unknown,
): Promise<PrintableExport | null> {
  if (doc.documentType.countryId !== "CL" || !EXPORT_DTE_TYPES.includes(doc.documentType.code)) return null;
  if (xml) return dteExport(xml);
  const { settings, problems } = exportSettingsOf(exportSettings);
  if (problems.length || !siiCurrencyName(doc.currency.id)) return null;
  const customer = await documentCustomer(ctx, doc, doc.customer);
  const resolved = resolveExport({
    currencyId: doc.currency.id,
    settings,
    customerCountry: customer.countryId ?? null,
    customerTaxId: customer.taxId ?? null,
  });
  return {
    ...resolved,
    saleClauseTotal: resolved.saleClause !== undefined && doc.total.greaterThan(0) ? doc.total.toString() : undefined,
    pesoTotal: resolved.exchangeRate
      ? pesoAmounts(doc.exempt.toString(), doc.total.toString(), resolved.exchangeRate).total.toFixed(0)
      : undefined,
  };
}

/**
 * The language `doc` prints in: an issued document's is fixed at finalize (its issuer snapshot's
 * `locale`, else its type's country's), so changing the setting never changes an issued document;
 * a draft's is the organization's `locale` of the document's mode now, else by its type's country.
 */
async function localeOf(ctx: ServiceContext, doc: PrintableDocument): Promise<PrintLocale> {
  if (readsSnapshot(doc)) return documentLocale(doc.documentType.countryId, issuedIssuerOf(doc)?.locale ?? null);
  const settings = await readSettings(ctx.prisma, { organizationId: doc.organizationId, testMode: doc.testMode });
  return documentLocale(doc.documentType.countryId, settings.locale);
}

/** Rows with a value: a label -> value row without one (null or "") is left out. */
function withValues(rows: [string, string | null][]): [string, string][] {
  return rows.filter((r): r is [string, string] => !!r[1]);
}

/**
 * The totals column: subtotal and the global discount (with its % when a percentage) when there
 * is one, the net (unless it is zero beside an exempt amount), the exempt amount, the tax at its
 * rate, and the total (printed bold, last). `money` formats an amount in the document's currency.
 */
function printedTotals(doc: PrintableDocument, l: PrintedLabels, money: (v: Decimal) => string): [string, string][] {
  const totals: [string, string][] = [];
  if (!doc.discountAmount.isZero()) {
    totals.push([l.subtotal, money(doc.subtotal.plus(doc.discountAmount))]);
    totals.push([
      doc.discountScheme === "%" ? `${l.globalDiscount} (${doc.discount.toString()} %)` : l.globalDiscount,
      `-${money(doc.discountAmount)}`,
    ]);
  }
  if (!doc.amount.isZero() || doc.exempt.isZero()) totals.push([l.net, money(doc.amount)]);
  if (!doc.exempt.isZero()) totals.push([l.exempt, money(doc.exempt)]);
  if (!doc.taxPercent.isZero() || !doc.tax.isZero()) totals.push([l.tax(doc.taxPercent.toString()), money(doc.tax)]);
  totals.push([l.total, money(doc.total)]);
  return totals;
}

/**
 * The rows beside the receiver (dd-mm-yyyy in `locale`'s labels): issue date, due date, period,
 * sale condition (crédito when due after the issue date, else contado) and the currency's code and
 * name; rows without a value are left out.
 */
function dateRows(
  doc: PrintableDocument,
  extra: PrintExtras,
  l: PrintedLabels,
  locale: PrintLocale,
): [string, string][] {
  const day = (iso: string) => printedDate(iso, locale);
  const { currency } = doc;
  const issueDate = isoDate(doc.date);
  return withValues([
    [l.issueDate, day(issueDate)],
    [l.dueDate, extra.dueDate ? day(extra.dueDate) : null],
    [l.period, extra.period ? `${day(extra.period.start)} - ${day(extra.period.end)}` : null],
    [l.saleCondition, extra.saleCondition ? (extra.dueDate && extra.dueDate > issueDate ? l.credit : l.cash) : null],
    [l.currency, `${currency.id} (${locale === "es" ? currency.name : currency.nameEn})`],
  ]);
}

/** A guía's transport rows: shipping type (described), destination, carrier (name, RUT), licence plate. */
function transportRows(t: PrintExtras["transport"], l: PrintedLabels): [string, string][] {
  if (!t) return [];
  return withValues([
    [l.shippingType, t.shippingType && printedShippingType(t.shippingType, l)],
    [l.destination, t.destination],
    [
      l.carrier,
      [t.carrierName, t.carrierId && `${l.taxId} ${printedRut(t.carrierId)}`].filter(Boolean).join(", ") || null,
    ],
    [l.licencePlate, t.licencePlate],
  ]);
}

/**
 * The lines as printed: code, name (marked exempt), quantity, unit price with as many decimals as
 * it has (at least the currency's), the discount (a % or an amount, "" when none) and the total.
 */
function printedLines(doc: PrintableDocument, l: PrintedLabels): PdfLine[] {
  const { currency } = doc;
  return doc.lines.map((line) => ({
    code: line.code ?? "",
    name: line.exempt ? `${line.name} (${l.exemptLine})` : line.name,
    description: line.description,
    quantity: formatQuantity(line.quantity.toString()),
    unitPrice: formatAmount(line.amount.toString(), {
      ...currency,
      rounded: false,
      decimals: Math.max(currency.decimals, line.amount.decimalPlaces()),
    }),
    discount: line.discount.isZero()
      ? ""
      : line.discountScheme === "%"
        ? `${line.discount.toString()} %`
        : formatAmount(line.discount.toString(), currency),
    total: formatAmount(line.total.toString(), currency),
  }));
}

/**
 * The references table (Referencias) when there are references: the referenced document (a
 * non-tax document of the internal series as such), folio, date (dd-mm-yyyy) and the CodRef's
 * meaning before the reason.
 */
function referenceTable(
  references: PrintedReference[] | undefined,
  l: PrintedLabels,
  locale: PrintLocale,
): PdfTable | undefined {
  if (!references?.length) return undefined;
  return {
    title: l.references,
    columns: [l.referenceType, l.referenceFolio, l.referenceDate, l.referenceReason],
    rows: references.map((r) => [
      r.internal ? l.nonTaxDocument : r.document,
      r.folio,
      r.date ? printedDate(r.date, locale) : "",
      [r.code ? l.referenceCodes[r.code] : null, r.reason].filter(Boolean).join(": "),
    ]),
  };
}

/**
 * Renders `doc` with pdfkit in its language: issuer, header box (RUT, document name, number, and
 * for a DTE the SII office), receiver, dates, transport, lines, references, totals, notes. A
 * document with a stored DTE also gets its timbre (and the CEDIBLE copy where its type has one).
 */
export async function printDocument(ctx: ServiceContext, doc: PrintableDocument, extra: PrintExtras): Promise<Buffer> {
  const { currency } = doc;
  const xml = await storedTaxFile(ctx, doc);
  const [{ issuer, customer }, issuedBy, locale, exported] = await Promise.all([
    printedParties(ctx, doc, xml),
    documentIssuer(ctx, doc),
    localeOf(ctx, doc),
    exportOf(ctx, doc, xml, extra.exportSettings),
  ]);
  const l = printedLabels(locale);
  const exportRows = exported ? printedExport(exported, l, locale, currency) : null;
  const totals = printedTotals(doc, l, (v) => formatMoney(v.toString(), currency));
  const dates = dateRows(doc, extra, l, locale);
  const transport = transportRows(extra.transport, l);
  const taxStamp = await taxStampOf(xml, doc, { number: issuedBy.resolutionNumber, date: issuedBy.resolutionDate });
  const office = taxStamp ? (issuedBy.siiOffice ?? siiOfficeOf(issuer.commune)) : null;
  const lines = printedLines(doc, l);
  const heading = printedHeading(
    {
      documentName: doc.documentType.name,
      number: doc.number,
      numbering: doc.numbering,
      hasLocalFormat: doc.documentType.hasLocalFormat,
    },
    l,
  );
  return renderDocumentPdfOffThread({
    documentName: heading.title,
    taxIdLine: issuer.taxId ? `${l.headerTaxId}: ${printedRut(issuer.taxId)}` : null,
    numberLine: heading.numberLine,
    officeLine: office ? `S.I.I. - ${office.toUpperCase()}` : null,
    taxHeader: heading.taxHeader,
    status: doc.status,
    issuer: issuerBlock(issuer),
    customer: [...receiverRows(customer, l), ...(exportRows?.receiver ?? [])],
    dates,
    transport: { title: l.transport, rows: transport },
    customs: exportRows ? { title: l.exportData, rows: exportRows.customs } : undefined,
    columns: [l.code, l.description, l.quantity, l.unitPrice, l.discount, l.value],
    lines,
    references: referenceTable(extra.references, l, locale),
    totals,
    notes: [heading.note, ...(extra.notes ?? [])].filter((n): n is string => !!n),
    taxStamp,
  });
}
