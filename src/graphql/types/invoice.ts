/**
 * Invoices (spec "Invoice", "States and transitions"): node type, `invoices` connection and the
 * create/update/delete/finalize mutations. Rules live in services/invoices.ts and domain/.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, enumConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createInvoice, deleteInvoice, finalizeInvoice, invoicePdf, updateInvoice } from "../../services/invoices.js";
import DataLoader from "dataloader";
import { invoiceBalances, type InvoiceBalance } from "../../services/invoice-balances.js";
import type { GraphQLContext } from "../context.js";
import { DeletePayload, DocumentIssuer, DocumentStatus, DocumentStatusFilter, type DocumentStatusValue } from "./document.js";
import { Customer } from "./customer.js";
import { documentCustomer, documentIssuer } from "../../services/issued-parties.js";
import "./payment.js";
import { fileUrl } from "../../services/files.js";

/** One balance query per request for every invoice it shows (no N+1). */
const balanceLoaders = new WeakMap<GraphQLContext, DataLoader<string, InvoiceBalance>>();
function balanceOf(ctx: GraphQLContext, id: string): Promise<InvoiceBalance> {
  let loader = balanceLoaders.get(ctx);
  if (!loader) balanceLoaders.set(ctx, (loader = new DataLoader((ids) => invoiceBalances(ctx, ids))));
  return loader.load(id);
}

export const InvoiceLine = builder.prismaObject("InvoiceLine", {
  description: "A line of an invoice. total = round(quantity x amount) - line discount, in the invoice currency.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`lin_` id" }),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    quantity: t.expose("quantity", { type: "Decimal" }),
    amount: t.expose("amount", { type: "Decimal", description: "unit price" }),
    discount: t.expose("discount", { type: "Decimal", description: "percent or amount per discountScheme" }),
    discountScheme: t.exposeString("discountScheme", { description: "% or $" }),
    exempt: t.exposeBoolean("exempt", { description: "not taxed (adds to the invoice's exempt)" }),
    total: t.expose("total", { type: "Decimal", description: "line net after its discount" }),
  }),
});

export const Invoice = builder.prismaNode("Invoice", {
  id: { field: "id", description: "`inv_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A sales document. Totals are computed by the service (docs/invoice-totals.md).",
  fields: (t) => ({
    customer: t.field({
      type: Customer,
      description: "The customer: on a finalized document as it was issued (its fields as stored at finalize: name, tax id, address, state, country, e-mail, phone, website, tax settings, metadata, contacts, timestamps; aggregations and sources are the customer's now), on a draft the customer now (docs/decisions.md \"Issued documents\").",
      select: (_args, _ctx, nestedSelection) => ({ customer: nestedSelection(true) }),
      resolve: (doc, _args, ctx) => documentCustomer(ctx, doc, doc.customer),
    }),
    issuer: t.field({
      type: DocumentIssuer,
      description: "The issuer: as issued once finalized, the organization's tax profile now on a draft.",
      resolve: (doc, _args, ctx) => documentIssuer(ctx, doc),
    }),
    document: t.relation("documentType", { description: "document type" }),
    currency: t.relation("currency", { description: "currency of every amount of the invoice" }),
    number: t.exposeInt("number", { nullable: true, description: "assigned at finalize; null on drafts" }),
    testMode: t.exposeBoolean("testMode"),
    date: t.expose("date", { type: "Date" }),
    dueDate: t.expose("dueDate", { type: "Date", nullable: true }),
    lines: t.relation("lines", { query: { orderBy: { position: "asc" } } }),
    collectionMethod: t.exposeString("collectionMethod"),
    payments: t.relation("payments", {
      description: "succeeded payments of this invoice",
      query: { where: { status: "succeeded" }, orderBy: { createdAt: "asc" } },
    }),
    creditNotes: t.relation("creditNotes", {
      description: "credit notes discounting this invoice (drafts and finalized), oldest first",
      query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    }),
    orders: t.relation("orders", { description: "orders this invoice bills (invoiceOrders), by number", query: { orderBy: [{ number: "asc" }, { id: "asc" }] } }),
    amountPaid: t.field({
      type: "Decimal",
      description: "succeeded payments of this invoice, in its currency",
      select: { id: true },
      resolve: async (invoice, _args, ctx) => (await balanceOf(ctx, invoice.id)).paid,
    }),
    amountDue: t.field({
      type: "Decimal",
      description: "total + finalized debit notes - finalized credit notes - amountPaid, never below 0 (docs/payments.md)",
      select: { id: true },
      resolve: async (invoice, _args, ctx) => (await balanceOf(ctx, invoice.id)).due,
    }),
    amount: t.expose("amount", { type: "Decimal", description: "taxable net after the document discount (SII MntNeto)" }),
    exempt: t.expose("exempt", { type: "Decimal", description: "exempt net (SII MntExe)" }),
    tax: t.expose("tax", { type: "Decimal", description: "tax amount (SII IVA)" }),
    taxPercent: t.expose("taxPercent", { type: "Decimal", description: "percent" }),
    subtotal: t.expose("subtotal", { type: "Decimal", description: "amount + exempt" }),
    discount: t.expose("discount", { type: "Decimal", description: "document discount, percent or amount per discountScheme" }),
    discountScheme: t.exposeString("discountScheme", { description: "% or $" }),
    discountAmount: t.expose("discountAmount", { type: "Decimal", description: "document discount in currency units" }),
    total: t.expose("total", { type: "Decimal", description: "subtotal + tax" }),
    periodStart: t.expose("periodStart", { type: "Date", nullable: true }),
    periodEnd: t.expose("periodEnd", { type: "Date", nullable: true }),
    localFile: t.string({
      nullable: true,
      select: { localFile: true },
      description: "URL of the tax-agency file (`<base>/v1/files/<name>`, authenticated), after finalize",
      resolve: (doc, _args, ctx) => fileUrl(ctx.baseUrl, doc.localFile),
    }),
    note: t.exposeString("note", { nullable: true }),
    fiscalSettings: t.expose("fiscalSettings", { type: "JSONObject" }),
    status: t.field({ type: DocumentStatus, resolve: (invoice) => invoice.status as DocumentStatusValue }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    finalized: t.expose("finalizedAt", { type: "DateTime", nullable: true }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
    pdf: t.string({
      description: "Base64 of the invoice PDF (rendered on request).",
      select: { id: true },
      resolve: async (invoice, _args, ctx) => (await invoicePdf(ctx, invoice.id)).toString("base64"),
    }),
  }),
});

export const InvoiceLineInput = builder.inputType("InvoiceLineInput", {
  description: "A line of an invoice or a credit note. name and amount are required; quantity defaults to 1, discount to 0 (%).",
  fields: (t) => ({
    name: t.string(),
    description: t.string(),
    quantity: t.field({ type: "Decimal", description: "units, not negative" }),
    amount: t.field({ type: "Decimal", description: "unit price in the document currency, not negative" }),
    discount: t.field({ type: "Decimal", description: "percent (0-100) or amount" }),
    discountScheme: t.string({ description: "% (default) or $" }),
    exempt: t.boolean({ description: "not taxed" }),
  }),
});

const InvoiceInput = builder.inputType("InvoiceInput", {
  description: "Invoice fields. On update only given fields change; `lines` replaces all lines; metadata merges.",
  fields: (t) => ({
    customer: t.id({ description: "customer id (required on create)" }),
    document: t.string({ description: "document type id, e.g. CL33 (default CL33 for Chilean customers)" }),
    currency: t.string({ description: "ISO 4217 code (default: the document type's)" }),
    date: t.field({ type: "Date", description: "default: today in the organization's time zone" }),
    dueDate: t.field({ type: "Date", description: "default: date" }),
    collectionMethod: t.string({ description: "deferred" }),
    lines: t.field({ type: [InvoiceLineInput] }),
    discount: t.field({ type: "Decimal", description: "document discount on taxable lines, percent (0-100) or amount" }),
    discountScheme: t.string({ description: "% (default) or $" }),
    periodStart: t.field({ type: "Date" }),
    periodEnd: t.field({ type: "Date" }),
    note: t.string(),
    fiscalSettings: t.field({ type: "JSONObject" }),
    metadata: t.field({ type: "JSONObject" }),
  }),
});

const InvoiceWhere = builder.inputType("InvoiceWhere", {
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id" }),
    status: t.field({ type: DocumentStatusFilter, description: "draft or finalized" }),
    document: t.field({ type: StringFilter, description: "document type id" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

builder.queryFields((t) => ({
  invoices: t.connection({
    type: Invoice,
    description: "Invoices of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: InvoiceWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      return tenantConnection(ctx, info, ctx.prisma.invoice, args, [
        ...stringConditions("customerId", w.customer),
        ...enumConditions("status", w.status),
        ...stringConditions("documentTypeId", w.document, { uppercase: true }),
        ...dateTimeConditions("createdAt", w.created),
      ]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createInvoice: t.prismaField({
    type: "Invoice",
    description: "Creates a draft invoice. Errors: validation_error.",
    args: { input: t.arg({ type: InvoiceInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createInvoice(ctx, args.input);
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateInvoice: t.prismaField({
    type: "Invoice",
    description: "Updates a draft invoice. Errors: not_found, invalid_state (finalized), validation_error.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: InvoiceInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateInvoice(ctx, String(args.id), args.input);
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteInvoice: t.field({
    type: DeletePayload,
    description: "Deletes a draft invoice. Errors: not_found, invalid_state (finalized).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteInvoice(ctx, String(args.id));
      return { id: String(args.id), deleted: true };
    },
  }),
  finalizeInvoice: t.prismaField({
    type: "Invoice",
    description: "Numbers and locks a draft invoice. Errors: not_found, invalid_state (not a draft), validation_error (no lines).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const finalized = await finalizeInvoice(ctx, String(args.id));
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: finalized.id } });
    },
  }),
}));
