/**
 * Limits every input is held to before it reaches the database (docs/input-limits.md): the text
 * rules (no NUL, no unpaired UTF-16 surrogates, a maximum length per field), the range of the
 * `Decimal(20,6)` money and quantity columns, and the structural bounds of a JSON body (nesting
 * depth, keys per object). Pure functions: the REST adapter and the GraphQL layer apply them; the
 * error messages that quote input are bounded here too (`quote`, `boundMessage`).
 */
import { Decimal } from "decimal.js";
import { URL_MAX_LENGTH } from "./customer-sessions.js";
import { WEBHOOK_URL_MAX_LENGTH } from "./webhooks.js";
import { addFieldError, type FieldErrorCollector, type FieldErrors } from "./errors.js";

// ------------------------------------------------------------------------------------------------
// numbers

/**
 * Largest absolute value a money or quantity column holds: the columns are `Decimal(20,6)`
 * (14 digits before the point, 6 after; prisma/schema.prisma), so 10^14 and above overflow.
 */
export const MAX_DECIMAL = "99999999999999.999999";
const MAX_DECIMAL_VALUE = new Decimal(MAX_DECIMAL);

/**
 * Why a decimal value (exact text, "1234.50") does not fit a `Decimal(20,6)` column, or null when it
 * does. Digits beyond the sixth decimal are rounded by the column, as before; only the magnitude is refused.
 */
export function decimalRangeProblem(value: string | Decimal): string | null {
  let d: Decimal;
  try {
    d = value instanceof Decimal ? value : new Decimal(value);
  } catch {
    return "must be a decimal number";
  }
  if (!d.isFinite()) return "must be a finite decimal number";
  return d.abs().gt(MAX_DECIMAL_VALUE)
    ? `must be between -${MAX_DECIMAL} and ${MAX_DECIMAL} (the largest allowed value is ${MAX_DECIMAL})`
    : null;
}

// ------------------------------------------------------------------------------------------------
// text

/** Longest note (printed or internal) of an invoice, credit note or subscription, in characters. */
export const MAX_NOTE_LENGTH = 5_000;

/**
 * Adds a field error on `field` when `note` is longer than MAX_NOTE_LENGTH (the services' rule;
 * the GraphQL input guard holds the same fields to TEXT_LIMITS, which names this limit).
 */
export function checkNoteLength(errors: FieldErrorCollector, field: string, note: string | null | undefined): void {
  if (note && note.length > MAX_NOTE_LENGTH) errors.add(field, `must have at most ${MAX_NOTE_LENGTH} characters`);
}

/** Maximum length (in characters, Unicode code points) of a text field without an entry in TEXT_LIMITS. */
export const DEFAULT_TEXT_LIMIT = 1_000;

/**
 * The named exceptions to DEFAULT_TEXT_LIMIT, by GraphQL input field (`InputType.field`) or
 * argument (`Query.field.arg` / `Mutation.field.arg`); a REST body field is the GraphQL input field
 * it maps to. The table is printed in docs/input-limits.md (a unit test keeps the two equal).
 */
export const TEXT_LIMITS: Readonly<Record<string, number>> = {
  // free text printed on documents and messages
  "InvoiceInput.note": MAX_NOTE_LENGTH,
  "CreditNoteInput.note": MAX_NOTE_LENGTH,
  "CreditNoteInput.internalNote": MAX_NOTE_LENGTH,
  "SubscriptionInput.note": MAX_NOTE_LENGTH,
  "ReminderInput.message": 10_000,
  // URLs (domain/customer-sessions.ts URL_MAX_LENGTH, 2,000)
  "CustomerInput.website": URL_MAX_LENGTH,
  "CustomerSessionInput.returnUrl": URL_MAX_LENGTH,
  "SourceInput.returnUrl": URL_MAX_LENGTH,
  "OrganizationBrandingInput.privacyPolicyUrl": URL_MAX_LENGTH,
  "OrganizationBrandingInput.termsOfServiceUrl": URL_MAX_LENGTH,
  // a webhook endpoint's URL (domain/webhooks.ts WEBHOOK_URL_MAX_LENGTH, 2,048)
  "WebhookEndpointInput.url": WEBHOOK_URL_MAX_LENGTH,
  // files travel as base64 (or XML) text; the request body limit (5 MB) bounds them too
  "CafInput.file": 100_000,
  "CertificateInput.file": 100_000,
  "ReceivePurchaseDocumentsInput.file": 5_000_000,
  "ReceivePurchaseDocumentsInput.xml": 5_000_000,
  "ReceivePurchaseDocumentsInput.fileName": 80,
  "ReceiverAnswerInput.file": 5_000_000,
  "ReceiverAnswerInput.xml": 5_000_000,
  // idempotency keys of usage records (Lago's transaction_id)
  "UsageInput.transactionId": 255,
};

/** The maximum length of the text field `key` (`InputType.field`). */
export function textLimit(key: string): number {
  return Object.hasOwn(TEXT_LIMITS, key) ? TEXT_LIMITS[key] : DEFAULT_TEXT_LIMIT;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Characters in `text` (code points), counting only up to `stop`. */
function codePoints(text: string, stop: number): number {
  if (text.length <= stop) return text.length; // fewer UTF-16 units than the limit: fewer code points too
  let n = 0;
  for (const _ of text) if (++n > stop) break;
  return n;
}

/**
 * Why `text` is not acceptable as a value (NUL, an unpaired surrogate, longer than `limit`), or
 * null. NUL cannot be stored by PostgreSQL; an unpaired surrogate is not Unicode text.
 */
export function textProblem(text: string, limit: number | null = DEFAULT_TEXT_LIMIT): string | null {
  if (text.includes("\u0000")) return "must not contain NUL characters (\\u0000)";
  if (LONE_SURROGATE.test(text)) return "must not contain unpaired UTF-16 surrogates (not valid Unicode text)";
  if (limit !== null && codePoints(text, limit) > limit) return `must have at most ${limit} characters`;
  return null;
}

// ------------------------------------------------------------------------------------------------
// JSON structure

/** Deepest nesting of arrays and objects accepted in a JSON body or a JSON value (metadata). */
export const MAX_JSON_DEPTH = 32;
/** Most keys in one JSON object, and most items in one array. */
export const MAX_JSON_KEYS = 1_000;

/**
 * Scans JSON text for its nesting depth without parsing it (strings skipped), so a body nested a
 * million levels deep is refused before anything recursive sees it. Returns the problem or null.
 */
export function jsonDepthProblem(text: string, maxDepth = MAX_JSON_DEPTH): string | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) return `must not nest arrays and objects more than ${maxDepth} levels deep`;
    } else if (c === 125 || c === 93) depth--;
  }
  return null;
}

/**
 * Checks a parsed JSON value (iteratively, no recursion): nesting depth, keys per object and items
 * per array, and every string and key by `textProblem` (with `textLimitOf(path)` as the length
 * limit, null for none). Problems are added to `errors` under their path (`prefix.a.0.b`).
 */
export function checkJsonValue(
  value: unknown,
  prefix: string,
  errors: FieldErrors,
  textLimitOf: (path: string) => number | null = () => DEFAULT_TEXT_LIMIT,
): void {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: prefix, depth: 0 }];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  while (stack.length) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === "string") {
      const problem = textProblem(v, textLimitOf(path));
      if (problem) addFieldError(errors, path || "body", problem);
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) {
      addFieldError(errors, path || "body", `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
      continue;
    }
    const entries = Array.isArray(v)
      ? v.map((item, i) => [String(i), item] as const)
      : Object.entries(v as Record<string, unknown>);
    if (entries.length > MAX_JSON_KEYS) {
      addFieldError(
        errors,
        path || "body",
        `must have at most ${MAX_JSON_KEYS} ${Array.isArray(v) ? "items" : "keys"}`,
      );
      continue;
    }
    for (const [key, item] of entries) {
      if (!Array.isArray(v)) {
        const keyProblem = textProblem(key, 200);
        if (keyProblem) {
          addFieldError(errors, join(path, quote(key, 40, false)), `key ${keyProblem}`);
          continue;
        }
      }
      stack.push({ value: item, path: join(path, key), depth: depth + 1 });
    }
  }
}

// ------------------------------------------------------------------------------------------------
// messages

/** Most characters of input an error message quotes. */
export const MAX_QUOTED_INPUT = 200;
/** Longest error message (and field reason) sent; longer ones are cut with a note. */
export const MAX_MESSAGE_LENGTH = 1_000;

/**
 * `text` cut to `max` characters with a note of how long it was (`"abc…" (12345 characters)`);
 * `quoted` wraps it in JSON string quotes.
 */
export function quote(text: string, max = MAX_QUOTED_INPUT, quoted = true): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  const shown = quoted ? JSON.stringify(cut) : cut;
  return text.length > max ? `${shown} (${text.length} characters)` : shown;
}

/**
 * An error message made safe to send: every double-quoted part longer than MAX_QUOTED_INPUT
 * characters (how GraphQL and the scalars quote values) is cut, and the whole is at most
 * MAX_MESSAGE_LENGTH characters. The one place messages and field paths are bounded (REST
 * errors, GraphQL errors).
 */
export function boundMessage(message: string, max = MAX_MESSAGE_LENGTH): string {
  if (message.length <= MAX_QUOTED_INPUT) return message;
  // a scan instead of a regular expression: a message may quote megabytes
  let quotedCut = "";
  let at = 0;
  while (at < message.length) {
    const open = message.indexOf('"', at);
    if (open < 0) break;
    let close = open + 1;
    while (close < message.length && message[close] !== '"') close += message[close] === "\\" ? 2 : 1;
    if (close >= message.length) break;
    const inner = message.slice(open + 1, close);
    quotedCut +=
      message.slice(at, open) +
      (inner.length > MAX_QUOTED_INPUT
        ? `"${inner.slice(0, MAX_QUOTED_INPUT)}…" (${inner.length} characters)`
        : `"${inner}"`);
    at = close + 1;
  }
  quotedCut += message.slice(at);
  return quotedCut.length > max
    ? `${quotedCut.slice(0, max)}… (message cut at ${max} of ${quotedCut.length} characters)`
    : quotedCut;
}

/** `fields` with every path and reason bounded (a path can be a client's key of any length). */
export function boundFieldErrors(fields: FieldErrors): FieldErrors {
  const bounded: FieldErrors = {};
  for (const [path, reasons] of Object.entries(fields)) {
    const key = path.length > MAX_QUOTED_INPUT ? quote(path, MAX_QUOTED_INPUT, false) : path;
    for (const reason of reasons.slice(0, 20)) addFieldError(bounded, key, boundMessage(reason));
  }
  return bounded;
}
