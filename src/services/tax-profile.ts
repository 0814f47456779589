/**
 * The organization's tax profile (the DTE issuer, Organization tax* columns) and its SII
 * enrollment. Shared by test and live mode, like branding. Rules: domain/tax-profile.ts;
 * docs/sii-setup.md.
 */
import { FieldErrorCollector } from "../domain/errors.js";
import { activityCodesOf, missingForIssuing, normalizeTaxProfile, type TaxProfileInput } from "../domain/tax-profile.js";
import { storedDate, dateColumn } from "./documents.js";
import type { ServiceContext } from "./context.js";

export const TAX_PROFILE_SELECT = {
  id: true,
  taxId: true,
  taxBusinessName: true,
  taxActivity: true,
  taxActivityCode: true,
  taxAddress: true,
  taxCommune: true,
  taxCity: true,
  taxResolutionNumber: true,
  taxResolutionDate: true,
  updatedAt: true,
} as const;

export interface TaxProfile {
  organization: string;
  taxId: string | null;
  businessName: string | null;
  activity: string | null;
  activityCodes: string[];
  address: string | null;
  commune: string | null;
  city: string | null;
  resolutionNumber: number | null;
  /** yyyy-mm-dd */
  resolutionDate: string | null;
  /** REST names of the fields SII requires that are still empty */
  missing: string[];
  updated: Date;
}

type StoredProfile = {
  id: string;
  taxId: string | null;
  taxBusinessName: string | null;
  taxActivity: string | null;
  taxActivityCode: string | null;
  taxAddress: string | null;
  taxCommune: string | null;
  taxCity: string | null;
  taxResolutionNumber: number | null;
  taxResolutionDate: Date | null;
  updatedAt: Date;
};

function view(row: StoredProfile): TaxProfile {
  return {
    organization: row.id,
    taxId: row.taxId,
    businessName: row.taxBusinessName,
    activity: row.taxActivity,
    activityCodes: activityCodesOf(row.taxActivityCode),
    address: row.taxAddress,
    commune: row.taxCommune,
    city: row.taxCity,
    resolutionNumber: row.taxResolutionNumber,
    resolutionDate: storedDate(row.taxResolutionDate),
    missing: missingForIssuing(row),
    updated: row.updatedAt,
  };
}

/** The caller's organization's tax profile. */
export async function getTaxProfile(ctx: ServiceContext): Promise<TaxProfile> {
  return view(await ctx.prisma.organization.findUniqueOrThrow({ where: { id: ctx.auth.organizationId }, select: TAX_PROFILE_SELECT }));
}

/**
 * Changes the given profile fields (absent: kept; null or "": cleared). ValidationError (400)
 * names every bad field (domain/tax-profile.ts normalizeTaxProfile); then nothing changes.
 */
export async function updateTaxProfile(ctx: ServiceContext, input: TaxProfileInput): Promise<TaxProfile> {
  const errors = new FieldErrorCollector();
  const { taxResolutionDate, ...columns } = normalizeTaxProfile(input, errors);
  errors.throwIfAny("Invalid tax profile");
  const data = { ...columns, ...(taxResolutionDate !== undefined ? { taxResolutionDate: taxResolutionDate === null ? null : dateColumn(taxResolutionDate) } : {}) };
  return view(await ctx.prisma.organization.update({ where: { id: ctx.auth.organizationId }, data, select: TAX_PROFILE_SELECT }));
}
