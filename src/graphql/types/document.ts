/** GraphQL types every document kind (invoice, order, credit note) shares. */
import { builder } from "../builder.js";
import type { DocumentStatus as DocumentStatusValue } from "../../domain/document-status.js";

export type { DocumentStatusValue };

export const DocumentStatus = builder.enumType("DocumentStatus", {
  description: "draft: editable; finalized: numbered and locked (spec \"States and transitions\").",
  values: { draft: { value: "draft" }, finalized: { value: "finalized" } } as const,
});

export const DeletePayload = builder.objectRef<{ id: string; deleted: boolean }>("DeletePayload").implement({
  description: "Result of a delete.",
  fields: (t) => ({ id: t.exposeID("id"), deleted: t.exposeBoolean("deleted") }),
});
