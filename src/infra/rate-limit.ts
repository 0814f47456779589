/**
 * Request rate limits of /v1 and /graphql (docs/limits.md "Rate limits"), counted by rate-limiter-flexible:
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
 * Where the counts live (docs/limits.md "Where the counts live"; docs/scaling.md "Shared state"):
 * - `store` given (PostgreSQL, RATE_LIMIT_STORE=database, the default): in the `RateLimit` table
 *   (prisma/migrations/2026120301000001_rate_limits, UNLOGGED), through RateLimiterPostgres, so every
 *   process on the database spends the same buckets; one statement per counted request (an
 *   `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`). A bucket this process has seen empty is
 *   refused from memory until its window ends (`inMemoryBlockOnConsumed`), so refusals cost no
 *   statement; an address this process has seen past the failure limit likewise (`limitedUntil`).
 *   When a statement fails (the database cannot answer), that request is counted in this process's
 *   memory instead (`insuranceLimiter`), so the limits never turn a database failure into a 500.
 * - no `store` (the embedded database, a single process; or RATE_LIMIT_STORE=memory): this
 *   process's memory (RateLimiterMemory); several processes would each count on their own.
 *
 * The counts live behind `RateLimits`, so the callers do not know the store.
 */
import { createHash } from "node:crypto";
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import type { AppSettings } from "./config.js";

/** Refill period of the burst bucket (seconds). */
export const BURST_WINDOW_SECONDS = 60;

/** The table of the shared counts (prisma/migrations/2026120301000001_rate_limits). */
export const RATE_LIMIT_TABLE = "RateLimit";

/** Bucket names longer than this are stored as their SHA-256 (the table's `key` is varchar(255)). */
const MAX_BUCKET_LENGTH = 200;

/** Addresses kept in `limitedUntil` at most; past it the ones whose window ended go, then the oldest. */
const MAX_LIMITED_ADDRESSES = 10_000;

/** A refusal: whole seconds until a request may succeed again (the `Retry-After` value, at least 1). */
export interface Refusal {
  retryAfterSeconds: number;
}

/**
 * One SQL statement on the shared database (PostgreSQL's pool, outside any transaction; infra/database.ts
 * `Database.query`): `name` makes it a named prepared statement. What RateLimiterPostgres sends, as pg's
 * `{ name, text, values }`, and the `rows` and `rowCount` it reads back.
 */
export type StoreQuery = (statement: {
  name?: string;
  text: string;
  values?: unknown[];
}) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;

type Limiter = Pick<RateLimiterMemory, "consume">;

/**
 * True when `limiter` (a store's) refuses `key` from this process's memory now (`inMemoryBlockOnConsumed`;
 * RateLimiterStoreAbstract's `getInMemoryBlockMsBeforeExpire`, which the library's typings leave out).
 */
const blockedInMemory = (limiter: RateLimiterMemory | RateLimiterPostgres, key: string) =>
  limiter instanceof RateLimiterPostgres &&
  (limiter as unknown as { getInMemoryBlockMsBeforeExpire(rlKey: string): number }).getInMemoryBlockMsBeforeExpire(
    limiter.getKey(key),
  ) > 0;

export interface RateLimits {
  /** Spends one request of the caller's bucket; a Refusal when it is empty. */
  consumeRequest(bearer: string | null, address: string): Promise<Refusal | null>;
  /**
   * A Refusal (Retry-After: until the window of `address` ends) while `address` has no failed authentications left
   * (it is limited), else null. Only reads the count. `bearer`: the request's credential, as `consumeRequest` gets
   * it; when this process already knows its bucket is empty, null without reading the count (the request is
   * refused by its bucket, which costs no statement).
   */
  checkAuthFailures(address: string, bearer?: string | null): Promise<Refusal | null>;
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

/** `bucket` as stored: itself, or its SHA-256 when longer than MAX_BUCKET_LENGTH (a long forwarded address). */
const bounded = (bucket: string) => (bucket.length > MAX_BUCKET_LENGTH ? credentialDigest(bucket) : bucket);

/**
 * One fixed-window limiter of `points` per `duration` seconds, named `keyPrefix`: in `store`'s RateLimit table
 * (its memory twin as insurance; refusals from memory once this process saw the bucket empty) or in memory.
 * `clearExpired`: this limiter deletes the table's rows whose window ended over an hour ago, every 5 minutes (one
 * limiter of a process does, for the table).
 */
function limiter(
  options: { keyPrefix: string; points: number; duration: number },
  store: StoreQuery | undefined,
  clearExpired = false,
): RateLimiterMemory | RateLimiterPostgres {
  if (!store) return new RateLimiterMemory(options);
  return new RateLimiterPostgres({
    ...options,
    // pg's Pool interface: `query({ name, text, values })`, no connection to release
    storeClient: { query: store },
    storeType: "pool",
    tableName: RATE_LIMIT_TABLE,
    // created by the migration, never at run time
    tableCreated: true,
    clearExpiredByTimeout: clearExpired,
    inMemoryBlockOnConsumed: options.points,
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/**
 * The limits of `settings` (module comment), counted in `store` when given, else in this process's memory.
 * `credentialKey` may name the bucket of a presented credential (the `Authorization` header, or a portal cookie),
 * never as the credential itself: server.ts gives an API key's stored hash, computed once per request for this and
 * the key's lookup. Where it gives null (anything else presented), or is not given, the bucket is the credential's
 * SHA-256. `clock`: the time in ms (tests).
 */
export function createRateLimits(
  settings: Pick<
    AppSettings,
    "rateLimitRequests" | "rateLimitWindowSeconds" | "rateLimitBurst" | "authFailureLimit" | "authFailureWindowSeconds"
  >,
  credentialKey: (credential: string) => string | null = () => null,
  store?: StoreQuery,
  clock: () => number = Date.now,
): RateLimits {
  let requests: Limiter | null = null;
  /** true when this process knows the bucket `key` is empty (both its steady and its burst part) */
  let knownEmpty: (key: string) => boolean = () => false;
  if (settings.rateLimitRequests > 0) {
    const steady = limiter(
      { keyPrefix: "key", points: settings.rateLimitRequests, duration: settings.rateLimitWindowSeconds },
      store,
      true,
    );
    const burst =
      settings.rateLimitBurst > 0
        ? limiter({ keyPrefix: "burst", points: settings.rateLimitBurst, duration: BURST_WINDOW_SECONDS }, store)
        : null;
    requests = burst ? new BurstyRateLimiter(steady, burst) : steady;
    knownEmpty = (key) => blockedInMemory(steady, key) && (!burst || blockedInMemory(burst, key));
  }
  const bucket = (bearer: string | null, address: string) =>
    bearer ? `k:${credentialKey(bearer) ?? credentialDigest(bearer)}` : `a:${bounded(address)}`;
  const failures =
    settings.authFailureLimit > 0
      ? limiter(
          { keyPrefix: "auth", points: settings.authFailureLimit, duration: settings.authFailureWindowSeconds },
          store,
          settings.rateLimitRequests <= 0,
        )
      : null;
  const limited = new LimitedAddresses(clock);
  return {
    consumeRequest(bearer, address) {
      return spend(requests, bucket(bearer, address));
    },
    async checkAuthFailures(address, bearer) {
      if (!failures) return null;
      const known = limited.refusal(address);
      if (known) return known;
      if (bearer !== undefined && knownEmpty(bucket(bearer, address))) return null;
      const state = await failures.get(bounded(address));
      if (!state || state.remainingPoints > 0) return null;
      limited.add(address, state.msBeforeNext);
      return { retryAfterSeconds: seconds(state.msBeforeNext) };
    },
    async recordAuthFailure(address) {
      if (!failures) return;
      try {
        const state = await failures.consume(bounded(address));
        if (state.remainingPoints <= 0) limited.add(address, state.msBeforeNext);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        limited.add(address, e.msBeforeNext);
      }
    },
  };
}

/** The failed sign-ins of the dashboard (docs/dashboard.md "Rate limits"), per e-mail and per client address. */
export interface SignInLimits {
  /** A Refusal (Retry-After: until the first spent window ends) while `email` or `address` has no failure left. */
  check(email: string, address: string): Promise<Refusal | null>;
  /** Counts one failed sign-in of `email` and one of `address`. */
  recordFailure(email: string, address: string): Promise<void>;
  /** Forgets the failures of `email` (it signed in); the address's stay. */
  reset(email: string): Promise<void>;
}

/**
 * Sign-in failure counts: `perEmail` failures of one e-mail and `perAddress` of one client address per
 * `windowSeconds` (fixed windows), in `store`'s RateLimit table when given (shared by every process), else in this
 * process's memory. E-mails are kept as their SHA-256, as presented credentials are.
 */
export function createSignInLimits(
  limits: { perEmail: number; perAddress: number; windowSeconds: number },
  store?: StoreQuery,
): SignInLimits {
  const byEmail = limiter(
    { keyPrefix: "signin_email", points: limits.perEmail, duration: limits.windowSeconds },
    store,
  );
  const byAddress = limiter(
    { keyPrefix: "signin_address", points: limits.perAddress, duration: limits.windowSeconds },
    store,
  );
  const emailKey = (email: string) => credentialDigest(email);
  const spent = async (l: RateLimiterMemory | RateLimiterPostgres, key: string, points: number) => {
    const state = await l.get(key);
    return state && state.consumedPoints >= points ? state.msBeforeNext : null;
  };
  const consumeQuietly = async (l: RateLimiterMemory | RateLimiterPostgres, key: string) => {
    try {
      await l.consume(key);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
    }
  };
  return {
    async check(email, address) {
      const waits = [
        await spent(byEmail, emailKey(email), limits.perEmail),
        await spent(byAddress, bounded(address), limits.perAddress),
      ].filter((ms): ms is number => ms !== null);
      return waits.length ? { retryAfterSeconds: seconds(Math.max(...waits)) } : null;
    },
    async recordFailure(email, address) {
      await consumeQuietly(byEmail, emailKey(email));
      await consumeQuietly(byAddress, bounded(address));
    },
    async reset(email) {
      await byEmail.delete(emailKey(email));
    },
  };
}

/**
 * Client addresses this process knows to be past the failed-authentication limit, each until its window ends (ms
 * on `clock`), so `checkAuthFailures` answers them without a statement. Bounded: past MAX_LIMITED_ADDRESSES the
 * addresses whose window ended are dropped, then the oldest entries (which are then read from the store again).
 */
export class LimitedAddresses {
  private readonly until = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** The Refusal of `address` while it is known limited, else null (an ended window is forgotten). */
  refusal(address: string): Refusal | null {
    const until = this.until.get(address);
    if (until === undefined) return null;
    const left = until - this.clock();
    if (left > 0) return { retryAfterSeconds: seconds(left) };
    this.until.delete(address);
    return null;
  }

  /** Knows `address` limited for `ms` more milliseconds. */
  add(address: string, ms: number): void {
    if (!(ms > 0)) return;
    this.until.delete(address);
    this.until.set(address, this.clock() + ms);
    if (this.until.size <= MAX_LIMITED_ADDRESSES) return;
    const now = this.clock();
    for (const [a, t] of this.until) if (t <= now) this.until.delete(a);
    while (this.until.size > MAX_LIMITED_ADDRESSES) this.until.delete(this.until.keys().next().value!);
  }

  /** Addresses known now (ended windows not yet forgotten included). */
  get size(): number {
    return this.until.size;
  }
}
