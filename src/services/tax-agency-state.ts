/**
 * A tax document's `taxAgency` JSON (SII's sending state, docs/sii-sending.md; the exchange with
 * the receiver, docs/sii-exchange.md), written by the SII worker, the mail outbox and the
 * receiver's answers.
 */
import type { Tx } from "./context.js";

/** The kinds of documents that carry a DTE (SiiSubmission.documentKind, OutboxMessage.attachmentKind). */
export type SubmissionKind = "invoice" | "order" | "credit_note";

/** A document's `taxAgency` as stored; null when the document does not exist. */
export async function readTaxAgency(
  tx: Pick<Tx, "invoice" | "order" | "creditNote">,
  kind: SubmissionKind,
  id: string,
): Promise<Record<string, unknown> | null> {
  const where = { id };
  const row =
    kind === "invoice"
      ? await tx.invoice.findUnique({ where, select: { taxAgency: true } })
      : kind === "order"
        ? await tx.order.findUnique({ where, select: { taxAgency: true } })
        : await tx.creditNote.findUnique({ where, select: { taxAgency: true } });
  return row ? ((row.taxAgency as Record<string, unknown> | null) ?? {}) : null;
}

/** Merges `values` into a document's `taxAgency` (null values remove the key). */
export async function mergeTaxAgency(
  tx: Tx,
  kind: SubmissionKind,
  id: string,
  values: Record<string, unknown>,
): Promise<void> {
  const where = { id };
  const current = await readTaxAgency(tx, kind, id);
  if (!current) return;
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined) delete next[k];
    else next[k] = v;
  }
  const data = { taxAgency: next as object };
  if (kind === "invoice") await tx.invoice.update({ where, data });
  else if (kind === "order") await tx.order.update({ where, data });
  else await tx.creditNote.update({ where, data });
}
