/**
 * The organization's tax profile (the DTE issuer: the tax* columns of OrganizationSettings) and
 * its SII enrollment. Per mode: test and live keys each read and change their own mode's profile
 * (services/organization-settings.ts; docs/decisions.md "Mode isolation of settings"). Rules:
 * domain/tax-profile.ts; docs/sii-setup.md.
 */
import { FieldErrorCollector } from "../domain/errors.js";
import type { IssuerProfile } from "../domain/issued-parties.js";
import {
  activityCodesOf,
  missingForIssuing,
  normalizeTaxProfile,
  type TaxProfileInput,
} from "../domain/tax-profile.js";
import { storedDate, dateColumn } from "../domain/formats.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";
import { readSettings, writeSettings } from "./organization-settings.js";

/**
 * The profile's fields (domain/issued-parties.ts IssuerProfile: what a document's issuer snapshot is made of;
 * `resolutionDate` yyyy-mm-dd) and its mode.
 */
export interface TaxProfile extends IssuerProfile {
  organization: string;
  /** the mode this profile belongs to (each mode has its own) */
  testMode: boolean;
  /** language of the mode's printed documents ("es", "en"), null: by each document type's country */
  locale: string | null;
  /** whether this mode's DTEs go to SII: "automatic" or "off" (domain/sii-sending.ts SiiSending) */
  siiSending: string;
  /** REST names of the fields SII requires that are still empty */
  missing: string[];
  updated: Date;
}

type StoredProfile = {
  organizationId: string;
  testMode: boolean;
  taxId: string | null;
  taxBusinessName: string | null;
  taxActivity: string | null;
  taxActivityCode: string | null;
  taxAddress: string | null;
  taxCommune: string | null;
  taxCity: string | null;
  taxResolutionNumber: number | null;
  taxResolutionDate: Date | null;
  locale: string | null;
  siiSending: string;
  updatedAt: Date;
};

/** The tax profile view of a mode's settings row (services/organization-settings.ts). */
export function taxProfileOf(row: StoredProfile): TaxProfile {
  return {
    organization: row.organizationId,
    testMode: row.testMode,
    taxId: row.taxId,
    businessName: row.taxBusinessName,
    activity: row.taxActivity,
    activityCodes: activityCodesOf(row.taxActivityCode),
    address: row.taxAddress,
    commune: row.taxCommune,
    city: row.taxCity,
    resolutionNumber: row.taxResolutionNumber,
    resolutionDate: storedDate(row.taxResolutionDate),
    locale: row.locale,
    siiSending: row.siiSending,
    missing: missingForIssuing(row),
    updated: row.updatedAt,
  };
}

/**
 * The tax profile of organization `key.organizationId` in mode `key.testMode` (inside a transaction: pass it as `db`).
 */
export async function readTaxProfile(db: Pick<Tx, "organizationSettings">, key: TenantKey): Promise<TaxProfile> {
  return taxProfileOf(await readSettings(db, key));
}

/** The caller's organization's tax profile in the caller's mode. */
export async function getTaxProfile(ctx: ServiceContext): Promise<TaxProfile> {
  return readTaxProfile(ctx.prisma, tenant(ctx));
}

/**
 * Changes the given profile fields of the caller's mode (absent: kept; null or "": cleared); the
 * other mode's profile is not touched. ValidationError (400) names every bad field
 * (domain/tax-profile.ts normalizeTaxProfile; `sii_sending` "off" with a live key); then nothing
 * changes. Turning SII sending off applies to DTEs finalized from then on (docs/sii-sending.md).
 */
export async function updateTaxProfile(ctx: ServiceContext, input: TaxProfileInput): Promise<TaxProfile> {
  const errors = new FieldErrorCollector();
  const { taxResolutionDate, ...columns } = normalizeTaxProfile(input, errors, ctx.auth.testMode);
  errors.throwIfAny("Invalid tax profile");
  const data = {
    ...columns,
    ...(taxResolutionDate !== undefined
      ? { taxResolutionDate: taxResolutionDate === null ? null : dateColumn(taxResolutionDate) }
      : {}),
  };
  return taxProfileOf(await writeSettings(ctx.prisma, tenant(ctx), data));
}
