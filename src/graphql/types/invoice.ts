/**
 * Invoices (spec "Invoice", "States and transitions"): node type, `invoices` connection and the
 * create/update/delete/finalize mutations. Rules live in services/invoices.ts and domain/.
 */
import { builder } from "../builder.js";
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
import { tenant, visibleDocuments } from "../../services/context.js";
import { createInvoice, deleteInvoice, finalizeInvoice, invoicePdf, updateInvoice } from "../../services/invoices.js";
import DataLoader from "dataloader";
import { draftBalance, invoiceBalances, type InvoiceBalance } from "../../services/invoice-balances.js";
import type { GraphQLContext } from "../context.js";
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
import { IssuedCustomer } from "./customer.js";
import { documentCustomer, documentIssuer } from "../../services/issued-parties.js";
import "./payment.js";
import { fileUrl } from "../../services/files.js";
import { DiscountScheme, type DiscountSchemeValue, type DescribedValues } from "../enums.js";
import { COLLECTION_METHODS, markInvoiceUncollectible } from "../../services/invoices.js";
import { invoicePaymentStatus, type InvoicePaymentStatus } from "../../domain/payments.js";

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

/**
 * One balance query per request for every finalized invoice it shows (no N+1: a page of invoices
 * costs one statement more, whatever its size); a draft's balance needs none (draftBalance).
 */
const balanceLoaders = new WeakMap<GraphQLContext, DataLoader<string, InvoiceBalance>>();
async function balanceOf(
  ctx: GraphQLContext,
  invoice: { id: string; status: string; total: { toString(): string } },
): Promise<InvoiceBalance> {
  if (invoice.status === "draft") return draftBalance(invoice.total.toString());
  let loader = balanceLoaders.get(ctx);
  if (!loader) balanceLoaders.set(ctx, (loader = new DataLoader((ids) => invoiceBalances(ctx, ids))));
  return loader.load(invoice.id);
}

export const InvoiceLine = builder.prismaObject("InvoiceLine", {
  description: "A line of an invoice. total = round(quantity x amount) - line discount, in the invoice currency.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`lin_` id" }),
    name: t.exposeString("name", { description: "what is sold, as printed (SII NmbItem), at most 200 characters" }),
    description: t.exposeString("description", {
      nullable: true,
      description: "longer text printed under the name (SII DscItem); null when none",
    }),
    quantity: t.expose("quantity", { type: "Decimal", description: "units sold, a decimal string (SII QtyItem)" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "unit price, net of tax, in the invoice currency (SII PrcItem)",
    }),
    discount: t.expose("discount", {
      type: "Decimal",
      description:
        "the line's discount: percent 0-100 of quantity x amount when discountScheme is percent, else currency units " +
        "of the invoice; 0 when none",
    }),
    discountScheme: t.field({
      type: DiscountScheme,
      description: "how `discount` reads: percent or amount (REST `%` or `$`)",
      select: { discountScheme: true },
      resolve: (line) => line.discountScheme as DiscountSchemeValue,
    }),
    exempt: t.exposeBoolean("exempt", {
      description: "true: not taxed, adds to the invoice's exempt (SII IndExe); false: taxable",
    }),
    total: t.expose("total", {
      type: "Decimal",
      description: "line net after its discount, in the invoice currency: round(quantity x amount) - discount",
    }),
  }),
});

export const Invoice = builder.prismaNode("Invoice", {
  id: { field: "id", description: "`inv_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A sales document. Totals are computed by the service (docs/invoice-totals.md).",
  fields: (t) => ({
    customer: t.relation("customer", { description: liveCustomerDescription("The customer the invoice is issued to") }),
    issuedCustomer: t.field({
      type: IssuedCustomer,
      description: issuedCustomerDescription("The customer as the invoice was issued to it"),
      select: (_args, _ctx, nestedSelection) => ({ customer: nestedSelection(true) }),
      resolve: (doc, _args, ctx) => documentCustomer(ctx, doc, doc.customer),
    }),
    issuer: t.field({
      type: DocumentIssuer,
      description: "The issuer: as issued once finalized, the organization's tax profile now on a draft.",
      resolve: (doc, _args, ctx) => documentIssuer(ctx, doc),
    }),
    document: t.relation("documentType", {
      description: "document type, e.g. CL33 (factura electrónica) or CL34 (exenta); SII TipoDTE",
    }),
    currency: t.relation("currency", { description: "currency of every amount of the invoice" }),
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
    testMode: t.exposeBoolean("testMode", {
      description: "true when created with a test key (test mode data is never sent to the tax agency)",
    }),
    date: t.expose("date", { type: "Date", description: "issue date, yyyy-mm-dd (SII FchEmis)" }),
    dueDate: t.expose("dueDate", {
      type: "Date",
      nullable: true,
      description: "payment due date, yyyy-mm-dd, not before date (SII FchVenc); null when none",
    }),
    lines: t.relation("lines", {
      description: "the invoice's lines, in the order they were given",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    collectionMethod: t.field({
      type: CollectionMethod,
      description: "how the invoice is collected",
      select: { collectionMethod: true },
      resolve: (invoice) => invoice.collectionMethod as CollectionMethodValue,
    }),
    payments: t.relation("payments", {
      description: "succeeded payments of this invoice, oldest first",
      query: { where: { status: "succeeded" }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    }),
    creditNotes: t.relation("creditNotes", {
      description:
        "credit and debit notes of this invoice, oldest first: drafts and finalized for an API key, finalized only " +
        "for a customer-portal credential (docs/customer-portal.md)",
      query: (_args, ctx) => ({
        where: { AND: visibleDocuments(ctx) },
        // oldest first; notes created together by number, drafts (no number) after them, then id
        orderBy: [{ createdAt: "asc" }, { number: { sort: "asc", nulls: "last" } }, { id: "asc" }],
      }),
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
      select: { id: true, status: true, total: true },
      resolve: async (invoice, _args, ctx) => (await balanceOf(ctx, invoice)).paid,
    }),
    amountDue: t.field({
      type: "Decimal",
      description:
        "what is left to pay: total + finalized debit notes - finalized credit notes - amountPaid, never below 0, " +
        "in the invoice's currency (the same amount the portal and the reminders show)",
      select: { id: true, status: true, total: true },
      resolve: async (invoice, _args, ctx) => (await balanceOf(ctx, invoice)).due,
    }),
    paymentStatus: t.field({
      type: InvoicePaymentStatusEnum,
      description:
        "unpaid, partially_paid, paid or uncollectible: paid once nothing is due (even after it was marked " +
        "uncollectible: a later payment still counts); a draft is unpaid",
      select: { id: true, status: true, total: true, markedUncollectibleAt: true },
      resolve: async (invoice, _args, ctx) => {
        const balance = await balanceOf(ctx, invoice);
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
    amount: t.expose("amount", {
      type: "Decimal",
      description: "taxable net after the document discount (SII MntNeto)",
    }),
    exempt: t.expose("exempt", { type: "Decimal", description: "exempt net (SII MntExe)" }),
    tax: t.expose("tax", { type: "Decimal", description: "tax amount (SII IVA)" }),
    taxPercent: t.expose("taxPercent", {
      type: "Decimal",
      description: "tax rate, percent 0-100 (19 for Chile's IVA; SII TasaIVA)",
    }),
    subtotal: t.expose("subtotal", { type: "Decimal", description: "amount + exempt, in the invoice currency" }),
    discount: t.expose("discount", {
      type: "Decimal",
      description:
        "document discount on the taxable lines: percent 0-100 when discountScheme is percent, else currency units; " +
        "0 when none (SII DscRcgGlobal)",
    }),
    discountScheme: t.field({
      type: DiscountScheme,
      description: "how `discount` reads: percent or amount (REST `%` or `$`)",
      select: { discountScheme: true },
      resolve: (invoice) => invoice.discountScheme as DiscountSchemeValue,
    }),
    discountAmount: t.expose("discountAmount", {
      type: "Decimal",
      description: "document discount in currency units of the invoice",
    }),
    total: t.expose("total", {
      type: "Decimal",
      description: "subtotal + tax, in the invoice currency (SII MntTotal)",
    }),
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
    localFile: t.string({
      nullable: true,
      select: { localFile: true },
      description:
        "URL of the tax-agency file (`<base>/v1/files/<name>`, authenticated), after finalize; " +
        "null while none is stored",
      resolve: (doc, _args, ctx) => fileUrl(ctx.baseUrl, doc.localFile),
    }),
    note: t.exposeString("note", {
      nullable: true,
      description: "printed note for the customer, at most 5000 characters; null when none",
    }),
    fiscalSettings: t.expose("fiscalSettings", {
      type: "JSONObject",
      description:
        "tax-agency settings of this invoice (key-value object; {} when none). `export`: the customs data of an " +
        "export invoice (CL110) and its notes: sale_modality, sale_clause, transport, loading_port, unloading_port, " +
        "destination_country, payment_form, exchange_rate (pesos per unit, OtraMoneda), foreign_id",
    }),
    taxAgency: t.expose("taxAgency", {
      type: "JSONObject",
      description:
        "tax agency properties ({} when none): for an invoice issued as a DTE, `agency` sii, `status` (pending " +
        "once finalized, queued for SII; then sent, accepted, rejected...), `document_id`, `folio`, `caf`, " +
        "`track_id` (SII's upload number), and the receiver's answers (`receiver_status`)",
    }),
    status: t.field({
      type: DocumentStatus,
      description: "draft or finalized",
      select: { status: true },
      resolve: (invoice) => invoice.status as DocumentStatusValue,
    }),
    metadata: t.expose("metadata", {
      type: "JSONObject",
      description: "your key-value data (string values; {} when none)",
    }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    finalized: t.expose("finalizedAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was finalized (ISO 8601); null on drafts",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created (ISO 8601)" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed (ISO 8601)" }),
    pdf: t.string({
      description: "Base64 of the invoice PDF (rendered on request).",
      select: { id: true },
      resolve: async (invoice, _args, ctx) => (await invoicePdf(ctx, invoice.id)).toString("base64"),
    }),
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
    discountScheme: t.field({ type: DiscountScheme, description: "how `discount` reads; default percent" }),
    exempt: t.boolean({ description: "true: not taxed (SII IndExe); default false" }),
  }),
});

const InvoiceInput = builder.inputType("InvoiceInput", {
  description: "Invoice fields. On update only given fields change; `lines` replaces all lines; metadata merges.",
  fields: (t) => ({
    customer: t.id({
      description: "`cus_` id of the customer (required on create); cannot change while the invoice bills orders",
    }),
    document: t.string({
      description: "document type id, e.g. CL33 (default CL33 for Chilean customers); must be an invoice type",
    }),
    currency: t.string({ description: "ISO 4217 code, e.g. CLP (default: the document type's)" }),
    date: t.field({
      type: "Date",
      description: "issue date yyyy-mm-dd; default today in the organization's time zone",
    }),
    dueDate: t.field({ type: "Date", description: "yyyy-mm-dd, not before date; default: date" }),
    collectionMethod: t.field({ type: CollectionMethod, description: "default deferred" }),
    lines: t.field({ type: [InvoiceLineInput], description: "the lines; on update they replace every line" }),
    discount: t.field({
      type: "Decimal",
      description:
        "document discount on taxable lines, percent (0-100) or currency units per discountScheme; default 0",
    }),
    discountScheme: t.field({ type: DiscountScheme, description: "how `discount` reads; default percent" }),
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
});

const InvoiceWhere = builder.inputType("InvoiceWhere", {
  description: "Filters of the invoices list; every given filter must match.",
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id (`cus_`)" }),
    status: t.field({ type: DocumentStatusFilter, description: "draft or finalized" }),
    document: t.field({ type: StringFilter, description: "document type id, e.g. CL33 (case-insensitive)" }),
    number: t.field({
      type: IntFilter,
      description: "number (folio); a draft has none and matches no number filter",
    }),
    date: t.field({ type: DateFilter, description: "issue date (`date`), yyyy-mm-dd" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  }),
});

builder.queryFields((t) => ({
  invoices: t.connection(
    {
      type: Invoice,
      description:
        "Invoices of the caller's organization and mode, newest first; invoices created at the same instant (the " +
        "cycles one billing run bills) by number, highest first, drafts (no number yet) before them, then by id " +
        '(docs/graphql.md "Order of lists").',
      args: { where: t.arg({ type: InvoiceWhere, description: "filters; none: every invoice" }), offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return documentConnection(ctx, info, ctx.prisma.invoice, args, [
          ...stringConditions("customerId", w.customer),
          ...enumConditions("status", w.status),
          ...stringConditions("documentTypeId", w.document, { uppercase: true }),
          ...intConditions("number", w.number),
          ...dateConditions("date", w.date),
          ...dateTimeConditions("createdAt", w.created),
        ]);
      },
    },
    { description: "A page of invoices, newest first, ties by number (Relay connection)." },
    { description: "An invoice in a page, with its cursor." },
  ),
}));

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
  updateInvoice: t.prismaField({
    type: "Invoice",
    description:
      "Updates a draft invoice: given fields change, lines are replaced, totals recomputed. Errors: not_found (no " +
      "such invoice in the caller's organization and mode), " +
      "invalid_state (finalized), validation_error (as createInvoice; customer cannot change while the invoice bills " +
      "orders).",
    args: {
      id: t.arg.id({ required: true, description: "`inv_` id" }),
      input: t.arg({ type: InvoiceInput, required: true, description: "the fields to change" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateInvoice(ctx, String(args.id), args.input);
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteInvoice: t.field({
    type: DeletePayload,
    description:
      "Deletes a draft invoice (orders it billed become uninvoiced). Errors: not_found, invalid_state (finalized).",
    args: { id: t.arg.id({ required: true, description: "`inv_` id" }) },
    resolve: async (_root, args, ctx) => {
      await deleteInvoice(ctx, String(args.id));
      return { id: String(args.id), deleted: true };
    },
  }),
  markInvoiceUncollectible: t.prismaField({
    type: "Invoice",
    description:
      "Marks a finalized invoice with something due uncollectible: its paymentStatus becomes uncollectible and an " +
      "invoice.marked_uncollectible event is written; the document itself does not change, and a later payment " +
      "still counts (paymentStatus paid once nothing is due). Errors: not_found, invalid_state (a draft, nothing " +
      "due, or marked already).",
    args: { id: t.arg.id({ required: true, description: "`inv_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const marked = await markInvoiceUncollectible(ctx, String(args.id));
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: marked.id } });
    },
  }),
  finalizeInvoice: t.prismaField({
    type: "Invoice",
    description:
      "Numbers and locks a draft invoice, freezing its customer and issuer as issued (`issuedCustomer`, " +
      "`issuer`). Errors: not_found, invalid_state (not a draft), validation_error (no lines).",
    args: { id: t.arg.id({ required: true, description: "`inv_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const finalized = await finalizeInvoice(ctx, String(args.id));
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: finalized.id } });
    },
  }),
}));
