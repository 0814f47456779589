/**
 * Invoicing orders (docs/orders-and-credit-notes.md "Invoicing orders"; Chile: a factura that bills one or more guías
 * de despacho). One draft invoice bills finalized sale orders of one customer in one currency; each order is
 * invoiced at most once. This module decides whether a set of orders can be invoiced together
 * and which invoice lines they become; services/orders.ts applies it under row locks.
 *
 * Worked example: orders N° 4 (2 x 1000) and N° 5 (1 x 500, exempt) of one customer, both
 * finalized with shipping type 1 -> one invoice with lines 2 x 1000 and 1 x 500 (exempt), in
 * the orders' order of number. Order N° 4 again -> 409, it is already billed by that invoice.
 */
import { FieldErrorCollector, InvalidStateError, NotFoundError } from "./errors.js";
import { describeShippingType, isSaleShippingType } from "./shipping-types.js";

export interface InvoiceableOrder {
  id: string;
  customerId: string;
  currencyId: string;
  status: string;
  shippingType: string;
  /** invoice that already bills the order */
  invoiceId: string | null;
  number: number | null;
  lines: { name: string; description: string | null; quantity: string; amount: string; exempt: boolean }[];
}

/** At most this many orders in one invoice. */
export const MAX_ORDERS_PER_INVOICE = 100;

/**
 * Checks that `orders` (the rows found for `requestedIds`, in any order) can be billed by one new
 * invoice and returns them sorted by number. Errors, in this precedence:
 * - 400 `order_ids`: empty or more than MAX_ORDERS_PER_INVOICE ids;
 * - 404: an id that names no order of the caller;
 * - 409 `invalid_state`: a draft order, or one already invoiced (naming its invoice);
 * - 400 `order_ids.N`: an order that is not a sale (shipping type 3-8), orders of several
 *   customers or currencies.
 * Repeated ids count once.
 */
export function checkOrdersInvoiceable(
  requestedIds: readonly string[],
  orders: readonly InvoiceableOrder[],
): InvoiceableOrder[] {
  const ids = [...new Set(requestedIds)];
  const errors = new FieldErrorCollector();
  if (ids.length === 0) errors.add("order_ids", "give at least one order");
  if (ids.length > MAX_ORDERS_PER_INVOICE)
    errors.add("order_ids", `at most ${MAX_ORDERS_PER_INVOICE} orders per invoice`);
  errors.throwIfAny("Cannot invoice these orders");

  const byId = new Map(orders.map((o) => [o.id, o]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing) throw new NotFoundError("order", missing);
  const selected = ids.map((id) => byId.get(id)!);

  for (const order of selected) {
    if (order.status !== "finalized")
      throw new InvalidStateError(`Order ${order.id} is a ${order.status}; finalize it before invoicing it`);
    if (order.invoiceId)
      throw new InvalidStateError(
        `Order ${order.id} is already invoiced by ${order.invoiceId}; an order is invoiced once`,
      );
  }
  const [first] = selected;
  selected.forEach((order, i) => {
    if (!isSaleShippingType(order.shippingType)) {
      errors.add(
        `order_ids.${i}`,
        `order ${order.id} has shipping type ${describeShippingType(order.shippingType)}, which is not a sale`,
      );
    }
    if (order.customerId !== first.customerId)
      errors.add(`order_ids.${i}`, `order ${order.id} belongs to another customer than ${first.id}`);
    if (order.currencyId !== first.currencyId)
      errors.add(`order_ids.${i}`, `order ${order.id} is in ${order.currencyId}, ${first.id} in ${first.currencyId}`);
  });
  errors.throwIfAny("Cannot invoice these orders together");
  return [...selected].sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
}

/** The invoice lines billing `orders`: every order line as it is, orders by number. */
export function invoiceLinesFromOrders(orders: readonly InvoiceableOrder[]) {
  return orders.flatMap((order) =>
    order.lines.map((line) => ({
      name: line.name,
      description: line.description,
      quantity: line.quantity,
      amount: line.amount,
      exempt: line.exempt,
    })),
  );
}
