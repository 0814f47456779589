/**
 * The tax-agency step of finalize (docs/sii-setup.md): for a document numbered with an SII folio
 * (services/numbering.ts decides the series: a type the agency issues, CL33, CL34, CL39, CL41, CL52,
 * CL56, CL61, CL110, CL111, CL112, in a mode set up with SII, that mode's tax profile RUT and signing
 * certificate: settings are per mode, docs/decisions.md "Mode isolation of settings"), inside the finalize transaction:
 * take the next folio of the type's CAF (the document's number), build and sign the DTE, store it as
 * a StoredFile and return `local_file` and `tax_agency`.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { ValidationError } from "../domain/errors.js";
import { isoDate } from "../domain/formats.js";
import { normalizeRut } from "../domain/rut.js";
import { receiverDetails, type IssuedCustomer } from "../domain/issued-parties.js";
import { isShippingType } from "../domain/shipping-types.js";
import type { DiscountScheme } from "../domain/totals.js";
import { BOLETA_TYPES, type DteType } from "../domain/dte-rules.js";
import { EXPORT_DTE_TYPES, exportSettingsOf, resolveExport } from "../domain/sii-exports.js";
import { issuedTaxAgencyStatus } from "../domain/sii-sending.js";
import { taxAgencyFor, type TaxAgency } from "../infra/taxagency/index.js";
import { FINAL_CONSUMER_RUT, type DteInput, type DteLine, type DteReceiver } from "../infra/taxagency/sii/index.js";
import { readCertificates, signingCredentialsOf, type StoredCertificate } from "./certificates.js";
import { takeFolio, takeFolios } from "./cafs.js";
import { issueLocalFilesOffThread } from "../infra/taxagency/issue-pool.js";
import { storeFile } from "./files.js";
import type { DocumentKind } from "../domain/document-status.js";
import type { IssuedParties } from "./issued-parties.js";
import type { Issuing } from "./issuing.js";

/** SII's RUT for receivers without a Chilean RUT (foreign customers). */
export const FOREIGN_RECEIVER_RUT = "55555555-5";

export interface IssuedTaxDocument {
  folio: number;
  /** the stored file's name (the `local_file` URL is built from it when read: services/files.ts fileUrl) */
  localFile: string;
  taxAgency: Record<string, unknown>;
}

/** A stored line's columns a DTE line (Detalle) is built from: amounts as Prisma returns them (Decimal). */
type DteSourceLine = {
  name: string;
  description: string | null;
  quantity: unknown;
  amount: unknown;
  discount: unknown;
  discountScheme: string;
  exempt: boolean;
};

/**
 * The columns of a stored invoice, order or credit note (with `lines` by position and `documentType`)
 * a DTE is built from; the kind's own columns are optional (a credit note's `invoice`, an order's
 * transport). Prisma's rows of the three tables fit it.
 */
interface StoredTaxDocument {
  id: string;
  documentTypeId: string;
  date: Date;
  dueDate?: Date | null;
  discount: unknown;
  discountScheme: string;
  note?: string | null;
  documentType: { code: number; tax: unknown; hasTaxes: boolean };
  lines: DteSourceLine[];
  /** the document's currency (export documents print their amounts in it) */
  currency: { id: string; decimals: number; rounded: boolean };
  /** invoices: fiscal_settings (an export's customs data under `export`; domain/sii-exports.ts) */
  fiscalSettings?: unknown;
  /** credit notes: the invoice it corrects, with its document type and fiscal settings */
  invoice?: {
    number: number | null;
    date: Date;
    fiscalSettings: unknown;
    documentType: { code: number; hasTaxes: boolean };
  };
  /** debit notes voiding a credit note: the voided credit note, with its document type */
  voidsCreditNote?: { number: number | null; date: Date; documentType: { code: number } } | null;
  referenceCode?: number;
  shippingType?: string;
  licencePlate?: string | null;
  address?: string | null;
}

function dteLines(lines: DteSourceLine[]): DteLine[] {
  return lines.map((l) => ({
    name: l.name,
    description: l.description ?? undefined,
    quantity: String(l.quantity),
    unitPrice: String(l.amount),
    discount: String(l.discount),
    discountScheme: l.discountScheme as "%" | "$",
    exempt: l.exempt,
  }));
}

/**
 * Receptor from the customer as issued (the document's snapshot, services/issued-parties.ts): its
 * RUT (SII's 55555555-5 for a foreign customer without one, or whose tax id is no RUT; on a boleta,
 * SII's final consumer 66666666-6 for a customer without one, named "Consumidor final" when it has no name either);
 * activity (GiroRecep), commune (CmnaRecep) and city (CiudadRecep) from its columns, or from its
 * `tax_settings` for a customer saved before they existed (domain/issued-parties.ts receiverDetails);
 * its e-mail (CorreoRecep) and address (DirRecep).
 */
function receiver(customer: IssuedCustomer, boleta: boolean): DteReceiver {
  const details = receiverDetails(customer);
  const foreign = !!customer.countryId && customer.countryId !== "CL";
  // a foreign customer's tax id that is no RUT goes into an export's Extranjero/NumId instead
  const rut =
    (customer.taxId ? normalizeRut(customer.taxId) : null) ??
    (foreign ? FOREIGN_RECEIVER_RUT : !customer.taxId && boleta ? FINAL_CONSUMER_RUT : null);
  if (!rut) throw ValidationError.field("customer", "a DTE needs the customer's RUT (tax_id)");
  const name = customer.name?.trim() ? customer.name : boleta ? "Consumidor final" : null;
  if (!name) throw ValidationError.field("customer", "a DTE needs the customer's name");
  return {
    rut,
    name,
    activity: details.activity ?? undefined,
    email: customer.email ?? undefined,
    address: customer.address ?? undefined,
    commune: details.commune ?? undefined,
    city: details.city ?? undefined,
  };
}

/** A mode set up to issue a type with its agency: the agency and that mode's certificates, newest first. */
export interface TaxAgencyIssuing {
  agency: TaxAgency;
  certificates: StoredCertificate[];
}

/**
 * The agency that issues documents of type `documentTypeId` and what `issuing`'s organization has
 * set up for it in its mode (`setup`: a RUT in that mode's tax profile, a signing certificate of the
 * mode; the certificates are read here, once, and sign the DTE later), or null when the type has no
 * agency (not regulated). services/numbering.ts decides the series from it (domain/document-numbering.ts).
 */
export async function taxAgencySetup(issuing: Issuing, documentTypeId: string) {
  const { tx, owner, settings } = issuing;
  const agency = taxAgencyFor(await tx.documentType.findUniqueOrThrow({ where: { id: documentTypeId } }));
  if (!agency) return null;
  const certificates = await readCertificates(tx, owner);
  return { agency, certificates, setup: { taxId: !!settings.taxId, certificate: certificates.length > 0 } };
}

/** 400 on `tax_profile` when the issuer lacks what SII requires. */
function checkIssuer(parties: IssuedParties): void {
  const issuer = parties.issuer;
  const missing = [
    !issuer.businessName && "business_name",
    !issuer.activity && "activity",
    !issuer.activityCodes.length && "activity_codes",
  ].filter(Boolean);
  if (missing.length)
    throw ValidationError.field(
      "tax_profile",
      `the organization's tax profile lacks ${missing.join(", ")}, which SII requires`,
    );
}

/** What numbers and stamps a DTE: its folio, the issuer's RUT, the signing time. */
interface DteStamp {
  folio: number;
  /** the mode's tax profile RUT, used when the issuer snapshot has none */
  issuerTaxId: string;
  timestamp: Date;
}

/**
 * The DTE description of stored document `doc` of `kind` (with `lines` by position and `documentType`;
 * a credit note also with `invoice.documentType`), issued by `parties.issuer` to `parties.customer`,
 * numbered and stamped by `stamp`. 400 when the customer lacks what a DTE needs, a note's reference has
 * no number, or an export's customs data is incomplete.
 */
function dteInputOf(kind: DocumentKind, doc: StoredTaxDocument, parties: IssuedParties, stamp: DteStamp): DteInput {
  const issuer = parties.issuer;
  const input: DteInput = {
    type: doc.documentType.code as DteType,
    folio: stamp.folio,
    issueDate: isoDate(doc.date),
    dueDate: doc.dueDate ? isoDate(doc.dueDate) : undefined,
    emitter: {
      rut: issuer.taxId ?? stamp.issuerTaxId,
      businessName: issuer.businessName!,
      activity: issuer.activity!,
      activityCodes: issuer.activityCodes,
      address: issuer.address ?? undefined,
      commune: issuer.commune ?? undefined,
      city: issuer.city ?? undefined,
    },
    receiver: receiver(parties.customer, BOLETA_TYPES.includes(doc.documentType.code)),
    lines: dteLines(doc.lines),
    discount:
      Number(doc.discount) > 0
        ? { value: String(doc.discount), scheme: doc.discountScheme as DiscountScheme }
        : undefined,
    taxPercent: String(doc.documentType.tax),
    timestamp: stamp.timestamp,
  };
  if (kind === "credit_note") {
    input.exemptDocument = !doc.invoice!.documentType.hasTaxes;
    input.references = noteReferences(doc);
  }
  if (EXPORT_DTE_TYPES.includes(input.type)) {
    input.export = exportOf(kind, doc, parties);
    input.exemptDocument = true;
  }
  if (kind === "order") {
    if (doc.shippingType !== undefined && isShippingType(doc.shippingType)) input.shippingType = doc.shippingType;
    if (doc.licencePlate || doc.address)
      input.transport = { plate: doc.licencePlate ?? undefined, address: doc.address ?? undefined };
  }
  return input;
}

/**
 * A credit or debit note's reference (Referencia): the invoice it corrects, with its `referenceCode`
 * (1 voids, 2 corrects text, 3 corrects amounts; default 3), or, for a debit note voiding a credit
 * note (domain/credit-note-voids.ts), that credit note with code 1. 400 when the referenced document
 * has no number.
 */
function noteReferences(doc: StoredTaxDocument): NonNullable<DteInput["references"]> {
  const invoice = doc.invoice!;
  if (invoice.number === null) throw ValidationError.field("invoice", "the referenced invoice has no number");
  const voided = doc.voidsCreditNote;
  if (voided) {
    if (voided.number === null) throw ValidationError.field("credit_note", "the voided credit note has no number");
    return [
      {
        type: voided.documentType.code,
        folio: voided.number,
        date: isoDate(voided.date),
        code: 1,
        reason: doc.note ?? "Anula nota de crédito",
      },
    ];
  }
  const referenceCode = doc.referenceCode ?? 3;
  return [
    {
      type: invoice.documentType.code,
      folio: invoice.number,
      date: isoDate(invoice.date),
      code: ([1, 2, 3].includes(referenceCode) ? referenceCode : 3) as 1 | 2 | 3,
      reason: doc.note ?? undefined,
    },
  ];
}

/**
 * An export DTE's customs data (domain/sii-exports.ts): from the document's fiscal settings, or for a
 * 111/112 from its invoice's (the 110's); 400 on the first problem of those settings.
 */
function exportOf(kind: DocumentKind, doc: StoredTaxDocument, parties: IssuedParties): DteInput["export"] {
  const fiscalSettings = kind === "credit_note" ? doc.invoice!.fiscalSettings : doc.fiscalSettings;
  const { settings, problems } = exportSettingsOf(fiscalSettings);
  if (problems.length) throw ValidationError.field(problems[0].field, problems[0].message);
  const resolved = resolveExport({
    currencyId: doc.currency.id,
    settings,
    customerCountry: parties.customer.countryId ?? null,
    customerTaxId: parties.customer.taxId ?? null,
  });
  return { ...resolved, currency: doc.currency };
}

/** A draft to issue: its kind and id. */
export interface DraftRef {
  kind: DocumentKind;
  id: string;
}

/** The stored draft with what its DTE is built from (lines by position, type, currency, a note's references). */
async function storedTaxDocument(tx: Issuing["tx"], { kind, id }: DraftRef): Promise<StoredTaxDocument> {
  const include = { lines: { orderBy: { position: "asc" as const } }, documentType: true, currency: true };
  if (kind === "invoice") return tx.invoice.findUniqueOrThrow({ where: { id }, include });
  if (kind === "order") return tx.order.findUniqueOrThrow({ where: { id }, include });
  return tx.creditNote.findUniqueOrThrow({
    where: { id },
    include: {
      ...include,
      invoice: { include: { documentType: true } },
      voidsCreditNote: { include: { documentType: true } },
    },
  });
}

/** What tax_agency says of a DTE just issued (pending, or not sent when the mode's SII sending is off). */
function issuedTaxAgency(
  issuing: Issuing,
  agency: TaxAgency,
  folio: { folio: number; cafId: string },
  documentId: string,
) {
  const now = issuing.now.toISOString();
  return {
    agency: agency.name,
    status: issuedTaxAgencyStatus(issuing.settings.siiSending),
    track_id: null,
    document_id: documentId,
    folio: folio.folio,
    caf: folio.cafId,
    issued_at: now,
    updated_at: now,
  };
}

/**
 * Issues the local file of `draft` (locked by the finalize transaction `issuing.tx`), numbered with
 * the next folio of its type's CAF, for a mode set up with the type's agency (`enrolled`: the agency
 * and the mode's certificates, read by numbering.ts numberingPlan). Emitter and receiver come from
 * `parties`, the snapshot the document stores (services/issued-parties.ts), so the stored DTE and the
 * document's snapshot say the same. Throws 409 (no folio left, no valid certificate, no encryption
 * key) or 400 (an issuer missing what SII requires, a customer without RUT, a line breaking SII's
 * format) so the finalize transaction rolls back and nothing is used up.
 */
export async function issueTaxDocument(
  issuing: Issuing,
  enrolled: TaxAgencyIssuing,
  draft: DraftRef,
  parties: IssuedParties,
): Promise<IssuedTaxDocument> {
  const { tx, owner, now, encryptionKey } = issuing;
  const doc = await storedTaxDocument(tx, draft);
  checkIssuer(parties);
  const credentials = signingCredentialsOf(enrolled.certificates, owner, encryptionKey, now);
  const taken = await takeFolio(tx, owner, doc.documentTypeId, isoDate(doc.date), encryptionKey);
  const stamp = { folio: taken.folio, issuerTaxId: issuing.settings.taxId!, timestamp: now };
  const file = enrolled.agency.issue(dteInputOf(draft.kind, doc, parties, stamp), taken.cafFile, credentials);
  const name = `${doc.id}_${doc.documentType.code}_${taken.folio}.${file.extension}`;
  await storeFile(tx, { name, ...owner, contentType: file.contentType, content: file.content });
  return {
    folio: taken.folio,
    localFile: name,
    taxAgency: issuedTaxAgency(issuing, enrolled.agency, taken, file.documentId),
  };
}

/** Invoice drafts of one document type, issued together (issueTaxInvoices), in the order given. */
export interface InvoiceBatch {
  documentTypeId: string;
  ids: readonly string[];
}

/**
 * The bulk form of issueTaxDocument for the invoice drafts of `batch` (all of `issuing`'s organization
 * and mode, locked or created by its transaction) and `enrolled` (a mode set up with that type's
 * agency): one folio range is taken for the batch (cafs.ts takeFolios: one CAF counter update,
 * spanning into the next CAF when one runs out; folios in the order of `batch.ids`), each DTE is
 * built and signed off the main thread (infra/taxagency/issue-pool.ts) from the same description as
 * issueTaxDocument's (`parties.get(id)`, the snapshot stored with the invoice), and the files are
 * stored with one statement. The result is what issueTaxDocument returns for each, in the order of
 * the ids. Throws what issueTaxDocument throws (409 no folio left for the whole batch, no valid
 * certificate; 400 a customer without RUT, a line breaking SII's format): the caller's transaction
 * rolls back and gives every folio of the batch back.
 */
export async function issueTaxInvoices(
  issuing: Issuing,
  enrolled: TaxAgencyIssuing,
  batch: InvoiceBatch,
  parties: ReadonlyMap<string, IssuedParties>,
): Promise<IssuedTaxDocument[]> {
  const { ids, documentTypeId } = batch;
  if (ids.length === 0) return [];
  const { tx, owner, now, encryptionKey } = issuing;
  const docs = await storedTaxInvoices(issuing, batch);
  const partiesOf = (id: string) => {
    const p = parties.get(id);
    if (!p) throw new Error(`no snapshot of the parties of invoice ${id}`);
    return p;
  };
  for (const id of ids) checkIssuer(partiesOf(id));
  const { certificatePem, privateKeyPem } = signingCredentialsOf(enrolled.certificates, owner, encryptionKey, now);
  // the range's CAFs must be usable on the latest issue date of the batch (cafs.ts takeFolios)
  const latestIssueDate = docs.reduce(
    (max, d) => (isoDate(d.date) > max ? isoDate(d.date) : max),
    isoDate(docs[0].date),
  );
  const taken = await takeFolios(tx, owner, { documentTypeId, latestIssueDate, count: docs.length }, encryptionKey);
  const issuerTaxId = issuing.settings.taxId!;
  const files = await issueLocalFilesOffThread({
    agency: enrolled.agency.name,
    credentials: { certificatePem, privateKeyPem },
    authorizations: Object.fromEntries(
      [...taken.cafFiles].map(([id, file]) => [id, new Uint8Array(file.buffer, file.byteOffset, file.byteLength)]),
    ),
    documents: docs.map((doc, i) => ({
      document: dteInputOf("invoice", doc, partiesOf(doc.id), {
        folio: taken.folios[i].folio,
        issuerTaxId,
        timestamp: now,
      }),
      authorization: taken.folios[i].cafId,
    })),
  });
  const names = docs.map(
    (doc, i) => `${doc.id}_${doc.documentType.code}_${taken.folios[i].folio}.${files[i].extension}`,
  );
  await storeFiles(
    issuing,
    names.map((name, i) => ({ name, contentType: files[i].contentType, content: files[i].content })),
  );
  return taken.folios.map((folio, i) => ({
    folio: folio.folio,
    localFile: names[i],
    taxAgency: issuedTaxAgency(issuing, enrolled.agency, folio, files[i].documentId),
  }));
}

/** The invoices of `batch` in its order, with what their DTEs are built from; an Error when one is missing. */
async function storedTaxInvoices(issuing: Issuing, { documentTypeId, ids }: InvoiceBatch) {
  const rows = await issuing.tx.invoice.findMany({
    where: { id: { in: [...ids] }, ...issuing.owner, documentTypeId },
    include: { lines: { orderBy: { position: "asc" } }, documentType: true, currency: true },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const doc = byId.get(id);
    if (!doc) throw new Error(`invoice ${id} of ${documentTypeId} not found in this organization and mode`);
    return doc;
  });
}

/**
 * Stores `files` for `issuing`'s organization and mode with one statement of one parameter (the files
 * as JSON, bytes in base64): a createMany of this many bytes costs the Prisma client far more than the
 * database.
 */
async function storeFiles(
  issuing: Issuing,
  files: readonly { name: string; contentType: string; content: Buffer }[],
): Promise<void> {
  const json = JSON.stringify(
    files.map((file) => ({ name: file.name, contentType: file.contentType, content: file.content.toString("base64") })),
  );
  const { organizationId, testMode } = issuing.owner;
  await issuing.tx.$executeRaw(Prisma.sql`
    INSERT INTO "StoredFile" ("name", "organizationId", "testMode", "contentType", "content")
    SELECT v."name", ${organizationId}, ${testMode}, v."contentType", decode(v."content", 'base64')
    FROM json_to_recordset(${json}::json) AS v("name" text, "contentType" text, "content" text)`);
}
