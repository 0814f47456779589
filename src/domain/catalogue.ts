/**
 * Catalogue vocabularies (products, plans, addons, coupons; docs/catalogue.md): the allowed values
 * of the enumerated fields and the billing frequencies with their names and intervals; the rule
 * that pricing is frozen while subscriptions use it (`checkPricingUnfrozen`).
 */
import { InvalidStateError } from "./errors.js";

/** Billing frequencies of a plan: id -> name and interval (docs/catalogue.md). */
export const FREQUENCIES = {
  daily: { name: "Daily", interval: "day", intervalCount: 1 },
  weekly: { name: "Weekly", interval: "week", intervalCount: 1 },
  monthly: { name: "Monthly", interval: "month", intervalCount: 1 },
  quarterly: { name: "Quarterly", interval: "month", intervalCount: 3 },
  yearly: { name: "Yearly", interval: "year", intervalCount: 1 },
} as const;
export type Frequency = keyof typeof FREQUENCIES;

export const USAGE_SCHEMES = ["licensed", "metered"] as const;
export const USAGE_AGGREGATIONS = ["sum", "max", "last_during_period", "last_ever"] as const;
export const APPLY_SCHEMES = ["one_time", "recurring"] as const;
export const DISCOUNT_SCHEMES = ["%", "$"] as const;
export const DURATION_SCHEMES = ["once", "limited", "forever"] as const;
export const APPLY_ON = ["invoice", "line"] as const;

/**
 * Status of every catalogue resource: `active`, or `archived` (kept for the subscriptions and
 * invoices that reference it; not usable for new subscriptions). Archiving sets `archived`.
 */
export const CATALOGUE_STATUSES = ["active", "archived"] as const;
export type CatalogueStatus = (typeof CATALOGUE_STATUSES)[number];

export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === "string" && (values as readonly string[]).includes(value);
}

/** `{id, name}` of a frequency, as the spec's plan object prints it. */
export function describeFrequency(id: string) {
  const f = FREQUENCIES[id as Frequency];
  return { id, name: f?.name ?? id, interval: f?.interval ?? null, intervalCount: f?.intervalCount ?? null };
}

/** What a subscription's billing depends on, by catalogue item: frozen while a subscription uses it. */
const FROZEN = {
  Plan: { what: "pricing", listed: true },
  Addon: { what: "pricing", listed: false },
  Coupon: { what: "discount", listed: false },
} as const;

/** A catalogue item whose pricing subscriptions bill by. */
export type PricedItem = keyof typeof FROZEN;

/**
 * The frozen-pricing rule (docs/catalogue.md): the pricing fields of a plan, addon or coupon
 * (`changed`, the fields an update changes, camelCase) cannot change while `subscriptionsUsing`
 * subscriptions (lines of a plan, subscription addons, coupon uses) use it; its name and
 * description can. Throws InvalidStateError (409), e.g. "Plan pla_1 is used by subscriptions; its
 * pricing (amount, usage_scheme) cannot change. Create a new plan instead."; a plan's message names
 * the fields (snake_case, as REST has them). Returns when nothing changes or nothing uses it.
 */
export function checkPricingUnfrozen(
  item: PricedItem,
  id: string,
  changed: readonly string[],
  subscriptionsUsing: number,
): void {
  if (changed.length === 0 || subscriptionsUsing === 0) return;
  const { what, listed } = FROZEN[item];
  const fields = listed ? ` (${changed.map(snakeCase).join(", ")})` : "";
  throw new InvalidStateError(
    `${item} ${id} is used by subscriptions; its ${what}${fields} cannot change. ` +
      `Create a new ${item.toLowerCase()} instead.`,
  );
}

function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
