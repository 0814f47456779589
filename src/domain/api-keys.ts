/**
 * Rules of API keys that need no database: when a key expires, whether it has expired, and when
 * its last use is worth writing down.
 */
import { ValidationError } from "./errors.js";

/** Written `lastUsedAt` is refreshed at most this often (ms); fresher values are left alone. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses the `--expires` of `api-key create` into the instant from which the key stops working.
 * - `yyyy-mm-dd`: 00:00 UTC of that date (the key works through the day before, UTC);
 * - an ISO 8601 timestamp with a UTC offset (`2026-12-01T12:00:00Z`, `2026-12-01T09:00-03:00`,
 *   seconds and up to 3 fraction digits optional): that instant.
 * Throws ValidationError (field `expires`) for anything else (a timestamp without an offset is
 * ambiguous and refused), an impossible calendar date (`2026-02-30`), or an instant that is not
 * after `now`.
 */
export function parseKeyExpiry(input: string, now: Date): Date {
  const text = input.trim();
  let instant: Date | null = null;
  const date = DATE.exec(text);
  const timestamp = date ? null : TIMESTAMP.exec(text);
  const [y, m, d] = (date ?? timestamp ?? []).slice(1, 4).map(Number);
  if ((date || timestamp) && validCalendarDate(y, m, d)) {
    if (date) instant = new Date(Date.UTC(y, m - 1, d));
    else if (
      timestamp &&
      Number(timestamp[4]) < 24 &&
      Number(timestamp[5]) < 60 &&
      Number(timestamp[6] ?? 0) < 60 &&
      validOffset(timestamp[8])
    ) {
      instant = new Date(text);
    }
  }
  if (!instant || Number.isNaN(instant.getTime())) {
    throw ValidationError.field(
      "expires",
      `must be a date yyyy-mm-dd or an ISO 8601 timestamp with an offset (2026-12-01T12:00:00Z), ` +
        `got ${JSON.stringify(input)}`,
    );
  }
  if (instant.getTime() <= now.getTime()) {
    throw ValidationError.field(
      "expires",
      `must be in the future, got ${instant.toISOString()} (now ${now.toISOString()})`,
    );
  }
  return instant;
}

/** True when a key with this `expiresAt` (null: never) no longer works at `now`. */
export function isKeyExpired(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && expiresAt.getTime() <= now.getTime();
}

/** True when `lastUsedAt` (null: never written) is older than LAST_USED_RESOLUTION_MS at `now`. */
export function lastUseIsStale(lastUsedAt: Date | null, now: Date): boolean {
  return lastUsedAt === null || now.getTime() - lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS;
}

function validCalendarDate(y: number, m: number, d: number): boolean {
  const probe = new Date(Date.UTC(y, m - 1, d));
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
}

function validOffset(offset: string): boolean {
  if (offset === "Z") return true;
  const [h, min] = offset.slice(1).split(":").map(Number);
  return h <= 14 && min < 60;
}

const API_KEY = /^sk_(?:test|live)_[0-9A-Za-z]+$/;

/**
 * The API key of an `Authorization` header, or null when the header is missing or is not
 * `Bearer <key>` with a key shaped `sk_test_...`/`sk_live_...`. The scheme is case-insensitive
 * (RFC 7235 §2.1: `Bearer`, `bearer` and `BEARER` are the same); the key is not. Whitespace around
 * and between the two parts is allowed. Example: `bearer  sk_test_abc ` -> `sk_test_abc`;
 * `Basic sk_test_abc` -> null; `Bearer SK_TEST_abc` -> null.
 */
export function bearerKey(header: string | null | undefined): string | null {
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(header ?? "");
  if (!match || match[1].toLowerCase() !== "bearer" || !API_KEY.test(match[2])) return null;
  return match[2];
}

/**
 * Whether `text` has the shape of an organization id (`org_` + 24 base62 characters), so `api-key create
 * --organization` names one by id.
 */
export function isOrganizationId(text: string): boolean {
  return /^org_[0-9A-Za-z]{24}$/.test(text);
}

/**
 * Whether a caller may create or revoke an API key of `mode` (docs/dashboard.md "API keys"): an admin member of the
 * dashboard may manage keys of both modes; an API key only keys of its own mode, so a test key never makes or
 * ends a live one. Example: a live key may create a live key; a test key asking for a live key is refused.
 */
export function mayManageKeyOfMode(caller: { member: boolean; testMode: boolean }, mode: "test" | "live"): boolean {
  return caller.member || (mode === "test") === caller.testMode;
}
