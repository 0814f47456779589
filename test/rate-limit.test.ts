/**
 * The rate limits' pieces that need no database (src/infra/rate-limit.ts; docs/limits.md "Where the counts live"):
 * the addresses a process knows to be past the failed-authentication limit, and the limits when the shared store
 * cannot answer (counted in memory instead, never an error). The shared store itself, across two instances on
 * PostgreSQL: test/integration/shared-limits.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createRateLimits, LimitedAddresses, type StoreQuery } from "../src/infra/rate-limit.js";

describe("LimitedAddresses", () => {
  it("refuses an address until its window ends, with the seconds left, then forgets it", () => {
    let now = 1_000;
    const limited = new LimitedAddresses(() => now);
    expect(limited.refusal("10.0.0.1")).toBeNull();
    limited.add("10.0.0.1", 2_500);
    limited.add("10.0.0.2", 0); // a window already ended: not kept
    expect(limited.size).toBe(1);
    expect(limited.refusal("10.0.0.1")).toEqual({ retryAfterSeconds: 3 });
    now = 3_499;
    expect(limited.refusal("10.0.0.1")).toEqual({ retryAfterSeconds: 1 });
    now = 3_500;
    expect(limited.refusal("10.0.0.1")).toBeNull();
    expect(limited.size).toBe(0);
  });

  it("keeps at most 10,000 addresses: ended windows go first, then the oldest", () => {
    let now = 0;
    const limited = new LimitedAddresses(() => now);
    limited.add("ended", 10);
    for (let i = 0; i < 9_999; i++) limited.add(`a${i}`, 60_000);
    now = 20;
    limited.add("one more", 60_000);
    expect(limited.size).toBe(10_000);
    expect(limited.refusal("ended")).toBeNull();
    expect(limited.refusal("a0")).not.toBeNull();
    limited.add("and another", 60_000);
    expect(limited.size).toBe(10_000);
    expect(limited.refusal("a0")).toBeNull();
    expect(limited.refusal("and another")).not.toBeNull();
  });
});

describe("createRateLimits with a store that cannot answer", () => {
  it("counts in this process's memory instead: the limits hold and nothing throws", async () => {
    const sent: string[] = [];
    const down: StoreQuery = async (statement) => {
      sent.push(statement.text.trim().split(/\s+/)[0]);
      throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
    };
    const limits = createRateLimits(
      {
        rateLimitRequests: 2,
        rateLimitWindowSeconds: 60,
        rateLimitBurst: 1,
        authFailureLimit: 2,
        authFailureWindowSeconds: 60,
      },
      undefined,
      down,
    );
    expect(await limits.consumeRequest("Bearer sk_test_a", "10.0.0.1")).toBeNull();
    expect(await limits.consumeRequest("Bearer sk_test_a", "10.0.0.1")).toBeNull();
    expect(await limits.consumeRequest("Bearer sk_test_a", "10.0.0.1")).toBeNull(); // the burst
    expect((await limits.consumeRequest("Bearer sk_test_a", "10.0.0.1"))?.retryAfterSeconds).toBeGreaterThan(0);
    expect(await limits.checkAuthFailures("10.0.0.1")).toBeNull();
    await limits.recordAuthFailure("10.0.0.1");
    await limits.recordAuthFailure("10.0.0.1");
    expect((await limits.checkAuthFailures("10.0.0.1"))?.retryAfterSeconds).toBe(60);
    // every count was tried on the store first
    expect(sent).toContain("INSERT");
    expect(sent).toContain("SELECT");
  });
});
