/**
 * REST bodies -> GraphQL variables by one rule (docs/rest.md "Requests"), read from the operation a
 * route runs: the body is its `input` (or, without one, its variables other than `id`), walked
 * beside the resource the operation prints. A snake_case key is the input field of that REST name
 * (printer.ts `restName`), nested objects and lists alike; a field the resource prints as an object
 * (`customer`, `currency`, `frequency`) also takes that object for its `id`; an enum takes the REST
 * strings (enums.ts); a JSON number for a `Decimal` becomes its exact decimal string. A key the
 * resource only prints (`id`, `status`, totals, `created`) is accepted and ignored, so a retrieved
 * resource can be sent back; any other key is a 400 "unknown field". Every value is of the JSON type
 * its position takes (`SCALAR_INPUTS`, an object for an input object), else a 400 naming it: nothing
 * of the wrong type is dropped, turned into null or coerced. What a value of the right type says is
 * checked by GraphQL (scalars, the input guard, the services), which name their fields by the same
 * REST path. Only the spec's other forms of a value are written out, in `EXCEPTIONS_IN`.
 */
import { Decimal } from "decimal.js";
import {
  getNamedType,
  getNullableType,
  GraphQLInputObjectType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLObjectType,
  type SelectionSetNode,
} from "graphql";
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import { schema } from "../graphql/schema.js";
import { enumInput } from "./enums.js";
import { commaList } from "./filters.js";
import { EXCEPTIONS, printedFields, restName, rootOf, snake, type Fragments } from "./printer.js";
import type { Operation } from "./types.js";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** One REST key of a body object: the GraphQL input field, whether it is a reference, its object's keys. */
export interface BodyField {
  name: string;
  type: GraphQLInputType;
  /** the resource prints it as an object: the object is taken for its `id` */
  reference: boolean;
  /** an input object's own keys */
  object?: BodyObject;
}

/** The keys of a body object: its input fields by REST name, and the keys the resource only prints (ignored). */
export interface BodyObject {
  input: string;
  fields: Map<string, BodyField>;
  ignored: Set<string>;
}

/** The JSON type of a body value (JSON.parse's output): `null` has none. */
type JsonType = "string" | "number" | "boolean" | "object" | "array";
const jsonTypeOf = (value: unknown): JsonType =>
  Array.isArray(value) ? "array" : (typeof value as Exclude<JsonType, "array">);

/**
 * The JSON types a body value of each GraphQL scalar takes (docs/rest.md "Requests"), and the reason a value of
 * another type gets: GraphQL's for the same value (graphql/errors.ts), so a field reads alike whichever refuses
 * it. Stricter than GraphQL in one place: an ID is a string (GraphQL's also takes an integer). Every scalar of
 * the schema has an entry (checked below, when this module loads).
 */
export const SCALAR_INPUTS: Record<string, { accepts: readonly JsonType[]; reason: string }> = {
  String: { accepts: ["string"], reason: "must be a string" },
  ID: { accepts: ["string"], reason: "must be a string" },
  Int: { accepts: ["number"], reason: "must be an integer" },
  Float: { accepts: ["number"], reason: "must be a number" },
  Boolean: { accepts: ["boolean"], reason: "must be true or false" },
  // money and quantities: a JSON number or a decimal string (docs/rest.md "Requests")
  Decimal: { accepts: ["number", "string"], reason: "must be a decimal number" },
  Date: { accepts: ["string"], reason: "must be a date yyyy-mm-dd" },
  DateTime: { accepts: ["string"], reason: "must be an ISO 8601 timestamp with an offset" },
  // `metadata`, a source's `data`: an object (what its values may be is the field's own rule)
  JSONObject: { accepts: ["object"], reason: "must be a JSON object" },
};
for (const type of Object.values(schema.getTypeMap()))
  if (isScalarType(type) && !Object.hasOwn(SCALAR_INPUTS, type.name))
    throw new Error(`rest/input.ts SCALAR_INPUTS: no JSON types for scalar ${type.name}`);

/**
 * The spec's other forms of a value, by GraphQL input type and REST key: each rewrites the key's
 * value (given the whole body) into REST entries that then follow the rule. An object without the
 * key its form reads stays as it is (and is refused as the field's type), never read as absent.
 */
const EXCEPTIONS_IN: Record<string, Record<string, (value: unknown, body: Json) => Json>> = {
  // a printed `document` carries the invoice's currency (docs/rest.md "Requests")
  InvoiceInput: {
    document: (v, body) =>
      isObject(v) && Object.hasOwn(v, "id")
        ? { document: v.id, currency: body.currency ?? v.currency }
        : { document: v },
  },
  // a customer's printed `state` is `{id, code, name}`: its code is what is set (the id is null for a free-text state)
  CustomerInput: { state: (v) => ({ state: isObject(v) && Object.hasOwn(v, "code") ? v.code : v }) },
  // the SII activity codes as one comma-separated string
  TaxProfileInput: { activity_codes: (v) => ({ activity_codes: typeof v === "string" ? commaList(v) : v }) },
};

/** The keys of input object `input`, beside `output` as the operation selects it (`selection`). */
function bodyObject(
  input: GraphQLInputObjectType,
  output: GraphQLObjectType | undefined,
  selection: SelectionSetNode | undefined,
  fragments: Fragments,
): BodyObject {
  const typename = output?.name;
  const printed = new Map(
    output ? printedFields(typename, selection, fragments).map((f) => [restName(typename, f.key), f]) : [],
  );
  const fields = new Map<string, BodyField>();
  for (const field of Object.values(input.getFields())) {
    const rest = restName(typename, field.name);
    const shown = printed.get(rest);
    const named = getNamedType(field.type);
    const type = shown && getNamedType(output!.getFields()[shown.name].type);
    fields.set(rest, {
      name: field.name,
      type: field.type,
      reference: !isInputObjectType(named) && shown?.selection !== undefined,
      object: isInputObjectType(named)
        ? bodyObject(named, isObjectType(type) ? type : undefined, shown?.selection, fragments)
        : undefined,
    });
  }
  const exceptions = Object.keys((typename && EXCEPTIONS[typename]) || {}).map(snake);
  const ignored = new Set([...printed.keys(), ...exceptions].filter((key) => !fields.has(key)));
  return { input: input.name, fields, ignored };
}

const bodies = new WeakMap<Operation, { object: BodyObject; wrapped: boolean }>();

/**
 * The body of operation `doc`: its `input` variable (`wrapped`), else an object of its variables
 * other than `id` (a payment's authorize: `source`).
 */
export function bodyOf(doc: Operation): { object: BodyObject; wrapped: boolean } {
  let body = bodies.get(doc);
  if (body) return body;
  const { operation, node, field, fragments } = rootOf(doc);
  const variables = operation.variableDefinitions ?? [];
  const input = variables.find((v) => v.variable.name.value === "input");
  const type = input
    ? getNullableType(typeFromAST(schema, input.type))
    : new GraphQLInputObjectType({
        name: `${operation.name?.value}Body`,
        fields: Object.fromEntries(
          variables
            .filter((v) => v.variable.name.value !== "id")
            .map((v) => [v.variable.name.value, { type: typeFromAST(schema, v.type) as GraphQLInputType }]),
        ),
      });
  if (!isInputObjectType(type)) throw new Error(`${operation.name?.value}: $input is not an input object`);
  const output = getNamedType(field.type);
  const object = bodyObject(type, isObjectType(output) ? output : undefined, node.selectionSet, fragments);
  bodies.set(doc, (body = { object, wrapped: input !== undefined }));
  return body;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/**
 * Adds `reason` for the value at `path`, as GraphQL reports a variable's (graphql/errors.ts): an item of a list
 * on the list (`recipient.1` -> `{"recipient": ["item 1: must be a string"]}`).
 */
function addValueError(errors: FieldErrors, path: string, reason: string): void {
  const item = /^(?:(.*)\.)?(\d+)$/.exec(path);
  if (item?.[1]) addFieldError(errors, item[1], `item ${item[2]}: ${reason}`);
  else addFieldError(errors, path || "body", reason);
}

/** A body value of input type `type` at `path` as GraphQL's, by the rule. */
function mapValue(value: unknown, type: GraphQLInputType, at: BodyField, path: string, errors: FieldErrors): unknown {
  if (value === null) return null;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    if (!Array.isArray(value)) return mapValue(value, inner.ofType, at, path, errors); // a list of one (GraphQL's rule)
    return value.map((item, i) => mapValue(item, inner.ofType, at, join(path, String(i)), errors));
  }
  if (at.object) return mapObject(value, at.object, path, errors);
  const given = at.reference && isObject(value) && Object.hasOwn(value, "id") ? value.id : value;
  if (isEnumType(inner)) {
    const translated = enumInput(inner.name, given);
    if ("problem" in translated) addFieldError(errors, path, translated.problem);
    return "value" in translated ? translated.value : given;
  }
  if (given === null) return null;
  const scalar = isScalarType(inner) ? SCALAR_INPUTS[inner.name] : undefined;
  if (scalar && !scalar.accepts.includes(jsonTypeOf(given))) addValueError(errors, path, scalar.reason);
  return inner.name === "Decimal" && typeof given === "number" ? new Decimal(given).toFixed() : given;
}

/** A body object as the GraphQL input object: each key by the rule, printed-only keys left out, others refused. */
function mapObject(value: unknown, object: BodyObject, path: string, errors: FieldErrors): unknown {
  if (!isObject(value)) {
    addValueError(errors, path, "must be an object");
    return value;
  }
  const exceptions = Object.hasOwn(EXCEPTIONS_IN, object.input) ? EXCEPTIONS_IN[object.input] : undefined;
  const input: Json = {};
  const put = (key: string, v: unknown) => {
    const field = object.fields.get(key);
    if (field && v !== undefined) input[field.name] = mapValue(v, field.type, field, join(path, key), errors);
    else if (!field && !object.ignored.has(key)) addFieldError(errors, join(path, key), "unknown field");
  };
  for (const key of Object.keys(value)) {
    if (exceptions && Object.hasOwn(exceptions, key))
      for (const [k, v] of Object.entries(exceptions[key](value[key], value))) put(k, v);
    else put(key, value[key]);
  }
  return input;
}

/**
 * The GraphQL variables of a REST body for operation `doc` (`{input}`, or the variables themselves);
 * a body that is no JSON object, an unknown key, a value of the wrong JSON type or none of an enum's
 * strings is a 400 naming every such field, before anything runs.
 */
export function bodyVariables(doc: Operation, body: unknown): Json {
  if (!isObject(body)) throw ValidationError.field("body", "must be a JSON object");
  const { object, wrapped } = bodyOf(doc);
  const errors: FieldErrors = {};
  const input = mapObject(body, object, "", errors) as Json;
  ValidationError.throwIfAny("Invalid request body", errors);
  return wrapped ? { input } : input;
}
