/**
 * Invoices (spec "Invoice", "States and transitions"; DESIGN.md "Documents").
 * create -> draft; update/delete only while draft (409 `invalid_state` otherwise, nothing
 * changed); finalize numbers the invoice (gapless per organization, mode and document type).
 * Totals are recomputed from the lines on every write (domain/totals.ts), never taken from input.
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector, NotFoundError, ValidationError } from "../domain/errors.js";
import { transition } from "../domain/document-status.js";
import { isoDate, todayIn } from "../domain/formats.js";
import { mergeMetadata, type Metadata } from "../domain/metadata.js";
import type { DecimalInput } from "../domain/money.js";
import { renderDocumentPdf } from "../infra/pdf.js";
import { formatAmount, formatMoney, formatQuantity } from "../domain/format-money.js";
import { tenant, withinTransaction, type ServiceContext } from "./context.js";
import { findCurrency, findDocumentType } from "./reference.js";
import {
  dateColumn,
  documentTotals,
  lineRows,
  lockDocument,
  nextDocumentNumber,
  normalizeDiscount,
  normalizeLines,
  totalColumns,
  type LineInput,
} from "./documents.js";

export interface InvoiceInput {
  customer?: string | null;
  /** document type id, e.g. CL33 (default: CL33 for Chilean customers) */
  document?: string | null;
  /** ISO 4217; default: the document type's currency */
  currency?: string | null;
  date?: string | null;
  dueDate?: string | null;
  collectionMethod?: string | null;
  lines?: LineInput[] | null;
  discount?: DecimalInput | null;
  discountScheme?: string | null;
  periodStart?: string | null;
  periodEnd?: string | null;
  note?: string | null;
  fiscalSettings?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
}

export const COLLECTION_METHODS = ["deferred"] as const;

/** Document types an invoice may use: sales (and purchase invoices), not orders or notes. */
function isInvoiceType(t: { isOrder: boolean; isNote: boolean }) {
  return !t.isOrder && !t.isNote;
}

const DEFAULT_INVOICE_TYPE_BY_COUNTRY: Record<string, string> = { CL: "CL33" };

export async function getInvoice(ctx: ServiceContext, id: string) {
  const invoice = await ctx.prisma.invoice.findFirst({ where: { id, ...tenant(ctx) } });
  if (!invoice) throw new NotFoundError("invoice", id);
  return invoice;
}

type Current = Awaited<ReturnType<typeof getInvoice>> & { lines: { name: string; description: string | null; quantity: unknown; amount: unknown; discount: unknown; discountScheme: string; exempt: boolean }[] };

/** Validates `input` (merged over `current` on update) and computes every column. */
async function prepare(ctx: ServiceContext, input: InvoiceInput, current: Current | null) {
  const errors = new FieldErrorCollector();
  const customerId = input.customer ?? current?.customerId;
  // independent lookups run together; the organization is only needed for today's date
  const [org, customer] = await Promise.all([
    !input.date && !current ? ctx.prisma.organization.findUniqueOrThrow({ where: { id: ctx.auth.organizationId } }) : null,
    customerId ? ctx.prisma.customer.findFirst({ where: { id: customerId, ...tenant(ctx) } }) : null,
  ]);
  if (!customerId) errors.add("customer", "is required");
  else if (!customer) errors.add("customer", `unknown customer ${customerId}`);

  const documentId =
    input.document ?? current?.documentTypeId ?? (customer?.countryId ? DEFAULT_INVOICE_TYPE_BY_COUNTRY[customer.countryId] : undefined);
  let documentType = null;
  if (!documentId) {
    if (customer) errors.add("document", "is required (no default document type for the customer's country)");
  } else {
    documentType = await findDocumentType(ctx, documentId, errors);
    if (documentType && !isInvoiceType(documentType)) errors.add("document", `${documentType.id} (${documentType.name}) is not an invoice type`);
  }

  const currencyId = input.currency ?? (input.document ? undefined : current?.currencyId) ?? documentType?.currencyId;
  const currency = currencyId ? await findCurrency(ctx, currencyId, errors) : null;

  const storedDate = (d: Date | null | undefined) => (d ? isoDate(d) : null);
  const date = input.date ?? (current ? isoDate(current.date) : todayIn(org!.timeZone, ctx.now()));
  const dueDate = input.dueDate !== undefined ? input.dueDate : (storedDate(current?.dueDate) ?? date);
  if (dueDate && dueDate < date) errors.add("due_date", "must not be before date");
  const periodStart = input.periodStart !== undefined ? input.periodStart : storedDate(current?.periodStart);
  const periodEnd = input.periodEnd !== undefined ? input.periodEnd : storedDate(current?.periodEnd);
  if (periodStart && periodEnd && periodEnd < periodStart) errors.add("period_end", "must not be before period_start");

  const collectionMethod = input.collectionMethod ?? current?.collectionMethod ?? "deferred";
  if (!COLLECTION_METHODS.includes(collectionMethod as (typeof COLLECTION_METHODS)[number])) {
    errors.add("collection_method", `must be one of ${COLLECTION_METHODS.join(", ")}`);
  }
  if (input.note && input.note.length > 5000) errors.add("note", "must have at most 5000 characters");

  const lines = normalizeLines(
    input.lines ??
      current?.lines.map((l) => ({ ...l, quantity: String(l.quantity), amount: String(l.amount), discount: String(l.discount) })) ??
      [],
    errors,
  );
  const discount = normalizeDiscount(input, current ? { discount: String(current.discount), discountScheme: current.discountScheme } : null, errors);
  let metadata: Metadata = (current?.metadata as Metadata) ?? {};
  errors.collect(() => {
    metadata = mergeMetadata(metadata, input.metadata);
  });

  let totals = null;
  if (documentType && currency && errors.empty) {
    errors.collect(() => {
      totals = documentTotals(documentType!, currency!, lines, discount);
    });
  }
  errors.throwIfAny("Invalid invoice");
  const t = totals!;
  const columns = {
    customerId: customer!.id,
    documentTypeId: documentType!.id,
    currencyId: currency!.id,
    date: dateColumn(date),
    dueDate: dueDate ? dateColumn(dueDate) : null,
    periodStart: periodStart ? dateColumn(periodStart) : null,
    periodEnd: periodEnd ? dateColumn(periodEnd) : null,
    collectionMethod,
    note: input.note !== undefined ? input.note : (current?.note ?? null),
    fiscalSettings: (input.fiscalSettings ?? current?.fiscalSettings ?? {}) as Prisma.InputJsonValue,
    metadata,
    ...totalColumns(t, discount),
  };
  return { columns, lines: lineRows(lines, t), linesChanged: input.lines !== undefined && input.lines !== null };
}

/** Creates a draft invoice. ValidationError (400) names every bad field; nothing is written then. */
export async function createInvoice(ctx: ServiceContext, input: InvoiceInput) {
  const { columns, lines } = await prepare(ctx, input, null);
  return ctx.prisma.invoice.create({
    data: { id: newId("inv"), ...tenant(ctx), userEmail: ctx.auth.userEmail, status: "draft", ...columns, lines: { create: lines } },
  });
}

/**
 * Updates a draft invoice; `lines`, when given, replace all lines. 404 for another tenant's
 * invoice, 409 when it is finalized, 400 for bad input; in every failure nothing changes.
 */
export async function updateInvoice(ctx: ServiceContext, id: string, input: InvoiceInput) {
  return ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, "invoice", id, ctx);
    if (status === null) throw new NotFoundError("invoice", id);
    transition("invoice", status, "update");
    const current = await tx.invoice.findUniqueOrThrow({ where: { id }, include: { lines: { orderBy: { position: "asc" } } } });
    const { columns, lines, linesChanged } = await prepare(withinTransaction(ctx, tx), input, current);
    if (linesChanged) await tx.invoiceLine.deleteMany({ where: { invoiceId: id } });
    else {
      // totals may change per line (document type or currency changed): rewrite line totals
      for (const [i, line] of current.lines.entries()) {
        if (line.total.toString() !== lines[i].total || line.exempt !== lines[i].exempt) {
          await tx.invoiceLine.update({ where: { id: line.id }, data: { total: lines[i].total, exempt: lines[i].exempt } });
        }
      }
    }
    return tx.invoice.update({
      where: { id },
      data: { ...columns, ...(linesChanged ? { lines: { create: lines } } : {}) },
    });
  });
}

/** Deletes a draft invoice and its lines; 404 unknown, 409 finalized. */
export async function deleteInvoice(ctx: ServiceContext, id: string): Promise<void> {
  await ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, "invoice", id, ctx);
    if (status === null) throw new NotFoundError("invoice", id);
    transition("invoice", status, "delete");
    await tx.invoice.delete({ where: { id } });
  });
}

/**
 * Finalizes a draft: assigns the next number of its document type (gapless, unique under
 * concurrency), sets status `finalized` and locks it. 404 unknown, 409 not a draft, 400 when it has
 * no lines (a tax document needs at least one).
 */
export async function finalizeInvoice(ctx: ServiceContext, id: string) {
  return ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, "invoice", id, ctx);
    if (status === null) throw new NotFoundError("invoice", id);
    transition("invoice", status, "finalize");
    const invoice = await tx.invoice.findUniqueOrThrow({ where: { id }, include: { _count: { select: { lines: true } } } });
    if (invoice._count.lines === 0) throw ValidationError.field("lines", "an invoice needs at least one line to be finalized");
    const number = await nextDocumentNumber(tx, ctx, invoice.documentTypeId, "invoice");
    return tx.invoice.update({
      where: { id },
      data: { status: "finalized", number, finalizedAt: ctx.now() },
    });
  });
}

/**
 * The invoice's printed representation as PDF bytes (pdfkit): issuer, customer, document name and
 * number, dates, lines and totals in the invoice currency. 404 for another tenant's invoice.
 */
export async function invoicePdf(ctx: ServiceContext, id: string): Promise<Buffer> {
  const invoice = await ctx.prisma.invoice.findFirst({
    where: { id, ...tenant(ctx) },
    include: {
      lines: { orderBy: { position: "asc" } },
      customer: { include: { country: true } },
      documentType: true,
      currency: true,
      organization: true,
    },
  });
  if (!invoice) throw new NotFoundError("invoice", id);
  const { currency, organization: org, customer } = invoice;
  const day = (d: Date | null) => (d ? isoDate(d) : "");
  const totals: [string, string][] = [["Subtotal", formatMoney(invoice.subtotal.toString(), currency)]];
  if (!invoice.discountAmount.isZero()) {
    const label = invoice.discountScheme === "%" ? `Discount (${invoice.discount.toString()} %)` : "Discount";
    totals.unshift([label, `-${formatMoney(invoice.discountAmount.toString(), currency)}`]);
  }
  if (!invoice.exempt.isZero()) totals.push(["Exempt", formatMoney(invoice.exempt.toString(), currency)]);
  totals.push(["Net", formatMoney(invoice.amount.toString(), currency)]);
  totals.push([`Tax (${invoice.taxPercent.toString()} %)`, formatMoney(invoice.tax.toString(), currency)]);
  totals.push(["Total", formatMoney(invoice.total.toString(), currency)]);
  return renderDocumentPdf({
    documentName: invoice.documentType.name,
    number: invoice.number,
    status: invoice.status,
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
    dates: [
      ["Date", day(invoice.date)],
      ["Due date", day(invoice.dueDate)],
      ...(invoice.periodStart ? ([["Period", `${day(invoice.periodStart)} - ${day(invoice.periodEnd)}`]] as [string, string][]) : []),
    ],
    currency: `${currency.id} (${currency.nameEn})`,
    lines: invoice.lines.map((l) => ({
      name: l.exempt ? `${l.name} (exempt)` : l.name,
      description: l.description,
      quantity: formatQuantity(l.quantity.toString()),
      unitPrice: formatAmount(l.amount.toString(), { ...currency, rounded: false, decimals: Math.max(currency.decimals, l.amount.decimalPlaces()) }),
      discount: l.discount.isZero() ? "" : l.discountScheme === "%" ? `${l.discount.toString()} %` : formatAmount(l.discount.toString(), currency),
      total: formatAmount(l.total.toString(), currency),
    })),
    totals,
    notes: invoice.note ? [invoice.note] : [],
  });
}
