/**
 * Reminder rules (spec "Reminder"; docs/reminders.md): exactly one related document, at most 50
 * valid recipients, a subject and a message; and the delivery schedule of the mail outbox
 * (bounded retries with exponential backoff). Pure: no database, no clock.
 *
 * Error paths use the REST names (`recipient.2`, `credit_note`) on both surfaces, like every
 * other field error of the service.
 */
import { FieldErrorCollector } from "./errors.js";
import { isEmailAddress } from "./formats.js";

export const MAX_RECIPIENTS = 50;
export const MAX_SUBJECT_LENGTH = 255;
export const MAX_MESSAGE_LENGTH = 10_000;

/** The documents a reminder can be about, by their REST field name. */
export const RELATED_KINDS = ["invoice", "credit_note", "payment", "order"] as const;
export type RelatedKind = (typeof RELATED_KINDS)[number];

export interface RelatedDocument {
  kind: RelatedKind;
  id: string;
}

/**
 * The one related document of `given` (REST field name -> id; null, undefined and "" mean
 * absent). None or several: errors on the fields concerned, and undefined.
 */
export function exactlyOneDocument(
  given: Partial<Record<RelatedKind, string | null | undefined>>,
  errors: FieldErrorCollector,
): RelatedDocument | undefined {
  const present = RELATED_KINDS.filter((kind) => typeof given[kind] === "string" && given[kind]!.trim() !== "");
  if (present.length === 1) return { kind: present[0], id: given[present[0]]!.trim() };
  if (present.length === 0) {
    for (const kind of RELATED_KINDS) errors.add(kind, "one of invoice, credit_note, payment or order is required");
  } else {
    for (const kind of present) errors.add(kind, `only one related document is allowed; got ${present.join(", ")}`);
  }
  return undefined;
}

/**
 * Trimmed recipients, duplicates (case-insensitive) dropped with the first spelling kept.
 * Errors: none given, more than MAX_RECIPIENTS (counted after dropping duplicates), or an entry
 * that is not an e-mail address (`recipient.<index>`, the index in the given list).
 */
export function normalizeRecipients(
  given: readonly (string | null | undefined)[] | null | undefined,
  errors: FieldErrorCollector,
): string[] {
  if (!given || given.length === 0) {
    errors.add("recipient", "at least one e-mail address is required");
    return [];
  }
  const seen = new Set<string>();
  const recipients: string[] = [];
  given.forEach((raw, i) => {
    const address = typeof raw === "string" ? raw.trim() : "";
    if (!address || !isEmailAddress(address)) {
      errors.add(`recipient.${i}`, "must be an e-mail address");
      return;
    }
    const key = address.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    recipients.push(address);
  });
  if (recipients.length > MAX_RECIPIENTS)
    errors.add("recipient", `must have at most ${MAX_RECIPIENTS} addresses; got ${recipients.length}`);
  return recipients;
}

/** Required text of at most `max` characters, trimmed; `singleLine` forbids line breaks (mail headers). */
export function requiredText(
  field: string,
  value: string | null | undefined,
  max: number,
  errors: FieldErrorCollector,
  { singleLine = false } = {},
): string {
  const text = typeof value === "string" ? value.trim() : "";
  if (!text) errors.add(field, "is required");
  else if (text.length > max) errors.add(field, `must have at most ${max} characters`);
  else if (singleLine && /[\r\n]/.test(text)) errors.add(field, "must be a single line");
  return text;
}

// ---------------------------------------------------------------------------------------------
// delivery schedule

/** Delivery attempts before a message is marked `failed` (never deleted). */
export const MAX_DELIVERY_ATTEMPTS = 8;
/** Wait after the first failed attempt; doubles after each further failure. */
export const BASE_BACKOFF_MS = 60_000;
/** Longest wait between two attempts. */
export const MAX_BACKOFF_MS = 6 * 60 * 60_000;
/**
 * How long a claimed message is reserved for the worker that claimed it. Longer than the SMTP
 * timeouts of infra/mail.ts, so only a worker that died mid-send lets another one retry it.
 */
export const CLAIM_LEASE_MS = 5 * 60_000;

export type OutboxStatus = "pending" | "sent" | "failed" | "kept";

/** Wait after the `attempts`-th failed attempt: 1 min, 2, 4, 8, ... capped at MAX_BACKOFF_MS. */
export function backoffMs(attempts: number): number {
  const exponent = Math.max(0, attempts - 1);
  return Math.min(BASE_BACKOFF_MS * 2 ** exponent, MAX_BACKOFF_MS);
}

/**
 * What a failed attempt leaves: `attempts` counts the attempt that just failed. Retried later
 * (`pending` with a backoff) until MAX_DELIVERY_ATTEMPTS, then `failed` for good.
 */
export function afterFailure(attempts: number, now: Date): { status: OutboxStatus; nextAttemptAt: Date } {
  if (attempts >= MAX_DELIVERY_ATTEMPTS) return { status: "failed", nextAttemptAt: now };
  return { status: "pending", nextAttemptAt: new Date(now.getTime() + backoffMs(attempts)) };
}

/** File name of a document's PDF attachment: `invoice-CL33-12.pdf`, `credit-note-draft.pdf`. */
export function attachmentFileName(
  kind: Exclude<RelatedKind, "payment">,
  documentTypeId: string,
  number: number | null,
): string {
  const base = kind.replace("_", "-");
  return number === null ? `${base}-draft.pdf` : `${base}-${documentTypeId}-${number}.pdf`;
}
