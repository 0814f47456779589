/**
 * The SQL text of a joined read's parts (read-plan.ts puts them together): a `where` of the shapes
 * it translates, an `orderBy`, a scalar column as a JSON-safe value, LIMIT and OFFSET; and the
 * parameters' values, each taken from the read's arguments by its path, so a plan cached for one
 * read of a shape serves the next. What it does not translate throws `Unsupported` (the read then
 * goes to Prisma). Column and table names are written as the Prisma names (datamodel.ts).
 */
import type { FieldInfo, ModelInfo } from "./datamodel.js";

/** Types whose equality and comparisons translate without a cast (text, integer, boolean columns). */
const WHERE_TYPES = new Set(["String", "Int", "Boolean"]);

/** `name` as a quoted SQL identifier: a table or column is named as the Prisma model or field (no `@map`). */
export const q = (name: string) => `"${name}"`;

/** The arguments of a Prisma read (`where`, `select`, `include`, `orderBy`, `take`, `skip`...), or a part of them. */
export type Args = Record<string, unknown>;

/** Not translatable: the read goes to Prisma. */
export class Unsupported extends Error {}
/** Throws Unsupported with `why` (a type of `never`, so it can stand for a value: `x ?? unsupported(...)`). */
export const unsupported = (why: string): never => {
  throw new Unsupported(why);
};

/**
 * Where a parameter's value comes from in a read's arguments: a path of keys and indexes from the
 * arguments object, or `EXTRA` (the ids a read by ids is given). A cached plan keeps these, so a
 * read of the same shape takes its values without building the SQL again.
 */
export const EXTRA = 0;
/** A parameter value's path in a read's arguments, or EXTRA. */
export type ValuePath = readonly (string | number)[] | typeof EXTRA;

/** Parameters of one statement: `$n` placeholders in order, with the path of each value. */
export class Params {
  values: unknown[] = [];
  paths: ValuePath[] = [];
  add(value: unknown, path: ValuePath): string {
    this.values.push(value);
    this.paths.push(path);
    return `$${this.values.length}`;
  }
}

/** The value at `path` in `args` (`extra` for EXTRA). */
export function valueAt(args: Args, path: ValuePath, extra: unknown): unknown {
  if (path === EXTRA) return extra;
  let value: unknown = args;
  for (const key of path) value = (value as Record<string | number, unknown>)[key];
  return value;
}

const COMPARISONS: Record<string, string> = { equals: "=", lt: "<", lte: "<=", gt: ">", gte: ">=" };

/**
 * True when `key` names a compound unique key as Prisma does (its fields' names joined by `_`) and
 * `value` gives each of those fields a plain value (string, number or boolean), as findUnique takes it.
 */
function isCompoundKey(key: string, value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value as Args);
  return (
    entries.length > 1 &&
    entries.map(([k]) => k).join("_") === key &&
    entries.every(([, v]) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")
  );
}

/**
 * A `where` of the supported shape as SQL over the columns of the innermost FROM (unqualified), or
 * Unsupported. `at` is the where's path in the read's arguments (each parameter's value path).
 */
export function whereSql(model: ModelInfo, where: Args, params: Params, at: readonly (string | number)[]): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (key === "AND" || key === "OR") {
      const isList = Array.isArray(value);
      const list = (isList ? value : [value]) as Args[];
      const inner = list.map((w, i) => `(${whereSql(model, w, params, isList ? [...at, key, i] : [...at, key])})`);
      if (inner.length === 0) parts.push(key === "AND" ? "TRUE" : "FALSE");
      else parts.push(`(${inner.join(key === "AND" ? " AND " : " OR ")})`);
      continue;
    }
    const field = model.fields.get(key);
    if (!field && isCompoundKey(key, value)) {
      // a compound unique key (`organizationId_testMode: { organizationId, testMode }`): its equalities
      parts.push(`(${whereSql(model, value as Args, params, [...at, key])})`);
      continue;
    }
    if (!field || field.kind === "object" || !WHERE_TYPES.has(field.type)) unsupported(`where on ${key}`);
    const column = q(key);
    if (value === null) parts.push(`${column} IS NULL`);
    else if (typeof value !== "object") parts.push(`${column} = ${params.add(value, [...at, key])}`);
    else {
      for (const [op, operand] of Object.entries(value as Args)) {
        if (operand === undefined) continue;
        const path = [...at, key, op];
        if (op in COMPARISONS && operand !== null && typeof operand !== "object")
          parts.push(`${column} ${COMPARISONS[op]} ${params.add(operand, path)}`);
        else if (op === "equals" && operand === null) parts.push(`${column} IS NULL`);
        else if (op === "not" && operand === null) parts.push(`${column} IS NOT NULL`);
        else if (op === "not" && typeof operand !== "object")
          parts.push(`${column} IS DISTINCT FROM ${params.add(operand, path)}`);
        else if (
          (op === "in" || op === "notIn") &&
          Array.isArray(operand) &&
          operand.every((v) => v !== null && typeof v !== "object")
        ) {
          if (operand.length === 0) parts.push(op === "in" ? "FALSE" : "TRUE");
          else {
            const list = operand.map((v, i) => params.add(v, [...path, i])).join(", ");
            parts.push(`${column} ${op === "in" ? "IN" : "NOT IN"} (${list})`);
          }
        } else unsupported(`where ${key}.${op}`);
      }
    }
  }
  return parts.length ? parts.join(" AND ") : "TRUE";
}

/**
 * An `orderBy` over scalar fields (Unsupported otherwise), as the ORDER BY of the rows read
 * (`rows`), the hidden columns `__o0`, `__o1`... that carry each key's value out of that subquery
 * (`columns`, `hidden`), and the ORDER BY over them outside it (`outer`, on alias `s`). Empty
 * strings and lists when there is no order.
 */
export function orderOf(
  model: ModelInfo,
  alias: string,
  orderBy: unknown,
): { rows: string; columns: string[]; hidden: string[]; outer: string } {
  const list = (orderBy === undefined ? [] : Array.isArray(orderBy) ? orderBy : [orderBy]) as Args[];
  const keys: { column: string; direction: string }[] = [];
  for (const item of list) {
    for (const [key, value] of Object.entries(item)) {
      const field = model.fields.get(key);
      if (!field || field.kind === "object") unsupported(`orderBy ${key}`);
      const spec = typeof value === "string" ? { sort: value } : (value as { sort?: string; nulls?: string });
      if (spec.sort !== "asc" && spec.sort !== "desc") unsupported(`orderBy ${key}`);
      const nulls = spec.nulls === "first" ? " NULLS FIRST" : spec.nulls === "last" ? " NULLS LAST" : "";
      keys.push({ column: q(key), direction: `${spec.sort!.toUpperCase()}${nulls}` });
    }
  }
  const hidden = keys.map((_, i) => `__o${i}`);
  return {
    // qualified: a bare name in ORDER BY would be the output column of that name (a decimal as text)
    rows: keys.length ? ` ORDER BY ${keys.map((k) => `${alias}.${k.column} ${k.direction}`).join(", ")}` : "",
    columns: keys.map((k, i) => `${k.column} AS ${q(hidden[i])}`),
    hidden,
    outer: keys.length ? ` ORDER BY ${keys.map((k, i) => `s.${q(hidden[i])} ${k.direction}`).join(", ")}` : "",
  };
}

/**
 * A scalar column (of the innermost FROM, unqualified) as a JSON-safe value: exact text for decimals
 * and big integers, epoch ms for times, base64 for bytes.
 */
export function jsonColumn(field: FieldInfo): string {
  const column = q(field.name);
  switch (field.type) {
    case "Decimal":
    case "BigInt":
      return `${column}::text`;
    case "DateTime":
      return `round(extract(epoch from ${column}) * 1000)`;
    case "Bytes":
      return `encode(${column}, 'base64')`;
    default:
      return column;
  }
}

/** The LIMIT and OFFSET of a read's `take` and `skip` (Unsupported unless non-negative integers); "" without them. */
export function limitOf(args: Args): string {
  const { take, skip } = args;
  if (take !== undefined && !(Number.isInteger(take) && (take as number) >= 0)) unsupported("take");
  if (skip !== undefined && !(Number.isInteger(skip) && (skip as number) >= 0)) unsupported("skip");
  return (
    (take === undefined ? "" : ` LIMIT ${take as number}`) + (skip === undefined ? "" : ` OFFSET ${skip as number}`)
  );
}
