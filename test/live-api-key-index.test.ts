/**
 * The index of live API keys (services/api-key-cache.ts LiveApiKeyIndex) that lets a client address past the
 * failed-authentication limit have its unknown keys refused without a database read (docs/limits.md "Failed
 * authentications"): read once per refresh period however many keys are asked, shared by concurrent askers, a key
 * created in the process known at once, a revocation in the process read again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { forgetApiKey, learnApiKey, LiveApiKeyIndex } from "../src/services/api-key-cache.js";
import { hashKey } from "../src/services/api-keys.js";

const prefix = (key: string) => hashKey(key).slice(0, 16);
const LIVE = "sk_test_0123456789abcdefABCDEF0123456789";
const NEW = "sk_live_0123456789abcdefABCDEF0123456789";

describe("LiveApiKeyIndex", () => {
  let index: LiveApiKeyIndex | undefined;
  afterEach(() => index?.close());

  it("reads the live keys once per refresh period, whatever is asked, and answers from that read", async () => {
    let now = 0;
    const live = [prefix(LIVE)];
    let reads = 0;
    index = new LiveApiKeyIndex(
      async () => {
        reads++;
        return [...live];
      },
      30_000,
      () => now,
    );
    expect(await index.mayExist(hashKey(LIVE))).toBe(true);
    for (let i = 0; i < 100; i++) expect(await index.mayExist(hashKey(`sk_test_guess${i}`))).toBe(false);
    expect(reads).toBe(1);
    // a key created by another process waits for the next read
    live.push(prefix(NEW));
    now = 29_999;
    expect(await index.mayExist(hashKey(NEW))).toBe(false);
    now = 30_000;
    expect(await index.mayExist(hashKey(NEW))).toBe(true);
    expect(reads).toBe(2);
    // a prefix whose key turned out not to authenticate is refused without a read
    index.drop(hashKey(NEW));
    expect(await index.mayExist(hashKey(NEW))).toBe(false);
    expect(reads).toBe(2);
  });

  it("shares one read among concurrent askers", async () => {
    let reads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    index = new LiveApiKeyIndex(async () => {
      reads++;
      await gate;
      return [prefix(LIVE)];
    });
    const answers = Promise.all([index.mayExist(hashKey(LIVE)), index.mayExist(hashKey(NEW))]);
    release();
    expect(await answers).toEqual([true, false]);
    expect(reads).toBe(1);
  });

  it("knows a key created in this process at once and reads again after a revocation here", async () => {
    const live = [prefix(LIVE)];
    let reads = 0;
    index = new LiveApiKeyIndex(async () => {
      reads++;
      return [...live];
    });
    expect(await index.mayExist(hashKey(NEW))).toBe(false);
    learnApiKey(hashKey(NEW));
    expect(await index.mayExist(hashKey(NEW))).toBe(true);
    expect(reads).toBe(1);
    live.length = 0;
    forgetApiKey("key_revoked");
    expect(await index.mayExist(hashKey(LIVE))).toBe(false);
    expect(reads).toBe(2);
  });

  it("does not trust a read that a revocation overtook", async () => {
    let reads = 0;
    let release!: () => void;
    index = new LiveApiKeyIndex(async () => {
      reads++;
      if (reads === 1) await new Promise<void>((resolve) => (release = resolve));
      return reads === 1 ? [prefix(LIVE)] : [];
    });
    const first = index.mayExist(hashKey(LIVE));
    await Promise.resolve();
    forgetApiKey("key_revoked_meanwhile");
    release();
    expect(await first).toBe(true);
    expect(await index.mayExist(hashKey(LIVE))).toBe(false);
    expect(reads).toBe(2);
  });

  it("lets every key through to its own read for a second after the index could not be read", async () => {
    let now = 0;
    let reads = 0;
    index = new LiveApiKeyIndex(
      async () => {
        reads++;
        if (reads === 1) throw new Error("connection refused");
        return [prefix(LIVE)];
      },
      30_000,
      () => now,
    );
    expect(await index.mayExist(hashKey(NEW))).toBe(true);
    now = 999;
    expect(await index.mayExist(hashKey(NEW))).toBe(true);
    expect(reads).toBe(1);
    now = 1_000;
    expect(await index.mayExist(hashKey(NEW))).toBe(false);
    expect(await index.mayExist(hashKey(LIVE))).toBe(true);
    expect(reads).toBe(2);
  });
});
