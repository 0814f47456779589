/** Which orders one invoice may bill (src/domain/order-invoicing.ts). */
import { describe, expect, it } from "vitest";
import {
  checkOrdersInvoiceable,
  invoiceLinesFromOrders,
  type InvoiceableOrder,
} from "../../src/domain/order-invoicing.js";
import { InvalidStateError, NotFoundError } from "../../src/domain/errors.js";
import { SHIPPING_TYPES, isSaleShippingType, isShippingType } from "../../src/domain/shipping-types.js";
import { validationErrorOf } from "../helpers/errors.js";

function order(id: string, overrides: Partial<InvoiceableOrder> = {}): InvoiceableOrder {
  return {
    id,
    customerId: "cus_a",
    currencyId: "CLP",
    status: "finalized",
    shippingType: "1",
    invoiceId: null,
    number: 1,
    lines: [{ name: `${id} item`, description: null, quantity: "1", amount: "1000", exempt: false }],
    ...overrides,
  };
}

describe("checkOrdersInvoiceable", () => {
  it("worked example: orders 4 and 5 of one customer become one invoice's lines, by number", () => {
    const four = order("ord_4", {
      number: 4,
      lines: [{ name: "Cajas", description: null, quantity: "2", amount: "1000", exempt: false }],
    });
    const five = order("ord_5", {
      number: 5,
      lines: [{ name: "Flete", description: "Santiago", quantity: "1", amount: "500", exempt: true }],
    });
    const sorted = checkOrdersInvoiceable(["ord_5", "ord_4", "ord_5"], [five, four]);
    expect(sorted.map((o) => o.id)).toEqual(["ord_4", "ord_5"]);
    expect(invoiceLinesFromOrders(sorted)).toEqual([
      { name: "Cajas", description: null, quantity: "2", amount: "1000", exempt: false },
      { name: "Flete", description: "Santiago", quantity: "1", amount: "500", exempt: true },
    ]);
  });

  it("no ids: 400 on order_ids", () => {
    expect(validationErrorOf(() => checkOrdersInvoiceable([], [])).fields).toEqual({
      order_ids: ["give at least one order"],
    });
  });

  it("an unknown id: 404 naming it", () => {
    expect(() => checkOrdersInvoiceable(["ord_1", "ord_x"], [order("ord_1")])).toThrow(NotFoundError);
    expect(() => checkOrdersInvoiceable(["ord_1", "ord_x"], [order("ord_1")])).toThrow(/ord_x/);
  });

  it("a draft, or an order already invoiced: 409 naming the invoice", () => {
    expect(() => checkOrdersInvoiceable(["ord_1"], [order("ord_1", { status: "draft" })])).toThrow(InvalidStateError);
    expect(() => checkOrdersInvoiceable(["ord_1"], [order("ord_1", { invoiceId: "inv_9" })])).toThrow(
      /already invoiced by inv_9/,
    );
  });

  it("not a sale, another customer, another currency: 400 on the order's index", () => {
    const error = validationErrorOf(() =>
      checkOrdersInvoiceable(
        ["ord_1", "ord_2", "ord_3"],
        [
          order("ord_1"),
          order("ord_2", { shippingType: "5" }),
          order("ord_3", { customerId: "cus_b", currencyId: "USD" }),
        ],
      ),
    );
    expect(error.fields).toEqual({
      "order_ids.1": ["order ord_2 has shipping type 5 (Internal transfer), which is not a sale"],
      "order_ids.2": ["order ord_3 belongs to another customer than ord_1", "order ord_3 is in USD, ord_1 in CLP"],
    });
  });
});

describe("shipping types (SII IndTraslado)", () => {
  it("are the codes 1 to 9; sales are 1, 2 and 9", () => {
    expect(Object.keys(SHIPPING_TYPES)).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    expect(["1", "2", "9"].every(isSaleShippingType)).toBe(true);
    expect(["3", "4", "5", "6", "7", "8"].some(isSaleShippingType)).toBe(false);
    expect(isShippingType("0")).toBe(false);
    expect(isShippingType("10")).toBe(false);
    expect(isShippingType("toString")).toBe(false);
  });
});
