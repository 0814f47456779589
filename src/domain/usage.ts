/**
 * Metered usage (docs/recurring-billing.md "Metered usage"; spec "Usage"): how a plan's `usage_aggregation` turns a
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
import { FieldErrorCollector, InvalidStateError } from "./errors.js";
import { Decimal, toDecimal, type DecimalInput } from "./money.js";
import type { USAGE_AGGREGATIONS } from "./catalogue.js";

export type UsageAggregation = (typeof USAGE_AGGREGATIONS)[number];

export interface UsageRecord {
  quantity: DecimalInput;
  dateTime: Date;
}

/** The quantity to bill for `[period.start, period.end)` under `aggregation`. */
export function aggregateUsage(
  records: readonly UsageRecord[],
  aggregation: UsageAggregation,
  period: { start: Date; end: Date },
): Decimal {
  const before = (r: UsageRecord) => r.dateTime.getTime() < period.end.getTime();
  const inPeriod = records.filter((r) => before(r) && r.dateTime.getTime() >= period.start.getTime());
  const latest = (list: readonly UsageRecord[]) =>
    list.reduce<UsageRecord | null>(
      (best, r) => (!best || r.dateTime.getTime() >= best.dateTime.getTime() ? r : best),
      null,
    );
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

/** How far in the future a usage may be dated (clock skew between the caller and us). */
export const USAGE_FUTURE_TOLERANCE_MS = 24 * 60 * 60 * 1000;

/**
 * Checks a new usage record (docs/recurring-billing.md "Usage records"): only metered lines take usage (400 on
 * `subscription_line`); `quantity` is required and not negative; `date_time` is not more than a
 * day in the future; a cancelled subscription takes no more usage (409).
 */
export function checkUsage(
  usage: { quantity: DecimalInput | null | undefined; dateTime: Date },
  line: { usageScheme: string; subscriptionStatus: string } | null,
  now: Date,
  errors: FieldErrorCollector,
): void {
  if (line && line.usageScheme !== "metered")
    errors.add("subscription_line", "only lines of metered plans take usage; this line's plan is licensed");
  if (usage.quantity === null || usage.quantity === undefined) errors.add("quantity", "is required");
  else if (toDecimal(usage.quantity).isNegative()) errors.add("quantity", "must not be negative");
  if (usage.dateTime.getTime() > now.getTime() + USAGE_FUTURE_TOLERANCE_MS)
    errors.add("date_time", "must not be more than a day in the future");
  errors.throwIfAny("Invalid usage");
  if (line?.subscriptionStatus === "cancelled")
    throw new InvalidStateError("The subscription is cancelled; it takes no more usage");
}
