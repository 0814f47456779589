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
  type IssuedTaxDocument,
  type TaxAgencyIssuing,
} from "./tax-documents.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";

/** The series a document is numbered in, with the agency and settings that issue it for `sii_folio`. */
export type NumberingPlan = { numbering: "internal" } | { numbering: "sii_folio"; enrolled: TaxAgencyIssuing };

/**
 * The series of a document of type `documentTypeId` finalized now by `owner` (a note: with
 * `referencedNumbering`, the series of the document it references). 409 InvalidStateError in
 * live mode for a type SII issues when the mode is not set up with SII (the message names what to
 * set up: domain/document-numbering.ts numberingFor).
 */
export async function numberingPlan(
  tx: Tx,
  owner: TenantKey,
  documentTypeId: string,
  referencedNumbering: string | null = null,
): Promise<NumberingPlan> {
  const setup = await taxAgencySetup(tx, owner, documentTypeId);
  const numbering = numberingFor({
    documentTypeId,
    testMode: owner.testMode,
    regulated: setup !== null,
    setup: setup?.setup ?? { taxId: false, certificate: false },
    referencedNumbering,
  });
  return numbering === "sii_folio"
    ? { numbering, enrolled: { agency: setup!.agency, org: setup!.org } }
    : { numbering };
}

/** A finalized document's number, its series, and for a folio the DTE issued with it. */
export interface Numbered {
  number: number;
  numbering: DocumentNumbering;
  issued: IssuedTaxDocument | null;
}

/**
 * Numbers draft `id` of `kind` and type `documentTypeId` (locked by the caller's transaction `tx`)
 * at finalize: decides the series (numberingPlan; a credit or debit note follows the series of its
 * invoice) and takes its next number, for a folio with the signed DTE built from `parties` (the
 * snapshot the document stores). Throws what numberingPlan and issueTaxDocument throw (409 live mode
 * not set up, no folio left, no valid certificate; 400 a customer without RUT); the caller's
 * transaction then rolls back and nothing is used up.
 */
export async function numberDocument(
  tx: Tx,
  ctx: ServiceContext,
  kind: DocumentKind,
  id: string,
  documentTypeId: string,
  parties: IssuedParties,
): Promise<Numbered> {
  const referenced =
    kind === "credit_note"
      ? (await tx.creditNote.findUniqueOrThrow({ where: { id }, select: { invoice: { select: { numbering: true } } } }))
          .invoice.numbering
      : null;
  const plan = await numberingPlan(tx, tenant(ctx), documentTypeId, referenced);
  if (plan.numbering === "internal")
    return { number: await nextDocumentNumber(tx, ctx, documentTypeId, kind), numbering: "internal", issued: null };
  const issued = await issueTaxDocument(tx, ctx, plan.enrolled, kind, id, parties);
  return { number: issued.folio, numbering: "sii_folio", issued };
}

/**
 * The bulk form of numberDocument for invoice drafts `ids` of type `documentTypeId`, created in the
 * caller's transaction, in the order given: one counter update for the internal series, or one CAF
 * folio range and the DTEs signed off the main thread (tax-documents.ts issueTaxInvoices) for folios.
 * `partiesOf(id)`: the snapshot each invoice stores. Same errors as numberDocument, for the whole batch.
 */
export async function numberNewInvoices(
  tx: Tx,
  ctx: ServiceContext,
  documentTypeId: string,
  ids: readonly string[],
  parties: ReadonlyMap<string, IssuedParties>,
): Promise<{ numbering: DocumentNumbering; numbers: number[]; issued: IssuedTaxDocument[] | null }> {
  const plan = await numberingPlan(tx, tenant(ctx), documentTypeId);
  if (plan.numbering === "internal")
    return {
      numbering: "internal",
      numbers: await nextDocumentNumbers(tx, ctx, documentTypeId, "invoice", ids.length),
      issued: null,
    };
  const issued = await issueTaxInvoices(tx, ctx, plan.enrolled, documentTypeId, ids, parties);
  return { numbering: "sii_folio", numbers: issued.map((d) => d.folio), issued };
}

/**
 * Next number of the internal series of (organization, mode, document type, kind): increments the
 * counter row inside the caller's transaction. The row stays locked until commit, so concurrent
 * finalizes queue and a rolled-back finalize gives its number back: numbers are gapless and unique.
 */
export async function nextDocumentNumber(
  tx: Tx,
  ctx: ServiceContext,
  documentTypeId: string,
  kind: DocumentKind,
): Promise<number> {
  return (await nextDocumentNumbers(tx, ctx, documentTypeId, kind, 1))[0];
}

/**
 * The next `count` (>= 1) numbers of the internal series, in order, with one update of the counter
 * row (same lock and gapless guarantee as nextDocumentNumber).
 */
export async function nextDocumentNumbers(
  tx: Tx,
  ctx: ServiceContext,
  documentTypeId: string,
  kind: DocumentKind,
  count: number,
): Promise<number[]> {
  const rows = await sqlRows<{ lastNumber: number }>(
    tx,
    Prisma.sql`
    INSERT INTO "DocumentCounter" ("organizationId", "testMode", "documentTypeId", "kind", "lastNumber")
    VALUES (${ctx.auth.organizationId}, ${ctx.auth.testMode}, ${documentTypeId}, ${kind}, ${count}::int)
    ON CONFLICT ("organizationId", "testMode", "documentTypeId", "kind")
    DO UPDATE SET "lastNumber" = "DocumentCounter"."lastNumber" + ${count}::int
    RETURNING "lastNumber"`,
    { prepared: true },
  );
  const last = Number(rows[0].lastNumber);
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}
