/**
 * The organization's tax profile: the issuer (`Emisor`) of its DTEs (docs/sii-dte.md
 * "The document"; maximum lengths from SII's schema, dte-rules.ts SII_MAX_LENGTH). Pure rules:
 * `normalizeTaxProfile` validates a change, `missingForIssuing` says what an enrolled organization
 * still lacks before it can issue.
 *
 * Worked example: `{ taxId: "76.042.235-5", activityCodes: ["620200", "631200"] }` ->
 * `{ taxId: "76042235-5", activityCode: "620200,631200" }`; taxId "76042235-4" -> tax_id "has a wrong
 * check digit"; activity code "62A" -> "must be 1 to 6 digits".
 */
import { FieldErrorCollector } from "./errors.js";
import { normalizeRut } from "./rut.js";
import { SII_MAX_LENGTH } from "./dte-rules.js";
import { PRINT_LOCALES, isPrintLocale } from "./printed-labels.js";
import { SII_SENDING_MODES, SII_SENDING_OFF_IN_LIVE_MODE, type SiiSending } from "./sii-sending.js";

export interface TaxProfileInput {
  taxId?: string | null;
  businessName?: string | null;
  activity?: string | null;
  activityCodes?: string[] | null;
  address?: string | null;
  commune?: string | null;
  city?: string | null;
  resolutionNumber?: number | null;
  /** yyyy-mm-dd */
  resolutionDate?: string | null;
  /** language of printed documents: "es" or "en"; null: by the document type's country (domain/printed-labels.ts) */
  locale?: string | null;
  /** whether the mode's DTEs go to SII: "automatic" or "off" (test mode only); null: "automatic" */
  siiSending?: string | null;
}

/** The Organization columns a profile change writes (absent = unchanged, null = cleared). */
export interface TaxProfileColumns {
  taxId?: string | null;
  taxBusinessName?: string | null;
  taxActivity?: string | null;
  taxActivityCode?: string | null;
  taxAddress?: string | null;
  taxCommune?: string | null;
  taxCity?: string | null;
  taxResolutionNumber?: number | null;
  taxResolutionDate?: string | null;
  locale?: string | null;
  siiSending?: SiiSending;
}

/** At most 4 activity codes (SII `Acteco` 1..4), each 1 to 6 digits. */
export const MAX_ACTIVITY_CODES = 4;

const TEXTS = [
  ["businessName", "business_name", "taxBusinessName", SII_MAX_LENGTH.RznSoc],
  ["activity", "activity", "taxActivity", SII_MAX_LENGTH.GiroEmis],
  ["address", "address", "taxAddress", SII_MAX_LENGTH.DirOrigen],
  ["commune", "commune", "taxCommune", SII_MAX_LENGTH.CmnaOrigen],
  ["city", "city", "taxCity", SII_MAX_LENGTH.CiudadOrigen],
] as const;

/**
 * Validates a profile change of mode `testMode` into columns; field errors (REST names: tax_id,
 * business_name, activity, activity_codes.N, address, commune, city, resolution_number,
 * resolution_date, locale, sii_sending) go to `errors`. Texts are trimmed, "" or null clears; the RUT
 * is normalized (normalizeRut); `siiSending` null means "automatic", and "off" is refused in live mode
 * (a live DTE must reach SII).
 */
export function normalizeTaxProfile(
  input: TaxProfileInput,
  errors: FieldErrorCollector,
  testMode = true,
): TaxProfileColumns {
  const columns: TaxProfileColumns = {};
  if (input.taxId !== undefined) {
    if (input.taxId === null || input.taxId.trim() === "") columns.taxId = null;
    else {
      const rut = normalizeRut(input.taxId);
      if (!rut) errors.add("tax_id", "must be a RUT with a valid check digit (12345678-5)");
      columns.taxId = rut;
    }
  }
  for (const [key, field, column, max] of TEXTS) {
    const value = input[key];
    if (value === undefined) continue;
    const text = value?.trim() ?? "";
    if (text.length > max) errors.add(field, `must have at most ${max} characters`);
    columns[column] = text || null;
  }
  if (input.activityCodes !== undefined) {
    const codes = (input.activityCodes ?? []).map((c) => c.trim());
    if (codes.length > MAX_ACTIVITY_CODES) errors.add("activity_codes", `at most ${MAX_ACTIVITY_CODES} codes`);
    codes.forEach((code, i) => {
      if (!/^\d{1,6}$/.test(code))
        errors.add(`activity_codes.${i}`, "must be 1 to 6 digits (SII's economic activity code)");
    });
    columns.taxActivityCode = codes.length ? codes.join(",") : null;
  }
  if (input.resolutionNumber !== undefined) {
    const n = input.resolutionNumber;
    if (n !== null && (!Number.isInteger(n) || n < 0))
      errors.add("resolution_number", "must be a whole number, 0 or more (0 in certification)");
    columns.taxResolutionNumber = n;
  }
  if (input.resolutionDate !== undefined) {
    const d = input.resolutionDate;
    if (d !== null && (!/^\d{4}-\d{2}-\d{2}$/.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`))))
      errors.add("resolution_date", "must be a date yyyy-mm-dd");
    columns.taxResolutionDate = d;
  }
  if (input.locale !== undefined) {
    const locale = input.locale?.trim().toLowerCase() || null;
    if (locale !== null && !isPrintLocale(locale))
      errors.add("locale", `must be one of ${PRINT_LOCALES.join(", ")} (or null: by the document's country)`);
    columns.locale = locale;
  }
  if (input.siiSending !== undefined) {
    const sending = input.siiSending ?? "automatic";
    if (!(SII_SENDING_MODES as readonly string[]).includes(sending))
      errors.add("sii_sending", `must be one of ${SII_SENDING_MODES.join(", ")}`);
    else if (sending === "off" && !testMode) errors.add("sii_sending", SII_SENDING_OFF_IN_LIVE_MODE);
    else columns.siiSending = sending as SiiSending;
  }
  return columns;
}

/** Stored activity codes ("620200,631200") as a list. */
export function activityCodesOf(stored: string | null | undefined): string[] {
  return stored ? stored.split(",").filter(Boolean) : [];
}

/**
 * What a profile lacks to issue a DTE (REST field names): tax_id, business_name, activity
 * (GiroEmis) and activity_codes (Acteco) are required by SII's schema. Empty: complete.
 */
export function missingForIssuing(profile: {
  taxId: string | null;
  taxBusinessName: string | null;
  taxActivity: string | null;
  taxActivityCode: string | null;
}): string[] {
  const missing: string[] = [];
  if (!profile.taxId) missing.push("tax_id");
  if (!profile.taxBusinessName) missing.push("business_name");
  if (!profile.taxActivity) missing.push("activity");
  if (!activityCodesOf(profile.taxActivityCode).length) missing.push("activity_codes");
  return missing;
}
