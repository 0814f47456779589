/**
 * Which series numbers a document at finalize (docs/sii-setup.md "Numbering before enrollment").
 * Pure; services/numbering.ts gathers the facts and takes the number.
 *
 * Two series per (organization, mode, document type), each with its own numbers, so they never
 * collide (the unique key of a number includes its series):
 * - `sii_folio`: a folio SII authorized in a CAF; the document carries a signed DTE. Only for a type
 *   a tax agency issues (Chile's 33, 34, 39, 41, 52, 56, 61, 110, 111, 112) in a mode set up with SII
 *   (the mode's
 *   tax profile has a RUT and the mode has a signing certificate).
 * - `internal`: the organization's own gapless series (1, 2, 3, …). Every type no agency issues, and
 *   in test mode a regulated type before the mode is set up: such a document is no tax document and
 *   prints as "Documento no tributario" (domain/printed-labels.ts printedHeading).
 *
 * In live mode a regulated type is never issued in the internal series: finalize is refused (409)
 * naming what to set up. A note (56, 61) referencing an internal-series document is internal too:
 * it corrects a document that never reached SII, so it cannot reference it in a DTE.
 */
import { InvalidStateError } from "./errors.js";

export const DOCUMENT_NUMBERINGS = ["sii_folio", "internal"] as const;
export type DocumentNumbering = (typeof DOCUMENT_NUMBERINGS)[number];

export function isDocumentNumbering(value: unknown): value is DocumentNumbering {
  return (DOCUMENT_NUMBERINGS as readonly unknown[]).includes(value);
}

/** What numberingFor decides from. */
export interface NumberingFacts {
  /** the document type's id (`CL33`), for the message */
  documentTypeId: string;
  testMode: boolean;
  /** whether a tax agency issues this type (infra/taxagency taxAgencyFor) */
  regulated: boolean;
  /** the mode's SII set-up: a RUT in its tax profile, a signing certificate */
  setup: { taxId: boolean; certificate: boolean };
  /** a note: the series of the document it references (null for other kinds) */
  referencedNumbering?: string | null;
}

/** The steps still missing for a mode to issue DTEs, as the API takes them (empty when set up). */
export function missingSetupSteps(setup: NumberingFacts["setup"], testMode: boolean): string[] {
  const mode = testMode ? "test" : "live";
  return [
    !setup.taxId &&
      `set the ${mode} mode tax profile with the organization's RUT (PATCH /v1/billers/built_in/tax_profile/ tax_id, ` +
        `or GraphQL updateTaxProfile)`,
    !setup.certificate &&
      `upload the ${mode} mode signing certificate (POST /v1/billers/built_in/certificates/, a PKCS#12)`,
  ].filter((s): s is string => !!s);
}

/**
 * The series a document is numbered in at finalize. Throws InvalidStateError (409) in live mode for
 * a regulated type of a mode not set up with SII, naming every missing step and the CAF the type
 * needs. Examples: a CL33 in test mode without a certificate → `internal`; the same with RUT and
 * certificate → `sii_folio`; a credit note on an `internal` invoice → `internal`.
 */
export function numberingFor(facts: NumberingFacts): DocumentNumbering {
  if (!facts.regulated) return "internal";
  if (facts.referencedNumbering === "internal") return "internal";
  const missing = missingSetupSteps(facts.setup, facts.testMode);
  if (missing.length === 0) return "sii_folio";
  if (facts.testMode) return "internal";
  throw new InvalidStateError(
    `live mode issues ${facts.documentTypeId} only as an SII electronic tax document (DTE), and live mode is not set ` +
      `up with SII: ` +
      `${missing.join("; ")}; then upload a CAF for ${facts.documentTypeId} (POST /v1/billers/built_in/cafs/). ` +
      "Test mode issues it meanwhile as a non-tax document in an internal series (docs/sii-setup.md)",
  );
}
