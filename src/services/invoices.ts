/**
 * Invoices (docs/rest-api.md "Invoice", "States and transitions"; docs/rest.md "Invoices").
 * create -> draft; update/delete only while draft (409 `invalid_state` otherwise, nothing
 * changed); finalize numbers the invoice (gapless per organization, mode and document type).
 * Totals are recomputed from the lines on every write (domain/totals.ts), never taken from input.
 */
import { movePastDue } from "./past-due.js";
import type { Currency, DocumentType, Invoice, Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { chosenDocumentType, documentTypeMismatch } from "../domain/document-types.js";
import { FieldErrorCollector, NotFoundError } from "../domain/errors.js";
import { EXPORT_DTE_TYPES, exportSettingsOf, siiCurrencyName } from "../domain/sii-exports.js";
import { checkNoteLength } from "../domain/input-limits.js";
import { isoDate, todayIn, dateColumn, storedDate } from "../domain/formats.js";
import { mergeMetadata, type Metadata } from "../domain/metadata.js";
import type { DecimalInput } from "../domain/money.js";
import { atomically, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { invoiceBalances } from "./invoice-balances.js";
import { assertMarkableUncollectible } from "../domain/payments.js";
import { recordEvents } from "./events.js";
import { findCurrency, findDocumentType, findDocumentCustomer, organizationToday } from "./reference.js";
import {
  deleteDraftDocument,
  finalizeDraftDocument,
  lineRows,
  updateDraftDocument,
  type PreparedDocument,
} from "./document-lifecycle.js";
import {
  documentTotals,
  normalizeDiscount,
  normalizeLines,
  storedLineInputs,
  taxRulesOf,
  totalColumns,
  type LineInput,
} from "../domain/document-lines.js";
import { PDF_INCLUDE, printDocument } from "./document-pdf.js";

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

type Current = Invoice & { lines: Parameters<typeof storedLineInputs>[0] };

/**
 * What every step of `prepare` reads: the context, the input, the stored draft (null on create), the
 * one error collector.
 */
interface Preparing {
  ctx: ServiceContext;
  input: InvoiceInput;
  /** the locked draft on update; null on create */
  current: Current | null;
  /** every field problem: `prepare` throws them together (one 400) before computing the columns */
  errors: FieldErrorCollector;
}

type DocumentCustomer = NonNullable<Awaited<ReturnType<typeof findDocumentCustomer>>>;

/**
 * Validates `input` (merged over `current` on update) and computes every column, in named steps:
 * customer, document type and currency; dates; collection and export settings; lines and totals.
 * Every problem is a field error: ValidationError "Invalid invoice" (400) naming them all; nothing
 * is written here.
 */
async function prepare(
  ctx: ServiceContext,
  input: InvoiceInput,
  current: Current | null,
): Promise<PreparedDocument & { customer: DocumentCustomer; documentType: DocumentType; currency: Currency }> {
  const p: Preparing = { ctx, input, current, errors: new FieldErrorCollector() };
  const { customer, today } = await resolveInvoiceCustomer(p);
  const { documentType, currency } = await resolveDocumentTypeAndCurrency(p, customer);
  const dates = checkInvoiceDates(p, today);
  const collectionMethod = checkInvoiceSettings(p, documentType, currency);
  const { lines, discount, metadata, totals } = priceInvoiceLines(p, documentType, currency);
  p.errors.throwIfAny("Invalid invoice");
  const columns = {
    customerId: customer!.id,
    documentTypeId: documentType!.id,
    currencyId: currency!.id,
    date: dateColumn(dates.date),
    dueDate: dates.dueDate ? dateColumn(dates.dueDate) : null,
    periodStart: dates.periodStart ? dateColumn(dates.periodStart) : null,
    periodEnd: dates.periodEnd ? dateColumn(dates.periodEnd) : null,
    collectionMethod,
    note: input.note !== undefined ? input.note : (current?.note ?? null),
    fiscalSettings: (input.fiscalSettings ?? current?.fiscalSettings ?? {}) as Prisma.InputJsonValue,
    metadata,
    ...totalColumns(totals!, discount),
  };
  return {
    columns,
    lines: lineRows(lines, totals!),
    linesChanged: input.lines !== undefined && input.lines !== null,
    customer: customer!,
    documentType: documentType!,
    currency: currency!,
  };
}

/**
 * The customer (sent, else the stored one; 1 query, with its organization's time zone) and, on a
 * create without `date`, today in that time zone (or the organization's: 1 more query when the
 * customer is unknown). On update a new customer is refused while the invoice bills orders of the
 * old one (1 count). Field errors: `customer`.
 */
async function resolveInvoiceCustomer({
  ctx,
  input,
  current,
  errors,
}: Preparing): Promise<{ customer: DocumentCustomer | null; today: string | null }> {
  // one after the other: prepare also runs inside transactions (updates, invoiceOrders), whose one
  // connection takes one query at a time; the organization is only needed for today's date
  const customer = await findDocumentCustomer(ctx, input.customer ?? current?.customerId, errors);
  const today =
    !input.date && !current
      ? customer
        ? todayIn(customer.organization.timeZone, ctx.now())
        : await organizationToday(ctx)
      : null;
  if (current && customer && customer.id !== current.customerId) {
    const billedOrders = await ctx.prisma.order.count({ where: { invoiceId: current.id } });
    if (billedOrders > 0)
      errors.add("customer", `cannot change: the invoice bills ${billedOrders} order(s) of ${current.customerId}`);
  }
  return { customer, today };
}

/**
 * The document type (sent, else the stored one, else the default invoice type of the customer's
 * country; read, 1 query, and checked to be an invoice type) and the currency (sent, else the stored
 * one unless the document type is sent, else the document type's; read, 1 query). Field errors:
 * `document`, `currency`.
 */
async function resolveDocumentTypeAndCurrency(
  { ctx, input, current, errors }: Preparing,
  customer: DocumentCustomer | null,
): Promise<{ documentType: DocumentType | null; currency: Currency | null }> {
  const documentId = chosenDocumentType("invoice", input.document, current?.documentTypeId, customer?.countryId);
  let documentType = null;
  if (!documentId) {
    if (customer) errors.add("document", "is required (no default document type for the customer's country)");
  } else {
    documentType = await findDocumentType(ctx, documentId, errors);
    const mismatch = documentType && documentTypeMismatch("invoice", documentType);
    if (mismatch) errors.add("document", mismatch);
  }
  const currencyId = input.currency ?? (input.document ? undefined : current?.currencyId) ?? documentType?.currencyId;
  const currency = currencyId ? await findCurrency(ctx, currencyId, errors) : null;
  return { documentType, currency };
}

/**
 * The dates (yyyy-mm-dd), as sent or stored: `date` (default `today`), `due_date` (default the
 * date; not before it), `period_start` and `period_end` (not before the start). Field errors:
 * `due_date`, `period_end`.
 */
function checkInvoiceDates(
  { input, current, errors }: Preparing,
  today: string | null,
): { date: string; dueDate: string | null; periodStart: string | null; periodEnd: string | null } {
  const date = input.date ?? (current ? isoDate(current.date) : today!);
  const dueDate = input.dueDate !== undefined ? input.dueDate : (storedDate(current?.dueDate) ?? date);
  if (dueDate && dueDate < date) errors.add("due_date", "must not be before date");
  const periodStart = input.periodStart !== undefined ? input.periodStart : storedDate(current?.periodStart);
  const periodEnd = input.periodEnd !== undefined ? input.periodEnd : storedDate(current?.periodEnd);
  if (periodStart && periodEnd && periodEnd < periodStart) errors.add("period_end", "must not be before period_start");
  return { date, dueDate, periodStart, periodEnd };
}

/**
 * The collection method (one of COLLECTION_METHODS; default `deferred`), the note's length, the
 * export settings (`fiscal_settings.export`, domain/sii-exports.ts) and, on an export DTE type, a
 * currency SII names. Returns the collection method. Field errors: `collection_method`, `note`, the
 * export settings' fields, `currency`.
 */
function checkInvoiceSettings(
  { input, current, errors }: Preparing,
  documentType: DocumentType | null,
  currency: Currency | null,
): string {
  const collectionMethod = input.collectionMethod ?? current?.collectionMethod ?? "deferred";
  if (!COLLECTION_METHODS.includes(collectionMethod as (typeof COLLECTION_METHODS)[number])) {
    errors.add("collection_method", `must be one of ${COLLECTION_METHODS.join(", ")}`);
  }
  checkNoteLength(errors, "note", input.note);
  // export settings (fiscal_settings.export) are checked on every invoice: domain/sii-exports.ts
  for (const problem of exportSettingsOf(input.fiscalSettings).problems) errors.add(problem.field, problem.message);
  if (documentType && currency && EXPORT_DTE_TYPES.includes(documentType.code) && !siiCurrencyName(currency.id))
    errors.add(
      "currency",
      `SII has no currency name for ${currency.id} in this service's table ` +
        "(src/domain/sii-exports.ts SII_CURRENCY_NAMES)",
    );
  return collectionMethod;
}

/**
 * The lines (sent, else the stored ones), the discount, the merged metadata and, when nothing is
 * wrong so far, the totals in the currency's units under the document type's tax rules
 * (domain/document-lines.ts documentTotals; undefined otherwise). Field errors: `lines.<i>.*`,
 * `discount`, `discount_scheme`, `metadata`, and the totals' limits.
 */
function priceInvoiceLines(
  { input, current, errors }: Preparing,
  documentType: DocumentType | null,
  currency: Currency | null,
) {
  const lines = normalizeLines(input.lines ?? (current ? storedLineInputs(current.lines) : []), errors);
  const discount = normalizeDiscount(
    input,
    current ? { discount: String(current.discount), discountScheme: current.discountScheme } : null,
    errors,
  );
  let metadata: Metadata = (current?.metadata as Metadata) ?? {};
  errors.collect(() => {
    metadata = mergeMetadata(metadata, input.metadata);
  });
  let totals: ReturnType<typeof documentTotals> | undefined;
  if (documentType && currency && errors.empty) {
    errors.collect(() => {
      totals = documentTotals(taxRulesOf(documentType), currency, lines, discount);
    });
  }
  return { lines, discount, metadata, totals };
}

/**
 * Creates a draft invoice. ValidationError (400) names every bad field; nothing is written then.
 * Inside a transaction pass `withinTransaction(ctx, tx)` (invoiceOrders does).
 */
export async function createInvoice(ctx: ServiceContext, input: InvoiceInput) {
  const { columns, lines, customer, documentType, currency } = await prepare(ctx, input, null);
  const id = newId("inv");
  // the invoice and its lines by two INSERT ... RETURNING in one transaction, not a nested create
  // (which reads the row back); the answer is built from what was written and read
  // (docs/performance.md "Statements per request")
  return atomically(ctx, async (tx) => {
    const invoice = await tx.prisma.invoice.create({
      data: {
        id,
        ...tenant(ctx),
        userEmail: ctx.auth.userEmail,
        status: "draft",
        ...(columns as Omit<Prisma.InvoiceUncheckedCreateInput, "id" | "organizationId" | "testMode" | "userEmail">),
      },
    });
    const created = lines.length
      ? await tx.prisma.invoiceLine.createManyAndReturn({
          data: lines.map((line) => ({ ...line, invoiceId: id, organizationId: invoice.organizationId })),
        })
      : [];
    await recordEvents(tx, "invoice.created", "invoice", [id]);
    return { ...invoice, lines: created, customer, documentType, currency, payments: [], creditNotes: [] };
  });
}

/**
 * Updates a draft invoice; `lines`, when given, replace all lines. 404 for another tenant's
 * invoice, 409 when it is finalized, 400 for bad input (also: changing the customer of an
 * invoice that bills orders); in every failure nothing changes.
 */
export async function updateInvoice(ctx: ServiceContext, id: string, input: InvoiceInput): Promise<Invoice> {
  return updateDraftDocument<Invoice, Current>(ctx, "invoice", id, (txCtx, current) => prepare(txCtx, input, current));
}

/** Deletes a draft invoice and its lines; 404 unknown, 409 finalized. Orders it billed become uninvoiced again. */
export async function deleteInvoice(ctx: ServiceContext, id: string): Promise<void> {
  await deleteDraftDocument(ctx, "invoice", id);
}

/**
 * Finalizes a draft: assigns the next number of its document type (gapless, unique under
 * concurrency), sets status `finalized` and locks it. 404 unknown, 409 not a draft, 400 when it has
 * no lines (a tax document needs at least one).
 */
export async function finalizeInvoice(ctx: ServiceContext, id: string): Promise<Invoice> {
  return finalizeDraftDocument<Invoice>(ctx, "invoice", id);
}

/**
 * Marks a finalized invoice with something due uncollectible (docs/dunning.md "Invoice payment state"): its
 * `payment_status` becomes `uncollectible` and an `invoice.marked_uncollectible` event is written, in one
 * transaction with the invoice locked (a concurrent payment's settlement queues behind it). The document itself
 * does not change (its `updated` stays): a later payment still counts, and once nothing is due its
 * `payment_status` is `paid`. 404 unknown, 409 a draft, nothing due, or marked already
 * (domain/payments.ts assertMarkableUncollectible).
 */
export async function markInvoiceUncollectible(ctx: ServiceContext, id: string): Promise<{ id: string }> {
  return atomically(ctx, async (tx) => {
    const row = await lockTenantRow(tx.prisma, tx, "Invoice", id, ["status", "markedUncollectibleAt"]);
    if (!row) throw new NotFoundError("invoice", id);
    const [balance] = await invoiceBalances(tx, [id]);
    assertMarkableUncollectible({
      id,
      status: String(row.status),
      due: balance.due,
      markedUncollectible: row.markedUncollectibleAt !== null,
    });
    await tx.prisma.$executeRaw`UPDATE "Invoice" SET "markedUncollectibleAt" = ${tx.now()} WHERE "id" = ${id}`;
    await recordEvents(tx, "invoice.marked_uncollectible", "invoice", [id]);
    // nothing more to collect on it: a past-due subscription whose latest cycle invoice this is is active again
    await movePastDue(tx, [id], false);
    return { id };
  });
}

/**
 * The invoice's printed representation as PDF bytes (pdfkit; services/document-pdf.ts): issuer,
 * customer, document name and number, dates, sale condition, lines (a plan's line with its SKU as
 * code) and totals in the invoice currency. 404 for another tenant's invoice.
 */
export async function invoicePdf(ctx: ServiceContext, id: string): Promise<Buffer> {
  const invoice = await ctx.prisma.invoice.findFirst({
    where: { id, ...tenant(ctx) },
    include: { ...PDF_INCLUDE, lines: { ...PDF_INCLUDE.lines, include: { plan: { select: { sku: true } } } } },
  });
  if (!invoice) throw new NotFoundError("invoice", id);
  return printDocument(
    ctx,
    { ...invoice, lines: invoice.lines.map((l) => ({ ...l, code: l.plan?.sku ?? null })) },
    {
      dueDate: storedDate(invoice.dueDate),
      period:
        invoice.periodStart && invoice.periodEnd
          ? { start: storedDate(invoice.periodStart)!, end: storedDate(invoice.periodEnd)! }
          : null,
      saleCondition: true,
      notes: [invoice.note],
      exportSettings: invoice.fiscalSettings,
    },
  );
}
