/**
 * REST list query parameters -> GraphQL filter values (docs/rest.md "Lists"): `field=v` and
 * `field__exact=v` (equals), `field__in=a,b`, `field__contains=v`, `field__icontains=v`, and on
 * dates `field__gte`, `field__lte`. Unknown parameters and operators are a 400 naming them.
 */
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import { graphqlEnumValue, restEnumValues } from "./enums.js";

export type FilterKind = "string" | "datetime" | "boolean" | "enum";

/**
 * REST field name -> GraphQL filter key and kind; an "enum" filter names its GraphQL enum, takes
 * `field=` and `field__in=` only, and refuses a value outside the set with a 400 listing it.
 */
export type FilterSpec = Record<string, { key: string; kind: FilterKind; enum?: string }>;

export const PAGINATION_PARAMS = new Set(["page", "page_size"]);

const STRING_OPS: Record<string, string> = { exact: "equals", in: "in", contains: "contains", icontains: "icontains" };
const DATE_OPS = new Set(["exact", "gte", "lte"]);

function dayBounds(value: string, param: string, errors: FieldErrors): { start: Date; end: Date } | null {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const parsed = new Date(dateOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(parsed.getTime())) {
    addFieldError(errors, param, "must be a date yyyy-mm-dd or an ISO 8601 timestamp");
    return null;
  }
  return { start: parsed, end: dateOnly ? new Date(parsed.getTime() + 86_400_000 - 1) : parsed };
}

/** Parses the filter parameters of `query` (other than `allowedExtra` and pagination). */
export function parseFilters(
  query: URLSearchParams,
  spec: FilterSpec,
  allowedExtra: string[] = [],
): Record<string, unknown> {
  const filters: Record<string, Record<string, unknown> | boolean> = {};
  const errors: FieldErrors = {};
  for (const [param, value] of query) {
    if (PAGINATION_PARAMS.has(param) || allowedExtra.includes(param)) continue;
    let field = param;
    let op = "exact";
    if (!(param in spec)) {
      const at = param.lastIndexOf("__");
      if (at > 0) {
        field = param.slice(0, at);
        op = param.slice(at + 2);
      }
    }
    const target = spec[field];
    if (!target) {
      addFieldError(errors, param, `unknown filter; filterable fields: ${Object.keys(spec).join(", ")}`);
      continue;
    }
    if (target.kind === "boolean") {
      if (op !== "exact" || !["true", "false"].includes(value)) addFieldError(errors, param, "must be true or false");
      else filters[target.key] = value === "true";
      continue;
    }
    const current = (filters[target.key] ??= {}) as Record<string, unknown>;
    if (target.kind === "enum") {
      const allowed = restEnumValues(target.enum!);
      const values =
        op === "in"
          ? value
              .split(",")
              .map((v) => v.trim())
              .filter(Boolean)
          : [value];
      const unknown = values.filter((v) => !allowed.includes(v));
      if (op !== "exact" && op !== "in") addFieldError(errors, param, `unknown operator ${op}; use exact or in`);
      else if (unknown.length) addFieldError(errors, param, `must be one of ${allowed.join(", ")}`);
      else if (op === "in") current.in = values.map((v) => graphqlEnumValue(target.enum!, v));
      else current.equals = graphqlEnumValue(target.enum!, value);
      continue;
    }
    if (target.kind === "string") {
      const graphqlOp = STRING_OPS[op];
      if (!graphqlOp) addFieldError(errors, param, `unknown operator ${op}; use exact, in, contains or icontains`);
      else
        current[graphqlOp] =
          op === "in"
            ? value
                .split(",")
                .map((v) => v.trim())
                .filter(Boolean)
            : value;
      continue;
    }
    if (!DATE_OPS.has(op)) {
      addFieldError(errors, param, `unknown operator ${op}; use exact, gte or lte`);
      continue;
    }
    const bounds = dayBounds(value, param, errors);
    if (!bounds) continue;
    if (op === "gte") current.gte = bounds.start;
    else if (op === "lte") current.lte = bounds.end;
    else Object.assign(current, { gte: bounds.start, lte: bounds.end });
  }
  if (Object.keys(errors).length) {
    throw new ValidationError(
      `Invalid query parameters: ${Object.entries(errors)
        .map(([k, v]) => `${k}: ${v.join(", ")}`)
        .join("; ")}`,
      errors,
    );
  }
  return filters;
}
