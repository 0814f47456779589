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

/** What decides which documents may use a document type (the document_types table's flags). */
export interface DocumentTypeFlags {
  id: string;
  name: string;
  /** an order type (dispatch guide, CL52) */
  isOrder: boolean;
  /** a credit or debit note type (CL56, CL61, CL111, CL112) */
  isNote: boolean;
}

/**
 * Which document types a document of `kind` may use: an invoice (and a subscription, whose cycles
 * bill invoices) a sales or purchase invoice type, not an order or a note; an order an order type.
 * Returns the field error for `document` when `type` does not fit, e.g. "CL52 (Guía de despacho
 * electrónica) is not an invoice type", else null.
 */
export function documentTypeMismatch(kind: DefaultedKind, type: DocumentTypeFlags): string | null {
  const fits = kind === "order" ? type.isOrder : !type.isOrder && !type.isNote;
  return fits ? null : `${type.id} (${type.name}) is not an ${kind} type`;
}
