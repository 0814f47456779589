/**
 * Which document type a new document uses when the request names none (docs/reference-data.md
 * "Document types"). Pure; invoices, orders, subscriptions and invoiceOrders all choose through
 * `chosenDocumentType`, so the rule exists once.
 *
 * Rule: the type given (blank text counts as not given), else the document's current type (on an
 * update), else the default of the customer's country for the kind: an invoice of a Chilean
 * customer is a CL33 (Factura electrónica), an order a CL52 (Guía de despacho electrónica). Other
 * countries have no default: the caller reports `document` as required.
 */

/** Kinds of document whose type has a per-country default. */
export type DefaultedKind = "invoice" | "order";

const DEFAULT_TYPE_BY_COUNTRY: Record<DefaultedKind, Readonly<Record<string, string>>> = {
  invoice: { CL: "CL33" },
  order: { CL: "CL52" },
};

/** The default document type of a `kind` for a customer of country `countryId` (ISO code), or null. */
export function defaultDocumentType(kind: DefaultedKind, countryId: string | null | undefined): string | null {
  if (!countryId) return null;
  return DEFAULT_TYPE_BY_COUNTRY[kind][countryId.toUpperCase()] ?? null;
}

/**
 * The document type id a document of `kind` uses: `given` unless blank, else `current` (the stored
 * type on an update), else defaultDocumentType of the customer's country; null when none applies.
 * Examples: ("invoice", "CL34", null, "CL") → "CL34"; ("invoice", "", null, "CL") → "CL33";
 * ("invoice", undefined, "CL34", "CL") → "CL34"; ("order", null, null, "AR") → null.
 */
export function chosenDocumentType(
  kind: DefaultedKind,
  given: string | null | undefined,
  current: string | null | undefined,
  countryId: string | null | undefined,
): string | null {
  if (given && given.trim()) return given;
  if (current) return current;
  return defaultDocumentType(kind, countryId);
}
