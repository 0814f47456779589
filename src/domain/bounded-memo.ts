/**
 * A memo of computed values with a bound on how many it keeps: when it holds `limit` values and a
 * new one comes, it forgets them all and starts again (no per-read bookkeeping, so a hit costs one
 * Map lookup). For pure functions the billing run calls with the same few arguments for every
 * subscription (formats.ts `isoDate`, `zonedMidnight`; billing-periods.ts `billingPeriod`).
 */
export class BoundedMemo<K, V> {
  private readonly values = new Map<K, V>();

  /** `limit`: the most values kept (a positive integer). */
  constructor(private readonly limit: number) {}

  /** The value of `key`: `compute()` the first time (and after the memo was cleared), else the kept one. */
  get(key: K, compute: () => V): V {
    let value = this.values.get(key);
    if (value === undefined) {
      value = compute();
      if (this.values.size >= this.limit) this.values.clear();
      this.values.set(key, value);
    }
    return value;
  }

  /** How many values it keeps now (at most `limit`). */
  get size(): number {
    return this.values.size;
  }
}
