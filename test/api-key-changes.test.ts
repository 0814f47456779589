/**
 * How a process's API key cache and index of live keys follow the key changes of every process
 * (services/api-key-cache.ts `followApiKeyChanges`; docs/operations.md "API key cache"): the notification payloads,
 * a revocation dropping the key, a creation entering the index, nothing cached while the listener is not listening
 * and everything dropped when it listens again. The same over PostgreSQL, across processes:
 * test/integration/shared-limits.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  ApiKeyCache,
  apiKeyNotification,
  followApiKeyChanges,
  LiveApiKeyIndex,
  parseApiKeyNotification,
  type ApiKeyChange,
  type ApiKeyChangeSource,
  type CachedApiKey,
} from "../src/services/api-key-cache.js";
import { hashKey } from "../src/services/api-keys.js";

const KEY: CachedApiKey = {
  id: "key_a",
  organizationId: "org_a",
  testMode: true,
  userEmail: "ops@acme.cl",
  expiresAt: null,
  lastUsedAt: null,
};
const HASH = hashKey("sk_test_0123456789abcdefABCDEF0123456789");
const NEW = hashKey("sk_live_0123456789abcdefABCDEF0123456789");

/** A listener the test drives, in place of the process's LISTEN (services/event-stream.ts). */
function drivenSource() {
  const changes = new Set<(change: ApiKeyChange) => void>();
  const lost = new Set<() => void>();
  const gaps = new Set<() => void>();
  const source: ApiKeyChangeSource = {
    onApiKeyChange: (fn) => (changes.add(fn), () => changes.delete(fn)),
    onLost: (fn) => (lost.add(fn), () => lost.delete(fn)),
    onGap: (fn) => (gaps.add(fn), () => gaps.delete(fn)),
  };
  return {
    source,
    change: (c: ApiKeyChange) => changes.forEach((fn) => fn(c)),
    lose: () => lost.forEach((fn) => fn()),
    gap: () => gaps.forEach((fn) => fn()),
  };
}

describe("API key change notifications", () => {
  it("say a revocation by key id and a creation by hash prefix, and nothing else parses", () => {
    const revoked: ApiKeyChange = { kind: "revoked", id: "key_0123456789abcdefghijklmn" };
    const created: ApiKeyChange = { kind: "created", hashPrefix: HASH.slice(0, 16) };
    expect(apiKeyNotification(revoked)).toBe("revoked key_0123456789abcdefghijklmn");
    expect(apiKeyNotification(created)).toBe(`created ${HASH.slice(0, 16)}`);
    expect(parseApiKeyNotification(apiKeyNotification(revoked))).toEqual(revoked);
    expect(parseApiKeyNotification(apiKeyNotification(created))).toEqual(created);
    for (const bad of ["", "revoked", "revoked a b", "created xyz", `created ${HASH}`, "renamed key_a"])
      expect(parseApiKeyNotification(bad)).toBeNull();
  });
});

describe("followApiKeyChanges", () => {
  const opened: { close(): void }[] = [];
  afterEach(() => opened.splice(0).forEach((o) => o.close()));
  const cacheAndIndex = (live: string[] = []) => {
    const cache = new ApiKeyCache(30_000);
    const index = new LiveApiKeyIndex(async () => live.map((h) => h.slice(0, 16)));
    opened.push(cache, index);
    return { cache, index };
  };

  it("caches nothing until the listener listens, then drops revoked keys and learns created ones", async () => {
    const { cache, index } = cacheAndIndex([HASH]);
    const driven = drivenSource();
    let resolve!: (s: ApiKeyChangeSource) => void;
    const following = followApiKeyChanges(new Promise((r) => (resolve = r)), cache, index);
    cache.set(HASH, { ...KEY });
    expect(cache.get(HASH)).toBeUndefined();
    resolve(driven.source);
    expect(await following).toBe(true);
    cache.set(HASH, { ...KEY });
    expect(cache.get(HASH)).toEqual(KEY);
    expect(await index.mayExist(NEW)).toBe(false);
    driven.change({ kind: "created", hashPrefix: NEW.slice(0, 16) });
    expect(await index.mayExist(NEW)).toBe(true);
    driven.change({ kind: "revoked", id: "key_other" });
    expect(cache.get(HASH)).toEqual(KEY);
    driven.change({ kind: "revoked", id: KEY.id });
    expect(cache.get(HASH)).toBeUndefined();
  });

  it("while the listening connection is broken caches nothing; listening again starts empty", async () => {
    const { cache, index } = cacheAndIndex();
    const driven = drivenSource();
    await followApiKeyChanges(Promise.resolve(driven.source), cache, index);
    cache.set(HASH, { ...KEY });
    driven.lose();
    expect(cache.get(HASH)).toBeUndefined();
    cache.set(HASH, { ...KEY });
    expect(cache.size).toBe(0);
    // a read that started before listening again is not cached after it (a missed revocation may be in it)
    const readAt = cache.generation;
    driven.gap();
    cache.set(HASH, { ...KEY }, readAt);
    expect(cache.get(HASH)).toBeUndefined();
    cache.set(HASH, { ...KEY });
    expect(cache.get(HASH)).toEqual(KEY);
  });

  it("without a listener, caches as before: other processes' revocations wait for the TTL", async () => {
    const { cache, index } = cacheAndIndex();
    expect(await followApiKeyChanges(Promise.resolve(null), cache, index)).toBe(false);
    cache.set(HASH, { ...KEY });
    expect(cache.get(HASH)).toEqual(KEY);
    const failed = cacheAndIndex();
    expect(await followApiKeyChanges(Promise.reject(new Error("no LISTEN")), failed.cache, failed.index)).toBe(false);
    failed.cache.set(HASH, { ...KEY });
    expect(failed.cache.get(HASH)).toEqual(KEY);
  });
});
