/**
 * The organization's portal branding (spec "Session" settings: business name, colours, terms and
 * privacy URLs, whether invoices are shown). Read and updated through GraphQL; new customer
 * sessions copy it (services/customer-sessions.ts). Branding is per mode, like the tax profile:
 * test and live keys each see and change their own mode's values (services/organization-settings.ts;
 * docs/decisions.md "Mode isolation of settings").
 */
import { FieldErrorCollector } from "../domain/errors.js";
import { BUSINESS_NAME_MAX_LENGTH, normalizeHexColor, type Branding } from "../domain/customer-sessions.js";
import { tenant, type ServiceContext } from "./context.js";
import { checkHttpUrl } from "./customer-sessions.js";
import { organizationName, readSettings, writeSettings, type OrganizationSettings } from "./organization-settings.js";

export interface BrandingInput {
  businessName?: string | null;
  colorBackground?: string | null;
  colorAsset?: string | null;
  displayInvoices?: boolean | null;
  termsOfServiceUrl?: string | null;
  privacyPolicyUrl?: string | null;
  /** whether customers may cancel subscriptions at period end in the portal (not null) */
  portalCancelSubscriptions?: boolean | null;
}

export type OrganizationBranding = Branding & {
  id: string;
  name: string;
  testMode: boolean;
  updatedAt: Date;
  /**
   * whether the customer portal offers cancelling a subscription at period end (read live, not copied into sessions)
   */
  portalCancelSubscriptions: boolean;
};

/** The branding view of a mode's settings (`name`: the organization's name). */
function brandingOf(name: string, row: OrganizationSettings): OrganizationBranding {
  return {
    id: row.organizationId,
    name,
    testMode: row.testMode,
    businessName: row.businessName,
    colorBackground: row.colorBackground,
    colorAsset: row.colorAsset,
    displayInvoices: row.displayInvoices,
    termsOfServiceUrl: row.termsOfServiceUrl,
    privacyPolicyUrl: row.privacyPolicyUrl,
    portalCancelSubscriptions: row.portalCancelSubscriptions,
    updatedAt: row.updatedAt,
  };
}

/** The caller's organization's branding in the caller's mode. */
export async function getBranding(ctx: ServiceContext): Promise<OrganizationBranding> {
  return brandingOf(
    await organizationName(ctx.prisma, ctx.auth.organizationId),
    await readSettings(ctx.prisma, tenant(ctx)),
  );
}

/**
 * Changes the given branding fields; an absent field is kept, null or "" clears a text field
 * (displayInvoices cannot be null). Colours are `#rgb` or `#rrggbb`, stored as lowercase
 * `#rrggbb`; URLs absolute http(s); the business name at most 100 characters and not blank.
 * Only the caller's mode changes. ValidationError (400) names each bad field; then nothing changes
 * (one upsert).
 */
export async function updateBranding(ctx: ServiceContext, input: BrandingInput): Promise<OrganizationBranding> {
  const errors = new FieldErrorCollector();
  const data: Partial<Branding & { portalCancelSubscriptions: boolean }> = {};
  if (input.businessName !== undefined) {
    const name = input.businessName?.trim() ?? "";
    if (input.businessName !== null && input.businessName !== "" && name === "")
      errors.add("business_name", "must not be blank");
    if (name.length > BUSINESS_NAME_MAX_LENGTH)
      errors.add("business_name", `must have at most ${BUSINESS_NAME_MAX_LENGTH} characters`);
    data.businessName = name || null;
  }
  for (const [field, path] of [
    ["colorBackground", "color_background"],
    ["colorAsset", "color_asset"],
  ] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (value === null || value === "") {
      data[field] = null;
      continue;
    }
    const color = normalizeHexColor(value);
    if (!color) errors.add(path, "must be a hex colour #rrggbb or #rgb");
    data[field] = color;
  }
  if (input.displayInvoices !== undefined) {
    if (input.displayInvoices === null) errors.add("display_invoices", "must be true or false");
    else data.displayInvoices = input.displayInvoices;
  }
  if (input.portalCancelSubscriptions !== undefined) {
    if (input.portalCancelSubscriptions === null) errors.add("portal_cancel_subscriptions", "must be true or false");
    else data.portalCancelSubscriptions = input.portalCancelSubscriptions;
  }
  for (const [field, path] of [
    ["termsOfServiceUrl", "terms_of_service_url"],
    ["privacyPolicyUrl", "privacy_policy_url"],
  ] as const) {
    const value = input[field];
    if (value === undefined) continue;
    checkHttpUrl(value, path, errors, false);
    data[field] = value || null;
  }
  errors.throwIfAny("Invalid branding");
  return brandingOf(
    await organizationName(ctx.prisma, ctx.auth.organizationId),
    await writeSettings(ctx.prisma, tenant(ctx), data),
  );
}
