/**
 * Status of invoices, orders and credit notes (spec "States and transitions"):
 *   (none) --create--> draft --update--> draft
 *   draft --delete--> removed;  draft --finalize--> finalized (numbered, locked)
 * Only drafts change; any other move is a 409 `invalid_state`.
 */
import { InvalidStateError } from "./errors.js";

/** The three kinds of document with this lifecycle (and a number at finalize: domain/document-numbering.ts). */
export type DocumentKind = "invoice" | "order" | "credit_note";

export type DocumentStatus = "draft" | "finalized";
export type DocumentAction = "update" | "delete" | "finalize";

const ALLOWED: Record<DocumentStatus, readonly DocumentAction[]> = {
  draft: ["update", "delete", "finalize"],
  finalized: [],
};

/** The status after `action`, or InvalidStateError (409) when `status` does not allow it. */
export function transition(kind: string, status: string, action: DocumentAction): DocumentStatus | "removed" {
  const allowed = ALLOWED[status as DocumentStatus];
  if (!allowed || !allowed.includes(action)) {
    throw new InvalidStateError(
      `Cannot ${action} a ${status} ${kind}; only drafts can ` +
        `be ${action === "finalize" ? "finalized" : action === "update" ? "updated" : "deleted"}`,
    );
  }
  if (action === "delete") return "removed";
  return action === "finalize" ? "finalized" : "draft";
}
