/**
 * A joined read's plan: the one SQL statement that answers a Prisma read with its relations (a
 * correlated subquery per relation, built as JSON by `row_to_json` and `json_agg`), the paths of its
 * parameters' values in the read's arguments, and the converter of its rows (row-decoding.ts).
 * Plans are cached by the read's shape (its arguments without the where's values) and their texts
 * registered as named prepared statements (statement-names.ts).
 */
import { namePreparedStatement, preparedStatementNames } from "./statement-names.js";
import { MODELS, type FieldInfo, type ModelInfo } from "./datamodel.js";
import {
  EXTRA,
  jsonColumn,
  limitOf,
  orderOf,
  Params,
  q,
  Unsupported,
  unsupported,
  valueAt,
  whereSql,
  type Args,
  type ValuePath,
} from "./read-sql.js";
import type { Converter } from "./row-decoding.js";

/** What a read selects of a model: its scalar fields and its relations with their own arguments. */
interface Selection {
  /** the argument the relations are under (their arguments' path) */
  key: "select" | "include";
  scalars: FieldInfo[];
  relations: { field: FieldInfo; args: Args }[];
}

const TRANSLATED_ARGUMENTS = new Set(["select", "include", "where", "orderBy", "take", "skip"]);

function selectionOf(model: ModelInfo, args: Args): Selection {
  for (const [key, value] of Object.entries(args)) {
    if (value !== undefined && !TRANSLATED_ARGUMENTS.has(key)) unsupported(`argument ${key}`);
  }
  const select = args.select as Args | undefined;
  const include = args.include as Args | undefined;
  if (select && include) unsupported("select and include");
  const scalars = select ? [] : [...model.scalars];
  const relations: Selection["relations"] = [];
  for (const [key, value] of Object.entries(select ?? include ?? {})) {
    if (value === false || value === undefined) continue;
    const field = model.fields.get(key) ?? unsupported(`field ${key}`);
    if (field.kind === "object") relations.push({ field, args: value === true ? {} : (value as Args) });
    else if (select && value === true) scalars.push(field);
    else unsupported(`selection of ${key}`);
  }
  return { key: select ? "select" : "include", scalars, relations };
}

let aliasCounter = 0;

/**
 * The SELECT list of the model at `alias` (the innermost FROM) for `selection`, every value
 * JSON-safe, with the relations as correlated subqueries; and the converter of its rows. `at`: the
 * path of the selection's arguments in the read's (its parameters' value paths).
 */
function selectList(
  alias: string,
  selection: Selection,
  params: Params,
  at: readonly (string | number)[],
): { columns: string[]; convert: Converter } {
  const convert: Converter = { decimals: [], dates: [], bytes: [], bigints: [], relations: [], hidden: [] };
  const columns: string[] = [];
  for (const field of selection.scalars) {
    const expression = jsonColumn(field);
    // a bare column keeps its name in row_to_json; a cast needs it given (less SQL text to send)
    columns.push(expression === q(field.name) ? expression : `${expression} AS ${q(field.name)}`);
    if (field.type === "Decimal") convert.decimals.push(field.name);
    else if (field.type === "DateTime") convert.dates.push(field.name);
    else if (field.type === "Bytes") convert.bytes.push(field.name);
    else if (field.type === "BigInt") convert.bigints.push(field.name);
  }
  for (const { field, args } of selection.relations) {
    const related = MODELS.get(field.type) ?? unsupported(`model ${field.type}`);
    const child = `t${++aliasCounter}`;
    const join = joinCondition(alias, field, related);
    const nested = selectionOf(related, args);
    const argsAt = [...at, selection.key, field.name];
    const inner = selectList(child, nested, params, argsAt);
    const where = args.where ? ` AND ${whereSql(related, args.where as Args, params, [...argsAt, "where"])}` : "";
    if (!field.isList) {
      if (args.where || args.orderBy || args.take !== undefined || args.skip !== undefined)
        unsupported(`arguments of to-one ${field.name}`);
      columns.push(
        `(SELECT row_to_json(s) FROM (SELECT ${inner.columns.join(", ")} FROM ${q(related.name)} ${child} ` +
          `WHERE ${join} LIMIT 1) s) AS ${q(field.name)}`,
      );
    } else {
      const order = orderOf(related, child, args.orderBy);
      inner.convert.hidden.push(...order.hidden);
      columns.push(
        `(SELECT coalesce(json_agg(s${order.outer}), '[]'::json) FROM ` +
          `(SELECT ${[...inner.columns, ...order.columns].join(", ")} FROM ${q(related.name)} ${child} ` +
          `WHERE ${join}${where}${order.rows}${limitOf(args)}) s) AS ${q(field.name)}`,
      );
    }
    convert.relations.push({ name: field.name, convert: inner.convert, list: field.isList });
  }
  return { columns, convert };
}

/**
 * The columns a relation joins on, as [foreign key column, the column of `referenced` it references]
 * pairs. The datamodel gives a relation's own columns only, so the referenced ones follow the schema's
 * two shapes: one column references `id`; a compound one, a child row's (parent id, organizationId)
 * (migration 2026120201000001_organization_of_children), references `id` and the columns of the same
 * names, which must be a `@@unique` of `referenced` in that order (else the read is Prisma's).
 */
function referencePairs(fromFields: readonly string[], referenced: ModelInfo): [string, string][] {
  const [first, ...same] = fromFields;
  const key = ["id", ...same].join(",");
  if (same.length > 0 && !referenced.uniqueKeys.some((k) => k.join(",") === key))
    unsupported(`relation by ${fromFields.join(", ")} to ${referenced.name}`);
  return [[first, "id"], ...same.map((f): [string, string] => [f, f])];
}

/** The join of relation `field` of the model at `alias` to `related`, the innermost FROM (its columns unqualified). */
function joinCondition(alias: string, field: FieldInfo, related: ModelInfo): string {
  if (field.relationFromFields?.length) {
    return referencePairs(field.relationFromFields, related)
      .map(([from, to]) => `${q(to)} = ${alias}.${q(from)}`)
      .join(" AND ");
  }
  const back = [...related.fields.values()].find(
    (f) => f.relationName === field.relationName && f !== field && f.relationFromFields?.length,
  );
  const owner = back && MODELS.get(back.type);
  if (!back || !owner) return unsupported(`relation ${field.name}`);
  return referencePairs(back.relationFromFields!, owner)
    .map(([from, to]) => `${q(from)} = ${alias}.${q(to)}`)
    .join(" AND ");
}

/** A read's statement, the paths of its parameters' values, and the converter of its rows. */
export interface Plan {
  sql: string;
  paths: ValuePath[];
  convert: Converter;
}

/**
 * How a read selects its root rows: `many` and `one` by its own where (and order, take and skip),
 * `ids` by the ids given (`= ANY($n::text[])`, the second statement of a where it does not
 * translate), `id` by one id given (`= $n`).
 */
export type RootKind = "many" | "one" | "ids" | "id";

/**
 * The tenant equalities of a read's where (`organizationId` a string and `testMode` a boolean, both
 * at its top), which a read by ids keeps: `nodes(ids:)` of a tenant's rows reads them by ids and
 * tenant in one statement (the Batcher), never another tenant's row.
 */
export function tenantOf(where: unknown): { organizationId: string; testMode: boolean } | null {
  if (!where || typeof where !== "object") return null;
  const { organizationId, testMode } = where as Args;
  return typeof organizationId === "string" && typeof testMode === "boolean" ? { organizationId, testMode } : null;
}

/** The one statement of a read of `model`: rows of one JSON column `r`, in order. */
function plan(model: ModelInfo, args: Args, kind: RootKind, plain: boolean): Plan {
  const tenant = kind === "id" || kind === "ids" ? tenantOf(args.where) : null;
  if (kind !== "many" && kind !== "one")
    args = { ...args, where: undefined, orderBy: undefined, take: undefined, skip: undefined };
  const selection = selectionOf(model, args);
  if (!plain && selection.relations.length === 0 && !(kind === "many" && isReadByIds(args))) unsupported("no relation");
  aliasCounter = 0; // plan() runs synchronously: the same read gives the same SQL text
  const params = new Params();
  const alias = `t${++aliasCounter}`;
  const { columns, convert } = selectList(alias, selection, params, []);
  const byTenant = tenant
    ? ` AND "organizationId" = ${params.add(null, ["where", "organizationId"])} AND "testMode" = ` +
      params.add(null, ["where", "testMode"])
    : "";
  const where =
    kind === "ids"
      ? `"id" = ANY(${params.add(null, EXTRA)}::text[])${byTenant}`
      : kind === "id"
        ? `"id" = ${params.add(null, EXTRA)}${byTenant}`
        : whereSql(model, (args.where ?? {}) as Args, params, ["where"]);
  const limit = kind === "many" ? limitOf(args) : kind === "one" ? " LIMIT 1" : "";
  const order = orderOf(model, alias, args.orderBy);
  // the root's id under its own name, to match rows to ids whatever the selection
  const idColumn = model.hasId ? [`"id" AS "__id"`] : [];
  const selected = [...columns, ...idColumn, ...order.columns].join(", ");
  const sql =
    `SELECT row_to_json(s) AS r FROM (SELECT ${selected} FROM ${q(model.name)} ${alias} ` +
    `WHERE ${where}${order.rows}${limit}) s${order.outer}`;
  convert.hidden.push(...order.hidden);
  return { sql, paths: params.paths, convert };
}

/**
 * True for `findMany({ where: { id: { in: [...] } } })`, with at most the tenant's equalities
 * (`organizationId`, `testMode`) beside the ids and nothing else: a read of rows by ids (the answer
 * of a write, a loader). Without relations it is still translated, so it goes straight to the pool
 * as a prepared statement instead of through Prisma's client runtime.
 */
function isReadByIds(args: Args): boolean {
  for (const [key, value] of Object.entries(args)) if (value !== undefined && key !== "where") return false;
  const where = args.where as Args | undefined;
  if (!where || typeof where !== "object") return false;
  let ids = false;
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (key === "id") {
      const id = value as Args;
      ids =
        typeof id === "object" &&
        id !== null &&
        Array.isArray(id.in) &&
        Object.keys(id).length === 1 &&
        id.in.every((v) => typeof v === "string");
      if (!ids) return false;
    } else if (!(
      (key === "organizationId" && typeof value === "string") ||
      (key === "testMode" && typeof value === "boolean")
    ))
      return false;
  }
  return ids;
}

/**
 * The shape of a read's arguments: everything that decides its SQL text (the selection, orders,
 * take and skip, the where's fields and operators, nulls, the length of `in` lists), without the
 * where's values, which are parameters. Two reads of one shape get the same statement.
 */
export function shapeOf(value: unknown, inWhere: boolean): string {
  if (value === null) return "n";
  if (typeof value !== "object")
    return inWhere ? "?" : typeof value === "string" ? JSON.stringify(value) : String(value);
  if (Array.isArray(value)) {
    let out = "[";
    for (const item of value) out += shapeOf(item, inWhere) + ",";
    return out + "]";
  }
  const proto = Object.getPrototypeOf(value);
  // a Date, Decimal or Buffer: never translated, one shape per kind
  if (proto !== Object.prototype && proto !== null)
    return `<${(proto as { constructor?: { name?: string } }).constructor?.name}>`;
  let out = "{";
  for (const key in value) {
    const item = (value as Args)[key];
    if (item !== undefined) out += `${key}:${shapeOf(item, inWhere || key === "where")},`;
  }
  return out + "}";
}

/** Cached plans (or Unsupported) by model, kind and shape, least recently used first. */
const PLAN_CACHE_SIZE = 500;
const plans = new Map<string, Plan | Unsupported>();

/**
 * The plan of a read of this shape: cached (PLAN_CACHE_SIZE shapes, least recently used dropped),
 * its SQL registered as a named prepared statement for PostgreSQL (driver-adapter.ts
 * `preparedStatementNames`: the name is a hash of the text, so one text always has one name). Throws
 * Unsupported when the shape is not translatable. `plain`: a selection without relations is translated
 * too (Runner `plain`).
 */
export function cachedPlan(model: ModelInfo, args: Args, kind: RootKind, shape: string, plain = false): Plan {
  const key = `${model.name}\u0000${kind}${plain ? "+" : ""}\u0000${shape}`;
  let entry = plans.get(key);
  if (entry !== undefined) {
    plans.delete(key);
    plans.set(key, entry);
  } else {
    try {
      entry = plan(model, args, kind, plain);
      namePreparedStatement(entry.sql, "jr");
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      entry = e;
    }
    plans.set(key, entry);
    if (plans.size > PLAN_CACHE_SIZE) {
      const [oldestKey, oldest] = plans.entries().next().value!;
      plans.delete(oldestKey);
      if (
        !(oldest instanceof Unsupported) &&
        ![...plans.values()].some((p) => p !== oldest && !(p instanceof Unsupported) && p.sql === oldest.sql)
      )
        preparedStatementNames.delete(oldest.sql);
    }
  }
  if (entry instanceof Unsupported) throw entry;
  return entry;
}

/** A plan's parameter values for the read `args` (and the ids of a read by ids). */
export const valuesOf = (p: Plan, args: Args, extra?: unknown): unknown[] =>
  p.paths.map((path) => valueAt(args, path, extra));
