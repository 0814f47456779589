/**
 * The customer portal's rules (docs/customer-portal.md): the credential's lifetime, its cookies,
 * the CSRF header, the portal's language and readable colours from the branding (WCAG 2.x
 * contrast). Pure functions, unit-tested in test/domain/portal.test.ts.
 */

/** Longest life of a portal credential (seconds); it never outlives its session. */
export const PORTAL_CREDENTIAL_TTL_SECONDS = 30 * 60;
/** The HttpOnly cookie holding the credential's secret. */
export const PORTAL_COOKIE = "portal_credential";
/** The cookie holding the CSRF token, readable by the portal page, which echoes it in PORTAL_CSRF_HEADER. */
export const PORTAL_CSRF_COOKIE = "portal_csrf";
/** The header every cookie-authenticated /graphql request must carry, with the CSRF cookie's value. */
export const PORTAL_CSRF_HEADER = "x-portal-csrf";
/** Random base62 characters of a credential secret and of a CSRF token (about 190 bits each). */
export const PORTAL_SECRET_LENGTH = 32;

/**
 * When a credential made at `now` for a session expiring at `sessionExpiresAt` stops working:
 * `ttlSeconds` later, or at the session's expiry when that comes first.
 */
export function credentialExpiresAt(
  now: Date,
  sessionExpiresAt: Date,
  ttlSeconds = PORTAL_CREDENTIAL_TTL_SECONDS,
): Date {
  return new Date(Math.min(now.getTime() + ttlSeconds * 1000, sessionExpiresAt.getTime()));
}

/**
 * The two Set-Cookie values of a new credential: the secret (HttpOnly) and the CSRF token (read by
 * the page), both SameSite=Strict on path `/` (the page is under /portal/, the API at /graphql),
 * Secure when the service is reached over https, expiring with the credential.
 */
export function credentialCookies(
  secret: string,
  csrfToken: string,
  expiresAt: Date,
  now: Date,
  secure: boolean,
): string[] {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  const common = `Path=/; Max-Age=${maxAge}; SameSite=Strict${secure ? "; Secure" : ""}`;
  return [`${PORTAL_COOKIE}=${secret}; ${common}; HttpOnly`, `${PORTAL_CSRF_COOKIE}=${csrfToken}; ${common}`];
}

/** Set-Cookie values that remove both portal cookies. */
export function clearedCredentialCookies(secure: boolean): string[] {
  const common = `Path=/; Max-Age=0; SameSite=Strict${secure ? "; Secure" : ""}`;
  return [`${PORTAL_COOKIE}=; ${common}; HttpOnly`, `${PORTAL_CSRF_COOKIE}=; ${common}`];
}

/** The cookies of a Cookie header by name (the first of a repeated name wins); {} when none. */
export function parseCookies(header: string | null | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    if (name && !Object.hasOwn(cookies, name)) cookies[name] = part.slice(eq + 1).trim();
  }
  return cookies;
}

/**
 * True when `value` looks like a portal secret (base62, PORTAL_SECRET_LENGTH characters): anything else is not looked
 * up.
 */
export function isPortalSecret(value: string | undefined): value is string {
  return value !== undefined && value.length === PORTAL_SECRET_LENGTH && /^[0-9A-Za-z]+$/.test(value);
}

/**
 * The one document status a customer sees in the portal: issued documents only. A draft is the business's work in
 * progress (it may still change or be deleted, and has no number), so to a portal credential every draft invoice,
 * credit note and order reads exactly like an unknown id (docs/customer-portal.md "Only issued documents").
 */
export const PORTAL_DOCUMENT_STATUS = "finalized";

/** True when a customer may see a document of `status` in the portal (PORTAL_DOCUMENT_STATUS). */
export function portalShowsDocument(status: string): boolean {
  return status === PORTAL_DOCUMENT_STATUS;
}

/**
 * The absolute portal link of a session key: `<baseUrl>/portal/<key>` (`baseUrl` without a trailing slash:
 * PUBLIC_URL, else the request's origin). Opening it exchanges the key for the portal credential
 * (docs/customer-portal.md "Handing out a link"); it is as secret as the key.
 */
export function portalLink(baseUrl: string, key: string): string {
  return `${baseUrl}/portal/${encodeURIComponent(key)}`;
}

/**
 * `path` with whatever follows `/portal/` replaced by `[redacted]` (request logs; the session key
 * is in the portal link), except the portal's static files under `/portal/assets/`.
 */
export function redactPortalPath(path: string): string {
  if (path.startsWith("/portal/assets/")) return path;
  return path.replace(/^\/portal\/[^/]+/, "/portal/[redacted]");
}

// ---------------------------------------------------------------------------------------------
// language

/** Languages of the portal. */
export type PortalLocale = "es" | "en";

/** Countries whose customers see the portal in Spanish (Spanish is an official language there). */
export const SPANISH_COUNTRIES: ReadonlySet<string> = new Set([
  "AR",
  "BO",
  "CL",
  "CO",
  "CR",
  "CU",
  "DO",
  "EC",
  "ES",
  "GQ",
  "GT",
  "HN",
  "MX",
  "NI",
  "PA",
  "PE",
  "PR",
  "PY",
  "SV",
  "UY",
  "VE",
]);

/**
 * The portal's language for a customer of country `countryId` (ISO 3166-1 alpha-2): Spanish for SPANISH_COUNTRIES, else
 * English.
 */
export function portalLocale(countryId: string | null | undefined): PortalLocale {
  return countryId && SPANISH_COUNTRIES.has(countryId.toUpperCase()) ? "es" : "en";
}

// ---------------------------------------------------------------------------------------------
// colours (WCAG 2.x relative luminance and contrast ratio)

/** Minimum contrast of text against its background (WCAG 2.x AA, normal text). */
export const MIN_TEXT_CONTRAST = 4.5;

const DEFAULT_BACKGROUND = "#ffffff";
const DEFAULT_ASSET = "#0b57d0";
const DARK_TEXT = "#111111";
const LIGHT_TEXT = "#ffffff";

/** WCAG relative luminance (0 black to 1 white) of a lowercase `#rrggbb` colour. */
export function relativeLuminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

/** WCAG contrast ratio of two `#rrggbb` colours, from 1 (same) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Of dark and light text, the one with more contrast against `background`. */
function textOn(background: string): string {
  return contrastRatio(DARK_TEXT, background) >= contrastRatio(LIGHT_TEXT, background) ? DARK_TEXT : LIGHT_TEXT;
}

/** The colours the portal paints with, all readable (at least MIN_TEXT_CONTRAST where text meets its background). */
export interface PortalColors {
  /** page background: the branding's background colour */
  background: string;
  /** body text on `background`: near black or white, whichever contrasts more */
  text: string;
  /** links and buttons: the branding's asset colour when it contrasts enough with `background`, else `text` */
  asset: string;
  /** text on an `asset` button: near black or white, whichever contrasts more */
  onAsset: string;
  /** true when a branding colour was replaced because it was not readable */
  adjusted: boolean;
}

/**
 * Readable colours from the branding's `colorBackground` and `colorAsset` (lowercase `#rrggbb` or
 * null; defaults white and blue). The background is kept as given; the asset colour is kept when
 * its contrast with the background is at least MIN_TEXT_CONTRAST (it colours link text), else the
 * text colour replaces it (`adjusted`).
 */
export function portalColors(colorBackground: string | null, colorAsset: string | null): PortalColors {
  const background = colorBackground ?? DEFAULT_BACKGROUND;
  const text = textOn(background);
  const wanted = colorAsset ?? DEFAULT_ASSET;
  const readable = contrastRatio(wanted, background) >= MIN_TEXT_CONTRAST;
  const asset = readable ? wanted : text;
  return { background, text, asset, onAsset: textOn(asset), adjusted: !readable && colorAsset !== null };
}
