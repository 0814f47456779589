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
 *   least recently used goes first. Past the auth-failure limit, a client address's unknown keys are
 *   refused without that read: `LiveApiKeyIndex` below.
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

/**
 * Drops the key with id `id` from every cache of this process (a revocation or a change of its expiry here), and
 * makes every index of live keys (`LiveApiKeyIndex`) read again before it next refuses a key.
 */
export function forgetApiKey(id: string): void {
  for (const cache of caches) cache.forget(id);
  for (const index of indexes) index.invalidate();
}

/** Hex characters of a key's stored hash that `LiveApiKeyIndex` keeps (64 bits). */
export const LIVE_KEY_PREFIX_LENGTH = 16;
/** How long an index of live keys is trusted to refuse a key without reading the database (ms). */
export const LIVE_KEY_INDEX_REFRESH_MS = 30_000;

/** After a read of the index failed, how long keys are let through to their own read before it is tried again (ms). */
export const LIVE_KEY_INDEX_RETRY_MS = 1_000;

/** Every index of live keys of this process, so a key created or revoked here reaches all of them at once. */
const indexes = new Set<LiveApiKeyIndex>();

/**
 * The hash prefixes (`LIVE_KEY_PREFIX_LENGTH` hex characters) of every API key neither revoked nor expired when it
 * was read, read all at once (`load`) and kept at most `refreshMs` (docs/limits.md "Failed authentications"). It
 * answers, without a statement, whether a key that the API key cache does not hold may exist: a client address past
 * the failed-authentication limit has its other keys refused unless they may. Only an address past the limit
 * presenting a key the cache does not hold asks it, so it is read (one statement, every live key: a few dozen bytes
 * per key in memory) at most once per `refreshMs` per process, and only then; concurrent askers share one read.
 * A key created in this process (`learnApiKey`) is added at once; a revocation here (`forgetApiKey`) makes it read
 * again. A prefix found but whose key turns out unknown, revoked or expired is dropped (`drop`). When the read fails
 * (the database cannot answer), every key may exist for LIVE_KEY_INDEX_RETRY_MS: the request runs, and its own key
 * read answers as it would without the limit (a 503 when the database cannot serve).
 */
export class LiveApiKeyIndex {
  private prefixes: Set<string> | null = null;
  private readAt = 0;
  private reading: Promise<Set<string> | null> | null = null;
  private failedAt = -Infinity;
  /** counts `invalidate` calls, so a read that started before one does not count as fresh */
  private generation = 0;

  /** `load`: the hash prefixes of the live keys now; `clock`: the time in ms (tests). */
  constructor(
    private readonly load: () => Promise<Iterable<string>>,
    readonly refreshMs: number = LIVE_KEY_INDEX_REFRESH_MS,
    private readonly clock: () => number = Date.now,
  ) {
    indexes.add(this);
  }

  /**
   * False when no live key has the prefix of `hash` (a stored hash, services/api-keys.ts hashKey) per a read at
   * most `refreshMs` old, reading again first when the last read is older; true when one has.
   */
  async mayExist(hash: string): Promise<boolean> {
    let prefixes: Set<string> | null = this.prefixes;
    if (!prefixes || this.clock() - this.readAt >= this.refreshMs) {
      // the database could not answer a moment ago: every key may exist (its own read decides, as without the index)
      if (this.clock() - this.failedAt < LIVE_KEY_INDEX_RETRY_MS) return true;
      prefixes = await this.read();
      if (!prefixes) return true;
    }
    return prefixes.has(hash.slice(0, LIVE_KEY_PREFIX_LENGTH));
  }

  /** Adds the key of stored hash `hash` (a key created in this process). */
  add(hash: string): void {
    this.prefixes?.add(hash.slice(0, LIVE_KEY_PREFIX_LENGTH));
  }

  /** Drops the prefix of `hash`, whose key was found unknown, revoked or expired. */
  drop(hash: string): void {
    this.prefixes?.delete(hash.slice(0, LIVE_KEY_PREFIX_LENGTH));
  }

  /** Makes the next `mayExist` read again (a key was revoked in this process). */
  invalidate(): void {
    this.generation++;
    this.readAt = -Infinity;
  }

  /** Forgets the prefixes and stops receiving new and revoked keys (the app closes). */
  close(): void {
    this.prefixes = null;
    indexes.delete(this);
  }

  /** The prefixes read now, or null when the read failed (then `mayExist` answers true for a moment). */
  private async read(): Promise<Set<string> | null> {
    if (!this.reading) {
      const startedAt = this.clock();
      const generation = this.generation;
      this.reading = this.load()
        .then(
          (prefixes) => {
            const read = new Set(prefixes);
            if (indexes.has(this)) {
              this.prefixes = read;
              // a key revoked while this read ran may be in it: then the next asker reads again
              this.readAt = generation === this.generation ? startedAt : -Infinity;
            }
            return read;
          },
          () => {
            this.failedAt = this.clock();
            return null;
          },
        )
        .finally(() => (this.reading = null));
    }
    return this.reading;
  }
}

/** Adds a key created in this process (its stored hash) to every index of live keys of this process. */
export function learnApiKey(hash: string): void {
  for (const index of indexes) index.add(hash);
}
