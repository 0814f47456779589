/**
 * Credit notes (spec "Credit note"; SII DTE 61 and 112, and debit notes 56 and 111 through the
 * same resource): node type, `creditNotes` connection and
 * the create/delete/finalize mutations (the spec has no update). Rules live in
 * services/credit-notes.ts and domain/credit-notes.ts.
 */
import { builder, INVOICE_RELATION } from "../builder.js";
import type { CreditNote as CreditNoteRow } from "../../infra/prisma/generated/client.js";
import { StringFilter, enumConditions, stringConditions } from "../filters.js";
import { createCreditNote, creditNotePdf, deleteCreditNote, finalizeCreditNote } from "../../services/credit-notes.js";
import {
  CUSTOMER_DESCRIPTION,
  documentStatusWhereField,
  discountSchemeInputField,
  documentDiscountFields,
  documentHeaderFields,
  documentLifecycleFields,
  documentLineAndTotalFields,
  documentNoteField,
  ISSUED_CUSTOMER_DESCRIPTION,
  lineDiscountFields,
  lineFields,
  lineTaxAndTimeFields,
} from "./document.js";
import { documentOperations } from "./document-operations.js";
import { Customer, IssuedCustomer } from "./customer.js";
import { documentCustomer } from "../../services/issued-parties.js";
import { InvoiceLineInput } from "./invoice.js";

const creditNotes = documentOperations({ model: "CreditNote", noun: "credit note", idDescription: "`cre_` id" });

export const CreditNoteLine = builder.prismaObject("CreditNoteLine", {
  description: "A line of a credit note. total = round(quantity x amount) - line discount, in the invoice currency.",
  fields: (t) => ({ ...lineFields(t), ...lineDiscountFields(t), ...lineTaxAndTimeFields(t) }),
});

export const CreditNote = builder.prismaNode("CreditNote", {
  ...creditNotes.node,
  description:
    "A note correcting a finalized invoice, in its currency and taxed as it: a credit note (CL61, CL112) discounts " +
    "it, a debit note (CL56, CL111) adds to it (document.isDebitNote). Totals as for invoices " +
    "(docs/invoice-totals.md).",
  fields: (t) => ({
    invoice: t.relation("invoice", { ...INVOICE_RELATION, description: "the invoice this note corrects" }),
    // a note's customer is its invoice's (document.ts documentCustomerFields reads a document's own)
    customer: t.field({
      type: Customer,
      description: CUSTOMER_DESCRIPTION,
      select: (_args, _ctx, nestedSelection) => ({ invoice: { select: { customer: nestedSelection(true) } } }),
      resolve: (note) => note.invoice.customer,
    }),
    issuedCustomer: t.field({
      type: IssuedCustomer,
      description: ISSUED_CUSTOMER_DESCRIPTION,
      select: (_args, _ctx, nestedSelection) => ({ invoice: { select: { customer: nestedSelection(true) } } }),
      resolve: (note, _args, ctx) => documentCustomer(ctx, note, note.invoice.customer),
    }),
    ...documentHeaderFields(t),
    ...documentLineAndTotalFields(t),
    ...documentDiscountFields(t),
    referenceCode: t.exposeInt("referenceCode", {
      description: "SII CodRef of its reference to the invoice: 1 cancels, 2 corrects text, 3 corrects amounts",
    }),
    voids: t.relation("voidsCreditNote", {
      nullable: true,
      description:
        "on a debit note voiding a credit note (SII 56 → 61, 111 → 112, CodRef 1): the credit note it voids; " +
        "null otherwise",
    }),
    internalNote: t.exposeString("internalNote", {
      nullable: true,
      description: "internal information about the adjustment (not printed); null when none",
    }),
    note: documentNoteField(t),
    imported: t.exposeBoolean("imported", { description: "true only for notes created by an import" }),
    ...documentLifecycleFields(t, creditNotePdf),
  }),
});

const CreditNoteInput = creditNotes.input("A new credit (or debit) note.", (t) => ({
  invoice: t.id({ description: "the finalized invoice to correct (required)" }),
  document: t.string({
    description: "note type id: credit (default CL61, CL112 for export invoices) or debit (CL56, CL111 for exports)",
  }),
  date: t.field({
    type: "Date",
    description: "closing date; default today in the organization's time zone; not before the invoice's date",
  }),
  lines: t.field({
    type: [InvoiceLineInput],
    description: "at least one (required); prices in the invoice currency",
  }),
  discount: t.field({
    type: "Decimal",
    description: "document discount on taxable lines, percent (0-100) or amount",
  }),
  discountScheme: discountSchemeInputField(t),
  internalNote: t.string({ description: "not printed; at most 5000 characters" }),
  note: t.string({ description: "printed; at most 5000 characters" }),
  referenceCode: t.int({
    description:
      "SII CodRef of the note's reference to the invoice: 1 cancels it (credit notes of the whole invoice " +
      "total only), 2 corrects text (total 0), 3 corrects amounts (default). With `creditNote`: 1 (voids " +
      "it), the default and only code. GraphQL only: the REST body has no such field.",
  }),
  creditNote: t.id({
    description:
      "a finalized credit note this debit note voids (SII: a 56 referencing a 61, a 111 a 112, CodRef 1). " +
      "`invoice` may be left out (the credit note's), `document` defaults to CL56 (CL111 for a CL112) and " +
      "without `lines` the credit note's lines and discount are copied; the total must equal the credit " +
      "note's. Errors (validation_error on credit_note, document, reference_code, total): unknown, a draft, " +
      "rejected by SII, already voided, another type or total.",
  }),
}));

builder.prismaObjectField("CreditNote", "voidedBy", (t) =>
  t.field({
    type: CreditNote,
    nullable: true,
    description:
      "on a credit note: the finalized debit note that voids it (the credit note itself stays as issued); " +
      "null while none is finalized",
    // read with the note itself (its voidedBy relation's first finalized row), not one query per note
    select: (_args, _ctx, nestedSelection) => ({
      voidedBy: nestedSelection({
        where: { status: "finalized" },
        orderBy: [{ createdAt: "asc" as const }, { number: "asc" as const }, { id: "asc" as const }],
        take: 1,
      }),
    }),
    resolve: (note) => (note.voidedBy as CreditNoteRow[])[0] ?? null,
  }),
);

creditNotes.list({
  type: CreditNote,
  where: (t) => ({
    customer: t.field({
      type: StringFilter,
      description: "customer id (`cus_`): the customer of the invoice the note corrects",
    }),
    invoice: t.field({ type: StringFilter, description: "id (`inv_`) of the invoice the note corrects" }),
    status: documentStatusWhereField(t),
    document: t.field({ type: StringFilter, description: "document type id, e.g. CL61 (case-insensitive)" }),
  }),
  conditions: (w) => [
    // a note's customer is its invoice's (indexes Invoice(customerId, ...) and CreditNote(invoiceId, status))
    ...stringConditions("customerId", w.customer).map((customer) => ({ invoice: customer })),
    ...stringConditions("invoiceId", w.invoice),
    ...enumConditions("status", w.status),
    ...stringConditions("documentTypeId", w.document, { uppercase: true }),
  ],
});

builder.mutationFields((t) => ({
  createCreditNote: creditNotes.create(t, {
    description:
      "Creates a draft credit note against a finalized invoice. Errors: validation_error (invoice not finalized or " +
      "unknown, wrong document type, no lines, negative values, or more than the invoice has left to credit: " +
      "`total` names the amount left).",
    input: CreditNoteInput,
    inputDescription: "the note; invoice and lines are required",
    create: createCreditNote,
  }),
  deleteCreditNote: creditNotes.delete(t, {
    description: "Deletes a draft credit note. Errors: not_found, invalid_state (finalized).",
    remove: deleteCreditNote,
  }),
  finalizeCreditNote: creditNotes.finalize(t, finalizeCreditNote),
}));
