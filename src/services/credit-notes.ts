/**
 * Credit notes (spec "Credit note", "States and transitions"; SII DTE 61 and 112): a document
 * that discounts a finalized invoice. Created as drafts, deleted only as drafts, numbered at
 * finalize (services/documents.ts); the spec has no update. The same resource issues debit notes
 * (SII 56 and 111, `document: CL56`), which raise what the invoice's customer owes: the spec's
 * credit note has a `document` type and SII treats both as notes referencing the invoice
 * (docs/orders-and-credit-notes.md "Debit notes").
 *
 * Rules (errors are 400 naming the field, nothing written):
 * - `invoice` is a finalized invoice of the caller's organization and mode (another tenant's
 *   reads as unknown);
 * - `document` is a note type (`isNote`) of the invoice type's country and kind: a credit note
 *   (CL61 for national invoices, CL112 for exports; the default) or a debit note (CL56, CL111);
 * - the currency is the invoice's, and the tax follows the invoice (domain/credit-notes.ts);
 * - `date` (default today in the organization's time zone) is not before the invoice's date;
 * - at least one line; totals as for invoices (domain/totals.ts);
 * - `reference_code` (SII CodRef, default 3) fits the note: 1 cancels, only for a credit note of the
 *   whole invoice total; 2 corrects text, total 0 (domain/credit-notes.ts referenceCodeProblem);
 * - the totals of the invoice's credit notes, drafts included, may not exceed the invoice total
 *   plus its finalized debit notes: `total` names the amount left. The invoice row is locked while
 *   this is checked, so concurrent credit notes cannot together exceed it. Debit notes have no
 *   ceiling.
 */
import type { CreditNote, DocumentType, Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector, NotFoundError, ValidationError } from "../domain/errors.js";
import { checkNoteLength } from "../domain/input-limits.js";
import {
  DEFAULT_REFERENCE_CODE,
  assertCreditFits,
  creditNoteTaxRules,
  noteEffect,
  referenceCodeProblem,
} from "../domain/credit-notes.js";
import type { DecimalInput } from "../domain/money.js";
import {
  VOIDING_DEBIT_TYPE,
  VOID_REFERENCE_CODE,
  creditNoteVoidProblems,
  type VoidedCreditNote,
} from "../domain/credit-note-voids.js";
import { tenant, withinTransaction, type ServiceContext, type Tx } from "./context.js";
import { recordEvents } from "./events.js";
import { findDocumentType, organizationToday } from "./reference.js";
import { dateColumn, storedDate } from "../domain/formats.js";
import { deleteDraftDocument, finalizeDraftDocument, lineRows, lockDocument } from "./document-lifecycle.js";
import {
  documentTotals,
  normalizeDiscount,
  normalizeLines,
  totalColumns,
  type LineInput,
} from "../domain/document-lines.js";
import { PDF_CUSTOMER_INCLUDE, PDF_DOCUMENT_INCLUDE, printDocument } from "./document-pdf.js";

export interface CreditNoteInput {
  /** id of the finalized invoice to discount (required) */
  invoice?: string | null;
  /**
   * note document type id: a credit note (default: CL61, or CL112 for export invoices) or a debit
   * note (CL56, CL111)
   */
  document?: string | null;
  date?: string | null;
  lines?: LineInput[] | null;
  discount?: DecimalInput | null;
  discountScheme?: string | null;
  /** internal information about the adjustment (not printed) */
  internalNote?: string | null;
  /** note or reason for the customer (printed) */
  note?: string | null;
  /**
   * SII CodRef: 1 cancels the invoice (or, with `creditNote`, voids the credit note: the default then),
   * 2 corrects text, 3 corrects amounts (default); domain/credit-notes.ts referenceCodeProblem
   */
  referenceCode?: number | null;
  /**
   * id of a finalized credit note this debit note voids (SII 56 → 61, 111 → 112, CodRef 1;
   * domain/credit-note-voids.ts). `invoice` may then be left out (the credit note's invoice),
   * `document` defaults to the voiding debit type (CL56, CL111), and without `lines` the credit
   * note's lines and discount are copied.
   */
  creditNote?: string | null;
}

/** Creates a draft credit note against a finalized invoice, in one transaction. Errors: see the module header. */
export async function createCreditNote(ctx: ServiceContext, input: CreditNoteInput): Promise<CreditNote> {
  return ctx.prisma.$transaction((tx) => createCreditNoteIn(tx, ctx, input));
}

/**
 * createCreditNote inside the caller's transaction `tx` (proration with `always_invoice` credits
 * the cycle invoice in the subscription update's transaction). Same rules and errors.
 */
export async function createCreditNoteIn(tx: Tx, ctx: ServiceContext, input: CreditNoteInput): Promise<CreditNote> {
  const txCtx = withinTransaction(ctx, tx);
  const errors = new FieldErrorCollector();
  const voiding = await resolveVoidedCreditNote(tx, ctx, input, errors);
  const c: Creating = { tx, ctx, txCtx, input: voiding.input, errors };
  const { voided } = voiding;
  const invoice = await lockCreditedInvoice(c, c.input.invoice || voided?.invoiceId);
  const noteType = invoice ? await resolveNoteType(c, invoice.documentType) : null;
  const { date, lines, discount } = await checkDateAndLines(c, invoice);
  const { totals, referenceCode } = priceCreditNote(c, { invoice, noteType, voided, lines, discount });
  errors.throwIfAny("Invalid credit note");
  if (!totals) throw new Error("credit note totals missing after validation");
  if (noteEffect(noteType!) === "credit") await checkCreditFits(c, invoice!, totals);
  const note = await tx.creditNote.create({
    data: {
      id: newId("cre"),
      ...tenant(ctx),
      userEmail: ctx.auth.userEmail,
      status: "draft",
      invoiceId: invoice!.id,
      documentTypeId: noteType!.id,
      currencyId: invoice!.currencyId,
      date: dateColumn(date),
      internalNote: c.input.internalNote || null,
      note: c.input.note || null,
      referenceCode,
      voidsCreditNoteId: voided?.id ?? null,
      imported: false,
      ...totalColumns(totals, discount),
      lines: { create: lineRows(lines, totals, { withLineTax: true }) },
    },
  });
  await recordEvents(c.txCtx, "credit_note.created", "credit_note", [note.id]);
  return note;
}

/**
 * What every step of createCreditNoteIn reads: the caller's transaction `tx` (and the context
 * within it, `txCtx`), the caller's context, the input (with what a voided credit note fills in)
 * and the one error collector.
 */
interface Creating {
  tx: Tx;
  ctx: ServiceContext;
  txCtx: ServiceContext;
  input: CreditNoteInput;
  /** every field problem: createCreditNoteIn throws them together (one 400) before writing */
  errors: FieldErrorCollector;
}

/** The invoice credited, with its document type and currency. */
type CreditedInvoice = Prisma.InvoiceGetPayload<{ include: { documentType: true; currency: true } }>;

/**
 * A debit note voiding credit note `input.creditNote`: that note, locked (lockVoidedCreditNote), and
 * the input with its lines and discount when the debit note gives none, and the debit type that
 * voids it when `document` is absent. ValidationError (400) at once on an unknown credit note
 * (`credit_note`) or another `invoice` than its own.
 */
async function resolveVoidedCreditNote(
  tx: Tx,
  ctx: ServiceContext,
  input: CreditNoteInput,
  errors: FieldErrorCollector,
): Promise<{
  voided: Awaited<ReturnType<typeof lockVoidedCreditNote>>;
  input: CreditNoteInput;
}> {
  const voided = input.creditNote ? await lockVoidedCreditNote(tx, ctx, input.creditNote, errors) : null;
  if (input.creditNote && !voided) errors.throwIfAny("Invalid credit note");
  if (voided && input.invoice && input.invoice !== voided.invoiceId)
    throw ValidationError.field("invoice", `must be the voided credit note's invoice ${voided.invoiceId}, or left out`);
  if (voided && !input.lines?.length && !input.discount) input = { ...input, ...voided.copy };
  if (voided && !input.document && voided.debitType) input = { ...input, document: voided.debitType };
  return { voided, input };
}

/**
 * Invoice `invoiceId` of the caller's organization and mode, locked (FOR UPDATE) while the note's
 * total is checked against it, and read with its document type and currency; null with an `invoice`
 * error when absent, unknown or not finalized.
 */
async function lockCreditedInvoice(
  { tx, ctx, errors }: Creating,
  invoiceId: string | null | undefined,
): Promise<CreditedInvoice | null> {
  if (!invoiceId) {
    errors.add("invoice", "is required");
    return null;
  }
  const status = await lockDocument(tx, "invoice", invoiceId, ctx);
  if (status === null) errors.add("invoice", `unknown invoice ${invoiceId}`);
  else if (status !== "finalized")
    errors.add("invoice", `${invoiceId} is a ${status}; only finalized invoices can be credited`);
  else
    return tx.invoice.findUniqueOrThrow({
      where: { id: invoiceId },
      include: { documentType: true, currency: true },
    });
  return null;
}

/**
 * The note's document type: `document` when sent (a credit or debit note type of the invoice type's
 * country and kind), else the first credit note type (by code) of them. Null with a `document` error
 * when there is none; a sent type that does not fit is returned with a `document` error.
 */
async function resolveNoteType(
  { tx, txCtx, input, errors }: Creating,
  invoiceType: DocumentType,
): Promise<DocumentType | null> {
  if (input.document) {
    const noteType = await findDocumentType(txCtx, input.document, errors);
    if (noteType && !noteEffect(noteType))
      errors.add("document", `${noteType.id} (${noteType.name}) is not a credit or debit note type`);
    else if (
      noteType &&
      (noteType.countryId !== invoiceType.countryId || noteType.isForeign !== invoiceType.isForeign)
    ) {
      errors.add(
        "document",
        `${noteType.id} cannot ${noteEffect(noteType)} a ${invoiceType.id} invoice (${invoiceType.name})`,
      );
    }
    return noteType;
  }
  const noteType = await tx.documentType.findFirst({
    where: { isCreditNote: true, countryId: invoiceType.countryId, isForeign: invoiceType.isForeign },
    orderBy: { code: "asc" },
  });
  if (!noteType) errors.add("document", `is required (no credit note type for ${invoiceType.id} invoices)`);
  return noteType;
}

/**
 * The date (yyyy-mm-dd; default today in the organization's time zone, 1 query), not before the
 * invoice's; the notes' lengths; at least one line, normalized, and the discount. Field errors:
 * `date`, `note`, `internal_note`, `lines`, `lines.<i>.*`, `discount`, `discount_scheme`.
 */
async function checkDateAndLines({ txCtx, input, errors }: Creating, invoice: CreditedInvoice | null) {
  const date = input.date ?? (await organizationToday(txCtx));
  const invoiceDate = invoice ? storedDate(invoice.date)! : null;
  if (invoiceDate && date < invoiceDate) errors.add("date", `must not be before the invoice's date ${invoiceDate}`);
  for (const [field, value] of [
    ["note", input.note],
    ["internal_note", input.internalNote],
  ] as const) {
    checkNoteLength(errors, field, value);
  }
  if (!input.lines || input.lines.length === 0) errors.add("lines", "a credit note needs at least one line");
  const lines = normalizeLines(input.lines ?? [], errors);
  const discount = normalizeDiscount(input, null, errors);
  return { date, lines, discount };
}

/**
 * The note's totals in the invoice's currency under the tax rules the note follows
 * (domain/credit-notes.ts creditNoteTaxRules; undefined when anything is wrong so far), and its
 * `reference_code` (default 3, or 1 for a void), checked: a void against the voided credit note
 * (domain/credit-note-voids.ts), else against the note's effect and total. Field errors: the totals'
 * limits, `reference_code`, and the void's fields.
 */
function priceCreditNote(
  { input, errors }: Creating,
  {
    invoice,
    noteType,
    voided,
    lines,
    discount,
  }: {
    invoice: CreditedInvoice | null;
    noteType: DocumentType | null;
    voided: Awaited<ReturnType<typeof lockVoidedCreditNote>>;
    lines: ReturnType<typeof normalizeLines>;
    discount: ReturnType<typeof normalizeDiscount>;
  },
): { totals: ReturnType<typeof documentTotals> | undefined; referenceCode: number } {
  let totals: ReturnType<typeof documentTotals> | undefined;
  if (invoice && noteType && errors.empty) {
    const rules = creditNoteTaxRules(noteType, invoice.documentType, invoice.taxPercent.toString());
    errors.collect(() => {
      totals = documentTotals(rules, invoice.currency, lines, discount);
    });
  }
  const t = totals as ReturnType<typeof documentTotals> | undefined;
  const referenceCode = input.referenceCode ?? (voided ? VOID_REFERENCE_CODE : DEFAULT_REFERENCE_CODE);
  if (voided && invoice && noteType) {
    for (const problem of creditNoteVoidProblems({
      noteType,
      referenceCode,
      total: t?.total ?? null,
      creditNote: voided.rules,
      currency: invoice.currency,
    }))
      errors.add(problem.field, problem.message);
  } else if (t && invoice && noteType) {
    const problem = referenceCodeProblem({
      code: referenceCode,
      effect: noteEffect(noteType)!,
      total: t.total,
      invoiceTotal: invoice.total.toString(),
      currency: invoice.currency,
    });
    if (problem) errors.add("reference_code", problem);
  }
  return { totals: t, referenceCode };
}

/**
 * A credit note's total fits the invoice: the invoice's credit notes (drafts included) may not
 * exceed its total plus its finalized debit notes (1 query; domain/credit-notes.ts
 * assertCreditFits, a ValidationError on `total` naming the amount left).
 */
async function checkCreditFits(
  { tx }: Creating,
  invoice: CreditedInvoice,
  totals: ReturnType<typeof documentTotals>,
): Promise<void> {
  const existing = await tx.creditNote.findMany({
    where: { invoiceId: invoice.id },
    select: { total: true, status: true, documentType: { select: { isNote: true, isCreditNote: true } } },
  });
  assertCreditFits({
    invoiceId: invoice.id,
    invoiceTotal: invoice.total.toString(),
    creditNoteTotals: existing.filter((n) => noteEffect(n.documentType) === "credit").map((n) => n.total.toString()),
    debitNoteTotals: existing
      .filter((n) => noteEffect(n.documentType) === "debit" && n.status === "finalized")
      .map((n) => n.total.toString()),
    creditNoteTotal: totals.total,
    currency: invoice.currency,
  });
}

/**
 * The credit note `id` a debit note is to void, locked (FOR UPDATE) in `tx` so two concurrent voids
 * of it cannot both pass: its invoice, what domain/credit-note-voids.ts checks, and its lines and
 * discount to copy when the debit note gives none. Null (with a `credit_note` error) when it is
 * unknown to the caller's organization and mode.
 */
async function lockVoidedCreditNote(tx: Tx, ctx: ServiceContext, id: string, errors: FieldErrorCollector) {
  const status = await lockDocument(tx, "credit_note", id, ctx);
  if (status === null) {
    errors.add("credit_note", `unknown credit note ${id}`);
    return null;
  }
  const note = await tx.creditNote.findUniqueOrThrow({
    where: { id },
    include: {
      documentType: true,
      lines: { orderBy: { position: "asc" } },
      voidedBy: { select: { id: true }, orderBy: { createdAt: "asc" } },
    },
  });
  const rules: VoidedCreditNote = {
    id: note.id,
    documentType: note.documentType,
    status: note.status,
    number: note.number,
    total: note.total.toString(),
    taxAgencyStatus: taxAgencyStatusOf(note.taxAgency),
    voidedBy: note.voidedBy.map((d) => d.id),
  };
  const copy: Pick<CreditNoteInput, "lines" | "discount" | "discountScheme"> = {
    lines: note.lines.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: l.quantity.toString(),
      amount: l.amount.toString(),
      discount: l.discount.toString(),
      discountScheme: l.discountScheme,
      exempt: l.exempt,
    })),
    discount: note.discount.toString(),
    discountScheme: note.discountScheme,
  };
  const debitCode = VOIDING_DEBIT_TYPE[note.documentType.code];
  const debitType = debitCode === undefined ? null : `${note.documentType.countryId}${debitCode}`;
  return { id: note.id, invoiceId: note.invoiceId, rules, copy, debitType };
}

/** `status` of a document's stored `taxAgency` JSON, or null when it has none (no DTE). */
function taxAgencyStatusOf(taxAgency: unknown): string | null {
  if (!taxAgency || typeof taxAgency !== "object" || Array.isArray(taxAgency)) return null;
  const status = (taxAgency as Record<string, unknown>).status;
  return typeof status === "string" ? status : null;
}

/** Deletes a draft credit note and its lines; 404 unknown, 409 finalized. Its amount can be credited again. */
export async function deleteCreditNote(ctx: ServiceContext, id: string): Promise<void> {
  await deleteDraftDocument(ctx, "credit_note", id);
}

/** Numbers and locks a draft credit note (gapless per document type). 404 unknown, 409 not a draft. */
export async function finalizeCreditNote(ctx: ServiceContext, id: string): Promise<CreditNote> {
  return finalizeDraftDocument<CreditNote>(ctx, "credit_note", id);
}

/**
 * The credit (or debit) note's printed representation: issuer, the invoice's customer, number,
 * date, its reference (Referencias: the invoice's document name and code, number, date, the
 * reference code's meaning and the note for the customer as reason), lines and totals (the
 * internal note is not printed). 404 for another tenant's credit note.
 */
export async function creditNotePdf(ctx: ServiceContext, id: string): Promise<Buffer> {
  const note = await ctx.prisma.creditNote.findFirst({
    where: { id, ...tenant(ctx) },
    include: {
      ...PDF_DOCUMENT_INCLUDE,
      invoice: { include: { documentType: true, customer: PDF_CUSTOMER_INCLUDE } },
      voidsCreditNote: { include: { documentType: true } },
    },
  });
  if (!note) throw new NotFoundError("credit note", id);
  // a debit note voiding a credit note references the credit note, otherwise the invoice
  const invoice = note.voidsCreditNote ?? note.invoice;
  return printDocument(
    ctx,
    { ...note, customer: note.invoice.customer },
    {
      references: [
        {
          document: `${invoice.documentType.name} (${invoice.documentType.code})`,
          folio: invoice.number === null ? "" : String(invoice.number),
          internal: invoice.numbering === "internal" && invoice.documentType.hasLocalFormat,
          date: storedDate(invoice.date),
          code: note.referenceCode,
          reason: note.note,
        },
      ],
      // an export note (111, 112) prints its invoice's export data (domain/sii-exports.ts)
      exportSettings: note.invoice.fiscalSettings,
    },
  );
}
