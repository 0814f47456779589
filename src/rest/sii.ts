/**
 * REST shapes of the SII set-up (docs/sii-setup.md): request bodies (zod, unknown fields are a
 * 400) and response serializers of the tax profile, certificates and CAFs. Routes: resources.ts.
 */
import { z } from "zod";
import type {
  CafFieldsFragment,
  CertificateFieldsFragment,
  Language,
  TaxProfileFieldsFragment,
} from "../graphql/generated/operations.js";
import { isoTimestamp } from "./printer.js";
import { restEnumField } from "./enums.js";

const text = z.string().nullable().optional();
const ignored = z.unknown().optional();

/** PATCH /v1/billers/built_in/tax_profile/ */
export const taxProfileBody = z.strictObject({
  organization: ignored,
  missing: ignored,
  updated: ignored,
  tax_id: text,
  business_name: text,
  activity: text,
  activity_codes: z
    .union([
      z.array(z.string()),
      z.string().transform((one) =>
        one
          .split(",")
          .map((c) => c.trim())
          .filter(Boolean),
      ),
    ])
    .nullable()
    .optional(),
  address: text,
  commune: text,
  city: text,
  resolution_number: z.number().int().nullable().optional(),
  resolution_date: text,
  locale: restEnumField<Language>("Language", { emptyIsNull: true }),
});

export function taxProfileInput(body: z.infer<typeof taxProfileBody>) {
  return {
    taxId: body.tax_id,
    businessName: body.business_name,
    activity: body.activity,
    activityCodes: body.activity_codes,
    address: body.address,
    commune: body.commune,
    city: body.city,
    resolutionNumber: body.resolution_number,
    resolutionDate: body.resolution_date,
    locale: body.locale,
  };
}

/** POST /v1/billers/built_in/certificates/: `file` = the PKCS#12 in base64 */
export const certificateBody = z.strictObject({ file: text, password: text });

/** POST /v1/billers/built_in/cafs/: `file` = the CAF XML in base64 */
export const cafBody = z.strictObject({ file: text });

export function taxProfile(p: TaxProfileFieldsFragment) {
  return {
    organization: p.organization,
    test_mode: p.testMode,
    tax_id: p.taxId,
    business_name: p.businessName,
    activity: p.activity,
    activity_codes: p.activityCodes,
    address: p.address,
    commune: p.commune,
    city: p.city,
    resolution_number: p.resolutionNumber,
    resolution_date: p.resolutionDate,
    locale: p.locale,
    missing: p.missing,
    updated: isoTimestamp(p.updated),
  };
}

export function certificate(c: CertificateFieldsFragment) {
  return {
    id: c.id,
    subject_rut: c.subjectRut,
    valid_from: isoTimestamp(c.validFrom),
    valid_to: isoTimestamp(c.validTo),
    test_mode: c.testMode,
    created: isoTimestamp(c.created),
  };
}

export function caf(c: CafFieldsFragment) {
  return {
    id: c.id,
    document: c.documentType,
    range_from: c.rangeFrom,
    range_to: c.rangeTo,
    next_folio: c.nextFolio,
    available: c.available,
    authorized: c.authorized,
    expires: c.expires,
    test_mode: c.testMode,
    created: isoTimestamp(c.created),
  };
}
