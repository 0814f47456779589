/**
 * Catalogue vocabularies (products, plans, addons, coupons; docs/catalogue.md): the allowed values
 * of the enumerated fields and the billing frequencies with their names and intervals.
 */

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
