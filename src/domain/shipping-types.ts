/**
 * Shipping types of orders (Chile's guía de despacho, DTE 52): SII's transfer codes `IndTraslado`
 * (docs/sii-dte.md "The document"; labels 1-7 from SII's DTE_v10.xsd, 8-9 from
 * LibreDTE). An order's `shipping_type` is one of these codes, as a string ("1".."9").
 *
 * Sales (1, 2, 9) are invoiced later; the other codes move goods without selling them, so
 * `invoiceOrders` refuses them.
 */
export const SHIPPING_TYPES = {
  "1": "Sale",
  "2": "Sale to be made (venta por efectuar)",
  "3": "Consignment",
  "4": "Free delivery (promotion or donation)",
  "5": "Internal transfer",
  "6": "Other non-sale transfer",
  "7": "Return guide",
  "8": "Transfer for export (not a sale)",
  "9": "Sale for export",
} as const;

export type ShippingType = keyof typeof SHIPPING_TYPES;

/** Default of a new order: the goods are sold (IndTraslado 1). */
export const DEFAULT_SHIPPING_TYPE: ShippingType = "1";

/** Codes whose orders are sales and so can be invoiced. */
export const SALE_SHIPPING_TYPES: readonly ShippingType[] = ["1", "2", "9"];

export function isShippingType(code: string): code is ShippingType {
  return Object.hasOwn(SHIPPING_TYPES, code);
}

export function isSaleShippingType(code: string): boolean {
  return (SALE_SHIPPING_TYPES as readonly string[]).includes(code);
}

/** `"5 (Internal transfer)"`: how a code prints on a PDF and in error messages. */
export function describeShippingType(code: string): string {
  return isShippingType(code) ? `${code} (${SHIPPING_TYPES[code]})` : code;
}

/** The field error of a shipping type that is not a code (REST bodies and the service say the same). */
export function shippingTypeRule(): string {
  return (
    `must be an SII transfer code ` +
    `(IndTraslado): ${Object.keys(SHIPPING_TYPES).map(describeShippingType).join(", ")}`
  );
}
