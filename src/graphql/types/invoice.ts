/**
 * Invoices (spec "Invoice", "States and transitions"): node type, `invoices` connection and the
 * create/update/delete/finalize mutations. Rules live in services/invoices.ts and domain/.
 */
import { builder } from "../builder.js";
import { StringFilter, enumConditions, stringConditions } from "../filters.js";
import { visibleDocuments } from "../../services/context.js";
import { createInvoice, deleteInvoice, finalizeInvoice, invoicePdf, updateInvoice } from "../../services/invoices.js";
import type { GraphQLContext } from "../context.js";
import {
  documentStatusWhereField,
  issueDateInputField,
  discountSchemeInputField,
  documentCustomerFields,
  documentDiscountFields,
  documentHeaderFields,
  documentLifecycleFields,
  documentLineAndTotalFields,
  documentNoteField,
  lineDiscountFields,
  lineFields,
  type DocumentFields,
} from "./document.js";
import "./payment.js";
import { documentOperations } from "./document-operations.js";
import type { DescribedValues } from "../enums.js";
import { COLLECTION_METHODS, markInvoiceUncollectible } from "../../services/invoices.js";
import { invoiceAmounts, invoicePaymentStatus, type InvoicePaymentStatus } from "../../domain/payments.js";
import type { DecimalInput } from "../../domain/money.js";

const invoices = documentOperations({ model: "Invoice", noun: "invoice", idDescription: "`inv_` id" });

type CollectionMethodValue = (typeof COLLECTION_METHODS)[number];

/** How an invoice is collected (spec "Invoice" collection_method; services/invoices.ts COLLECTION_METHODS). */
export const CollectionMethod = builder.enumType("CollectionMethod", {
  description:
    'How the invoice\'s amount is collected (spec "Invoice" collection_method). Today one method exists; more may ' +
    "be added.",
  values: {
    deferred: {
      value: "deferred",
      description: "the customer pays later, by the due date, through payments (docs/payments.md); the default",
    },
  } as const satisfies DescribedValues<CollectionMethodValue>,
});

/** An invoice's payment state (domain/payments.ts INVOICE_PAYMENT_STATUSES; `satisfies` keeps both lists equal). */
export const InvoicePaymentStatusEnum = builder.enumType("InvoicePaymentStatus", {
  description: "How much of an invoice is paid. REST `payment_status` uses the same strings.",
  values: {
    unpaid: { value: "unpaid", description: "nothing paid and something due (a draft too)" },
    partially_paid: { value: "partially_paid", description: "something paid, something still due" },
    paid: { value: "paid", description: "nothing due: payments and credit notes cover the total" },
    uncollectible: {
      value: "uncollectible",
      description: "marked uncollectible with something still due; a later payment still counts",
    },
  } as const satisfies DescribedValues<InvoicePaymentStatus>,
});

/** The `payments` field's arguments: succeeded payments, oldest first. */
const SUCCEEDED_PAYMENTS = {
  where: { status: "succeeded" },
  orderBy: [{ createdAt: "asc" as const }, { id: "asc" as const }],
};

/** The `creditNotes` field's arguments for a caller: the notes it may see, oldest first. */
function visibleNotes(ctx: GraphQLContext) {
  return {
    where: { AND: visibleDocuments(ctx) },
    // oldest first; notes created together by number, drafts (no number) after them, then id
    orderBy: [
      { createdAt: "asc" as const },
      { number: { sort: "asc" as const, nulls: "last" as const } },
      { id: "asc" as const },
    ],
  };
}

/**
 * What amountPaid, amountDue and paymentStatus read of an invoice: its total, its succeeded payments and the notes
 * the caller may see, with the same arguments as the `payments` and `creditNotes` fields, so that a query asking
 * for both reads each relation once, and the invoice's read (one statement: infra/sql/joined-reads.ts) carries
 * them. Finalized notes among them count (every caller sees those).
 */
function balanceSelection(ctx: GraphQLContext) {
  return {
    id: true,
    status: true,
    total: true,
    markedUncollectibleAt: true,
    payments: { ...SUCCEEDED_PAYMENTS, select: { amount: true } },
    creditNotes: {
      ...visibleNotes(ctx),
      select: { status: true, total: true, documentType: { select: { isCreditNote: true } } },
    },
  };
}

/** An invoice row read with balanceSelection. */
interface BalanceRow {
  total: DecimalInput;
  payments: { amount: DecimalInput }[];
  creditNotes: { status: string; total: DecimalInput; documentType: { isCreditNote: boolean } }[];
}

/** The invoice's paid and due amounts (domain/payments.ts invoiceAmounts) from what balanceSelection read. */
function balanceOf(invoice: BalanceRow) {
  const finalized = invoice.creditNotes.filter((note) => note.status === "finalized");
  return invoiceAmounts({
    total: invoice.total,
    payments: invoice.payments.map((payment) => payment.amount),
    creditNotes: finalized.filter((note) => note.documentType.isCreditNote).map((note) => note.total),
    debitNotes: finalized.filter((note) => !note.documentType.isCreditNote).map((note) => note.total),
  });
}

export const InvoiceLine = builder.prismaObject("InvoiceLine", {
  description: "A line of an invoice. total = round(quantity x amount) - line discount, in the invoice currency.",
  fields: (t) => ({ ...lineFields(t), ...lineDiscountFields(t) }),
});

/** What an invoice's customer has paid and still owes, and how it is collected. */
function invoicePaymentFields(t: DocumentFields<"Invoice">) {
  return {
    collectionMethod: t.field({
      type: CollectionMethod,
      description: "how the invoice is collected",
      select: { collectionMethod: true },
      resolve: (invoice) => invoice.collectionMethod as CollectionMethodValue,
    }),
    payments: t.relation("payments", {
      description: "succeeded payments of this invoice, oldest first",
      query: SUCCEEDED_PAYMENTS,
    }),
    creditNotes: t.relation("creditNotes", {
      description:
        "credit and debit notes of this invoice, oldest first: drafts and finalized for an API key, finalized only " +
        "for a customer-portal credential (docs/customer-portal.md)",
      query: (_args, ctx) => visibleNotes(ctx),
    }),
    orders: t.relation("orders", {
      description: "orders this invoice bills (invoiceOrders; finalized orders only), by number",
      query: (_args, ctx) => ({ where: { AND: visibleDocuments(ctx) }, orderBy: [{ number: "asc" }, { id: "asc" }] }),
    }),
    amountPaid: t.field({
      type: "Decimal",
      description:
        "what payments have paid: the sum of this invoice's succeeded payments, in its currency (payments are " +
        "never refunded; credit notes lower amountDue, not amountPaid)",
      select: (_args, ctx) => balanceSelection(ctx),
      resolve: (invoice) => balanceOf(invoice).paid,
    }),
    amountDue: t.field({
      type: "Decimal",
      description:
        "what is left to pay: total + finalized debit notes - finalized credit notes - amountPaid, never below 0, " +
        "in the invoice's currency (the same amount the portal and the reminders show)",
      select: (_args, ctx) => balanceSelection(ctx),
      resolve: (invoice) => balanceOf(invoice).due,
    }),
    paymentStatus: t.field({
      type: InvoicePaymentStatusEnum,
      description:
        "unpaid, partially_paid, paid or uncollectible: paid once nothing is due (even after it was marked " +
        "uncollectible: a later payment still counts); a draft is unpaid",
      select: (_args, ctx) => balanceSelection(ctx),
      resolve: (invoice) => {
        const balance = balanceOf(invoice);
        return invoicePaymentStatus({
          status: invoice.status,
          due: balance.due,
          paid: balance.paid,
          markedUncollectible: invoice.markedUncollectibleAt !== null,
        });
      },
    }),
    markedUncollectibleAt: t.expose("markedUncollectibleAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was marked uncollectible (markInvoiceUncollectible); null when it was not",
    }),
  };
}

export const Invoice = builder.prismaNode("Invoice", {
  ...invoices.node,
  description: "A sales document. Totals are computed by the service (docs/invoice-totals.md).",
  fields: (t) => ({
    ...documentCustomerFields(t),
    ...documentHeaderFields(t),
    dueDate: t.expose("dueDate", {
      type: "Date",
      nullable: true,
      description: "payment due date, yyyy-mm-dd, not before date (SII FchVenc); null when none",
    }),
    ...invoicePaymentFields(t),
    ...documentLineAndTotalFields(t),
    ...documentDiscountFields(t),
    periodStart: t.expose("periodStart", {
      type: "Date",
      nullable: true,
      description: "first day of the billed service period, yyyy-mm-dd (SII FchPerDesde); null when none",
    }),
    periodEnd: t.expose("periodEnd", {
      type: "Date",
      nullable: true,
      description: "last day of the billed service period, yyyy-mm-dd (SII FchPerHasta); null when none",
    }),
    note: documentNoteField(t),
    fiscalSettings: t.expose("fiscalSettings", {
      type: "JSONObject",
      description:
        "tax-agency settings of this invoice (key-value object; {} when none). `export`: the customs data of an " +
        "export invoice (CL110) and its notes: sale_modality, sale_clause, transport, loading_port, unloading_port, " +
        "destination_country, payment_form, exchange_rate (pesos per unit, OtraMoneda), foreign_id",
    }),
    metadata: t.expose("metadata", {
      type: "JSONObject",
      description: "your key-value data (string values; {} when none)",
    }),
    ...documentLifecycleFields(t, invoicePdf),
  }),
});

export const InvoiceLineInput = builder.inputType("InvoiceLineInput", {
  description:
    "A line of an invoice or a credit note. name and amount are required; quantity defaults to 1, discount to 0 " +
    "(percent).",
  fields: (t) => ({
    name: t.string({ description: "what is sold, as printed; required, at most 200 characters" }),
    description: t.string({ description: "longer text printed under the name" }),
    quantity: t.field({ type: "Decimal", description: "units, not negative; default 1" }),
    amount: t.field({
      type: "Decimal",
      description: "unit price in the document currency, net of tax, not negative; required",
    }),
    discount: t.field({
      type: "Decimal",
      description: "the line's discount: percent 0-100 or currency units, per discountScheme; default 0",
    }),
    discountScheme: discountSchemeInputField(t),
    exempt: t.boolean({ description: "true: not taxed (SII IndExe); default false" }),
  }),
});

const InvoiceInput = invoices.input(
  "Invoice fields. On update only given fields change; `lines` replaces all lines; metadata merges.",
  (t) => ({
    customer: t.id({
      description: "`cus_` id of the customer (required on create); cannot change while the invoice bills orders",
    }),
    document: t.string({
      description: "document type id, e.g. CL33 (default CL33 for Chilean customers); must be an invoice type",
    }),
    currency: t.string({ description: "ISO 4217 code, e.g. CLP (default: the document type's)" }),
    date: issueDateInputField(t),
    dueDate: t.field({ type: "Date", description: "yyyy-mm-dd, not before date; default: date" }),
    collectionMethod: t.field({ type: CollectionMethod, description: "default deferred" }),
    lines: t.field({ type: [InvoiceLineInput], description: "the lines; on update they replace every line" }),
    discount: t.field({
      type: "Decimal",
      description:
        "document discount on taxable lines, percent (0-100) or currency units per discountScheme; default 0",
    }),
    discountScheme: discountSchemeInputField(t),
    periodStart: t.field({ type: "Date", description: "first day of the billed period, yyyy-mm-dd" }),
    periodEnd: t.field({
      type: "Date",
      description: "last day of the billed period, yyyy-mm-dd, not before periodStart",
    }),
    note: t.string({ description: "printed note, at most 5000 characters" }),
    fiscalSettings: t.field({
      type: "JSONObject",
      description:
        "tax-agency settings (key-value object). `export` (optional, every key optional): sale_modality (default " +
        "firm), sale_clause (FOB, CIF, …), transport (sea, air, road, …), loading_port, unloading_port (Aduana " +
        "port names), destination_country (ISO alpha-2, default the customer's), payment_form (default COB1), " +
        "exchange_rate (CLP per unit, > 0, 4 decimals), foreign_id (default the customer's tax id); packages and " +
        "weights: tare, gross_weight, net_weight (each with its *_unit, an Aduana unit such as KN), total_items, " +
        "total_packages, packages (up to 10 of { type (Aduana package type such as CAJA DE CARTON), quantity, " +
        "marks, container_id, seal, seal_issuer }), freight, insurance (in the invoice currency); numbers as " +
        "decimal strings or JSON numbers; unknown keys " +
        'or values are a validation_error on fiscal_settings.export.<key> (docs/sii-dte.md "Export documents")',
    }),
    metadata: t.field({
      type: "JSONObject",
      description: "your key-value data; merged into the stored metadata, an empty value removes a key",
    }),
  }),
);

invoices.list({
  type: Invoice,
  ties: "the cycles one billing run bills",
  where: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id (`cus_`)" }),
    status: documentStatusWhereField(t),
    document: t.field({ type: StringFilter, description: "document type id, e.g. CL33 (case-insensitive)" }),
  }),
  conditions: (w) => [
    ...stringConditions("customerId", w.customer),
    ...enumConditions("status", w.status),
    ...stringConditions("documentTypeId", w.document, { uppercase: true }),
  ],
});

builder.mutationFields((t) => ({
  createInvoice: t.prismaField({
    type: "Invoice",
    description:
      "Creates a draft invoice and computes its totals (docs/invoice-totals.md). Errors: validation_error with " +
      "`fields` naming each problem " +
      "(customer missing or unknown, document not an invoice type or none for the customer's country, currency " +
      "unknown, due_date before date, " +
      "period_end before period_start, a line without name or amount, negative values, too many lines, note over " +
      "5000 characters); nothing is written then.",
    args: {
      input: t.arg({ type: InvoiceInput, required: true, description: "the invoice; customer and lines are required" }),
    },
    resolve: async (_query, _root, args, ctx) => {
      // the created invoice with its lines, customer, document type and currency: relations the
      // selection asks beyond these are loaded by Pothos' fallback (no read-back of the whole tree)
      return createInvoice(ctx, args.input);
    },
  }),
  updateInvoice: invoices.update(t, {
    description:
      "Updates a draft invoice: given fields change, lines are replaced, totals recomputed. Errors: not_found (no " +
      "such invoice in the caller's organization and mode), " +
      "invalid_state (finalized), validation_error (as createInvoice; customer cannot change while the invoice bills " +
      "orders).",
    input: InvoiceInput,
    update: updateInvoice,
  }),
  deleteInvoice: invoices.delete(t, {
    description:
      "Deletes a draft invoice (orders it billed become uninvoiced). Errors: not_found, invalid_state (finalized).",
    remove: deleteInvoice,
  }),
  markInvoiceUncollectible: invoices.action(t, {
    description:
      "Marks a finalized invoice with something due uncollectible: its paymentStatus becomes uncollectible and an " +
      "invoice.marked_uncollectible event is written; the document itself does not change, and a later payment " +
      "still counts (paymentStatus paid once nothing is due). Errors: not_found, invalid_state (a draft, nothing " +
      "due, or marked already).",
    run: markInvoiceUncollectible,
  }),
  finalizeInvoice: invoices.finalize(t, finalizeInvoice),
}));
