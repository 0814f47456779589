/**
 * The input check every GraphQL field runs before its resolver (and so before any query), on
 * both surfaces (REST runs GraphQL operations): each String and ID value is checked by
 * domain/input-limits.ts `textProblem` (no NUL, no unpaired surrogates, at most its field's
 * length from TEXT_LIMITS), each ID by infra/ids.ts `isWellFormedId`, each JSONObject value by
 * `checkJsonValue` (depth, keys, its strings), each list at most MAX_JSON_KEYS items. Decimals are range-checked by the
 * Decimal scalar.
 *
 * Errors: a malformed top-level `id` argument (the REST path's id) is 404 `not_found`, as if no
 * such resource existed; anything else is one 400 `validation_error` naming every bad field by its
 * path in the input (snake_case, as REST names it: `lines.0.name`, `tax_id`).
 */
import {
  defaultFieldResolver,
  getNamedType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
} from "graphql";
import { addFieldError, NotFoundError, ValidationError, type FieldErrors } from "../domain/errors.js";
import { checkJsonValue, DEFAULT_TEXT_LIMIT, MAX_JSON_KEYS, textLimit, textProblem } from "../domain/input-limits.js";
import { isWellFormedId } from "../infra/ids.js";

/** `taxId` -> `tax_id`: an input field's name in an error path, as REST names it. */
export const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

const ID_MESSAGE =
  "must be an id: a known prefix, an underscore and letters or digits (e.g. cus_0a1B2c3D4e5F6g7H8i9J0k1L)";

/**
 * An input object type's fields with their snake_case path segment and TEXT_LIMITS key, computed once per type (a batch
 * of 1,000 records checks each field 1,000 times).
 */
const fieldsOf = new WeakMap<
  GraphQLInputObjectType,
  { name: string; type: GraphQLInputType; snake: string; key: string }[]
>();
function inputFields(type: GraphQLInputObjectType) {
  let fields = fieldsOf.get(type);
  if (!fields) {
    fields = Object.values(type.getFields()).map((f) => ({
      name: f.name,
      type: f.type,
      snake: snake(f.name),
      key: `${type.name}.${f.name}`,
    }));
    fieldsOf.set(type, fields);
  }
  return fields;
}

/** Checks `value` of input type `type` at `path`; `key` is its TEXT_LIMITS key (`InputType.field`). */
function checkValue(value: unknown, type: GraphQLInputType, path: string, key: string, errors: FieldErrors): void {
  if (value === null || value === undefined) return;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    const items = Array.isArray(value) ? value : [value];
    if (items.length > MAX_JSON_KEYS) {
      addFieldError(errors, path, `must have at most ${MAX_JSON_KEYS} items`);
      return;
    }
    items.forEach((item, i) => checkValue(item, inner.ofType, join(path, String(i)), key, errors));
    return;
  }
  if (isInputObjectType(inner)) {
    if (typeof value !== "object") return;
    for (const field of inputFields(inner)) {
      if (!Object.hasOwn(value, field.name)) continue;
      checkValue(
        (value as Record<string, unknown>)[field.name],
        field.type,
        join(path, field.snake),
        field.key,
        errors,
      );
    }
    return;
  }
  if (!isScalarType(inner)) return;
  if (inner.name === "String" || inner.name === "ID") {
    if (typeof value !== "string") return;
    const problem = textProblem(value, textLimit(key));
    if (problem) addFieldError(errors, path, problem);
    else if (inner.name === "ID" && !isWellFormedId(value)) addFieldError(errors, path, ID_MESSAGE);
  } else if (inner.name === "JSONObject") {
    checkJsonValue(value, path, errors, () => DEFAULT_TEXT_LIMIT);
  }
}

/** `updateCreditNote` -> `credit note` (for the 404 of a malformed id). */
function resourceOf(fieldName: string): string {
  const noun =
    fieldName.replace(/^(update|delete|finalize|pay|authorize|resume|pause|cancel|advance)/, "") || fieldName;
  return noun.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

/** Throws the error for `args` of `field` (of `parent`), or returns when they are fine. */
export function checkArguments(
  parent: string,
  field: GraphQLField<unknown, unknown>,
  args: Record<string, unknown>,
): void {
  const errors: FieldErrors = {};
  for (const arg of field.args) {
    if (!Object.hasOwn(args, arg.name)) continue;
    const value = args[arg.name];
    // the id of the resource a field acts on (a REST path's id): malformed reads as "no such resource"
    if (
      arg.name === "id" &&
      getNamedType(arg.type).name === "ID" &&
      typeof value === "string" &&
      field.name !== "node"
    ) {
      if (textProblem(value, 200) || !isWellFormedId(value))
        throw new NotFoundError(resourceOf(field.name), JSON.stringify(value).slice(1, -1));
      continue;
    }
    if (field.name === "node" || field.name === "nodes") continue; // malformed ids read as null (builder.ts)
    // `input: SomeInput!` names its fields from the input's root (`lines.0.name`); other arguments by their name
    const path = arg.name === "input" && isInputObjectType(getNamedType(arg.type)) ? "" : snake(arg.name);
    checkValue(value, arg.type, path, `${parent}.${field.name}.${arg.name}`, errors);
  }
  ValidationError.throwIfAny("Invalid input", errors);
}

/**
 * Wraps the resolver of every field that takes arguments (in place) so `checkArguments` runs
 * first, and the `subscribe` of a subscription root field too (it runs before any resolver: a
 * stream is refused before it opens). Returns `schema` for chaining.
 */
export function guardInputs(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.args.length === 0) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      const parent = type.name;
      field.resolve = (source, args, context, info) => {
        checkArguments(parent, field as GraphQLField<unknown, unknown>, args);
        return resolve(source, args, context, info);
      };
      const subscribe = field.subscribe;
      if (subscribe)
        field.subscribe = (source, args, context, info) => {
          checkArguments(parent, field as GraphQLField<unknown, unknown>, args);
          return subscribe(source, args, context, info);
        };
    }
  }
  return schema;
}
