/**
 * Orders (spec "Order", "States and transitions"): sales or transfers of goods to be delivered
 * before they are invoiced; Chile's guía de despacho (DTE 52). Same draft lifecycle as invoices
 * (services/documents.ts): update/delete only while draft (409 otherwise), numbered at finalize.
 * `invoiceOrders` bills finalized sale orders of one customer with one draft invoice, once.
 *
 * Fields beyond the invoice's: `shipping_type` (SII IndTraslado, domain/shipping-types.ts,
 * default 1), and the transport of SII's Transporte: `address` (DirDest, at most 70 characters),
 * `state` (the destination's state, rules as a customer's), `carrier_id` (RUTTrans: a valid RUT on
 * Chilean document types, stored normalized), `carrier_name` (at most 100), `licence_plate`
 * (Patente, at most 8). Orders take no discounts (the spec's order has none).
 */
import type { Order } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { chosenDocumentType, documentTypeMismatch } from "../domain/document-types.js";
import { FieldErrorCollector, NotFoundError } from "../domain/errors.js";
import { isoDate, dateColumn } from "../domain/formats.js";
import { checkOrdersInvoiceable, invoiceLinesFromOrders } from "../domain/order-invoicing.js";
import { normalizeRut } from "../domain/rut.js";
import { DEFAULT_SHIPPING_TYPE, isShippingType, shippingTypeRule } from "../domain/shipping-types.js";
import { atomically, tenant, withinTransaction, type ServiceContext } from "./context.js";
import { recordEvents } from "./events.js";
import { findCurrency, findDocumentType, resolveState, findDocumentCustomer, organizationToday } from "./reference.js";
import {
  deleteDraftDocument,
  finalizeDraftDocument,
  lineRows,
  updateDraftDocument,
  type PreparedDocument,
} from "./document-lifecycle.js";
import {
  documentTotals,
  normalizeLines,
  storedLineInputs,
  taxRulesOf,
  totalColumns,
} from "../domain/document-lines.js";
import { PDF_INCLUDE, printDocument } from "./document-pdf.js";
import { createInvoice } from "./invoices.js";

export interface OrderLineInput {
  name?: string | null;
  description?: string | null;
  quantity?: string | number | null;
  amount?: string | number | null;
  exempt?: boolean | null;
}

export interface OrderInput {
  customer?: string | null;
  /** document type id, an order type (default CL52 for Chilean customers) */
  document?: string | null;
  date?: string | null;
  address?: string | null;
  carrierId?: string | null;
  carrierName?: string | null;
  state?: string | null;
  licencePlate?: string | null;
  /** SII IndTraslado code "1".."9" (default "1", a sale) */
  shippingType?: string | null;
  lines?: OrderLineInput[] | null;
}

/** SII's maximum lengths of the Transporte fields (DTE_v10.xsd), and ours where SII has none. */
const MAX_LENGTH = { address: 70, carrier_id: 20, carrier_name: 100, licence_plate: 8 } as const;

const NO_DISCOUNT = { discount: "0", discountScheme: "%" as const };

type Current = Order & { lines: Parameters<typeof storedLineInputs>[0] };

/** Validates `input` (merged over `current` on update) and computes every column. */
async function prepare(ctx: ServiceContext, input: OrderInput, current: Current | null): Promise<PreparedDocument> {
  const errors = new FieldErrorCollector();
  // one after the other: prepare also runs inside the update transaction
  const today = !input.date && !current ? await organizationToday(ctx) : null;
  const customer = await findDocumentCustomer(ctx, input.customer ?? current?.customerId, errors);

  const documentId = chosenDocumentType("order", input.document, current?.documentTypeId, customer?.countryId);
  let documentType = null;
  if (!documentId) {
    if (customer) errors.add("document", "is required (no default order type for the customer's country)");
  } else {
    documentType = await findDocumentType(ctx, documentId, errors);
    const mismatch = documentType && documentTypeMismatch("order", documentType);
    if (mismatch) errors.add("document", mismatch);
  }
  // an order is in its document type's currency (CLP for Chile's 52)
  const currency = documentType ? await findCurrency(ctx, documentType.currencyId, errors, "document") : null;

  const shippingType = input.shippingType ?? current?.shippingType ?? DEFAULT_SHIPPING_TYPE;
  if (!isShippingType(shippingType)) {
    errors.add("shipping_type", shippingTypeRule());
  }

  const text = (
    field: keyof typeof MAX_LENGTH,
    value: string | null | undefined,
    stored: string | null | undefined,
  ) => {
    const result = value !== undefined ? value || null : (stored ?? null);
    if (result && result.length > MAX_LENGTH[field])
      errors.add(field, `must have at most ${MAX_LENGTH[field]} characters`);
    return result;
  };
  const address = text("address", input.address, current?.address);
  const carrierName = text("carrier_name", input.carrierName, current?.carrierName);
  const licencePlate = text("licence_plate", input.licencePlate, current?.licencePlate);
  let carrierId = text("carrier_id", input.carrierId, current?.carrierId);
  if (carrierId && input.carrierId !== undefined && documentType?.countryId === "CL") {
    const rut = normalizeRut(carrierId);
    if (!rut) errors.add("carrier_id", "must be the carrier's valid Chilean RUT (for example 76042235-5)");
    carrierId = rut ?? carrierId;
  }
  const state =
    input.state !== undefined
      ? (await resolveState(ctx, documentType?.countryId ?? null, input.state, errors)).code
      : (current?.state ?? null);

  const date = input.date ?? (current ? isoDate(current.date) : today!);
  const lines = normalizeLines(input.lines ?? (current ? storedLineInputs(current.lines) : []), errors);
  let totals = null;
  if (documentType && currency && errors.empty) {
    errors.collect(() => {
      totals = documentTotals(taxRulesOf(documentType!), currency!, lines, NO_DISCOUNT);
    });
  }
  errors.throwIfAny("Invalid order");
  const t = totals!;
  const columns = {
    customerId: customer!.id,
    documentTypeId: documentType!.id,
    currencyId: currency!.id,
    date: dateColumn(date),
    address,
    carrierId,
    carrierName,
    state,
    licencePlate,
    shippingType,
    ...totalColumns(t, NO_DISCOUNT),
  };
  return {
    columns,
    lines: lineRows(lines, t, { withLineTax: true }),
    linesChanged: input.lines !== undefined && input.lines !== null,
  };
}

/** Creates a draft order. ValidationError (400) names every bad field; nothing is written then. */
export async function createOrder(ctx: ServiceContext, input: OrderInput): Promise<Order> {
  const { columns, lines } = await prepare(ctx, input, null);
  return atomically(ctx, async (tx) => {
    const order = await tx.prisma.order.create({
      data: {
        id: newId("ord"),
        ...tenant(ctx),
        userEmail: ctx.auth.userEmail,
        status: "draft",
        ...(columns as typeof columns & { customerId: string; documentTypeId: string; currencyId: string; date: Date }),
        lines: { create: lines },
      },
    });
    await recordEvents(tx, "order.created", "order", [order.id]);
    return order;
  });
}

/**
 * Updates a draft order (`lines` replace all lines). 404 unknown, 409 finalized, 400 bad input; failures change
 * nothing.
 */
export async function updateOrder(ctx: ServiceContext, id: string, input: OrderInput): Promise<Order> {
  return updateDraftDocument<Order, Current>(ctx, "order", id, (txCtx, current) => prepare(txCtx, input, current));
}

/** Deletes a draft order and its lines; 404 unknown, 409 finalized. */
export async function deleteOrder(ctx: ServiceContext, id: string): Promise<void> {
  await deleteDraftDocument(ctx, "order", id);
}

/** Numbers and locks a draft order (gapless per document type). 404 unknown, 409 not a draft, 400 no lines. */
export async function finalizeOrder(ctx: ServiceContext, id: string): Promise<Order> {
  return finalizeDraftDocument<Order>(ctx, "order", id);
}

export interface InvoiceOrdersInput {
  orderIds: readonly string[];
  /** invoice document type (default as for invoices: CL33 for Chilean customers) */
  document?: string | null;
  /** invoice date (default today in the organization's time zone) */
  date?: string | null;
  dueDate?: string | null;
}

/**
 * Creates one draft invoice billing `orderIds` (finalized sale orders of one customer and one
 * currency, none invoiced yet; rules and errors: domain/order-invoicing.ts) and links each order
 * to it, in one transaction. The orders are locked (`FOR UPDATE`) first, so two concurrent calls
 * for the same order invoice it once: the second sees it invoiced and gets a 409. Deleting the
 * draft invoice releases its orders.
 */
export async function invoiceOrders(ctx: ServiceContext, input: InvoiceOrdersInput) {
  const ids = [...new Set(input.orderIds)];
  return ctx.prisma.$transaction(async (tx) => {
    if (ids.length > 0) {
      await tx.$queryRaw`SELECT "id" FROM "Order" WHERE "id" = ANY(${ids}::text[])
        AND "organizationId" = ${ctx.auth.organizationId} AND "testMode" = ${ctx.auth.testMode}
        ORDER BY "id" FOR UPDATE`;
    }
    const rows = await tx.order.findMany({
      where: { id: { in: ids }, ...tenant(ctx) },
      include: { lines: { orderBy: { position: "asc" } } },
    });
    const orders = checkOrdersInvoiceable(
      ids,
      rows.map((o) => ({
        ...o,
        lines: o.lines.map((l) => ({
          name: l.name,
          description: l.description,
          quantity: l.quantity.toString(),
          amount: l.amount.toString(),
          exempt: l.exempt,
        })),
      })),
    );
    const invoice = await createInvoice(withinTransaction(ctx, tx), {
      customer: orders[0].customerId,
      document: input.document,
      currency: orders[0].currencyId,
      date: input.date,
      dueDate: input.dueDate,
      lines: invoiceLinesFromOrders(orders),
    });
    await tx.order.updateMany({
      where: { id: { in: orders.map((o) => o.id) }, invoiceId: null },
      data: { invoiceId: invoice.id },
    });
    return invoice;
  });
}

/**
 * The order's printed representation (guía de despacho): issuer, customer, number, date, shipping
 * type and transport, lines and totals. 404 for another tenant's order.
 */
export async function orderPdf(ctx: ServiceContext, id: string): Promise<Buffer> {
  const order = await ctx.prisma.order.findFirst({ where: { id, ...tenant(ctx) }, include: PDF_INCLUDE });
  if (!order) throw new NotFoundError("order", id);
  return printDocument(ctx, order, {
    transport: {
      shippingType: order.shippingType,
      destination: [order.address, order.state].filter(Boolean).join(", ") || null,
      carrierName: order.carrierName,
      carrierId: order.carrierId,
      licencePlate: order.licencePlate,
    },
  });
}
