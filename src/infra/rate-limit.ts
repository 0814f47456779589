/**
 * Request rate limits of /v1 and /graphql (docs/limits.md "Rate limits"), kept in this process's
 * memory by rate-limiter-flexible:
 *
 * - per API key: a bucket of `rateLimitRequests` per `rateLimitWindowSeconds`, plus
 *   `rateLimitBurst` extra requests refilled over a minute (BurstyRateLimiter: the burst bucket is
 *   drawn only when the steady one is empty). The bucket is keyed by a SHA-256 of the presented
 *   key (`credentialKey`: the app gives the key's stored hash, which authentication then reuses),
 *   so a key is limited before the database is asked whether it exists; requests without a key
 *   share their client address's bucket.
 * - per client address: `authFailureLimit` failed authentications (401 to a request that carried
 *   an `Authorization` header) per `authFailureWindowSeconds`; once they are spent, the address is
 *   limited until the window ends: server.ts then refuses its requests whose key cannot
 *   authenticate, and serves valid keys as usual (docs/limits.md "Failed authentications").
 *
 * The counts live behind `RateLimits`, so the store can change (another process's counts, a table)
 * without the callers changing.
 *
 * Several processes each keep their own counts (the limits are per process).
 */
import { createHash } from "node:crypto";
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { AppSettings } from "./config.js";

/** Refill period of the burst bucket (seconds). */
export const BURST_WINDOW_SECONDS = 60;

/** A refusal: whole seconds until a request may succeed again (the `Retry-After` value, at least 1). */
export interface Refusal {
  retryAfterSeconds: number;
}

type Limiter = Pick<RateLimiterMemory, "consume">;

export interface RateLimits {
  /** Spends one request of the caller's bucket; a Refusal when it is empty. */
  consumeRequest(bearer: string | null, address: string): Promise<Refusal | null>;
  /**
   * A Refusal (Retry-After: until the window of `address` ends) while `address` has no failed authentications left
   * (it is limited), else null. Only reads the count.
   */
  checkAuthFailures(address: string): Promise<Refusal | null>;
  /** Records one failed authentication of `address` (a 401 to a request that carried `Authorization`). */
  recordAuthFailure(address: string): Promise<void>;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

async function spend(limiter: Limiter | null, key: string, points = 1): Promise<Refusal | null> {
  if (!limiter) return null;
  try {
    await limiter.consume(key, points);
    return null;
  } catch (e) {
    if (e instanceof RateLimiterRes) return { retryAfterSeconds: seconds(e.msBeforeNext) };
    throw e;
  }
}

/** The default bucket of a presented credential: its SHA-256 (base64url), so no credential is kept in memory. */
const credentialDigest = (credential: string) => createHash("sha256").update(credential).digest("base64url");

/**
 * The limits of `settings` (module comment). `credentialKey` may name the bucket of a presented credential
 * (the `Authorization` header, or a portal cookie), never as the credential itself: server.ts gives an API key's
 * stored hash, computed once per request for this and the key's lookup. Where it gives null (anything else
 * presented), or is not given, the bucket is the credential's SHA-256.
 */
export function createRateLimits(
  settings: Pick<
    AppSettings,
    "rateLimitRequests" | "rateLimitWindowSeconds" | "rateLimitBurst" | "authFailureLimit" | "authFailureWindowSeconds"
  >,
  credentialKey: (credential: string) => string | null = () => null,
): RateLimits {
  let requests: Limiter | null = null;
  if (settings.rateLimitRequests > 0) {
    const steady = new RateLimiterMemory({
      keyPrefix: "key",
      points: settings.rateLimitRequests,
      duration: settings.rateLimitWindowSeconds,
    });
    requests =
      settings.rateLimitBurst > 0
        ? new BurstyRateLimiter(
            steady,
            new RateLimiterMemory({
              keyPrefix: "burst",
              points: settings.rateLimitBurst,
              duration: BURST_WINDOW_SECONDS,
            }),
          )
        : steady;
  }
  const failures =
    settings.authFailureLimit > 0
      ? new RateLimiterMemory({
          keyPrefix: "auth",
          points: settings.authFailureLimit,
          duration: settings.authFailureWindowSeconds,
        })
      : null;
  return {
    consumeRequest(bearer, address) {
      const key = bearer ? `k:${credentialKey(bearer) ?? credentialDigest(bearer)}` : `a:${address}`;
      return spend(requests, key);
    },
    async checkAuthFailures(address) {
      if (!failures) return null;
      const state = await failures.get(address);
      return state && state.remainingPoints <= 0 ? { retryAfterSeconds: seconds(state.msBeforeNext) } : null;
    },
    async recordAuthFailure(address) {
      await spend(failures, address);
    },
  };
}
