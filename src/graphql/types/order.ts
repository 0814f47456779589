/**
 * Orders (spec "Order"; Chile's guía de despacho, DTE 52): node type, `orders` connection, the
 * create/update/delete/finalize mutations and `invoiceOrders`. Rules live in services/orders.ts
 * and domain/ (shipping-types.ts, order-invoicing.ts).
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, enumConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createOrder, deleteOrder, finalizeOrder, invoiceOrders, orderPdf, updateOrder } from "../../services/orders.js";
import { SHIPPING_TYPES } from "../../domain/shipping-types.js";
import { DeletePayload, DocumentIssuer, DocumentStatus, DocumentStatusFilter, type DocumentStatusValue } from "./document.js";
import { Customer } from "./customer.js";
import { documentCustomer, documentIssuer } from "../../services/issued-parties.js";
import "./invoice.js";
import { fileUrl } from "../../services/files.js";

const SHIPPING_TYPE_LIST = Object.entries(SHIPPING_TYPES)
  .map(([code, label]) => `${code} ${label}`)
  .join("; ");

export const OrderLine = builder.prismaObject("OrderLine", {
  description: "A line of an order. total = round(quantity x amount), in the order currency.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`lin_` id" }),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    quantity: t.expose("quantity", { type: "Decimal" }),
    amount: t.expose("amount", { type: "Decimal", description: "unit price" }),
    exempt: t.exposeBoolean("exempt", { description: "not taxed (adds to the order's exempt)" }),
    tax: t.expose("tax", { type: "Decimal", nullable: true, description: "this line's tax, null when exempt (the order's tax is computed on the sum)" }),
    taxPercent: t.expose("taxPercent", { type: "Decimal", description: "percent; 0 when exempt" }),
    total: t.expose("total", { type: "Decimal", description: "line net" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const Order = builder.prismaNode("Order", {
  id: { field: "id", description: "`ord_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A sale or transfer of goods to deliver before invoicing (guía de despacho). Totals as for invoices (docs/invoice-totals.md).",
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
    document: t.relation("documentType", { description: "document type (an order type, CL52)" }),
    currency: t.relation("currency", { description: "the document type's currency; every amount is in it" }),
    number: t.exposeInt("number", { nullable: true, description: "assigned at finalize; null on drafts" }),
    testMode: t.exposeBoolean("testMode"),
    date: t.expose("date", { type: "Date" }),
    address: t.exposeString("address", { nullable: true, description: "delivery address (SII DirDest)" }),
    carrierId: t.exposeString("carrierId", { nullable: true, description: "carrier's tax id (SII RUTTrans)" }),
    carrierName: t.exposeString("carrierName", { nullable: true }),
    state: t.exposeString("state", { nullable: true, description: "delivery state code, e.g. RM" }),
    licencePlate: t.exposeString("licencePlate", { nullable: true, description: "vehicle plate (SII Patente)" }),
    shippingType: t.exposeString("shippingType", { description: `SII IndTraslado code: ${SHIPPING_TYPE_LIST}` }),
    lines: t.relation("lines", { query: { orderBy: { position: "asc" } } }),
    amount: t.expose("amount", { type: "Decimal", description: "taxable net (SII MntNeto)" }),
    exempt: t.expose("exempt", { type: "Decimal", description: "exempt net (SII MntExe)" }),
    tax: t.expose("tax", { type: "Decimal", description: "tax amount (SII IVA)" }),
    taxPercent: t.expose("taxPercent", { type: "Decimal", description: "percent" }),
    subtotal: t.expose("subtotal", { type: "Decimal", description: "amount + exempt" }),
    total: t.expose("total", { type: "Decimal", description: "subtotal + tax" }),
    localFile: t.string({
      nullable: true,
      select: { localFile: true },
      description: "URL of the tax-agency file (`<base>/v1/files/<name>`, authenticated), after finalize",
      resolve: (doc, _args, ctx) => fileUrl(ctx.baseUrl, doc.localFile),
    }),
    taxAgency: t.expose("taxAgency", { type: "JSONObject", description: "tax agency properties (track id, status) once sent" }),
    status: t.field({ type: DocumentStatus, resolve: (order) => order.status as DocumentStatusValue }),
    invoice: t.relation("invoice", { nullable: true, description: "the invoice that bills this order (invoiceOrders); null until invoiced" }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    finalized: t.expose("finalizedAt", { type: "DateTime", nullable: true }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
    pdf: t.string({
      description: "Base64 of the order PDF (rendered on request).",
      select: { id: true },
      resolve: async (order, _args, ctx) => (await orderPdf(ctx, order.id)).toString("base64"),
    }),
  }),
});

const OrderLineInput = builder.inputType("OrderLineInput", {
  description: "An order line. name and amount are required; quantity defaults to 1. Orders take no discounts.",
  fields: (t) => ({
    name: t.string(),
    description: t.string(),
    quantity: t.field({ type: "Decimal", description: "units, not negative" }),
    amount: t.field({ type: "Decimal", description: "unit price in the order currency, not negative" }),
    exempt: t.boolean({ description: "not taxed" }),
  }),
});

const OrderInput = builder.inputType("OrderInput", {
  description: "Order fields. On update only given fields change; `lines` replaces all lines.",
  fields: (t) => ({
    customer: t.id({ description: "customer id (required on create)" }),
    document: t.string({ description: "order document type id (default CL52 for Chilean customers)" }),
    date: t.field({ type: "Date", description: "default: today in the organization's time zone" }),
    address: t.string({ description: "delivery address, at most 70 characters" }),
    carrierId: t.string({ description: "carrier's tax id; a valid RUT on Chilean orders" }),
    carrierName: t.string({ description: "at most 100 characters" }),
    state: t.string({ description: "delivery state: code (RM) or id (CL-RM) of a seeded state of the document type's country" }),
    licencePlate: t.string({ description: "at most 8 characters" }),
    shippingType: t.string({ description: `SII IndTraslado code (default 1): ${SHIPPING_TYPE_LIST}` }),
    lines: t.field({ type: [OrderLineInput] }),
  }),
});

const OrderWhere = builder.inputType("OrderWhere", {
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id" }),
    status: t.field({ type: DocumentStatusFilter, description: "draft or finalized" }),
    shippingType: t.field({ type: StringFilter }),
    invoice: t.field({ type: StringFilter, description: "id of the invoice that bills the order" }),
    invoiced: t.boolean({ description: "true: billed by an invoice; false: not yet" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

builder.queryFields((t) => ({
  orders: t.connection({
    type: Order,
    description: "Orders of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: OrderWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      return tenantConnection(ctx, info, ctx.prisma.order, args, [
        ...stringConditions("customerId", w.customer),
        ...enumConditions("status", w.status),
        ...stringConditions("shippingType", w.shippingType),
        ...stringConditions("invoiceId", w.invoice),
        ...(w.invoiced === true ? [{ invoiceId: { not: null } }] : w.invoiced === false ? [{ invoiceId: null }] : []),
        ...dateTimeConditions("createdAt", w.created),
      ]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createOrder: t.prismaField({
    type: "Order",
    description: "Creates a draft order. Errors: validation_error.",
    args: { input: t.arg({ type: OrderInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createOrder(ctx, args.input);
      return ctx.prisma.order.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateOrder: t.prismaField({
    type: "Order",
    description: "Updates a draft order. Errors: not_found, invalid_state (finalized), validation_error.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: OrderInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateOrder(ctx, String(args.id), args.input);
      return ctx.prisma.order.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteOrder: t.field({
    type: DeletePayload,
    description: "Deletes a draft order. Errors: not_found, invalid_state (finalized).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteOrder(ctx, String(args.id));
      return { id: String(args.id), deleted: true };
    },
  }),
  finalizeOrder: t.prismaField({
    type: "Order",
    description: "Numbers and locks a draft order. Errors: not_found, invalid_state (not a draft), validation_error (no lines).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const finalized = await finalizeOrder(ctx, String(args.id));
      return ctx.prisma.order.findUniqueOrThrow({ ...query, where: { id: finalized.id } });
    },
  }),
  invoiceOrders: t.prismaField({
    type: "Invoice",
    description:
      "Creates one draft invoice billing finalized sale orders (shipping type 1, 2 or 9) of one customer and currency, and marks them invoiced; " +
      "an order is invoiced once (deleting the draft invoice releases it). The invoice has every order line, orders by number. " +
      "Errors: not_found (an order), invalid_state (a draft or already invoiced order), validation_error (not a sale, mixed customers or currencies, bad invoice fields).",
    args: {
      orderIds: t.arg.idList({ required: true, description: "orders to bill (at most 100)" }),
      document: t.arg.string({ description: "invoice document type (default CL33 for Chilean customers)" }),
      date: t.arg({ type: "Date", description: "invoice date (default today in the organization's time zone)" }),
      dueDate: t.arg({ type: "Date", description: "default: date" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const invoice = await invoiceOrders(ctx, { orderIds: args.orderIds.map(String), document: args.document, date: args.date, dueDate: args.dueDate });
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: invoice.id } });
    },
  }),
}));
