import { describe, expect, it } from "vitest";
import { BoundedMemo } from "../../src/domain/bounded-memo.js";

describe("BoundedMemo", () => {
  it("computes a key's value once and then gives the kept one", () => {
    const memo = new BoundedMemo<string, number>(3);
    let calls = 0;
    const square = (n: number) => () => (calls++, n * n);
    expect(memo.get("a", square(4))).toBe(16);
    expect(memo.get("a", square(5))).toBe(16); // kept: not computed again
    expect(calls).toBe(1);
  });

  it("forgets everything when a new key comes to a full memo, and keeps at most `limit` values", () => {
    const memo = new BoundedMemo<number, string>(2);
    let calls = 0;
    const text = (n: number) => () => (calls++, `#${n}`);
    memo.get(1, text(1));
    memo.get(2, text(2));
    expect(memo.size).toBe(2);
    expect(memo.get(3, text(3))).toBe("#3"); // full: cleared, then 3 kept
    expect(memo.size).toBe(1);
    expect(memo.get(1, text(1))).toBe("#1"); // computed again
    expect(calls).toBe(4);
    expect(memo.size).toBe(2);
  });
});
