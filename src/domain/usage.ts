/**
 * Metered usage (issue "Usage records"; spec "Usage"): how a plan's `usage_aggregation` turns a
 * line's usage records into the quantity billed for a period. Pure; the billing run passes the
 * records of one subscription line.
 *
 * | aggregation | quantity billed for [start, end) |
 * |---|---|
 * | sum | sum of the quantities recorded in the period |
 * | max | the largest quantity recorded in the period |
 * | last_during_period | the quantity of the latest record in the period |
 * | last_ever | the quantity of the latest record before the period's end, even from an earlier period |
 *
 * No record gives 0. Records at `end` belong to the next period. Ties on time: the later in the
 * list wins (the caller lists records by creation).
 */
import { Decimal, toDecimal, type DecimalInput } from "./money.js";
import type { USAGE_AGGREGATIONS } from "./catalogue.js";

export type UsageAggregation = (typeof USAGE_AGGREGATIONS)[number];

export interface UsageRecord {
  quantity: DecimalInput;
  dateTime: Date;
}

/** The quantity to bill for `[period.start, period.end)` under `aggregation`. */
export function aggregateUsage(records: readonly UsageRecord[], aggregation: UsageAggregation, period: { start: Date; end: Date }): Decimal {
  const before = (r: UsageRecord) => r.dateTime.getTime() < period.end.getTime();
  const inPeriod = records.filter((r) => before(r) && r.dateTime.getTime() >= period.start.getTime());
  const latest = (list: readonly UsageRecord[]) =>
    list.reduce<UsageRecord | null>((best, r) => (!best || r.dateTime.getTime() >= best.dateTime.getTime() ? r : best), null);
  switch (aggregation) {
    case "sum":
      return inPeriod.reduce((total, r) => total.plus(toDecimal(r.quantity)), new Decimal(0));
    case "max":
      return inPeriod.reduce((max, r) => Decimal.max(max, toDecimal(r.quantity)), new Decimal(0));
    case "last_during_period": {
      const last = latest(inPeriod);
      return last ? toDecimal(last.quantity) : new Decimal(0);
    }
    case "last_ever": {
      const last = latest(records.filter(before));
      return last ? toDecimal(last.quantity) : new Decimal(0);
    }
  }
}
