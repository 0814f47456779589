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
import { loadSigningCredentials } from "./certificates.js";
import { takeFolio, takeFolios } from "./cafs.js";
import { issueLocalFilesOffThread } from "../infra/taxagency/issue-pool.js";
import { storeFile } from "./files.js";
import type { DocumentKind } from "../domain/document-status.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";
import { readSettings, type OrganizationSettings } from "./organization-settings.js";
import type { IssuedParties } from "./issued-parties.js";

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

/** A mode set up to issue a type with its agency: the agency and that mode's settings (the issuer's tax profile). */
export interface TaxAgencyIssuing {
  agency: TaxAgency;
  org: OrganizationSettings;
}

/**
 * The agency that issues documents of type `documentTypeId` and what organization
 * `owner.organizationId` has set up for it in mode `owner.testMode` (`setup`: a RUT in that mode's
 * tax profile, a signing certificate of the mode), or null when the type has no agency (not
 * regulated). services/numbering.ts decides the series from it (domain/document-numbering.ts).
 */
export async function taxAgencySetup(tx: Tx, owner: TenantKey, documentTypeId: string) {
  const agency = taxAgencyFor(await tx.documentType.findUniqueOrThrow({ where: { id: documentTypeId } }));
  if (!agency) return null;
  const org = await readSettings(tx, owner);
  // a findFirst rather than a count: a read the billing run's direct transactions send to the driver
  const certificate =
    (await tx.certificate.findFirst({
      where: { organizationId: owner.organizationId, testMode: owner.testMode },
      select: { id: true },
    })) !== null;
  return { agency, org, setup: { taxId: !!org.taxId, certificate } };
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

/**
 * The DTE description of stored document `doc` (with `lines` by position and `documentType`; a
 * credit note also with `invoice.documentType`) numbered `folio`, issued by `parties.issuer` (RUT
 * `orgTaxId` when the snapshot has none) to `parties.customer`, stamped at `timestamp`.
 */
function dteInputOf(
  kind: DocumentKind,
  doc: StoredTaxDocument,
  parties: IssuedParties,
  orgTaxId: string,
  folio: number,
  timestamp: Date,
): DteInput {
  const issuer = parties.issuer;
  const input: DteInput = {
    type: doc.documentType.code as DteType,
    folio,
    issueDate: isoDate(doc.date),
    dueDate: doc.dueDate ? isoDate(doc.dueDate) : undefined,
    emitter: {
      rut: issuer.taxId ?? orgTaxId,
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
    timestamp,
  };
  if (kind === "credit_note") {
    const invoice = doc.invoice!;
    const referenceCode = doc.referenceCode ?? 3;
    if (invoice.number === null) throw ValidationError.field("invoice", "the referenced invoice has no number");
    input.exemptDocument = !invoice.documentType.hasTaxes;
    const voided = doc.voidsCreditNote;
    if (voided) {
      // a debit note voiding a credit note references the credit note (domain/credit-note-voids.ts)
      if (voided.number === null) throw ValidationError.field("credit_note", "the voided credit note has no number");
      input.references = [
        {
          type: voided.documentType.code,
          folio: voided.number,
          date: isoDate(voided.date),
          code: 1,
          reason: doc.note ?? "Anula nota de crédito",
        },
      ];
    } else
      input.references = [
        {
          type: invoice.documentType.code,
          folio: invoice.number,
          date: isoDate(invoice.date),
          code: ([1, 2, 3].includes(referenceCode) ? referenceCode : 3) as 1 | 2 | 3,
          reason: doc.note ?? undefined,
        },
      ];
  }
  if (EXPORT_DTE_TYPES.includes(input.type)) {
    // an export's settings are its invoice's (a 111/112 takes the 110's): domain/sii-exports.ts
    const fiscalSettings = kind === "credit_note" ? doc.invoice!.fiscalSettings : doc.fiscalSettings;
    const { settings, problems } = exportSettingsOf(fiscalSettings);
    if (problems.length) throw ValidationError.field(problems[0].field, problems[0].message);
    const resolved = resolveExport({
      currencyId: doc.currency.id,
      settings,
      customerCountry: parties.customer.countryId ?? null,
      customerTaxId: parties.customer.taxId ?? null,
    });
    input.export = { ...resolved, currency: doc.currency };
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
 * Issues the local file of draft `id` (locked by the caller's transaction), numbered with the next
 * folio of its type's CAF, for a mode set up with the type's agency (`enrolled`). Emitter and
 * receiver come from `parties`, the snapshot the document stores (services/issued-parties.ts), so
 * the stored DTE and the document's snapshot say the same. Throws 409
 * (no folio left, no valid certificate, no encryption key) or 400 (customer without RUT, a line
 * breaking SII's format) so the finalize transaction rolls back and nothing is used up.
 */
export async function issueTaxDocument(
  tx: Tx,
  ctx: ServiceContext,
  enrolled: TaxAgencyIssuing,
  kind: DocumentKind,
  id: string,
  parties: IssuedParties,
): Promise<IssuedTaxDocument> {
  const { agency, org } = enrolled;
  const organizationId = ctx.auth.organizationId;

  const include = { lines: { orderBy: { position: "asc" as const } }, documentType: true, currency: true };
  const doc: StoredTaxDocument =
    kind === "invoice"
      ? await tx.invoice.findUniqueOrThrow({ where: { id }, include })
      : kind === "order"
        ? await tx.order.findUniqueOrThrow({ where: { id }, include })
        : await tx.creditNote.findUniqueOrThrow({
            where: { id },
            include: {
              lines: include.lines,
              documentType: true,
              currency: true,
              invoice: { include: { documentType: true } },
              voidsCreditNote: { include: { documentType: true } },
            },
          });
  const issueDate = isoDate(doc.date);
  checkIssuer(parties);
  const credentials = await loadSigningCredentials(tx, tenant(ctx), ctx.settings.certificateEncryptionKey, ctx.now());
  const taken = await takeFolio(tx, tenant(ctx), doc.documentTypeId, issueDate, ctx.settings.certificateEncryptionKey);
  const input = dteInputOf(kind, doc, parties, org.taxId!, taken.folio, ctx.now());

  const file = agency.issue(input, taken.cafFile, credentials);
  const name = `${doc.id}_${doc.documentType.code}_${taken.folio}.${file.extension}`;
  await storeFile(tx, {
    name,
    organizationId,
    testMode: ctx.auth.testMode,
    contentType: file.contentType,
    content: file.content,
  });
  const now = ctx.now().toISOString();
  return {
    folio: taken.folio,
    localFile: name,
    taxAgency: {
      agency: agency.name,
      status: issuedTaxAgencyStatus(org.siiSending),
      track_id: null,
      document_id: file.documentId,
      folio: taken.folio,
      caf: taken.cafId,
      issued_at: now,
      updated_at: now,
    },
  };
}

/**
 * The bulk form of issueTaxDocument for invoice drafts `ids` of document type `documentTypeId`,
 * all of the caller's organization and mode, locked or created by the caller's transaction, and
 * `enrolled` (a mode set up with that type's agency): one folio range is taken for the batch
 * (cafs.ts takeFolios: one CAF counter update, spanning into the next CAF when one runs out;
 * folios in the order of `ids`), each DTE is built and signed off the main thread
 * (infra/taxagency/issue-pool.ts) from the same description as issueTaxDocument's
 * (`parties.get(id)`, the snapshot stored with the invoice), and the files are stored with one
 * statement. The result is what issueTaxDocument returns for each, in the order of `ids`. Throws
 * what issueTaxDocument throws (409 no folio left for the whole batch, no valid certificate; 400
 * a customer without RUT, a line breaking SII's format): the caller's transaction rolls back and
 * gives every folio of the batch back.
 */
export async function issueTaxInvoices(
  tx: Tx,
  ctx: ServiceContext,
  enrolled: TaxAgencyIssuing,
  documentTypeId: string,
  ids: readonly string[],
  parties: ReadonlyMap<string, IssuedParties>,
): Promise<IssuedTaxDocument[]> {
  if (ids.length === 0) return [];
  const { agency, org } = enrolled;
  const rows = await tx.invoice.findMany({
    where: { id: { in: [...ids] }, ...tenant(ctx), documentTypeId },
    include: { lines: { orderBy: { position: "asc" } }, documentType: true, currency: true },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const docs = ids.map((id) => {
    const doc = byId.get(id);
    if (!doc) throw new Error(`invoice ${id} of ${documentTypeId} not found in this organization and mode`);
    return doc;
  });
  const partiesOf = (id: string) => {
    const p = parties.get(id);
    if (!p) throw new Error(`no snapshot of the parties of invoice ${id}`);
    return p;
  };
  for (const id of ids) checkIssuer(partiesOf(id));
  const key = ctx.settings.certificateEncryptionKey;
  const { certificatePem, privateKeyPem } = await loadSigningCredentials(tx, tenant(ctx), key, ctx.now());
  // the range's CAFs must be usable on the latest issue date of the batch (cafs.ts takeFolios)
  const latest = docs.reduce((max, d) => (isoDate(d.date) > max ? isoDate(d.date) : max), isoDate(docs[0].date));
  const taken = await takeFolios(tx, tenant(ctx), documentTypeId, latest, docs.length, key);
  const inputs = docs.map((doc, i) =>
    dteInputOf("invoice", doc, partiesOf(doc.id), org.taxId!, taken.folios[i].folio, ctx.now()),
  );
  const files = await issueLocalFilesOffThread({
    agency: agency.name,
    credentials: { certificatePem, privateKeyPem },
    authorizations: Object.fromEntries(
      [...taken.cafFiles].map(([id, file]) => [id, new Uint8Array(file.buffer, file.byteOffset, file.byteLength)]),
    ),
    documents: inputs.map((document, i) => ({ document, authorization: taken.folios[i].cafId })),
  });
  const names = docs.map(
    (doc, i) => `${doc.id}_${doc.documentType.code}_${taken.folios[i].folio}.${files[i].extension}`,
  );
  // one statement with one parameter (the files as JSON, bytes in base64): a createMany of this
  // many bytes costs the Prisma client far more than the database
  const json = JSON.stringify(
    files.map((file, i) => ({
      name: names[i],
      contentType: file.contentType,
      content: file.content.toString("base64"),
    })),
  );
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO "StoredFile" ("name", "organizationId", "testMode", "contentType", "content")
    SELECT v."name", ${ctx.auth.organizationId}, ${ctx.auth.testMode}, v."contentType", decode(v."content", 'base64')
    FROM json_to_recordset(${json}::json) AS v("name" text, "contentType" text, "content" text)`);
  const now = ctx.now().toISOString();
  return docs.map((_, i) => {
    const { folio, cafId } = taken.folios[i];
    return {
      folio,
      localFile: names[i],
      taxAgency: {
        agency: agency.name,
        status: issuedTaxAgencyStatus(org.siiSending),
        track_id: null,
        document_id: files[i].documentId,
        folio,
        caf: cafId,
        issued_at: now,
        updated_at: now,
      },
    };
  });
}
