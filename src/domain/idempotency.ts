/**
 * Idempotent requests (Stripe's `Idempotency-Key` header; docs/rest.md: creating twice
 * with one key records once). A POST sent with a key runs once; the same key again gets the first
 * answer replayed. Pure decision; services/idempotency.ts stores keys and answers.
 *
 * | stored for the key                                  | answer                                   |
 * |-----------------------------------------------------|------------------------------------------|
 * | nothing, or older than 24 hours                     | run the request and store its answer     |
 * | another method, path or body                        | 400 on `idempotency_key`                 |
 * | the same request, still running (no answer stored)  | 409 `invalid_state` (retry later)        |
 * | the same request, answered                          | the stored answer, replayed              |
 *
 * Answers with a 5xx status are not stored, so a retry runs again. services/idempotency.ts stores
 * a key only with its answer, in the request's own transaction, and answers the 409 itself while
 * another request holds the key; a stored key without an answer is left only by versions before
 * that (docs/decisions.md "Idempotency keys") and keeps its 409 until it expires.
 */
import { InvalidStateError, ValidationError } from "./errors.js";

/** How long a key and its answer are kept (Stripe keeps them 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface StoredIdempotentRequest {
  operation: string;
  requestHash: string;
  responseStatus: number | null;
  createdAt: Date;
}

/** 400 when the header value cannot be a key (empty, too long, control characters). */
export function assertIdempotencyKey(key: string): void {
  if (!key.trim() || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || /[\u0000-\u001f\u007f]/.test(key)) {
    throw ValidationError.field("idempotency_key", `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable characters`);
  }
}

/**
 * What to do with a request carrying a key that is already stored: `"rerun"` when the stored
 * key has expired, `"replay"` when it was answered; throws the 400 or 409 of the table above.
 */
export function idempotencyDecision(
  stored: StoredIdempotentRequest,
  request: { operation: string; requestHash: string },
  now: Date,
): "rerun" | "replay" {
  if (now.getTime() - stored.createdAt.getTime() >= IDEMPOTENCY_TTL_MS) return "rerun";
  if (stored.operation !== request.operation || stored.requestHash !== request.requestHash) {
    throw ValidationError.field(
      "idempotency_key",
      `was used by another request (${stored.operation} with another body); use a new key for a new request`,
    );
  }
  if (stored.responseStatus === null)
    throw new InvalidStateError("A request with this Idempotency-Key is still running; retry when it has answered");
  return "replay";
}
