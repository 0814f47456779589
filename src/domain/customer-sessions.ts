/**
 * Customer sessions (spec "Session"): the key format, expiry and the settings snapshot taken from
 * the organization's branding, plus the branding value rules (colours, lengths). Pure functions;
 * randomness is passed in. Choices: docs/customer-sessions.md.
 */

/** Every session key starts with this (the rest is base62). */
export const SESSION_KEY_PREFIX = "cs_";
/** Random base62 characters after the prefix. */
export const SESSION_KEY_RANDOM_LENGTH = 32;
/** Entropy of a key: 32 x log2(62) ~ 190.5 bits (at least 128 are required). */
export const SESSION_KEY_BITS = SESSION_KEY_RANDOM_LENGTH * Math.log2(62);

/**
 * A new session key: the prefix and `randomBase62(32)`, which must return that many uniformly
 * random base62 characters from a cryptographic source (infra/ids.ts `randomSecret`).
 */
export function newSessionKey(randomBase62: (length: number) => string): string {
  const random = randomBase62(SESSION_KEY_RANDOM_LENGTH);
  if (!/^[0-9A-Za-z]*$/.test(random) || random.length !== SESSION_KEY_RANDOM_LENGTH) {
    throw new Error(`session key source must return ${SESSION_KEY_RANDOM_LENGTH} base62 characters`);
  }
  return `${SESSION_KEY_PREFIX}${random}`;
}

/** When a session created at `createdAt` stops working: `ttlSeconds` (a positive integer) later. */
export function sessionExpiresAt(createdAt: Date, ttlSeconds: number): Date {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1)
    throw new Error(`session TTL must be a positive integer of seconds, got ${ttlSeconds}`);
  return new Date(createdAt.getTime() + ttlSeconds * 1000);
}

/** A session is expired from its `expiresAt` instant on (expiresAt <= now). */
export function isSessionExpired(expiresAt: Date, now: Date): boolean {
  return expiresAt.getTime() <= now.getTime();
}

// ---------------------------------------------------------------------------------------------
// branding and settings

/** Longest accepted business name. */
export const BUSINESS_NAME_MAX_LENGTH = 100;
/** Longest accepted URL (return, terms, privacy). */
export const URL_MAX_LENGTH = 2000;

/**
 * A CSS hex colour `#rgb` or `#rrggbb` (any case) as lowercase `#rrggbb`; null when `value` is not
 * one (names, `rgb()`, alpha channels and missing `#` are rejected).
 */
export function normalizeHexColor(value: string): string | null {
  const short = /^#([0-9a-fA-F])([0-9a-fA-F])([0-9a-fA-F])$/.exec(value);
  if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`.toLowerCase();
  if (/^#[0-9a-fA-F]{6}$/.test(value)) return value.toLowerCase();
  return null;
}

/** The organization's portal branding in one mode (OrganizationSettings columns). */
export interface Branding {
  businessName: string | null;
  colorBackground: string | null;
  colorAsset: string | null;
  displayInvoices: boolean;
  termsOfServiceUrl: string | null;
  privacyPolicyUrl: string | null;
}

/** A session's `settings` (spec "Session"): the branding at creation plus the return URL. */
export interface SessionSettings extends Branding {
  returnUrl: string;
}

/**
 * The settings snapshot of a new session: the organization's branding as it is now, the
 * organization's name when it has no business name, and the session's return URL.
 */
export function sessionSettings(organization: Branding & { name: string }, returnUrl: string): SessionSettings {
  return {
    businessName: organization.businessName || organization.name,
    colorBackground: organization.colorBackground,
    colorAsset: organization.colorAsset,
    displayInvoices: organization.displayInvoices,
    termsOfServiceUrl: organization.termsOfServiceUrl,
    privacyPolicyUrl: organization.privacyPolicyUrl,
    returnUrl,
  };
}

/**
 * Reads a stored settings snapshot (JSON) back; a missing or mistyped value reads as its default
 * (null, display_invoices true), and `returnUrl` falls back to the session's own.
 */
export function storedSessionSettings(json: unknown, returnUrl: string): SessionSettings {
  const o = json !== null && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  const text = (key: string) => (typeof o[key] === "string" ? (o[key] as string) : null);
  return {
    businessName: text("businessName"),
    colorBackground: text("colorBackground"),
    colorAsset: text("colorAsset"),
    displayInvoices: typeof o.displayInvoices === "boolean" ? o.displayInvoices : true,
    termsOfServiceUrl: text("termsOfServiceUrl"),
    privacyPolicyUrl: text("privacyPolicyUrl"),
    returnUrl: text("returnUrl") ?? returnUrl,
  };
}

/**
 * `text` with every session key replaced by `cs_[redacted]` (request logs print paths, and GET by key has the key in
 * its path).
 */
export function redactSessionKeys(text: string): string {
  return text.replace(/\bcs_[0-9A-Za-z]+/g, `${SESSION_KEY_PREFIX}[redacted]`);
}
