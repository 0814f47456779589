/**
 * Webhook rules (docs/webhooks.md): what an endpoint's URL and event list may be, how a message is
 * signed (Standard Webhooks v1, https://www.standardwebhooks.com), when a failed attempt is tried
 * again and when an endpoint is disabled. Pure: services/webhook-endpoints.ts and
 * services/webhook-delivery.ts apply them, infra/webhook-http.ts computes the HMAC.
 */
import { ALL_EVENTS, isEventType } from "./events.js";

/** Longest endpoint URL accepted. */
export const WEBHOOK_URL_MAX_LENGTH = 2_048;
/** Most endpoints an organization has in one mode. */
export const MAX_WEBHOOK_ENDPOINTS = 16;
/** Random bytes of a signing secret (Standard Webhooks: 24 to 64). */
export const SECRET_BYTES = 32;
/** The prefix of a signing secret as shown to the user (`whsec_` + base64 of the bytes). */
export const SECRET_PREFIX = "whsec_";
/** After a rotation, the previous secret signs too for this long (ms): 24 hours. */
export const PREVIOUS_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** An endpoint whose every attempt has failed for this long is disabled (ms): 5 days. */
export const FAILING_DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;
/** How much of an answer's body an attempt records (bytes). */
export const RECORDED_BODY_BYTES = 1_024;
/** The default retry schedule (Svix's): durations after the previous attempt. */
export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";
/** The longest `Retry-After` honoured (ms): a day; a longer one waits this long. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Why `url` cannot be an endpoint's URL, or null when it can: an absolute http(s) URL of at most
 * 2,048 characters, without credentials (`user:password@`) or a fragment, and https in live mode
 * (`live`). Where its host may point is checked apart (infra/webhook-http.ts), after DNS.
 */
export function webhookUrlProblem(url: string, live: boolean): string | null {
  if (url.length > WEBHOOK_URL_MAX_LENGTH) return `must have at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute http(s) URL (https://example.com/webhooks)";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return `must be an http(s) URL, not ${parsed.protocol.replace(/:$/, "")}`;
  if (parsed.username || parsed.password)
    return "must not contain credentials (user:password@); sign-in is the signature";
  if (parsed.hash) return "must not contain a fragment (#...)";
  if (live && parsed.protocol !== "https:") return "must use https in live mode";
  return null;
}

/**
 * Problems of an `enabled_events` list, by index: at least one entry, each an event type or `*`,
 * none twice. Returns `[path suffix, reason]` pairs (`""` for the list itself, `"2"` for entry 2).
 */
export function enabledEventsProblems(events: readonly string[]): [string, string][] {
  if (events.length === 0) return [["", "must list at least one event type, or * for all"]];
  const problems: [string, string][] = [];
  const seen = new Set<string>();
  events.forEach((event, i) => {
    if (event !== ALL_EVENTS && !isEventType(event)) problems.push([String(i), `unknown event type ${event}`]);
    else if (seen.has(event)) problems.push([String(i), `${event} is listed twice`]);
    seen.add(event);
  });
  return problems;
}

/** The text a Standard Webhooks v1 signature signs: `{id}.{timestamp}.{body}`. */
export function signedContent(messageId: string, timestampSeconds: number, body: string): string {
  return `${messageId}.${timestampSeconds}.${body}`;
}

/**
 * A message body (Standard Webhooks' recommended shape): `{"type", "timestamp", "data"}`, with
 * `data` the event's stored JSON text as it is (exact decimals) and `timestamp` the event's time.
 */
export function messageBody(type: string, created: Date, data: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(created.toISOString())},"data":${data}}`;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `5s,5m,30m,2h` -> milliseconds after the previous attempt, one per retry; throws an Error naming
 * the bad entry (units ms, s, m, h, d; each at most a week; at most 20 retries, at least one).
 */
export function parseRetrySchedule(text: string): number[] {
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0 || entries.length > 20) throw new Error("must list 1 to 20 durations such as 5s,5m,30m");
  return entries.map((entry) => {
    const m = /^(\d+)(ms|s|m|h|d)$/.exec(entry);
    const ms = m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
    if (!Number.isSafeInteger(ms) || ms < 0 || ms > 7 * 86_400_000)
      throw new Error(`${entry} is not a duration of at most a week (5s, 5m, 2h, 1d)`);
    return ms;
  });
}

/** A failed attempt's outcome, as far as the schedule is concerned. */
export interface FailedAttempt {
  /** the attempt that failed: 1 for the first */
  attempt: number;
  /** the answer's status (none when no answer came) */
  statusCode: number | null;
  /** `Retry-After` of a 429 or 503, in ms from now, when it had a usable one */
  retryAfterMs: number | null;
}

/**
 * When to try a message again after `failed` (ms from now), or null when it has had its last try:
 * the schedule's entry for this retry, or a longer `Retry-After` (capped at MAX_RETRY_AFTER_MS) when
 * a 429 or 503 answered with one. Worked example, default schedule: attempt 1 fails -> 5 s; attempt
 * 3 fails with 503 and `Retry-After: 3600` -> 1 h (longer than the schedule's 30 min); attempt 8
 * fails -> null (the message is failed).
 */
export function nextRetryIn(schedule: readonly number[], failed: FailedAttempt): number | null {
  const scheduled = schedule[failed.attempt - 1];
  if (scheduled === undefined) return null;
  const honoured =
    (failed.statusCode === 429 || failed.statusCode === 503) && failed.retryAfterMs !== null
      ? Math.min(failed.retryAfterMs, MAX_RETRY_AFTER_MS)
      : 0;
  return Math.max(scheduled, honoured);
}

/**
 * `Retry-After` in ms from `now`: delay-seconds (`120`) or an HTTP date; null when absent or
 * unreadable, 0 for a date already past.
 */
export function retryAfterMs(header: string | null | undefined, now: Date): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** Why an endpoint is disabled by the service, if it is: 410 Gone at once, or failures for 5 days. */
export type DisableReason = "gone" | "failing" | "requested";

/**
 * Whether a failed attempt disables its endpoint: a 410 Gone does at once; otherwise when the
 * endpoint's failures began (`failingSince`, the first failure since its last success) at least
 * FAILING_DISABLE_AFTER_MS before `now`. Null: it stays enabled.
 */
export function disablesEndpoint(statusCode: number | null, failingSince: Date, now: Date): DisableReason | null {
  if (statusCode === 410) return "gone";
  return now.getTime() - failingSince.getTime() >= FAILING_DISABLE_AFTER_MS ? "failing" : null;
}
