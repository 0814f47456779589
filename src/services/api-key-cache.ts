/**
 * In-process cache of API keys by hash (docs/operations.md "API key cache"), so a request does not
 * read its key from the database every time. What is kept is what `authenticate` needs: the
 * key's organization, mode, user, expiry and when its last use was written.
 *
 * - An entry lives `ttlMs` (API_KEY_CACHE_TTL_SECONDS, default 30 s) from the read that filled it;
 *   after that the key is read again. A key revoked, or its expiry changed, by another process
 *   (the `api-key revoke` CLI, another replica) is therefore refused within `ttlMs`.
 * - Revoking a key in this process (services/api-keys.ts revokeApiKey) drops it from every cache
 *   of the process at once (`forgetApiKey`).
 * - Expiry never waits for the TTL: the cached `expiresAt` is checked on every request.
 * - Only keys that exist and are not revoked are cached: an unknown key is read from the database
 *   each time (and counts as a failed authentication for the auth-failure limit, docs/limits.md),
 *   so presenting random keys cannot fill memory. At most `maxEntries` (10,000) keys are kept; the
 *   least recently used goes first.
 */

/** What the cache keeps of a key. */
export interface CachedApiKey {
  id: string;
  organizationId: string;
  testMode: boolean;
  userEmail: string;
  /** the instant from which the key answers 401, or null (never) */
  expiresAt: Date | null;
  /** the `lastUsedAt` last read or written (null: never used) */
  lastUsedAt: Date | null;
}

/** Default lifetime of a cached key (ms): API_KEY_CACHE_TTL_SECONDS' default, 30 s. */
export const DEFAULT_API_KEY_CACHE_TTL_MS = 30_000;
/** Default bound of the cache: keys kept at most (least recently used dropped first). */
export const DEFAULT_API_KEY_CACHE_MAX_ENTRIES = 10_000;

/** Every cache of this process, so a revocation here reaches all of them at once. */
const caches = new Set<ApiKeyCache>();

/** A bounded LRU of API keys by hash with a time to live; see the module comment. */
export class ApiKeyCache {
  /** insertion order is recency order: a hit is moved to the end, the first entry is the least recently used */
  private readonly entries = new Map<string, { key: CachedApiKey; until: number }>();
  /**
   * Counts revocations seen (`forget`). A read that started before one may have seen the key
   * unrevoked: `set` with the generation taken before the read refuses to cache it then.
   */
  generation = 0;

  /**
   * `ttlMs`: how long an entry is served after the read that filled it (0: nothing is cached);
   * `maxEntries`: keys kept at most. `clock` gives the time in ms (tests).
   */
  constructor(
    readonly ttlMs: number = DEFAULT_API_KEY_CACHE_TTL_MS,
    readonly maxEntries: number = DEFAULT_API_KEY_CACHE_MAX_ENTRIES,
    private readonly clock: () => number = Date.now,
  ) {
    caches.add(this);
  }

  /** Keys cached now (expired entries not yet dropped included). */
  get size(): number {
    return this.entries.size;
  }

  /** The key with this hash when cached and within its TTL, else undefined (an expired entry is dropped). */
  get(hash: string): CachedApiKey | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    this.entries.delete(hash);
    if (entry.until <= this.clock()) return undefined;
    this.entries.set(hash, entry);
    return entry.key;
  }

  /**
   * Caches `key` under `hash` for `ttlMs`, dropping the least recently used keys beyond
   * `maxEntries`. `readAt`: the `generation` taken before the key was read; when a key was
   * forgotten since, nothing is cached (the read may predate that revocation).
   */
  set(hash: string, key: CachedApiKey, readAt: number = this.generation): void {
    if (this.ttlMs <= 0 || this.maxEntries <= 0 || readAt !== this.generation) return;
    this.entries.delete(hash);
    this.entries.set(hash, { key, until: this.clock() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Drops the key with id `id` (`key_...`), whatever its hash. */
  forget(id: string): void {
    this.generation++;
    for (const [hash, entry] of this.entries) if (entry.key.id === id) this.entries.delete(hash);
  }

  /** Empties the cache and stops it receiving revocations (the app closes). */
  close(): void {
    this.entries.clear();
    caches.delete(this);
  }
}

/** Drops the key with id `id` from every cache of this process (a revocation or a change of its expiry here). */
export function forgetApiKey(id: string): void {
  for (const cache of caches) cache.forget(id);
}
