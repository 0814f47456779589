/**
 * REST list query parameters -> GraphQL filter values (docs/rest.md "Lists"): `field=v` and
 * `field__exact=v` (equals), `field__in=a,b`, `field__contains=v`, `field__icontains=v`, on
 * timestamps `field__gte`, `field__lte`, `field__gt`, `field__lt`, on dates `field__gte`,
 * `field__lte`, on numbers `field__in`. Unknown parameters and operators are a 400 naming them.
 * Which filters a list takes is read from its operation (`listFilters`).
 */
import { getNamedType, isEnumType, isInputObjectType, typeFromAST, type GraphQLInputType } from "graphql";
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import { isIsoDate } from "../domain/formats.js";
import { schema } from "../graphql/schema.js";
import { graphqlEnumValue, restEnumValues } from "./enums.js";
import { restName, rootOf } from "./printer.js";
import type { Operation } from "./types.js";

export type FilterKind = "string" | "datetime" | "date" | "int" | "boolean" | "enum";

/**
 * REST field name -> GraphQL filter key and kind; an "enum" filter names its GraphQL enum, takes
 * `field=` and `field__in=` only, and refuses a value outside the set with a 400 listing it.
 */
export type FilterSpec = Record<string, { key: string; kind: FilterKind; enum?: string }>;

export const PAGINATION_PARAMS = new Set(["page", "page_size"]);

/** Filter input types by name, and their kind (any other is a `StringFilter` or an enum's filter). */
const KINDS: Record<string, FilterKind> = {
  Boolean: "boolean",
  DateTimeFilter: "datetime",
  DateFilter: "date",
  IntFilter: "int",
};

/**
 * The kind of a filter by its GraphQL type: `StringFilter`, `DateTimeFilter`, `DateFilter`, `IntFilter`, `Boolean`,
 * or an enum's filter.
 */
function kindOf(type: GraphQLInputType): { kind: FilterKind; enum?: string } {
  const named = getNamedType(type);
  if (Object.hasOwn(KINDS, named.name)) return { kind: KINDS[named.name]! };
  const equals = isInputObjectType(named) ? getNamedType(named.getFields().equals?.type) : undefined;
  return isEnumType(equals) ? { kind: "enum", enum: equals.name } : { kind: "string" };
}

const specs = new WeakMap<Operation, { spec: FilterSpec; where: boolean }>();

/**
 * The filters of list operation `doc` on resource type `typename`, by rule: each field of its
 * `$where` (`where`: the filters go in it), else each of its variables beyond `first` and `offset`
 * (the reference lists), under its REST name (printer.ts `restName`), of the kind its type says;
 * in the schema's order, the date filters last.
 */
export function listFilters(doc: Operation, typename: string): { spec: FilterSpec; where: boolean } {
  let found = specs.get(doc);
  if (found) return found;
  const variables = (rootOf(doc).operation.variableDefinitions ?? []).map((v) => ({
    name: v.variable.name.value,
    type: typeFromAST(schema, v.type) as GraphQLInputType,
  }));
  const where = variables.find((v) => v.name === "where");
  const whereType = where && getNamedType(where.type);
  const fields = isInputObjectType(whereType)
    ? Object.values(whereType.getFields())
    : variables.filter((v) => v.name !== "first" && v.name !== "offset");
  const kinds = fields.map((f) => ({ name: restName(typename, f.name), key: f.name, ...kindOf(f.type) }));
  // by name (the schema's order), the date filters last
  const dated = (kind: FilterKind) => Number(kind === "datetime" || kind === "date");
  kinds.sort((a, b) => dated(a.kind) - dated(b.kind));
  const spec = Object.fromEntries(kinds.map(({ name, ...filter }) => [name, filter]));
  specs.set(doc, (found = { spec, where: where !== undefined }));
  return found;
}

const STRING_OPS: Record<string, string> = { exact: "equals", in: "in", contains: "contains", icontains: "icontains" };
const DATE_OPS = new Set(["exact", "gte", "lte"]);
/** A timestamp's operators: a date's and the strict comparisons. */
const DATETIME_OPS = new Set([...DATE_OPS, "gt", "lt"]);
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** GraphQL's Int: a signed 32-bit whole number. */
const MAX_INT = 2 ** 31 - 1;

/** `a, b,c` -> `["a", "b", "c"]` (the values of an `__in`, an `?expand=`). */
export const commaList = (value: string) =>
  value
    .trim()
    .split(/\s*,\s*/)
    .filter(Boolean);

/** Parses the filter parameters of `query` (other than pagination); a 400 names every bad one. */
export function parseFilters(query: URLSearchParams, spec: FilterSpec): Record<string, unknown> {
  const filters: Filters = {};
  const errors: FieldErrors = {};
  for (const [param, value] of query) {
    if (PAGINATION_PARAMS.has(param)) continue;
    const at = Object.hasOwn(spec, param) ? -1 : param.lastIndexOf("__");
    const [field, op] = at > 0 ? [param.slice(0, at), param.slice(at + 2)] : [param, "exact"];
    const problem = Object.hasOwn(spec, field)
      ? addFilter(filters, spec[field], op, value)
      : `unknown filter; filterable fields: ${Object.keys(spec).join(", ")}`;
    if (problem) addFieldError(errors, param, problem);
  }
  ValidationError.throwIfAny("Invalid query parameters", errors);
  return filters;
}

type Filters = Record<string, Record<string, unknown> | boolean>;

/** Adds `field__op=value` of filter `target` to `filters`, or returns why it cannot. */
function addFilter(filters: Filters, target: FilterSpec[string], op: string, value: string): string | undefined {
  if (target.kind === "boolean") {
    if (op !== "exact" || (value !== "true" && value !== "false")) return "must be true or false";
    filters[target.key] = value === "true";
    return;
  }
  const current = (filters[target.key] ??= {}) as Record<string, unknown>;
  if (target.kind === "enum") {
    if (op !== "exact" && op !== "in") return `unknown operator ${op}; use exact or in`;
    const allowed = restEnumValues(target.enum!);
    const values = op === "in" ? commaList(value) : [value];
    if (values.some((v) => !allowed.includes(v))) return `must be one of ${allowed.join(", ")}`;
    if (op === "in") current.in = values.map((v) => graphqlEnumValue(target.enum!, v));
    else current.equals = graphqlEnumValue(target.enum!, value);
  } else if (target.kind === "string") {
    if (!Object.hasOwn(STRING_OPS, op)) return `unknown operator ${op}; use exact, in, contains or icontains`;
    current[STRING_OPS[op]] = op === "in" ? commaList(value) : value;
  } else if (target.kind === "int") {
    if (op !== "exact" && op !== "in") return `unknown operator ${op}; use exact or in`;
    const values = op === "in" ? commaList(value) : [value.trim()];
    const numbers = values.map((v) => (/^-?\d{1,10}$/.test(v) ? Number(v) : NaN));
    if (numbers.some((n) => !Number.isSafeInteger(n) || Math.abs(n) > MAX_INT))
      return op === "in" ? "must be whole numbers separated by commas" : "must be a whole number";
    if (op === "in") current.in = numbers;
    else current.equals = numbers[0];
  } else if (target.kind === "date") {
    if (!DATE_OPS.has(op)) return `unknown operator ${op}; use exact, gte or lte`;
    // a calendar date: the GraphQL Date input takes it as is
    if (!isIsoDate(value)) return "must be a date yyyy-mm-dd";
    current[op === "exact" ? "equals" : op] = value;
  } else {
    if (!DATETIME_OPS.has(op)) return `unknown operator ${op}; use exact, gte, lte, gt or lt`;
    // a date is the whole day (UTC), a timestamp the instant
    const dateOnly = DATE_ONLY.test(value);
    const start = new Date(dateOnly ? `${value}T00:00:00.000Z` : value);
    if (Number.isNaN(start.getTime())) return "must be a date yyyy-mm-dd or an ISO 8601 timestamp";
    const end = dateOnly ? new Date(start.getTime() + 86_400_000 - 1) : start;
    if (op === "gt") current.gt = end;
    else if (op === "lt") current.lt = start;
    else {
      if (op !== "lte") current.gte = start;
      if (op !== "gte") current.lte = end;
    }
  }
}
