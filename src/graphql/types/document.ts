/**
 * What every document kind (invoice, order, credit note) shares in GraphQL: the shared enums and
 * objects, and the fields of Invoice, Order and CreditNote (and of their lines) that mean the same
 * on the three, each declared once here with one description; each type's own file adds only its
 * own fields (invoice.ts, order.ts, credit-note.ts).
 */
import type { PrismaModelTypes } from "@pothos/plugin-prisma";
import { builder } from "../builder.js";
import type { GraphQLContext } from "../context.js";
import { DiscountScheme, type DescribedValues, type DiscountSchemeValue } from "../enums.js";
import {
  DateFilter,
  DateTimeFilter,
  IntFilter,
  dateConditions,
  dateTimeConditions,
  enumFilter,
  intConditions,
  type DateFilterValue,
  type DateTimeFilterValue,
  type IntFilterValue,
} from "../filters.js";
import { IssuedCustomer } from "./customer.js";
import type PrismaTypes from "../../infra/prisma/generated/pothos-types.js";
import { fileUrl } from "../../services/files.js";
import { documentCustomer, documentIssuer } from "../../services/issued-parties.js";
import type { DocumentStatus as DocumentStatusValue } from "../../domain/document-status.js";
import type { DocumentNumbering as DocumentNumberingValue } from "../../domain/document-numbering.js";
import type { IssuedIssuer } from "../../domain/issued-parties.js";

export type { DocumentStatusValue };

export const DocumentStatus = builder.enumType("DocumentStatus", {
  description:
    'Where a document (invoice, order, credit note) is in its life (spec "States and transitions"): a draft is ' +
    "editable and deletable; finalize numbers it and locks it for good.",
  values: {
    draft: {
      value: "draft",
      description: "editable and deletable; no number yet; `issuedCustomer` and `issuer` show the current ones",
    },
    finalized: {
      value: "finalized",
      description:
        "numbered (folio) and locked: updates and deletes answer invalid_state; `issuedCustomer` and `issuer` are " +
        'frozen as issued (docs/decisions.md "Issued documents")',
    },
  } as const satisfies DescribedValues<DocumentStatusValue>,
});

export const DocumentStatusFilter = enumFilter(DocumentStatus, "DocumentStatus");

export const DocumentNumbering = builder.enumType("DocumentNumbering", {
  description:
    'Which series a finalized document\'s `number` belongs to (docs/sii-setup.md "Numbering before enrollment"). The ' +
    "two series never collide: a number is unique per organization, mode, document type and series.",
  values: {
    sii_folio: {
      value: "sii_folio",
      description:
        "a folio SII authorized in a CAF: the document is an electronic tax document (DTE, `localFile`, `taxAgency`)",
    },
    internal: {
      value: "internal",
      description:
        "the organization's own gapless series of the document type: a type no tax agency issues; a regulated type " +
        "finalized in test mode before the mode was set up with SII (live mode refuses it); a note on an internal " +
        'document. A regulated type\'s internal document is no tax document and prints as "Documento no tributario"',
    },
  } as const satisfies DescribedValues<DocumentNumberingValue>,
});

export type { DocumentNumberingValue };

export const DeletePayload = builder.objectRef<{ id: string; deleted: boolean }>("DeletePayload").implement({
  description: "Result of a delete.",
  fields: (t) => ({
    deletedId: t.exposeID("id", {
      description:
        "id of the deleted object (Relay's deletedId convention: use it to remove the record from a client store)",
    }),
    id: t.exposeString("id", {
      description: "id of the deleted object",
      deprecationReason:
        "Use deletedId: an id field holding another type's id breaks Relay's store. Removed in the next release.",
    }),
    deleted: t.exposeBoolean("deleted", {
      description:
        "always true: the object is gone (a finalized document or a billed usage is never deleted: the mutation " +
        "fails with invalid_state instead)",
    }),
  }),
});

export const DocumentIssuer = builder.objectRef<IssuedIssuer>("DocumentIssuer").implement({
  description:
    "The issuer of a document: on a finalized document as it was issued (stored at finalize, never changed " +
    'afterwards), on a draft the organization\'s tax profile now (docs/decisions.md "Issued documents").',
  fields: (t) => ({
    name: t.exposeString("name", {
      description:
        "printed name: the tax profile's business name, else the branding business name, else the organization's name",
    }),
    taxId: t.exposeString("taxId", {
      nullable: true,
      description: "RUT (SII RUTEmisor); null when the tax profile had none",
    }),
    businessName: t.exposeString("businessName", {
      nullable: true,
      description: "legal name (SII RznSoc); null when the tax profile had none",
    }),
    activity: t.exposeString("activity", {
      nullable: true,
      description: "activity text (SII GiroEmis); null when the tax profile had none",
    }),
    activityCodes: t.exposeStringList("activityCodes", { description: "SII activity codes (Acteco)" }),
    address: t.exposeString("address", {
      nullable: true,
      description: "SII DirOrigen; null when the tax profile had none",
    }),
    commune: t.exposeString("commune", {
      nullable: true,
      description: "SII CmnaOrigen; null when the tax profile had none",
    }),
    city: t.exposeString("city", {
      nullable: true,
      description: "SII CiudadOrigen; null when the tax profile had none",
    }),
    resolutionNumber: t.exposeInt("resolutionNumber", {
      nullable: true,
      description: "SII resolution number (NroResol); null when the tax profile had none",
    }),
    resolutionDate: t.expose("resolutionDate", {
      type: "Date",
      nullable: true,
      description: "SII resolution date (FchResol); null when the tax profile had none",
    }),
  }),
});

// ---------------------------------------------------------------------------------------------
// The fields Invoice, Order and CreditNote share, and those their lines share. Each helper takes
// the `t` of a type's `fields: (t) => ({...})` and returns fields to spread into it; a helper
// that only some kinds have says which in its type (`DocumentFields<"Invoice" | "CreditNote">`).

/** The document models, each the GraphQL type of the same name. */
type DocumentModel = "Invoice" | "Order" | "CreditNote";
/** Their line models. */
type LineModel = "InvoiceLine" | "OrderLine" | "CreditNoteLine";

type NodeFieldBuilder<M extends DocumentModel> = Parameters<
  NonNullable<Parameters<typeof builder.prismaNode<M>>[1]["fields"]>
>[0];
type ObjectFieldBuilder<M extends LineModel> = Parameters<
  NonNullable<Parameters<typeof builder.prismaObject<M, [], PrismaModelTypes & PrismaTypes[M]>>[1]["fields"]>
>[0];

/** The `t` of the fields of one of the document types `M`. */
export type DocumentFields<M extends DocumentModel = DocumentModel> = M extends DocumentModel
  ? NodeFieldBuilder<M>
  : never;
/** The `t` of the fields of one of the line types `M`. */
export type LineFields<M extends LineModel = LineModel> = M extends LineModel ? ObjectFieldBuilder<M> : never;

/** A field builder of the models `M` together (what `builder.prismaObjectFields` gives a loop over them). */
type SharedFields<M extends DocumentModel | LineModel> = Parameters<
  Parameters<typeof builder.prismaObjectFields<M>>[1]
>[0];

/**
 * `t` (the builder of one of the models `M`) typed as the builder of all of `M` at once: its
 * `expose*` take only the columns every one of them has, and a resolver's row only those. A
 * `select` or a relation's name is checked less (TypeScript takes what any of them has); a
 * relation a model lacks fails when the schema is built. At run time each field reads its own
 * type's column or relation (`relation("lines")` is InvoiceLine on an invoice). TypeScript does
 * not take one model's builder for the union's, hence the cast; the helpers' parameter types keep
 * it to the models `M`.
 */
function together<M extends DocumentModel | LineModel>(t: unknown): SharedFields<M> {
  return t as SharedFields<M>;
}

/** `customer` and `issuedCustomer`: a credit note's are its invoice's customer (credit-note.ts). */
export const CUSTOMER_DESCRIPTION =
  "The customer the document is issued to (a credit or debit note's: the customer of the invoice it corrects), as " +
  "it is now: its `Customer` record, the same object (and id) as everywhere else, so a change to the customer " +
  "shows here at once. What the document was issued with (the name, address, tax id... it prints) is " +
  "`issuedCustomer`.";

export const ISSUED_CUSTOMER_DESCRIPTION =
  "The customer as the document was issued to it (a credit or debit note's: the customer of the invoice it " +
  "corrects): once finalized, the customer's details stored at finalize, never changed afterwards (what the PDF " +
  "and the DTE print); on a draft the customer's details now. The customer as it is now, with its id, is " +
  '`customer` (docs/decisions.md "Issued documents").';

/** `customer` and `issuedCustomer` of the documents with a customer of their own (not a credit note's). */
export function documentCustomerFields(t: DocumentFields<"Invoice" | "Order">) {
  const f = together<"Invoice" | "Order">(t);
  return {
    customer: f.relation("customer", { description: CUSTOMER_DESCRIPTION }),
    issuedCustomer: f.field({
      type: IssuedCustomer,
      description: ISSUED_CUSTOMER_DESCRIPTION,
      select: (_args, _ctx, nestedSelection) => ({ customer: nestedSelection(true) }),
      resolve: (doc, _args, ctx) => documentCustomer(ctx, doc, doc.customer),
    }),
  };
}

/** Who issued the document, its type, currency, number and date. */
export function documentHeaderFields(t: DocumentFields) {
  const f = together<DocumentModel>(t);
  return {
    issuer: f.field({
      type: DocumentIssuer,
      description: "The issuer: as issued once finalized, the organization's tax profile now on a draft.",
      resolve: (doc, _args, ctx) => documentIssuer(ctx, doc),
    }),
    document: f.relation("documentType", {
      description:
        "document type (SII TipoDTE): an invoice's e.g. CL33 (factura electrónica) or CL34 (exenta), an order's " +
        "CL52 (guía de despacho), a note's CL61 or CL112 (exports) credit, CL56 or CL111 debit",
    }),
    currency: f.relation("currency", {
      description:
        "currency of every amount of the document: an invoice's as created (default its document type's), an " +
        "order's its document type's, a note's its invoice's",
    }),
    number: f.exposeInt("number", {
      nullable: true,
      description:
        "assigned at finalize: the next SII folio or the next number of the internal series (`numbering` says " +
        "which); null on drafts",
    }),
    numbering: f.field({
      type: DocumentNumbering,
      nullable: true,
      description:
        "series of `number`: `sii_folio` (an SII folio, the document is a DTE) or `internal` (the organization's " +
        "own series: for a regulated type a non-tax document); null on drafts",
      select: { numbering: true },
      resolve: (doc) => doc.numbering as DocumentNumberingValue | null,
    }),
    testMode: f.exposeBoolean("testMode", {
      description:
        "true when created with a test key (a test document's DTE goes to SII's certification environment, never " +
        "to production)",
    }),
    date: f.expose("date", {
      type: "Date",
      description: "issue date, yyyy-mm-dd (SII FchEmis); a note's (its closing date) is not before its invoice's",
    }),
  };
}

/** The lines and the totals computed from them (docs/invoice-totals.md). */
export function documentLineAndTotalFields(t: DocumentFields) {
  const f = together<DocumentModel>(t);
  return {
    lines: f.relation("lines", {
      description: "the document's lines, in the order they were given",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    amount: f.expose("amount", {
      type: "Decimal",
      description:
        "taxable net after the document discount, in the document's currency (SII MntNeto); orders take no discount",
    }),
    exempt: f.expose("exempt", { type: "Decimal", description: "exempt net, in the document's currency (SII MntExe)" }),
    tax: f.expose("tax", { type: "Decimal", description: "tax amount, in the document's currency (SII IVA)" }),
    taxPercent: f.expose("taxPercent", {
      type: "Decimal",
      description: "tax rate, percent 0-100 (19 for Chile's IVA; SII TasaIVA); a note's is its invoice's",
    }),
    subtotal: f.expose("subtotal", { type: "Decimal", description: "amount + exempt, in the document's currency" }),
    total: f.expose("total", {
      type: "Decimal",
      description:
        "subtotal + tax, in the document's currency (SII MntTotal); a note's is what it credits (or debits) on its " +
        "invoice",
    }),
  };
}

/** The document discount of invoices and credit notes (orders take none). */
export function documentDiscountFields(t: DocumentFields<"Invoice" | "CreditNote">) {
  const f = together<"Invoice" | "CreditNote">(t);
  return {
    discount: f.expose("discount", {
      type: "Decimal",
      description:
        "document discount on the taxable lines: percent 0-100 when discountScheme is percent, else currency units; " +
        "0 when none (SII DscRcgGlobal)",
    }),
    discountScheme: f.field({
      type: DiscountScheme,
      description: "how `discount` reads: percent or amount (REST `%` or `$`)",
      select: { discountScheme: true },
      resolve: (doc) => doc.discountScheme as DiscountSchemeValue,
    }),
    discountAmount: f.expose("discountAmount", {
      type: "Decimal",
      description: "document discount in currency units of the invoice",
    }),
  };
}

/** The printed note of invoices and credit notes. */
export function documentNoteField(t: DocumentFields<"Invoice" | "CreditNote">) {
  return together<"Invoice" | "CreditNote">(t).exposeString("note", {
    nullable: true,
    description: "printed note for the customer (a note's: its reason), at most 5000 characters; null when none",
  });
}

/** What finalizing and the tax agency write, the status, who created it and when, and the PDF (`renderPdf`). */
export function documentLifecycleFields(
  t: DocumentFields,
  renderPdf: (ctx: GraphQLContext, id: string) => Promise<Buffer>,
) {
  const f = together<DocumentModel>(t);
  return {
    localFile: f.string({
      nullable: true,
      select: { localFile: true },
      description:
        "URL of the tax-agency file (`<base>/v1/files/<name>`, authenticated), after finalize; " +
        "null while none is stored",
      resolve: (doc, _args, ctx) => fileUrl(ctx.baseUrl, doc.localFile),
    }),
    taxAgency: f.expose("taxAgency", {
      type: "JSONObject",
      description:
        "tax agency properties ({} when none): for a document issued as a DTE, `agency` sii, `status` (pending " +
        "once finalized, queued for SII, or not_sent when the mode's SII sending is off; then sent, accepted, " +
        "rejected...), `document_id`, `folio`, `caf`, `track_id` (SII's upload number), and the receiver's answers " +
        "(`receiver_status`)",
    }),
    status: f.field({
      type: DocumentStatus,
      description: "draft or finalized",
      select: { status: true },
      resolve: (doc) => doc.status as DocumentStatusValue,
    }),
    user: f.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    finalized: f.expose("finalizedAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was finalized (ISO 8601); null on drafts",
    }),
    created: f.expose("createdAt", { type: "DateTime", description: "when it was created (ISO 8601)" }),
    updated: f.expose("updatedAt", { type: "DateTime", description: "when it last changed (ISO 8601)" }),
    pdf: f.string({
      description:
        "Base64 of the document's PDF (rendered on request); a credit or debit note's names the invoice it corrects.",
      select: { id: true },
      resolve: async (doc, _args, ctx) => (await renderPdf(ctx, doc.id)).toString("base64"),
    }),
  };
}

/** The fields of every line: what it is, how many, at what price, taxed or not, its net. */
export function lineFields(t: LineFields) {
  const f = together<LineModel>(t);
  return {
    id: f.exposeID("id", { description: "`lin_` id" }),
    name: f.exposeString("name", {
      description: "what the line sells, moves, credits or debits, as printed (SII NmbItem), at most 200 characters",
    }),
    description: f.exposeString("description", {
      nullable: true,
      description: "longer text printed under the name (SII DscItem); null when none",
    }),
    quantity: f.expose("quantity", {
      type: "Decimal",
      description: "units sold, moved, credited or debited, a decimal string (SII QtyItem)",
    }),
    amount: f.expose("amount", {
      type: "Decimal",
      description:
        "unit price, net of tax, in the document's currency (SII PrcItem); on an order it may be 0 for a transfer " +
        "that is not a sale",
    }),
    exempt: f.exposeBoolean("exempt", {
      description: "true: not taxed, adds to the document's exempt (SII IndExe); false: taxable",
    }),
    total: f.expose("total", {
      type: "Decimal",
      description:
        "line net after its discount, in the document's currency: round(quantity x amount) less the line's " +
        "discount (order lines take none)",
    }),
  };
}

/** The line discount of invoice and credit note lines (order lines take none). */
export function lineDiscountFields(t: LineFields<"InvoiceLine" | "CreditNoteLine">) {
  const f = together<"InvoiceLine" | "CreditNoteLine">(t);
  return {
    discount: f.expose("discount", {
      type: "Decimal",
      description:
        "the line's discount: percent 0-100 of quantity x amount when discountScheme is percent, else currency units " +
        "of the invoice; 0 when none",
    }),
    discountScheme: f.field({
      type: DiscountScheme,
      description: "how `discount` reads: percent or amount (REST `%` or `$`)",
      select: { discountScheme: true },
      resolve: (line) => line.discountScheme as DiscountSchemeValue,
    }),
  };
}

/** The line's own tax and its times, on order and credit note lines (invoice lines show neither). */
export function lineTaxAndTimeFields(t: LineFields<"OrderLine" | "CreditNoteLine">) {
  const f = together<"OrderLine" | "CreditNoteLine">(t);
  return {
    tax: f.expose("tax", {
      type: "Decimal",
      nullable: true,
      description: "this line's tax in currency units, null when exempt (the document's tax is computed on the sum)",
    }),
    taxPercent: f.expose("taxPercent", { type: "Decimal", description: "tax rate, percent 0-100; 0 when exempt" }),
    created: f.expose("createdAt", { type: "DateTime", description: "when the line was created (ISO 8601)" }),
    updated: f.expose("updatedAt", { type: "DateTime", description: "when the line last changed (ISO 8601)" }),
  };
}

// ---------------------------------------------------------------------------------------------
// The filters every document list has (InvoiceWhere, OrderWhere, CreditNoteWhere end with them),
// and the input fields the kinds share.

type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

/** `status`, the filter of a document list's `where` on draft or finalized (each kind places it among its own). */
export function documentStatusWhereField(t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, "InputObject">) {
  return t.field({ type: DocumentStatusFilter, description: "draft or finalized" });
}

/** `discountScheme` of the inputs of invoices, credit notes and their lines: how their `discount` reads. */
export function discountSchemeInputField(t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, "InputObject">) {
  return t.field({ type: DiscountScheme, description: "how `discount` reads; default percent" });
}

/** `date` of the inputs of invoices and orders: the issue date (a credit note's is its closing date). */
export function issueDateInputField(t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, "InputObject">) {
  return t.field({ type: "Date", description: "issue date yyyy-mm-dd; default today in the organization's time zone" });
}

/** `number`, `date` and `created`, the last filters of a document list's `where`. */
export function documentWhereFields(t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, "InputObject">) {
  return {
    number: t.field({
      type: IntFilter,
      description: "number (folio); a draft has none and matches no number filter",
    }),
    date: t.field({ type: DateFilter, description: "the document's date (`date`), yyyy-mm-dd" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  };
}

/** The conditions of documentWhereFields' filters, for documentConnection (pagination.ts). */
export function documentWhereConditions(where: {
  number?: IntFilterValue | null;
  date?: DateFilterValue | null;
  created?: DateTimeFilterValue | null;
}) {
  return [
    ...intConditions("number", where.number),
    ...dateConditions("date", where.date),
    ...dateTimeConditions("createdAt", where.created),
  ];
}
