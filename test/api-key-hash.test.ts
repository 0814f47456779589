/**
 * A request's API key is hashed once (services/api-keys.ts presentedKeyHash): the rate limit's bucket
 * (server.ts) and the key's lookup (`authenticate`) use the same stored hash.
 */
import { describe, expect, it } from "vitest";
import { hashKey, presentedKeyHash } from "../src/services/api-keys.js";
import { createRateLimits } from "../src/infra/rate-limit.js";

const KEY = "sk_test_0123456789abcdefABCDEF0123456789";
const OTHER = "sk_live_0123456789abcdefABCDEF0123456789";

describe("presentedKeyHash", () => {
  it("is the stored hash of the presented key, whatever the header's spelling; null for no key", () => {
    expect(presentedKeyHash(`Bearer ${KEY}`)).toBe(hashKey(KEY));
    expect(presentedKeyHash(`bearer   ${KEY} `)).toBe(hashKey(KEY));
    expect(presentedKeyHash(`Bearer ${OTHER}`)).toBe(hashKey(OTHER));
    expect(presentedKeyHash(`Bearer ${KEY}`)).toBe(hashKey(KEY)); // after another key: hashed again, same hash
    for (const header of [null, undefined, "", `Basic ${KEY}`, "Bearer not-a-key", `portal:${KEY}`])
      expect(presentedKeyHash(header)).toBeNull();
  });
});

describe("rate limit buckets", () => {
  it("a key's bucket is named by credentialKey: every spelling of the key's header spends one bucket", async () => {
    const named: string[] = [];
    const limits = createRateLimits(
      {
        rateLimitRequests: 2,
        rateLimitWindowSeconds: 60,
        rateLimitBurst: 0,
        authFailureLimit: 0,
        authFailureWindowSeconds: 60,
      },
      (credential) => {
        const hash = presentedKeyHash(credential) ?? `other:${credential.length}`;
        named.push(hash);
        return hash;
      },
    );
    expect(await limits.consumeRequest(`Bearer ${KEY}`, "10.0.0.1")).toBeNull();
    expect(await limits.consumeRequest(`bearer ${KEY}`, "10.0.0.2")).toBeNull();
    expect(await limits.consumeRequest(`BEARER  ${KEY}`, "10.0.0.3")).not.toBeNull();
    expect(await limits.consumeRequest(`Bearer ${OTHER}`, "10.0.0.1")).toBeNull();
    expect(named).toEqual([hashKey(KEY), hashKey(KEY), hashKey(KEY), hashKey(OTHER)]);
  });
});
