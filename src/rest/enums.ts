/**
 * REST <-> GraphQL enum values (docs/graphql.md "Enums"). A GraphQL enum value is the spec's string
 * wherever that string is a GraphQL name (`draft`, `one_time`, `last_during_period`); the few spec
 * strings that are not names (`%`, `$`) get a word in GraphQL, and this table is the one place REST
 * translates them, in bodies, filters and responses alike.
 */
import { isEnumType } from "graphql";
import { FREQUENCIES, USAGE_AGGREGATIONS, USAGE_SCHEMES } from "../domain/catalogue.js";
import { TIERS_MODES } from "../domain/pricing.js";
import { PRORATION_BEHAVIORS } from "../domain/proration.js";
import { shippingTypeRule } from "../domain/shipping-types.js";
import { SWAP_REPLY_STATUSES } from "../domain/swap-replies.js";
import { schema } from "../graphql/schema.js";
import { SHIPPING_TYPE_NAMES } from "../graphql/types/order.js";
import { eventTypeName } from "../graphql/types/event.js";
import { EVENT_TYPE_NAMES } from "../domain/events.js";
import { FINAL_ACTIONS } from "../domain/dunning.js";

/** enum name -> { REST string: GraphQL value name } for values whose names differ. */
export const REST_ENUM_RENAMES: Record<string, Record<string, string>> = {
  DiscountScheme: { "%": "percent", $: "amount" },
  // SII IndTraslado codes are digits, not GraphQL names (src/graphql/types/order.ts)
  ShippingType: { ...SHIPPING_TYPE_NAMES },
  // event types have a dot, not a GraphQL name (src/graphql/types/event.ts); `*` is every type
  EventType: Object.fromEntries(EVENT_TYPE_NAMES.map((type) => [type, eventTypeName(type)])),
  EnabledEvent: { "*": "all", ...Object.fromEntries(EVENT_TYPE_NAMES.map((type) => [type, eventTypeName(type)])) },
};

/**
 * How a body field of an enum reads beyond the rule (a REST string, null or absent; another value is
 * a 400 "must be one of a, b, c"): `order`, the domain's order of the values in that message (the
 * schema sorts them by name); `message`, the field's own message; `emptyIsNull`, `""` means null
 * (not set); `integers`, a JSON integer stands for its digits (SII codes).
 */
const ENUM_BODIES: Record<
  string,
  { order?: readonly string[]; message?: (value: string) => string; emptyIsNull?: true; integers?: true }
> = {
  BillingFrequency: { order: Object.keys(FREQUENCIES) },
  PlanUsageScheme: { order: USAGE_SCHEMES },
  PlanUsageAggregation: { order: USAGE_AGGREGATIONS },
  PlanTiersMode: {
    order: TIERS_MODES,
    emptyIsNull: true,
    message: () => `must be one of ${TIERS_MODES.join(", ")} (or null: flat per unit)`,
  },
  ProrationBehavior: { order: PRORATION_BEHAVIORS },
  SwapReplyStatus: {
    message: (value) => `must be one of ${Object.keys(SWAP_REPLY_STATUSES).join(", ")}, not ${value}`,
  },
  ShippingType: { message: shippingTypeRule, integers: true },
  Language: { emptyIsNull: true },
  DunningFinalAction: { order: FINAL_ACTIONS },
};

/** The GraphQL value name of a REST string of enum `enumName` (unchanged when not renamed). */
export function graphqlEnumValue(enumName: string, restValue: string): string {
  const renames = REST_ENUM_RENAMES[enumName];
  return renames && Object.hasOwn(renames, restValue) ? renames[restValue] : restValue;
}

/** The REST string of a GraphQL value of enum `enumName` (unchanged when not renamed). */
export function restEnumValue(enumName: string, graphqlValue: string): string {
  const renames = REST_ENUM_RENAMES[enumName];
  if (renames) for (const [rest, graphql] of Object.entries(renames)) if (graphql === graphqlValue) return rest;
  return graphqlValue;
}

/** The REST strings a field of enum `enumName` accepts, in schema order (for error messages). */
export function restEnumValues(enumName: string): string[] {
  const type = schema.getType(enumName);
  if (!isEnumType(type)) throw new Error(`${enumName} is not an enum of the schema`);
  return type.getValues().map((value) => restEnumValue(enumName, value.name));
}

/** A body value of enum `enumName` as its GraphQL value name, or the field's reason when it is none of its strings. */
export function enumInput(enumName: string, value: unknown): { value: string | null } | { problem: string } {
  const rules = ENUM_BODIES[enumName] ?? {};
  if (rules.emptyIsNull && value === "") return { value: null };
  const text = rules.integers && Number.isInteger(value) ? String(value) : value;
  const allowed = restEnumValues(enumName);
  if (typeof text === "string" && allowed.includes(text)) return { value: graphqlEnumValue(enumName, text) };
  if (rules.message) return { problem: rules.message(typeof text === "string" ? text : JSON.stringify(text)) };
  const order = rules.order;
  if (order) allowed.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return { problem: `must be one of ${allowed.join(", ")}` };
}
