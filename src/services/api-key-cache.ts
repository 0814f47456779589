/**
 * In-process cache of API keys by hash (docs/operations.md "API key cache"), so a request does not
 * read its key from the database every time. What is kept is what `authenticate` needs: the
 * key's organization, mode, user, expiry and when its last use was written.
 *
 * - An entry lives `ttlMs` (API_KEY_CACHE_TTL_SECONDS, default 30 s) from the read that filled it;
 *   after that the key is read again.
 * - Revoking a key in this process (services/api-keys.ts revokeApiKey) drops it from every cache
 *   of the process at once (`forgetApiKey`). The revocation's transaction also notifies
 *   API_KEYS_CHANNEL, so every other process on the database drops it when it commits
 *   (`followApiKeyChanges`, through the process's one listener, services/event-stream.ts): within
 *   a second, not the TTL. While that listener is not listening (before it starts, or its
 *   connection broke) nothing is cached, and when it listens again every entry is dropped, since
 *   notifications may have been missed. A change made in the database by hand (an UPDATE of
 *   `revokedAt` or `expiresAt` without the notification) is still seen within `ttlMs`.
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

/**
 * The notification channel of API key changes, notified in the change's own transaction (services/api-keys.ts) and
 * delivered on commit to every process's listener (services/event-stream.ts): `revoked <key id>` (revokeApiKey) or
 * `created <hash prefix>` (createApiKey; the first LIVE_KEY_PREFIX_LENGTH hex characters of its stored hash).
 */
export const API_KEYS_CHANNEL = "billing_api_keys";

/** A change of API keys as its notification on API_KEYS_CHANNEL says it. */
export type ApiKeyChange = { kind: "revoked"; id: string } | { kind: "created"; hashPrefix: string };

/** The payload on API_KEYS_CHANNEL of `change`. */
export function apiKeyNotification(change: ApiKeyChange): string {
  return change.kind === "revoked" ? `revoked ${change.id}` : `created ${change.hashPrefix}`;
}

/** The change a payload on API_KEYS_CHANNEL says, or null when it is not one (`apiKeyNotification`'s form). */
export function parseApiKeyNotification(payload: string): ApiKeyChange | null {
  const [kind, value, extra] = payload.split(" ");
  if (!value || extra !== undefined) return null;
  if (kind === "revoked") return { kind, id: value };
  if (kind === "created" && new RegExp(`^[0-9a-f]{${LIVE_KEY_PREFIX_LENGTH}}$`).test(value))
    return { kind, hashPrefix: value };
  return null;
}

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
  /** true while changes made by other processes may go unseen (`suspend`): nothing is cached then */
  private suspended = false;

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
    if (this.suspended || this.ttlMs <= 0 || this.maxEntries <= 0 || readAt !== this.generation) return;
    this.entries.delete(hash);
    this.entries.set(hash, { key, until: this.clock() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Drops the key with id `id` (`key_...`), whatever its hash. */
  forget(id: string): void {
    this.generation++;
    for (const [hash, entry] of this.entries) if (entry.key.id === id) this.entries.delete(hash);
  }

  /**
   * Empties the cache and caches nothing until `resume`: the notifications of other processes' revocations are not
   * arriving (the listener is not listening), so no entry could be trusted to be current.
   */
  suspend(): void {
    this.suspended = true;
    this.clear();
  }

  /** Empties the cache (any entry may have missed a revocation) and caches again: the listener listens. */
  resume(): void {
    this.suspended = false;
    this.clear();
  }

  /** Drops every entry; a read in flight is not cached (its key may be one a missed notification revoked). */
  private clear(): void {
    this.generation++;
    this.entries.clear();
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

  /** Adds the key of stored hash `hash`, or of that hash's prefix (a key created in this process, or another's). */
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

/** What `followApiKeyChanges` needs of the process's listener (services/event-stream.ts EventStream has it). */
export interface ApiKeyChangeSource {
  /** calls `fn` with each API key change committed from now on (in any process); returns the unsubscribe */
  onApiKeyChange(fn: (change: ApiKeyChange) => void): () => void;
  /** calls `fn` when the listening connection broke: notifications are missed until `onGap`; returns the unsubscribe */
  onLost(fn: () => void): () => void;
  /** calls `fn` once it listens again after a break (notifications may have been missed); returns the unsubscribe */
  onGap(fn: () => void): () => void;
}

/**
 * Keeps `cache` and `index` current with the API key changes of every process (module comment): `source` is the
 * process's listener, once it listens, or null when it could not start. Until it listens the cache is suspended
 * (caches nothing); then a revoked key is dropped from `cache` and makes `index` read again, a created key enters
 * `index`, a broken connection suspends the cache and listening again resumes it empty. When `source` resolves to
 * null (no listener), the cache resumes and other processes' revocations are seen within its TTL only. Resolves
 * once it follows (true), or without a listener (false).
 */
export function followApiKeyChanges(
  source: Promise<ApiKeyChangeSource | null>,
  cache: ApiKeyCache,
  index: LiveApiKeyIndex,
): Promise<boolean> {
  cache.suspend();
  return source.then(
    (listener) => {
      if (listener) {
        listener.onApiKeyChange((change) => {
          if (change.kind === "revoked") {
            cache.forget(change.id);
            index.invalidate();
          } else index.add(change.hashPrefix);
        });
        listener.onLost(() => cache.suspend());
        listener.onGap(() => {
          cache.resume();
          index.invalidate();
        });
      }
      cache.resume();
      return listener !== null;
    },
    () => {
      cache.resume();
      return false;
    },
  );
}
