/**
 * Numbers a document at finalize (docs/sii-setup.md "Numbering before enrollment"): decides its
 * series with domain/document-numbering.ts and takes the next number of that series, inside the
 * finalize transaction.
 * - `internal`: the organization's own series of (organization, mode, document type, kind), a
 *   DocumentCounter row incremented under its row lock (gapless, unique under concurrency, a
 *   rolled-back finalize gives its number back).
 * - `sii_folio`: the next folio of the type's CAF, and the signed DTE (services/tax-documents.ts,
 *   services/cafs.ts).
 * A number is unique per (organization, mode, document type, series), so the series never collide:
 * an organization that issued internal numbers 1..35 of a CL33 in test mode numbers its first DTE
 * with its first CAF's folio (1 when SII's CAF starts at 1).
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { sqlRows } from "../infra/sql/index.js";
import { numberingFor, type DocumentNumbering } from "../domain/document-numbering.js";
import type { DocumentKind } from "../domain/document-status.js";
import type { IssuedParties } from "./issued-parties.js";
import {
  issueTaxDocument,
  issueTaxInvoices,
  taxAgencySetup,
  type DraftRef,
  type InvoiceBatch,
  type IssuedTaxDocument,
  type TaxAgencyIssuing,
} from "./tax-documents.js";
import type { Issuing } from "./issuing.js";
import type { TenantKey, Tx } from "./context.js";

/** The series a document is numbered in, with the agency and certificates that issue it for `sii_folio`. */
export type NumberingPlan = { numbering: "internal" } | { numbering: "sii_folio"; enrolled: TaxAgencyIssuing };

/**
 * The series of a document of type `documentTypeId` finalized now with `issuing` (a note: with
 * `referencedNumbering`, the series of the document it references): reads the document type and,
 * for a type an agency issues, the mode's certificates (once; they sign the DTE later). 409
 * InvalidStateError in live mode for a type SII issues when the mode is not set up with SII (the
 * message names what to set up: domain/document-numbering.ts numberingFor).
 */
export async function numberingPlan(
  issuing: Issuing,
  documentTypeId: string,
  referencedNumbering: string | null = null,
): Promise<NumberingPlan> {
  const setup = await taxAgencySetup(issuing, documentTypeId);
  const numbering = numberingFor({
    documentTypeId,
    testMode: issuing.owner.testMode,
    regulated: setup !== null,
    setup: setup?.setup ?? { taxId: false, certificate: false },
    referencedNumbering,
  });
  return numbering === "sii_folio"
    ? { numbering, enrolled: { agency: setup!.agency, certificates: setup!.certificates } }
    : { numbering };
}

/** A finalized document's number, its series, and for a folio the DTE issued with it. */
export interface Numbered {
  number: number;
  numbering: DocumentNumbering;
  issued: IssuedTaxDocument | null;
}

/**
 * Numbers `draft` of type `documentTypeId` (locked by the finalize transaction `issuing.tx`): decides
 * the series (numberingPlan; a credit or debit note follows the series of its invoice) and takes its
 * next number, for a folio with the signed DTE built from `parties` (the snapshot the document
 * stores). Throws what numberingPlan and issueTaxDocument throw (409 live mode not set up, no folio
 * left, no valid certificate; 400 a customer without RUT); the caller's transaction then rolls back
 * and nothing is used up.
 */
export async function numberDocument(
  issuing: Issuing,
  draft: DraftRef & { documentTypeId: string },
  parties: IssuedParties,
): Promise<Numbered> {
  const { tx, owner } = issuing;
  const referenced =
    draft.kind === "credit_note"
      ? (
          await tx.creditNote.findUniqueOrThrow({
            where: { id: draft.id },
            select: { invoice: { select: { numbering: true } } },
          })
        ).invoice.numbering
      : null;
  const plan = await numberingPlan(issuing, draft.documentTypeId, referenced);
  if (plan.numbering === "internal") {
    const [number] = await nextDocumentNumbers(
      tx,
      owner,
      { documentTypeId: draft.documentTypeId, kind: draft.kind },
      1,
    );
    return { number, numbering: "internal", issued: null };
  }
  const issued = await issueTaxDocument(issuing, plan.enrolled, draft, parties);
  return { number: issued.folio, numbering: "sii_folio", issued };
}

/**
 * The bulk form of numberDocument for the invoice drafts of `batch`, created in `issuing`'s
 * transaction, in the order given, in the series `plan` (numberingPlan of the batch's type): one
 * counter update for the internal series, or one CAF folio range and the DTEs signed off the main
 * thread (tax-documents.ts issueTaxInvoices) for folios. `parties`: the snapshot each invoice stores,
 * by id. Same errors as numberDocument, for the whole batch.
 */
export async function numberNewInvoices(
  issuing: Issuing,
  plan: NumberingPlan,
  batch: InvoiceBatch,
  parties: ReadonlyMap<string, IssuedParties>,
): Promise<{ numbering: DocumentNumbering; numbers: number[]; issued: IssuedTaxDocument[] | null }> {
  if (plan.numbering === "internal") {
    const series = { documentTypeId: batch.documentTypeId, kind: "invoice" as const };
    return {
      numbering: "internal",
      numbers: await nextDocumentNumbers(issuing.tx, issuing.owner, series, batch.ids.length),
      issued: null,
    };
  }
  const issued = await issueTaxInvoices(issuing, plan.enrolled, batch, parties);
  return { numbering: "sii_folio", numbers: issued.map((d) => d.folio), issued };
}

/** An internal series of an organization and mode: its document type and the kind of document. */
export interface InternalSeries {
  documentTypeId: string;
  kind: DocumentKind;
}

/**
 * The next `count` (>= 1) numbers of `owner`'s internal series `series`, in order, with one update
 * of the counter row inside the caller's transaction. The row stays locked until commit, so
 * concurrent finalizes queue and a rolled-back finalize gives its numbers back: numbers are
 * gapless and unique.
 */
export async function nextDocumentNumbers(
  tx: Tx,
  owner: TenantKey,
  series: InternalSeries,
  count: number,
): Promise<number[]> {
  const { documentTypeId, kind } = series;
  const rows = await sqlRows<{ lastNumber: number }>(
    tx,
    Prisma.sql`
    INSERT INTO "DocumentCounter" ("organizationId", "testMode", "documentTypeId", "kind", "lastNumber")
    VALUES (${owner.organizationId}, ${owner.testMode}, ${documentTypeId}, ${kind}, ${count}::int)
    ON CONFLICT ("organizationId", "testMode", "documentTypeId", "kind")
    DO UPDATE SET "lastNumber" = "DocumentCounter"."lastNumber" + ${count}::int
    RETURNING "lastNumber"`,
    { prepared: true },
  );
  const last = Number(rows[0].lastNumber);
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}
