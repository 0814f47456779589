/**
 * Chile's SII set-up (docs/sii-setup.md): the organization's tax profile (`taxProfile`,
 * `updateTaxProfile`), signing certificates (`certificates`, `uploadCertificate`) and CAF files
 * (`Caf` node, `cafs`, `uploadCaf`). Rules: services/tax-profile.ts, services/certificates.ts,
 * services/cafs.ts and domain/tax-profile.ts.
 */
import { builder, ADMIN_FIELD } from "../builder.js";
import { Language } from "../enums.js";
import { isPrintLocale } from "../../domain/printed-labels.js";
import { StringFilter, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { getTaxProfile, updateTaxProfile, type TaxProfile as TaxProfileValue } from "../../services/tax-profile.js";
import { listCertificates, uploadCertificate } from "../../services/certificates.js";
import { storedCafLastUsableDate, uploadCaf } from "../../services/cafs.js";
import { isoDate } from "../../domain/formats.js";

const SiiSending = builder.enumType("SiiSending", {
  description:
    'Whether a mode\'s DTEs go to SII (docs/sii-sending.md "Turning sending off"). REST writes the same strings.',
  values: {
    automatic: {
      value: "automatic",
      description:
        "each DTE is queued at finalize and uploaded by the SII worker (test mode: SII's certification host)",
    },
    off: {
      value: "off",
      description:
        "test mode only: each DTE is signed and stored with tax_agency.status `not_sent` and never uploaded; for " +
        "demos and trials with test material",
    },
  } as const,
});

const TaxProfile = builder.objectRef<TaxProfileValue>("TaxProfile").implement({
  description:
    "The organization's tax profile in the caller's mode: the issuer (Emisor) of that mode's DTEs. Test and live " +
    "mode each have their own (a test key never changes live's; docs/decisions.md). With a RUT and a signing " +
    "certificate of the mode the organization is enrolled in it: finalizing a regulated document of that mode issues " +
    "a DTE (docs/sii-setup.md).",
  fields: (t) => ({
    organization: t.exposeID("organization", { description: "`org_` id" }),
    testMode: t.exposeBoolean("testMode", { description: "the mode this profile belongs to: the caller's" }),
    taxId: t.exposeString("taxId", {
      nullable: true,
      description: "RUT in normal form (76042235-5): RUTEmisor; null until set",
    }),
    businessName: t.exposeString("businessName", {
      nullable: true,
      description: "RznSoc (at most 100 characters); null until set",
    }),
    activity: t.exposeString("activity", {
      nullable: true,
      description: "GiroEmis (at most 80 characters); null until set",
    }),
    activityCodes: t.exposeStringList("activityCodes", {
      description: "SII economic activity codes, Acteco (1 to 4, up to 6 digits each)",
    }),
    address: t.exposeString("address", { nullable: true, description: "DirOrigen (70); null until set" }),
    commune: t.exposeString("commune", { nullable: true, description: "CmnaOrigen (20); null until set" }),
    city: t.exposeString("city", { nullable: true, description: "CiudadOrigen (20); null until set" }),
    resolutionNumber: t.exposeInt("resolutionNumber", {
      nullable: true,
      description: "SII resolution number authorizing electronic documents (0 in certification); null until set",
    }),
    resolutionDate: t.field({
      type: "Date",
      nullable: true,
      description: "date of that resolution; null until set",
      resolve: (p) => p.resolutionDate,
    }),
    locale: t.field({
      type: Language,
      nullable: true,
      resolve: (p) => (p.locale && isPrintLocale(p.locale) ? p.locale : null),
      description:
        "language of the mode's printed documents (PDFs): `es` or `en`; null: Spanish for a Chilean document type, " +
        "English for others",
    }),
    siiSending: t.field({
      type: SiiSending,
      resolve: (p) => (p.siiSending === "off" ? "off" : "automatic"),
      description:
        "whether this mode's DTEs go to SII: `automatic` (default) or `off` (test mode only). Turning it off applies " +
        "to DTEs finalized from then on; those already queued are still sent",
    }),
    missing: t.exposeStringList("missing", {
      description: "fields SII requires that are still empty (tax_id, business_name, activity, activity_codes)",
    }),
    updated: t.expose("updated", { type: "DateTime", description: "when this mode's profile last changed" }),
  }),
});

const TaxProfileInput = builder.inputType("TaxProfileInput", {
  description: "Only the given fields change; null or an empty string clears one.",
  fields: (t) => ({
    taxId: t.string({ description: "RUT, any form (76.042.235-5); a wrong check digit is a 400" }),
    businessName: t.string({ description: "at most 100 characters" }),
    activity: t.string({ description: "at most 80 characters" }),
    activityCodes: t.stringList({ description: "1 to 4 codes of 1 to 6 digits" }),
    address: t.string({ description: "at most 70 characters" }),
    commune: t.string({ description: "at most 20 characters" }),
    city: t.string({ description: "at most 20 characters" }),
    resolutionNumber: t.int({ description: "0 or more" }),
    resolutionDate: t.string({
      description:
        "date of the SII resolution, yyyy-mm-dd (a String for REST compatibility; another form is a validation_error " +
        "on resolution_date)",
    }),
    locale: t.field({
      type: Language,
      description: "language of printed documents; null: by the document type's country",
    }),
    siiSending: t.field({
      type: SiiSending,
      description:
        "whether this mode's DTEs go to SII; `off` is a validation_error on sii_sending with a live key; null: " +
        "`automatic`",
    }),
  }),
});

const Certificate = builder.prismaObject("Certificate", {
  description:
    "A signing certificate of the organization in one mode (PKCS#12, kept encrypted at rest): it signs that mode's " +
    "documents only. Only public facts are readable.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`cer_` id" }),
    subjectRut: t.exposeString("subjectRut", {
      nullable: true,
      description: "RUT of the certificate's holder (normal form); null when its subject names none",
    }),
    validFrom: t.expose("validFrom", {
      type: "DateTime",
      nullable: true,
      description: "before this instant it does not sign yet; null when the file gives none",
    }),
    validTo: t.expose("validTo", {
      type: "DateTime",
      nullable: true,
      description: "after this instant it no longer signs; null when the certificate could not say",
    }),
    testMode: t.exposeBoolean("testMode", {
      description: "the mode whose documents it signs: the mode of the key that uploaded it",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was uploaded" }),
  }),
});

const CertificateInput = builder.inputType("CertificateInput", {
  description: "A PKCS#12 file (.p12/.pfx) and its password.",
  fields: (t) => ({
    file: t.string({ description: "the PKCS#12 file in base64 (required)" }),
    password: t.string({ description: "its password" }),
  }),
});

export const Caf = builder.prismaNode("Caf", {
  id: { field: "id", description: "`caf_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "A CAF file: a range of folios SII authorized for one document type (IDK 100 certification CAFs are test mode, " +
    "others live). The file itself (with its private key) is never readable.",
  fields: (t) => ({
    documentType: t.exposeString("documentTypeId", { description: "document type id (CL33)" }),
    rangeFrom: t.exposeInt("rangeFrom", { description: "first authorized folio" }),
    rangeTo: t.exposeInt("rangeTo", { description: "last authorized folio" }),
    nextFolio: t.int({
      nullable: true,
      description: "the folio the next finalize takes; null when used up",
      select: { nextFolio: true, rangeTo: true },
      resolve: (c) => (c.nextFolio > c.rangeTo ? null : c.nextFolio),
    }),
    available: t.int({
      description: "folios left",
      select: { nextFolio: true, rangeTo: true },
      resolve: (c) => Math.max(0, c.rangeTo - c.nextFolio + 1),
    }),
    authorized: t.field({
      type: "Date",
      description: "SII's authorization date (FA)",
      select: { authorizedAt: true },
      resolve: (c) => isoDate(c.authorizedAt),
    }),
    expires: t.field({
      type: "Date",
      nullable: true,
      description: "last day its folios may be used (6 months from FA for 33, 56, 61); null when it does not expire",
      select: { authorizedAt: true, documentTypeId: true },
      resolve: (c) => storedCafLastUsableDate(c),
    }),
    testMode: t.exposeBoolean("testMode", {
      description: "true for a certification CAF (IDK 100): it numbers test mode's documents; false: live mode's",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was uploaded" }),
  }),
});

const CafInput = builder.inputType("CafInput", {
  description: "A CAF file (Código de Autorización de Folios) as downloaded from SII.",
  fields: (t) => ({ file: t.string({ description: "the CAF XML as SII issued it, in base64 (required)" }) }),
});

const CafWhere = builder.inputType("CafWhere", {
  description: "CAF list filters.",
  fields: (t) => ({ documentType: t.field({ type: StringFilter, description: "document type id (CL33)" }) }),
});

builder.queryFields((t) => ({
  taxProfile: t.field({
    type: TaxProfile,
    description: "The caller's organization's tax profile in the caller's mode.",
    resolve: (_root, _args, ctx) => getTaxProfile(ctx),
  }),
  certificates: t.prismaField({
    type: [Certificate],
    description:
      "The signing certificates of the caller's organization and mode, newest first (the newest unexpired one signs " +
      "that mode's documents).",
    resolve: (_query, _root, _args, ctx) => listCertificates(ctx) as never,
  }),
  cafs: t.connection(
    {
      type: Caf,
      description: "CAFs of the caller's organization and mode, newest first.",
      args: { where: t.arg({ type: CafWhere, description: "filters; absent: every CAF" }), offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) => {
        const where = { ...tenant(ctx), AND: [...stringConditions("documentTypeId", args.where?.documentType)] };
        return prismaConnection(ctx, info, ctx.prisma.caf, args, {
          where,
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of CAFs, newest first." },
    { description: "A CAF in a page of CAFs, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  updateTaxProfile: t.field({
    ...ADMIN_FIELD,
    type: TaxProfile,
    description:
      "Changes the given fields of the caller's mode's tax profile (the other mode's is not touched). Errors: " +
      "validation_error (tax_id, business_name, activity, activity_codes, address, commune, city, resolution_number, " +
      "resolution_date, locale, sii_sending: `off` with a live key).",
    args: { input: t.arg({ type: TaxProfileInput, required: true, description: "the fields to change" }) },
    resolve: (_root, args, ctx) => updateTaxProfile(ctx, args.input),
  }),
  uploadCertificate: t.prismaField({
    ...ADMIN_FIELD,
    type: Certificate,
    description:
      "Stores a signing certificate (PKCS#12 + password) for the caller's mode, encrypted at rest. Errors: " +
      "validation_error naming the field (file missing, not base64, not PKCS#12, without an RSA key and its " +
      "certificate, without a RUT, or expired; password wrong), invalid_state (no encryption key configured).",
    args: { input: t.arg({ type: CertificateInput, required: true, description: "the file and its password" }) },
    resolve: (_query, _root, args, ctx) => uploadCertificate(ctx, args.input) as never,
  }),
  uploadCaf: t.prismaField({
    ...ADMIN_FIELD,
    type: "Caf",
    description:
      "Stores a CAF file after checking it (RUT of the caller's mode's tax profile, document type, range, SII " +
      "signature present, mode from IDK, not expired, no overlap). Errors: validation_error on file (missing, not " +
      "base64, not a CAF, another RUT, a type this service does not issue, the other mode's IDK, expired, " +
      "overlapping) or on tax_id (the mode's tax profile has no RUT yet), invalid_state (no encryption key).",
    args: { input: t.arg({ type: CafInput, required: true, description: "the CAF file" }) },
    resolve: async (query, _root, args, ctx) => {
      const caf = await uploadCaf(ctx, args.input);
      return ctx.prisma.caf.findUniqueOrThrow({ ...query, where: { id: caf.id } });
    },
  }),
}));

interface StoredFileValue {
  name: string;
  contentType: string;
  content: string;
  created: Date;
}

export const StoredFile = builder.objectRef<StoredFileValue>("StoredFile").implement({
  description: "A file the service produced for the organization (a document's DTE XML), served at /v1/files/<name>.",
  fields: (t) => ({
    name: t.exposeString("name", {
      description: "the file's name, unique in the organization and mode (the last part of a document's local_file)",
    }),
    contentType: t.exposeString("contentType", {
      description: "MIME type (application/xml; charset=ISO-8859-1 for a DTE)",
    }),
    content: t.exposeString("content", { description: "the bytes in base64" }),
    created: t.expose("created", { type: "DateTime", description: "when the service stored it" }),
  }),
});

builder.queryFields((t) => ({
  storedFile: t.field({
    type: StoredFile,
    nullable: true,
    description:
      "A stored file of the caller's organization and mode by name (a document's local_file ends with it); null when " +
      "there is none.",
    args: { name: t.arg.string({ required: true, description: "the file's name as it ends a document's local_file" }) },
    resolve: async (_root, args, ctx) => {
      const file = await ctx.prisma.storedFile.findFirst({ where: { name: args.name, ...tenant(ctx) } });
      return file
        ? {
            name: file.name,
            contentType: file.contentType,
            content: Buffer.from(file.content).toString("base64"),
            created: file.createdAt,
          }
        : null;
    },
  }),
}));
