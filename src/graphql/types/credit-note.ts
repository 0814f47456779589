/**
 * Credit notes (spec "Credit note"; SII DTE 61 and 112, and debit notes 56 and 111 through the
 * same resource): node type, `creditNotes` connection and
 * the create/delete/finalize mutations (the spec has no update). Rules live in
 * services/credit-notes.ts and domain/credit-notes.ts.
 */
import { builder, INVOICE_RELATION } from "../builder.js";
import type { CreditNote as CreditNoteRow } from "../../infra/prisma/generated/client.js";
import {
  DateFilter,
  DateTimeFilter,
  IntFilter,
  StringFilter,
  dateConditions,
  dateTimeConditions,
  enumConditions,
  intConditions,
  stringConditions,
} from "../filters.js";
import { documentConnection, offsetArg } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createCreditNote, creditNotePdf, deleteCreditNote, finalizeCreditNote } from "../../services/credit-notes.js";
import {
  DeletePayload,
  DocumentIssuer,
  DocumentStatus,
  DocumentStatusFilter,
  type DocumentStatusValue,
  DocumentNumbering,
  issuedCustomerDescription,
  liveCustomerDescription,
  NUMBERING_DESCRIPTION,
  type DocumentNumberingValue,
} from "./document.js";
import { Customer, IssuedCustomer } from "./customer.js";
import { documentCustomer, documentIssuer } from "../../services/issued-parties.js";
import { InvoiceLineInput } from "./invoice.js";
import { fileUrl } from "../../services/files.js";
import { DiscountScheme, type DiscountSchemeValue } from "../enums.js";

export const CreditNoteLine = builder.prismaObject("CreditNoteLine", {
  description: "A line of a credit note. total = round(quantity x amount) - line discount, in the invoice currency.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`lin_` id" }),
    name: t.exposeString("name", { description: "what is credited or debited, as printed (SII NmbItem)" }),
    description: t.exposeString("description", {
      nullable: true,
      description: "longer text printed under the name (SII DscItem); null when none",
    }),
    quantity: t.expose("quantity", { type: "Decimal", description: "units, a decimal string (SII QtyItem)" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "unit price, net of tax, in the invoice currency (SII PrcItem)",
    }),
    discount: t.expose("discount", {
      type: "Decimal",
      description:
        "the line's discount: percent 0-100 when discountScheme is percent, else currency units of the invoice; 0 " +
        "when none",
    }),
    discountScheme: t.field({
      type: DiscountScheme,
      description: "how `discount` reads: percent or amount (REST `%` or `$`)",
      select: { discountScheme: true },
      resolve: (line) => line.discountScheme as DiscountSchemeValue,
    }),
    exempt: t.exposeBoolean("exempt", { description: "true: not taxed, adds to the note's exempt (SII IndExe)" }),
    tax: t.expose("tax", {
      type: "Decimal",
      nullable: true,
      description: "this line's tax in currency units, null when exempt (the note's tax is computed on the sum)",
    }),
    taxPercent: t.expose("taxPercent", { type: "Decimal", description: "tax rate, percent 0-100; 0 when exempt" }),
    total: t.expose("total", { type: "Decimal", description: "line net after its discount, in the invoice currency" }),
    created: t.expose("createdAt", { type: "DateTime", description: "when the line was created (ISO 8601)" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when the line last changed (ISO 8601)" }),
  }),
});

export const CreditNote = builder.prismaNode("CreditNote", {
  id: { field: "id", description: "`cre_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "A note correcting a finalized invoice, in its currency and taxed as it: a credit note (CL61, CL112) discounts " +
    "it, a debit note (CL56, CL111) adds to it (document.isDebitNote). Totals as for invoices " +
    "(docs/invoice-totals.md).",
  fields: (t) => ({
    invoice: t.relation("invoice", { ...INVOICE_RELATION, description: "the invoice this note corrects" }),
    customer: t.field({
      type: Customer,
      description: liveCustomerDescription("The customer of the invoice this note corrects"),
      select: (_args, _ctx, nestedSelection) => ({ invoice: { select: { customer: nestedSelection(true) } } }),
      resolve: (note) => note.invoice.customer,
    }),
    issuedCustomer: t.field({
      type: IssuedCustomer,
      description: issuedCustomerDescription("The invoice's customer as this note was issued to it"),
      select: (_args, _ctx, nestedSelection) => ({ invoice: { select: { customer: nestedSelection(true) } } }),
      resolve: (note, _args, ctx) => documentCustomer(ctx, note, note.invoice.customer),
    }),
    issuer: t.field({
      type: DocumentIssuer,
      description: "The issuer: as issued once finalized, the organization's tax profile now on a draft.",
      resolve: (note, _args, ctx) => documentIssuer(ctx, note),
    }),
    document: t.relation("documentType", {
      description: "document type: CL61 or CL112 (exports) credit, CL56 or CL111 debit",
    }),
    currency: t.relation("currency", { description: "the invoice's currency" }),
    number: t.exposeInt("number", {
      nullable: true,
      description:
        "assigned at finalize: the next SII folio or the next number of the internal series (`numbering` says " +
        "which); null on drafts",
    }),
    numbering: t.field({
      type: DocumentNumbering,
      nullable: true,
      description: NUMBERING_DESCRIPTION,
      select: { numbering: true },
      resolve: (doc) => doc.numbering as DocumentNumberingValue | null,
    }),
    testMode: t.exposeBoolean("testMode", { description: "true when created with a test key" }),
    date: t.expose("date", {
      type: "Date",
      description: "closing (issue) date, yyyy-mm-dd, not before the invoice's date",
    }),
    lines: t.relation("lines", {
      description: "the note's lines, in the order they were given",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "taxable net after the document discount, in the invoice currency",
    }),
    exempt: t.expose("exempt", { type: "Decimal", description: "exempt net, in the invoice currency" }),
    tax: t.expose("tax", { type: "Decimal", description: "tax amount in currency units (SII IVA)" }),
    taxPercent: t.expose("taxPercent", { type: "Decimal", description: "tax rate, percent 0-100 (the invoice's)" }),
    subtotal: t.expose("subtotal", { type: "Decimal", description: "amount + exempt" }),
    total: t.expose("total", {
      type: "Decimal",
      description: "subtotal + tax: what the note credits (or debits) on the invoice",
    }),
    discount: t.expose("discount", {
      type: "Decimal",
      description:
        "document discount on the taxable lines: percent 0-100 when discountScheme is percent, else currency units; " +
        "0 when none",
    }),
    discountScheme: t.field({
      type: DiscountScheme,
      description: "how `discount` reads: percent or amount (REST `%` or `$`)",
      select: { discountScheme: true },
      resolve: (note) => note.discountScheme as DiscountSchemeValue,
    }),
    discountAmount: t.expose("discountAmount", {
      type: "Decimal",
      description: "document discount in currency units of the invoice",
    }),
    referenceCode: t.exposeInt("referenceCode", {
      description: "SII CodRef of its reference to the invoice: 1 cancels, 2 corrects text, 3 corrects amounts",
    }),
    voids: t.relation("voidsCreditNote", {
      nullable: true,
      description:
        "on a debit note voiding a credit note (SII 56 → 61, 111 → 112, CodRef 1): the credit note it voids; " +
        "null otherwise",
    }),
    localFile: t.string({
      nullable: true,
      select: { localFile: true },
      description:
        "URL of the tax-agency file (`<base>/v1/files/<name>`, authenticated), after finalize; " +
        "null while none is stored",
      resolve: (doc, _args, ctx) => fileUrl(ctx.baseUrl, doc.localFile),
    }),
    internalNote: t.exposeString("internalNote", {
      nullable: true,
      description: "internal information about the adjustment (not printed); null when none",
    }),
    note: t.exposeString("note", {
      nullable: true,
      description: "note or reason for the customer (printed); null when none",
    }),
    taxAgency: t.expose("taxAgency", {
      type: "JSONObject",
      description: "tax agency properties (track id, status) once sent",
    }),
    status: t.field({
      type: DocumentStatus,
      description: "draft or finalized",
      select: { status: true },
      resolve: (note) => note.status as DocumentStatusValue,
    }),
    imported: t.exposeBoolean("imported", { description: "true only for notes created by an import" }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    finalized: t.expose("finalizedAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was finalized (ISO 8601); null on drafts",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created (ISO 8601)" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed (ISO 8601)" }),
    pdf: t.string({
      description: "Base64 of the credit note PDF, naming the invoice it corrects (rendered on request).",
      select: { id: true },
      resolve: async (note, _args, ctx) => (await creditNotePdf(ctx, note.id)).toString("base64"),
    }),
  }),
});

const CreditNoteInput = builder.inputType("CreditNoteInput", {
  description: "A new credit (or debit) note.",
  fields: (t) => ({
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
    discountScheme: t.field({ type: DiscountScheme, description: "how `discount` reads; default percent" }),
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
  }),
});

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

const CreditNoteWhere = builder.inputType("CreditNoteWhere", {
  description: "Filters of the credit notes list; every given filter must match.",
  fields: (t) => ({
    customer: t.field({
      type: StringFilter,
      description: "customer id (`cus_`): the customer of the invoice the note corrects",
    }),
    invoice: t.field({ type: StringFilter, description: "id (`inv_`) of the invoice the note corrects" }),
    status: t.field({ type: DocumentStatusFilter, description: "draft or finalized" }),
    document: t.field({ type: StringFilter, description: "document type id, e.g. CL61 (case-insensitive)" }),
    number: t.field({
      type: IntFilter,
      description: "number (folio); a draft has none and matches no number filter",
    }),
    date: t.field({ type: DateFilter, description: "the note's date, yyyy-mm-dd" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  }),
});

builder.queryFields((t) => ({
  creditNotes: t.connection(
    {
      type: CreditNote,
      description:
        "Credit notes of the caller's organization and mode, newest first; notes created at the same instant by " +
        'number, highest first, drafts (no number yet) before them, then by id (docs/graphql.md "Order of lists").',
      args: {
        where: t.arg({ type: CreditNoteWhere, description: "filters; none: every credit note" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return documentConnection(ctx, info, ctx.prisma.creditNote, args, [
          // a note's customer is its invoice's (indexes Invoice(customerId, ...) and CreditNote(invoiceId, status))
          ...stringConditions("customerId", w.customer).map((customer) => ({ invoice: customer })),
          ...stringConditions("invoiceId", w.invoice),
          ...enumConditions("status", w.status),
          ...stringConditions("documentTypeId", w.document, { uppercase: true }),
          ...intConditions("number", w.number),
          ...dateConditions("date", w.date),
          ...dateTimeConditions("createdAt", w.created),
        ]);
      },
    },
    { description: "A page of credit notes, newest first, ties by number (Relay connection)." },
    { description: "A credit note in a page, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  createCreditNote: t.prismaField({
    type: "CreditNote",
    description:
      "Creates a draft credit note against a finalized invoice. Errors: validation_error (invoice not finalized or " +
      "unknown, " +
      "wrong document type, no lines, negative values, or more than the invoice has left to credit: `total` names " +
      "the amount left).",
    args: {
      input: t.arg({ type: CreditNoteInput, required: true, description: "the note; invoice and lines are required" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const created = await createCreditNote(ctx, args.input);
      return ctx.prisma.creditNote.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  deleteCreditNote: t.field({
    type: DeletePayload,
    description: "Deletes a draft credit note. Errors: not_found, invalid_state (finalized).",
    args: { id: t.arg.id({ required: true, description: "`cre_` id" }) },
    resolve: async (_root, args, ctx) => {
      await deleteCreditNote(ctx, String(args.id));
      return { id: String(args.id), deleted: true };
    },
  }),
  finalizeCreditNote: t.prismaField({
    type: "CreditNote",
    description:
      "Numbers and locks a draft credit note, freezing its customer and issuer as issued (`issuedCustomer`, " +
      "`issuer`). Errors: not_found, invalid_state (not a draft), validation_error (no lines).",
    args: { id: t.arg.id({ required: true, description: "`cre_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const finalized = await finalizeCreditNote(ctx, String(args.id));
      return ctx.prisma.creditNote.findUniqueOrThrow({ ...query, where: { id: finalized.id } });
    },
  }),
}));
