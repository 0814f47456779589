/** GraphQL types every document kind (invoice, order, credit note) shares. */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { enumFilter } from "../filters.js";
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

/** The description of the `numbering` field of invoices, orders and credit notes. */
export const NUMBERING_DESCRIPTION =
  "series of `number`: `sii_folio` (an SII folio, the document is a DTE) or `internal` (the organization's own " +
  "series: for a regulated type a non-tax document); null on drafts";

export type { DocumentNumberingValue };

/**
 * The description of `customer` of invoices, orders and credit notes (the customer now), `who`
 * naming it (`The customer the invoice is issued to`).
 */
export const liveCustomerDescription = (who: string) =>
  `${who}, as it is now: its \`Customer\` record, the same object (and id) as everywhere else, so a change to the ` +
  "customer shows here at once. What the document was issued with (the name, address, tax id... it prints) is " +
  "`issuedCustomer`.";

/** The description of `issuedCustomer` of invoices, orders and credit notes (the customer as issued). */
export const issuedCustomerDescription = (who: string) =>
  `${who}: once finalized, the customer's details stored at finalize, never changed afterwards (what the PDF and ` +
  "the DTE print); on a draft the customer's details now. The customer as it is now, with its id, is `customer` " +
  '(docs/decisions.md "Issued documents").';

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
