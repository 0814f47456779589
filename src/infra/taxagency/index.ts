/**
 * Tax agencies (docs/sii-setup.md "What finalize does"): the local-format file a regulated document type needs at
 * finalize. `taxAgencyFor(documentType)` picks the agency by the type's country, for types with
 * `hasLocalFormat`; Chile's SII is the only one (docs/sii-setup.md). An agency turns a plain
 * document description plus its authorization material into a signed file; it knows nothing about
 * the database (services/tax-documents.ts does the reading, folio taking and storing).
 */
import { isDteType } from "../../domain/dte-rules.js";
import { dteIssuer, issueDte, parseCaf, type Caf, type DteInput, type SigningCredentials } from "./sii/index.js";

export interface LocalFile {
  /** agency's id of the document inside the file (SII: `Documento/@ID`, F<folio>T<type>) */
  documentId: string;
  /** the file's bytes and content type */
  content: Buffer;
  contentType: string;
  /** file name extension without the dot */
  extension: string;
}

export interface TaxAgency {
  /** short name stored in `tax_agency.agency` */
  name: string;
  /** whether this agency issues documents of this type code (SII: 33, 34, 39, 41, 52, 56, 61, 110, 111, 112) */
  issues(code: number): boolean;
  /**
   * The signed local file of `document`, stamped with `authorization` (SII: the CAF file covering
   * its folio) and signed with `credentials`. ValidationError when the document breaks a format rule.
   */
  issue(document: DteInput, authorization: Buffer, credentials: SigningCredentials): LocalFile;
  /**
   * `issue` for many documents signed with the same `credentials`: the credentials are checked
   * and prepared once, and each authorization (the same Buffer object) is parsed once.
   */
  issuer(credentials: SigningCredentials): (document: DteInput, authorization: Buffer) => LocalFile;
}

/** Chile's SII: DTE XML (ISO-8859-1) with TED and XMLDSig signature. */
export const sii: TaxAgency = {
  name: "sii",
  issues: (code) => isDteType(code),
  issue(document, authorization, credentials) {
    const signed = issueDte(document, parseCaf(authorization), credentials);
    return {
      documentId: signed.id,
      content: signed.file,
      contentType: "application/xml; charset=ISO-8859-1",
      extension: "xml",
    };
  },
  issuer(credentials) {
    const issue = dteIssuer(credentials);
    const cafs = new Map<Buffer, Caf>();
    return (document, authorization) => {
      let caf = cafs.get(authorization);
      if (!caf) cafs.set(authorization, (caf = parseCaf(authorization)));
      const signed = issue(document, caf);
      return {
        documentId: signed.id,
        content: signed.file,
        contentType: "application/xml; charset=ISO-8859-1",
        extension: "xml",
      };
    };
  },
};

const BY_COUNTRY: Record<string, TaxAgency> = { CL: sii };
const BY_NAME: Record<string, TaxAgency> = { sii };

/**
 * A batch of documents of one issuer for `issueLocalFiles`: each document names the authorization
 * that covers it (SII: the id of its CAF, whose file is in `authorizations`). Plain data, so it can
 * be sent to a worker thread (infra/taxagency/issue-pool.ts, on the worker pool infra/threads/pool.ts).
 */
export interface IssueJob {
  /** the agency's `name` */
  agency: string;
  credentials: SigningCredentials;
  authorizations: Record<string, Uint8Array>;
  documents: { document: DteInput; authorization: string }[];
}

/**
 * The local files of `job.documents`, in order, as `TaxAgency.issue` makes each (the first error
 * is thrown), with the credentials prepared and each authorization parsed once (`TaxAgency.issuer`).
 */
export function issueLocalFiles(job: IssueJob): LocalFile[] {
  const agency = BY_NAME[job.agency];
  if (!agency) throw new Error(`unknown tax agency ${job.agency}`);
  const issue = agency.issuer(job.credentials);
  const authorizations = new Map(
    Object.entries(job.authorizations).map(([id, a]) => [id, Buffer.from(a.buffer, a.byteOffset, a.byteLength)]),
  );
  return job.documents.map((d) => {
    const authorization = authorizations.get(d.authorization);
    if (!authorization) throw new Error(`no authorization ${d.authorization} for the document`);
    return issue(d.document, authorization);
  });
}

/** The agency of a document type, or null when its country has none or it has no local format. */
export function taxAgencyFor(documentType: {
  countryId: string;
  hasLocalFormat: boolean;
  code: number;
}): TaxAgency | null {
  if (!documentType.hasLocalFormat) return null;
  const agency = BY_COUNTRY[documentType.countryId];
  return agency && agency.issues(documentType.code) ? agency : null;
}
