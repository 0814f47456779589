/** GraphQL types every document kind (invoice, order, credit note) shares. */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { enumFilter } from "../filters.js";
import type { DocumentStatus as DocumentStatusValue } from "../../domain/document-status.js";
import type { IssuedIssuer } from "../../domain/issued-parties.js";

export type { DocumentStatusValue };

export const DocumentStatus = builder.enumType("DocumentStatus", {
  description:
    "Where a document (invoice, order, credit note) is in its life (spec \"States and transitions\"): a draft is editable and deletable; finalize numbers it and locks it for good.",
  values: {
    draft: { value: "draft", description: "editable and deletable; no number yet; the customer and issuer shown are the current ones" },
    finalized: {
      value: "finalized",
      description: "numbered (folio) and locked: updates and deletes answer invalid_state; customer and issuer are frozen as issued (docs/decisions.md \"Issued documents\")",
    },
  } as const satisfies DescribedValues<DocumentStatusValue>,
});

export const DocumentStatusFilter = enumFilter(DocumentStatus, "DocumentStatus");

export const DeletePayload = builder.objectRef<{ id: string; deleted: boolean }>("DeletePayload").implement({
  description: "Result of a delete.",
  fields: (t) => ({
    deletedId: t.exposeID("id", { description: "id of the deleted object (Relay's deletedId convention: use it to remove the record from a client store)" }),
    id: t.exposeString("id", { description: "id of the deleted object", deprecationReason: "Use deletedId: an id field holding another type's id breaks Relay's store. Removed in the next release." }),
    deleted: t.exposeBoolean("deleted", { description: "always true: the object is gone (a finalized document or a billed usage is never deleted: the mutation fails with invalid_state instead)" }),
  }),
});

export const DocumentIssuer = builder.objectRef<IssuedIssuer>("DocumentIssuer").implement({
  description:
    "The issuer of a document: on a finalized document as it was issued (stored at finalize, never changed afterwards), on a draft the organization's tax profile now (docs/decisions.md \"Issued documents\").",
  fields: (t) => ({
    name: t.exposeString("name", { description: "printed name: the tax profile's business name, else the branding business name, else the organization's name" }),
    taxId: t.exposeString("taxId", { nullable: true, description: "RUT (SII RUTEmisor)" }),
    businessName: t.exposeString("businessName", { nullable: true, description: "legal name (SII RznSoc)" }),
    activity: t.exposeString("activity", { nullable: true, description: "activity text (SII GiroEmis)" }),
    activityCodes: t.exposeStringList("activityCodes", { description: "SII activity codes (Acteco)" }),
    address: t.exposeString("address", { nullable: true, description: "SII DirOrigen" }),
    commune: t.exposeString("commune", { nullable: true, description: "SII CmnaOrigen" }),
    city: t.exposeString("city", { nullable: true, description: "SII CiudadOrigen" }),
    resolutionNumber: t.exposeInt("resolutionNumber", { nullable: true, description: "SII resolution number (NroResol)" }),
    resolutionDate: t.expose("resolutionDate", { type: "Date", nullable: true, description: "SII resolution date (FchResol)" }),
  }),
});
