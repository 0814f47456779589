/**
 * An organization's settings of one mode: its tax profile (Chile: the DTE's Emisor) and its
 * customer portal branding, one `OrganizationSettings` row per organization and mode
 * (docs/decisions.md "Mode isolation of settings"). Every reader and writer names the mode, so a
 * test key reads and changes test mode's row only and never what a live document is issued with.
 * The tax profile (services/tax-profile.ts) and the branding (services/branding.ts) are views of it;
 * issuing (services/tax-documents.ts), PDFs, sending to SII and receiving read it here.
 */
import type { OrganizationSettings, Prisma } from "../infra/prisma/generated/client.js";
import type { TenantKey, Tx } from "./context.js";

export type { OrganizationSettings };

/** The values of a mode that never had settings written: every field empty, invoices shown. */
function emptySettings(key: TenantKey): OrganizationSettings {
  return {
    organizationId: key.organizationId,
    testMode: key.testMode,
    businessName: null,
    colorBackground: null,
    colorAsset: null,
    displayInvoices: true,
    termsOfServiceUrl: null,
    privacyPolicyUrl: null,
    portalCancelSubscriptions: false,
    taxId: null,
    taxBusinessName: null,
    taxActivity: null,
    taxActivityCode: null,
    taxAddress: null,
    taxCommune: null,
    taxCity: null,
    taxResolutionNumber: null,
    taxResolutionDate: null,
    locale: null,
    siiSending: "automatic",
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
}

/**
 * The settings of organization `key.organizationId` in mode `key.testMode`. Both rows are written
 * with the organization (newOrganizationSettings) and by the migration that introduced them; a
 * missing row reads as empty settings (not enrolled with SII, no branding) with times at the epoch.
 */
export async function readSettings(
  db: Pick<Tx, "organizationSettings">,
  key: TenantKey,
): Promise<OrganizationSettings> {
  const row = await db.organizationSettings.findUnique({
    where: { organizationId_testMode: { organizationId: key.organizationId, testMode: key.testMode } },
  });
  return row ?? emptySettings(key);
}

/** The name of organization `id` (one statement; the branding's name, the issuer's name when it has no other). */
export async function organizationName(db: Pick<Tx, "organization">, id: string): Promise<string> {
  return (await db.organization.findUniqueOrThrow({ where: { id }, select: { name: true } })).name;
}

/** Changes `data` in the settings of `key`'s mode only (one upsert), and returns the row. */
export async function writeSettings(
  db: Pick<Tx, "organizationSettings">,
  key: TenantKey,
  data: Omit<
    Prisma.OrganizationSettingsUncheckedCreateInput,
    "organizationId" | "testMode" | "createdAt" | "updatedAt"
  >,
): Promise<OrganizationSettings> {
  const { organizationId, testMode } = key;
  return db.organizationSettings.upsert({
    where: { organizationId_testMode: { organizationId, testMode } },
    create: { organizationId, testMode, ...data },
    update: data,
  });
}

/**
 * The two rows (test and live) a new organization named `name` starts with: its name as the branding's business name.
 */
export function newOrganizationSettings(
  organizationId: string,
  name: string,
): Prisma.OrganizationSettingsCreateManyInput[] {
  return [false, true].map((testMode) => ({ organizationId, testMode, businessName: name }));
}
