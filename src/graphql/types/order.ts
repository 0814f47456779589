/**
 * Orders (spec "Order"; Chile's guía de despacho, DTE 52): node type, `orders` connection, the
 * create/update/delete/finalize mutations and `invoiceOrders`. Rules live in services/orders.ts
 * and domain/ (shipping-types.ts, order-invoicing.ts).
 */
import { builder, INVOICE_RELATION } from "../builder.js";
import { StringFilter, enumConditions, enumFilter, stringConditions } from "../filters.js";
import { documentVisible } from "../../services/context.js";
import {
  createOrder,
  deleteOrder,
  finalizeOrder,
  invoiceOrders,
  orderPdf,
  updateOrder,
} from "../../services/orders.js";
import {
  SHIPPING_TYPES,
  SALE_SHIPPING_TYPES,
  type ShippingType as ShippingTypeCode,
} from "../../domain/shipping-types.js";
import {
  documentStatusWhereField,
  issueDateInputField,
  documentCustomerFields,
  documentHeaderFields,
  documentLifecycleFields,
  documentLineAndTotalFields,
  lineFields,
  lineTaxAndTimeFields,
} from "./document.js";
import { documentOperations } from "./document-operations.js";
import { Invoice } from "./invoice.js";
import type { Invoice as InvoiceRow } from "../../infra/prisma/generated/client.js";

const orders = documentOperations({ model: "Order", noun: "order", idDescription: "`ord_` id" });

/**
 * GraphQL names of the SII IndTraslado codes (domain/shipping-types.ts): the codes are digits, which
 * are not GraphQL names, so each gets a word; REST keeps the codes (src/rest/enums.ts).
 */
export const SHIPPING_TYPE_NAMES: Record<ShippingTypeCode, string> = {
  "1": "sale",
  "2": "sale_to_be_made",
  "3": "consignment",
  "4": "free_delivery",
  "5": "internal_transfer",
  "6": "other_transfer",
  "7": "return_guide",
  "8": "export_transfer",
  "9": "export_sale",
};

export const ShippingType = builder.enumType("ShippingType", {
  description:
    "What an order's goods movement is: SII's transfer code IndTraslado (docs/sii-dte.md \"The document\"). REST " +
    'writes the code (`"1"`..`"9"`); GraphQL names it, since digits are not GraphQL names. ' +
    "Sales (sale, sale_to_be_made, export_sale) can be invoiced with invoiceOrders; the others move goods without " +
    "selling them.",
  values: Object.fromEntries(
    (Object.entries(SHIPPING_TYPES) as [ShippingTypeCode, string][]).map(([code, label]) => [
      SHIPPING_TYPE_NAMES[code],
      {
        value: code,
        description:
          `IndTraslado ${code} (REST \`"${code}` +
          `"\`): ${label}${SALE_SHIPPING_TYPES.includes(code) ? "; a sale, can be invoiced" : ""}`,
      },
    ]),
  ) as Record<string, { value: ShippingTypeCode; description: string }>,
});

export const ShippingTypeFilter = enumFilter(ShippingType, "ShippingType");

export const OrderLine = builder.prismaObject("OrderLine", {
  description: "A line of an order. total = round(quantity x amount), in the order currency.",
  fields: (t) => ({ ...lineFields(t), ...lineTaxAndTimeFields(t) }),
});

export const Order = builder.prismaNode("Order", {
  ...orders.node,
  description:
    "A sale or transfer of goods to deliver before invoicing (guía de despacho). Totals as for invoices " +
    "(docs/invoice-totals.md).",
  fields: (t) => ({
    ...documentCustomerFields(t),
    ...documentHeaderFields(t),
    address: t.exposeString("address", {
      nullable: true,
      description: "delivery address (SII DirDest); null when none",
    }),
    carrierId: t.exposeString("carrierId", {
      nullable: true,
      description: "carrier's tax id, a RUT like 76042235-5 (SII RUTTrans); null when none",
    }),
    carrierName: t.exposeString("carrierName", { nullable: true, description: "carrier's name; null when none" }),
    state: t.exposeString("state", { nullable: true, description: "delivery state code, e.g. RM; null when none" }),
    licencePlate: t.exposeString("licencePlate", {
      nullable: true,
      description: "vehicle plate (SII Patente); null when none",
    }),
    shippingType: t.field({
      type: ShippingType,
      description: "what the goods movement is (SII IndTraslado); REST `shipping_type` is its code",
      select: { shippingType: true },
      resolve: (order) => order.shippingType as ShippingTypeCode,
    }),
    ...documentLineAndTotalFields(t),
    invoice: t.field({
      ...INVOICE_RELATION,
      type: Invoice,
      nullable: true,
      description:
        "the invoice that bills this order (invoiceOrders); null until invoiced, and for a customer-portal " +
        "credential while that invoice is a draft (docs/customer-portal.md)",
      // the relation as the selection asks for it, plus its status for the portal's rule
      select: (_args, _ctx, nestedSelection) => ({ invoice: nestedSelection({ select: { status: true } }) }),
      resolve: (order, _args, ctx) => {
        // the selection the Invoice type's fields asked for, read as the model's row (as t.relation does)
        const invoice = order.invoice as (InvoiceRow & { status: string }) | null;
        return invoice && documentVisible(ctx, invoice.status) ? invoice : null;
      },
    }),
    ...documentLifecycleFields(t, orderPdf),
  }),
});

const OrderLineInput = builder.inputType("OrderLineInput", {
  description: "An order line. name and amount are required; quantity defaults to 1. Orders take no discounts.",
  fields: (t) => ({
    name: t.string({ description: "the goods, as printed; required" }),
    description: t.string({ description: "longer text printed under the name" }),
    quantity: t.field({ type: "Decimal", description: "units, not negative; default 1" }),
    amount: t.field({ type: "Decimal", description: "unit price in the order currency, not negative" }),
    exempt: t.boolean({ description: "true: not taxed (SII IndExe); default false" }),
  }),
});

const OrderInput = orders.input(
  "Order fields. On update only given fields change; `lines` replaces all lines.",
  (t) => ({
    customer: t.id({ description: "`cus_` id of the customer (required on create)" }),
    document: t.string({
      description: "order document type id (default CL52 for Chilean customers); must be an order type",
    }),
    date: issueDateInputField(t),
    address: t.string({ description: "delivery address, at most 70 characters" }),
    carrierId: t.string({ description: "carrier's tax id; a valid RUT on Chilean orders" }),
    carrierName: t.string({ description: "at most 100 characters" }),
    state: t.string({
      description: "delivery state: code (RM) or id (CL-RM) of a seeded state of the document type's country",
    }),
    licencePlate: t.string({ description: "at most 8 characters" }),
    shippingType: t.field({
      type: ShippingType,
      description: "what the goods movement is (SII IndTraslado); default sale",
    }),
    lines: t.field({ type: [OrderLineInput], description: "the lines; on update they replace every line" }),
  }),
);

orders.list({
  type: Order,
  where: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id (`cus_`)" }),
    status: documentStatusWhereField(t),
    shippingType: t.field({ type: ShippingTypeFilter, description: "what the goods movement is (SII IndTraslado)" }),
    invoice: t.field({ type: StringFilter, description: "id (`inv_`) of the invoice that bills the order" }),
    invoiced: t.boolean({ description: "true: billed by an invoice; false: not yet" }),
  }),
  conditions: (w) => [
    ...stringConditions("customerId", w.customer),
    ...enumConditions("status", w.status),
    ...enumConditions("shippingType", w.shippingType),
    ...stringConditions("invoiceId", w.invoice),
    ...(w.invoiced === true ? [{ invoiceId: { not: null } }] : w.invoiced === false ? [{ invoiceId: null }] : []),
  ],
});

builder.mutationFields((t) => ({
  createOrder: orders.create(t, {
    description:
      "Creates a draft order and computes its totals. Errors: validation_error with `fields` naming each problem " +
      "(customer missing or unknown, " +
      "document not an order type, carrier_id not a valid RUT on a Chilean order, address, carrier name or licence " +
      "plate too long, unknown state, " +
      "a line without name or amount, negative values); nothing is written then.",
    input: OrderInput,
    inputDescription: "the order; customer and lines are required",
    create: createOrder,
  }),
  updateOrder: orders.update(t, {
    description:
      "Updates a draft order: given fields change, lines are replaced, totals recomputed. Errors: not_found, " +
      "invalid_state (finalized), validation_error (as createOrder).",
    input: OrderInput,
    update: updateOrder,
  }),
  deleteOrder: orders.delete(t, {
    description: "Deletes a draft order. Errors: not_found, invalid_state (finalized).",
    remove: deleteOrder,
  }),
  finalizeOrder: orders.finalize(t, finalizeOrder),
  invoiceOrders: t.prismaField({
    type: "Invoice",
    description:
      "Creates one draft invoice billing finalized sale orders (shipping type sale, sale_to_be_made or export_sale: " +
      "IndTraslado 1, 2 or 9) of one customer and currency, and marks them invoiced; " +
      "an order is invoiced once (deleting the draft invoice releases it). The invoice has every order line, orders " +
      "by number. " +
      "Errors: not_found (an order), invalid_state (a draft or already invoiced order), validation_error (not a " +
      "sale, mixed customers or currencies, bad invoice fields).",
    args: {
      orderIds: t.arg.idList({ required: true, description: "`ord_` ids of the orders to bill (at most 100)" }),
      document: t.arg.string({ description: "invoice document type (default CL33 for Chilean customers)" }),
      date: t.arg({ type: "Date", description: "invoice date (default today in the organization's time zone)" }),
      dueDate: t.arg({ type: "Date", description: "default: date" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const invoice = await invoiceOrders(ctx, {
        orderIds: args.orderIds.map(String),
        document: args.document,
        date: args.date,
        dueDate: args.dueDate,
      });
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: invoice.id } });
    },
  }),
}));
