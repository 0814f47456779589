/**
 * REST <-> GraphQL enum values (docs/graphql.md "Enums"). A GraphQL enum value is the spec's string
 * wherever that string is a GraphQL name (`draft`, `one_time`, `last_during_period`); the few spec
 * strings that are not names (`%`, `$`) get a word in GraphQL, and this table is the one place REST
 * translates them, in bodies, filters and responses alike.
 */
import { isEnumType } from "graphql";
import { z } from "zod";
import { schema } from "../graphql/schema.js";
import { SHIPPING_TYPE_NAMES } from "../graphql/types/order.js";

/** enum name -> { REST string: GraphQL value name } for values whose names differ. */
export const REST_ENUM_RENAMES: Record<string, Record<string, string>> = {
  DiscountScheme: { "%": "percent", $: "amount" },
  // SII IndTraslado codes are digits, not GraphQL names (src/graphql/types/order.ts)
  ShippingType: { ...SHIPPING_TYPE_NAMES },
};

/** The GraphQL value name of a REST string of enum `enumName` (unchanged when not renamed). */
export function graphqlEnumValue(enumName: string, restValue: string): string {
  const renames = REST_ENUM_RENAMES[enumName];
  return renames && Object.hasOwn(renames, restValue) ? renames[restValue] : restValue;
}

/** The REST string of a GraphQL value of enum `enumName` (unchanged when not renamed). */
export function restEnumValue(enumName: string, graphqlValue: string): string;
export function restEnumValue(enumName: string, graphqlValue: string | null): string | null;
export function restEnumValue(enumName: string, graphqlValue: string | null): string | null {
  if (graphqlValue === null) return null;
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

/**
 * A REST body field over enum `enumName`: the spec's string, null or absent; another string is a
 * 400 validation_error on the field (`message`, default "must be one of a, b, c", listed in the
 * domain's `order` when given, as the services list them: the schema sorts values by name),
 * before GraphQL sees it; a valid one is handed to GraphQL as the enum value's name (`T`: the
 * enum's generated type, src/graphql/generated/operations.ts). `emptyIsNull`: "" means null (not
 * set); `acceptObjectId`: the printed object `{id}` is accepted for its id; `acceptInteger`: a
 * JSON integer is accepted for its digits (SII codes).
 */
export function restEnumField<T extends string = string>(
  enumName: string,
  {
    order,
    message,
    emptyIsNull = false,
    acceptObjectId = false,
    acceptInteger = false,
  }: {
    order?: readonly string[];
    message?: (value: string) => string;
    emptyIsNull?: boolean;
    acceptObjectId?: boolean;
    acceptInteger?: boolean;
  } = {},
) {
  const forms: z.ZodType<string>[] = [z.string()];
  if (acceptObjectId)
    forms.push(
      z
        .object({ id: z.string() })
        .passthrough()
        .transform((o) => o.id),
    );
  if (acceptInteger)
    forms.push(
      z
        .number()
        .int()
        .transform((n) => String(n)),
    );
  const raw: z.ZodType<string> = forms.length === 1 ? forms[0] : z.union(forms);
  return raw
    .transform((value, ctx) => {
      if (emptyIsNull && value === "") return null;
      const allowed = restEnumValues(enumName);
      if (order) allowed.sort((a, b) => order.indexOf(a) - order.indexOf(b));
      if (!allowed.includes(value)) {
        ctx.addIssue({ code: "custom", message: message ? message(value) : `must be one of ${allowed.join(", ")}` });
        return z.NEVER;
      }
      return graphqlEnumValue(enumName, value) as T;
    })
    .nullable()
    .optional();
}
