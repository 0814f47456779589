/**
 * Joined reads: a Prisma read whose selection includes relations, answered by ONE SQL statement that
 * builds the nested rows as JSON inside PostgreSQL (a correlated subquery per relation, `row_to_json`
 * and `json_agg`), the way Prisma's `relationJoins` preview does, but with exact values: decimals
 * travel as text and become `Prisma.Decimal`, timestamps as epoch milliseconds, bytes as base64
 * (docs/performance.md "Joined reads"; docs/decisions.md "Joined reads" says why not relationJoins).
 *
 * Without it, Prisma's query compiler loads an `include`/`select` tree level by level, one statement
 * per relation: a REST invoice read was 11 statements, the GraphQL page of 50 invoices 5.
 *
 * `withJoinedReads(client, direct?)` wraps a Prisma client (and the transaction clients of its
 * `$transaction(fn)`) so that `findUnique`, `findUniqueOrThrow`, `findFirst`, `findFirstOrThrow`
 * and `findMany` of every model take this path when they can, and Prisma's own otherwise, with the
 * same results (the same objects, keys and value types):
 * - a selection without relations (except a `findMany` of rows by ids: `where: { id: { in } }`, with
 *   at most the tenant's equalities, and except on a client with `plainReads`), or with what this
 *   translator does not handle (`_count`, `omit`, `distinct`, `cursor`, relation filters, string
 *   filters such as `contains`...), is Prisma's own read;
 * - a `where` of equalities, `in`, comparisons and `AND`/`OR` over String, Int and Boolean columns
 *   (and compound unique keys of such columns) is translated; any other `where` (dates, decimals,
 *   relations, a keyset cursor's condition) is answered in two statements: Prisma's read of the
 *   matching ids (with the same where, order, take and skip), then the joined read of those ids, in
 *   that order;
 * - `findUnique({ where: { id } })` calls of the same shape made in the same tick are read together
 *   (`WHERE id IN (...)`), as Prisma batches them.
 * To-many relations without an `orderBy` come back in the order PostgreSQL reads them, as with
 * Prisma's own reads (no order is promised: ask for one).
 */
import { Prisma } from "../prisma/generated/client.js";
import { getDatamodel } from "../prisma/generated/pothos-types.js";
import { namePreparedStatement, preparedStatementNames } from "./statement-names.js";

interface FieldInfo {
  name: string;
  type: string;
  kind: string;
  isList: boolean;
  isId: boolean;
  relationName?: string;
  relationFromFields?: string[];
}

interface ModelInfo {
  name: string;
  fields: Map<string, FieldInfo>;
  scalars: FieldInfo[];
  hasId: boolean;
  /** the fields of each `@@unique` of the model, in their order */
  uniqueKeys: string[][];
}

const MODELS = new Map<string, ModelInfo>(
  Object.entries(
    getDatamodel().datamodel.models as unknown as Record<
      string,
      { fields: FieldInfo[]; uniqueIndexes: { fields: string[] }[] }
    >,
  ).map(([name, m]) => [
    name,
    {
      name,
      fields: new Map(m.fields.map((f) => [f.name, f])),
      scalars: m.fields.filter((f) => f.kind !== "object"),
      hasId: m.fields.some((f) => f.name === "id" && f.isId),
      uniqueKeys: m.uniqueIndexes.map((u) => u.fields),
    },
  ]),
);

/** The Prisma delegate name of a model (`Invoice` -> `invoice`) and back. */
const MODEL_OF_DELEGATE = new Map([...MODELS.keys()].map((name) => [name[0].toLowerCase() + name.slice(1), name]));

const READS = new Set(["findUnique", "findUniqueOrThrow", "findFirst", "findFirstOrThrow", "findMany"]);

/** Types whose equality and comparisons translate without a cast (text, integer, boolean columns). */
const WHERE_TYPES = new Set(["String", "Int", "Boolean"]);

const q = (name: string) => `"${name}"`;

type Args = Record<string, unknown>;

/** What a read selects of a model: its scalar fields and its relations with their own arguments. */
interface Selection {
  /** the argument the relations are under (their arguments' path) */
  key: "select" | "include";
  scalars: FieldInfo[];
  relations: { field: FieldInfo; args: Args }[];
}

/** Not translatable: the read goes to Prisma. */
class Unsupported extends Error {}
const unsupported = (why: string): never => {
  throw new Unsupported(why);
};

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

/**
 * Where a parameter's value comes from in a read's arguments: a path of keys and indexes from the
 * arguments object, or `EXTRA` (the ids a read by ids is given). A cached plan keeps these, so a
 * read of the same shape takes its values without building the SQL again.
 */
const EXTRA = 0;
type ValuePath = readonly (string | number)[] | typeof EXTRA;

/** Parameters of one statement: `$n` placeholders in order, with the path of each value. */
class Params {
  values: unknown[] = [];
  paths: ValuePath[] = [];
  add(value: unknown, path: ValuePath): string {
    this.values.push(value);
    this.paths.push(path);
    return `$${this.values.length}`;
  }
}

function valueAt(args: Args, path: ValuePath, extra: unknown): unknown {
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
function whereSql(model: ModelInfo, where: Args, params: Params, at: readonly (string | number)[]): string {
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
function orderOf(
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
function jsonColumn(field: FieldInfo): string {
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

/** How to turn a parsed JSON row back into Prisma's values, per model and selection. */
interface Converter {
  decimals: string[];
  dates: string[];
  bytes: string[];
  bigints: string[];
  relations: { name: string; convert: Converter; list: boolean }[];
  hidden: string[];
}

/**
 * Decimals that keep PostgreSQL's text until something reads their digits, for reads whose rows
 * are only serialized (`forSerialization`): a `Prisma.Decimal` (its prototype, so `instanceof`,
 * `Decimal.isDecimal` and every method work) whose `d`, `e` and `s` are parsed from the text on
 * first read, and whose `toFixed()` without arguments, what the Decimal scalar serializes with, is
 * the text without its trailing zeros: the same string, without parsing. A page of 50 invoices
 * made about 600 decimals it only printed.
 */
const LAZY_DECIMAL = Object.create(Prisma.Decimal.prototype) as Prisma.Decimal;
const TEXT = Symbol("decimalText");
type LazyDecimal = Prisma.Decimal & { [TEXT]: string };

function own(x: object, key: string, value: unknown) {
  Object.defineProperty(x, key, { value, writable: true, enumerable: true, configurable: true });
}

for (const key of ["d", "e", "s"] as const) {
  Object.defineProperty(LAZY_DECIMAL, key, {
    get(this: LazyDecimal) {
      const parsed = new Prisma.Decimal(this[TEXT]);
      own(this, "d", parsed.d);
      own(this, "e", parsed.e);
      own(this, "s", parsed.s);
      return parsed[key];
    },
    set(this: LazyDecimal, value: unknown) {
      own(this, key, value);
    },
    configurable: true,
  });
}

const parsedToFixed = Prisma.Decimal.prototype.toFixed;
Object.defineProperty(LAZY_DECIMAL, "toFixed", {
  value: function toFixed(this: LazyDecimal, ...args: unknown[]): string {
    if (args.length > 0) return (parsedToFixed as (...a: unknown[]) => string).apply(this, args);
    // PostgreSQL's numeric text has no exponent and no leading zeros: trailing zeros (and a bare
    // point) are all that toFixed() would drop
    const text = this[TEXT];
    if (!text.includes(".")) return text;
    let end = text.length;
    while (text.charCodeAt(end - 1) === 48 /* 0 */) end--;
    if (text.charCodeAt(end - 1) === 46 /* . */) end--;
    return text.slice(0, end);
  },
  writable: true,
  configurable: true,
});

function lazyDecimal(text: string): Prisma.Decimal {
  const decimal = Object.create(LAZY_DECIMAL) as LazyDecimal;
  decimal[TEXT] = text;
  return decimal;
}

/** Reads whose rows are only serialized (GraphQL connections): their decimals are lazy (LAZY_DECIMAL). */
const serializedReads = new WeakSet<object>();

/**
 * Marks the arguments of a read whose rows are only serialized, not computed with (a GraphQL
 * connection's page): its joined read gives decimals that parse their digits only when read. They
 * are `Prisma.Decimal`s all the same; only their own keys differ (`toEqual` against Prisma's rows
 * would tell them apart). Returns `args`.
 */
export function forSerialization<A extends object>(args: A): A {
  serializedReads.add(args);
  return args;
}

function convertRow(row: Record<string, unknown>, c: Converter, lazy = false): Record<string, unknown> {
  for (const k of c.decimals)
    if (row[k] != null) row[k] = lazy ? lazyDecimal(row[k] as string) : new Prisma.Decimal(row[k] as string);
  for (const k of c.dates) if (row[k] != null) row[k] = new Date(row[k] as number);
  for (const k of c.bytes) if (row[k] != null) row[k] = Buffer.from(row[k] as string, "base64");
  for (const k of c.bigints) if (row[k] != null) row[k] = BigInt(row[k] as string);
  for (const r of c.relations) {
    const value = row[r.name];
    if (value == null) continue;
    if (r.list) for (const item of value as Record<string, unknown>[]) convertRow(item, r.convert, lazy);
    else convertRow(value as Record<string, unknown>, r.convert, lazy);
  }
  for (const k of c.hidden) delete row[k];
  return row;
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
interface Plan {
  sql: string;
  paths: ValuePath[];
  convert: Converter;
}

/**
 * How a read selects its root rows: `many` and `one` by its own where (and order, take and skip),
 * `ids` by the ids given (`= ANY($n::text[])`, the second statement of a where it does not
 * translate), `id` by one id given (`= $n`).
 */
type RootKind = "many" | "one" | "ids" | "id";

/**
 * The tenant equalities of a read's where (`organizationId` a string and `testMode` a boolean, both
 * at its top), which a read by ids keeps: `nodes(ids:)` of a tenant's rows reads them by ids and
 * tenant in one statement (the Batcher), never another tenant's row.
 */
function tenantOf(where: unknown): { organizationId: string; testMode: boolean } | null {
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
function shapeOf(value: unknown, inWhere: boolean): string {
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
function cachedPlan(model: ModelInfo, args: Args, kind: RootKind, shape: string, plain = false): Plan {
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
const valuesOf = (p: Plan, args: Args, extra?: unknown): unknown[] => p.paths.map((path) => valueAt(args, path, extra));

type Delegate = Record<string, (args?: Args) => Promise<unknown>>;
interface RawClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/**
 * Runs a statement outside Prisma, straight on the driver: `sql` with its parameter `values` (pg's
 * conversions), resolving to its rows as pg parses them (a joined read's: column `r`, the row as JSON
 * or its text). createDatabase gives one for PostgreSQL: on the pg pool (the statement named as
 * prepared when it has a name), and, for a transaction of direct-transaction.ts `directTransaction`,
 * on that transaction's connection. Other transactions' reads go through their Prisma client.
 */
export type DirectQuery = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** Where a wrapped client's joined reads run: one object per wrapped client (the batcher groups by it). */
interface Runner {
  query: DirectQuery;
  /**
   * reads without relations are translated too (a direct transaction's client: one statement on the
   * driver costs less than Prisma's own read); without it they are Prisma's own
   */
  plain?: boolean;
}

const prismaRunner = (client: RawClient): Runner => ({
  query: (sql, values) => client.$queryRawUnsafe<{ r: unknown }[]>(sql, ...values),
});

/** The rows of `p` with parameter `values`, as parsed JSON, before conversion. */
async function runJson(client: Runner, p: Plan, values: unknown[]): Promise<Record<string, unknown>[]> {
  const rows = await client.query(p.sql, values);
  return rows.map((row) => (typeof row.r === "string" ? JSON.parse(row.r) : row.r) as Record<string, unknown>);
}

async function run(client: Runner, p: Plan, values: unknown[], lazy = false): Promise<Record<string, unknown>[]> {
  return (await runJson(client, p, values)).map((row) => convertRow(row, p.convert, lazy));
}

/** The rows of `p` by their root id (the hidden `__id` column, taken off). */
async function runById(
  client: Runner,
  p: Plan,
  values: unknown[],
  lazy = false,
): Promise<Map<string, Record<string, unknown>>> {
  const byId = new Map<string, Record<string, unknown>>();
  for (const row of await run(client, p, values, lazy)) {
    byId.set(row.__id as string, row);
    delete row.__id;
  }
  return byId;
}

function notFound(model: string): Error {
  return new Prisma.PrismaClientKnownRequestError(`No record was found for a query.`, {
    code: "P2025",
    clientVersion: Prisma.prismaVersion.client,
    meta: { modelName: model, cause: "No record was found for a query." },
  });
}

const pagingKeys = (args: Args) => {
  const { where, orderBy, take, skip, cursor, distinct } = args;
  return { where, orderBy, take, skip, cursor, distinct };
};

/**
 * One read through the joined path: its result, or `undefined` when it is not translatable (the
 * caller then runs Prisma's own read).
 */
async function joinedRead(
  client: Runner,
  delegate: Delegate,
  model: ModelInfo,
  operation: string,
  args: Args,
  batch: Batcher,
): Promise<unknown> {
  const many = operation === "findMany";
  const orThrow = operation.endsWith("OrThrow");
  const where = (args.where ?? {}) as Args;
  const shape = shapeOf(args, false);
  // the selection must be translatable at all, else Prisma's own read
  let read: Plan;
  try {
    read = cachedPlan(model, args, many ? "many" : "one", shape, client.plain);
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    // (a read without relations whose where is not translated: Prisma's own, one statement, below)
    if (!model.hasId) return undefined;
    // the where (or paging) is not translatable: ids by Prisma, then the joined read of those ids
    let byIds: Plan;
    try {
      byIds = cachedPlan(model, args, "ids", shape);
    } catch (inner) {
      if (inner instanceof Unsupported) return undefined;
      throw inner;
    }
    // a findUnique's where may name a compound unique key, which only findUnique takes
    const base = many ? "findMany" : operation.startsWith("findUnique") ? "findUnique" : "findFirst";
    const found = (await delegate[base]({ ...pagingKeys(args), select: { id: true } })) as
      { id: string }[] | { id: string } | null;
    const ids = many ? (found as { id: string }[]).map((r) => r.id) : found ? [(found as { id: string }).id] : [];
    if (ids.length === 0) {
      if (orThrow) throw notFound(model.name);
      return many ? [] : null;
    }
    const byId = await runById(client, byIds, valuesOf(byIds, args, ids), serializedReads.has(args));
    // a row deleted between the two statements is left out, as if the first had not seen it
    const ordered = ids.map((id) => byId.get(id)).filter((r): r is Record<string, unknown> => r !== undefined);
    if (!many && ordered.length === 0 && orThrow) throw notFound(model.name);
    return many ? ordered : (ordered[0] ?? null);
  }
  // findUnique by id alone: read with the other findUnique calls of this tick
  if (!many && (operation === "findUnique" || operation === "findUniqueOrThrow") && isIdOnly(where)) {
    const row = await batch.load(client, model, args, shape, where.id as string);
    if (!row && orThrow) throw notFound(model.name);
    return row;
  }
  const rows = (await run(client, read, valuesOf(read, args), serializedReads.has(args))).map(
    (row) => (delete row.__id, row),
  );
  if (many) return rows;
  if (rows.length === 0 && orThrow) throw notFound(model.name);
  return rows[0] ?? null;
}

function limitOf(args: Args): string {
  const { take, skip } = args;
  if (take !== undefined && !(Number.isInteger(take) && (take as number) >= 0)) unsupported("take");
  if (skip !== undefined && !(Number.isInteger(skip) && (skip as number) >= 0)) unsupported("skip");
  return (
    (take === undefined ? "" : ` LIMIT ${take as number}`) + (skip === undefined ? "" : ` OFFSET ${skip as number}`)
  );
}

/** A where of an id alone, or of an id and the tenant's equalities (a tenant's `node(id:)`): read in batches. */
const isIdOnly = (where: Args) =>
  typeof where.id === "string" &&
  (Object.keys(where).length === 1 || (Object.keys(where).length === 3 && tenantOf(where) !== null));

/** findUnique-by-id reads of the same model and selection in one tick, read by one statement. */
class Batcher {
  private pending = new Map<
    string,
    {
      client: Runner;
      model: ModelInfo;
      args: Args;
      shape: string;
      ids: Map<string, ((row: Record<string, unknown> | null) => void)[]>;
      fail: ((e: unknown) => void)[];
    }
  >();

  /** `shape`: shapeOf(args); reads are grouped by their selection's values too (a relation's where). */
  load(
    client: Runner,
    model: ModelInfo,
    args: Args,
    shape: string,
    id: string,
  ): Promise<Record<string, unknown> | null> {
    const tenant = tenantOf(args.where);
    const key =
      `${model.name}\u0000${JSON.stringify({ select: args.select, include: args.include })}` +
      (tenant ? `\u0000${tenant.organizationId}\u0000${tenant.testMode}` : "");
    let group = this.pending.get(key);
    // another client (a transaction) in the same tick: read on its own
    if (group && group.client !== client) return this.single(client, model, args, shape, id);
    if (!group) {
      group = { client, model, args, shape, ids: new Map(), fail: [] };
      this.pending.set(key, group);
      queueMicrotask(() => this.flush(key));
    }
    return new Promise((resolve, reject) => {
      const waiting = group.ids.get(id) ?? [];
      waiting.push(resolve);
      group.ids.set(id, waiting);
      group.fail.push(reject);
    });
  }

  private async single(client: Runner, model: ModelInfo, args: Args, shape: string, id: string) {
    const p = cachedPlan(model, args, "id", shape, client.plain);
    const byId = await runById(client, p, valuesOf(p, args, id));
    return byId.get(id) ?? null;
  }

  private async flush(key: string) {
    const group = this.pending.get(key)!;
    this.pending.delete(key);
    try {
      const ids = [...group.ids.keys()];
      const p = cachedPlan(group.model, group.args, ids.length === 1 ? "id" : "ids", group.shape, group.client.plain);
      const values = valuesOf(p, group.args, ids.length === 1 ? ids[0] : ids);
      const byId = new Map((await runJson(group.client, p, values)).map((row) => [row.__id as string, row]));
      for (const [id, waiting] of group.ids) {
        const json = byId.get(id);
        // each caller its own objects, as from Prisma
        for (const [i, resolve] of waiting.entries()) {
          if (!json) resolve(null);
          else {
            const row = convertRow(i === waiting.length - 1 ? json : structuredClone(json), p.convert);
            delete row.__id;
            resolve(row);
          }
        }
      }
    } catch (e) {
      for (const reject of group.fail) reject(e);
    }
  }
}

const WRAPPED = Symbol("joinedReads");
const RAW = Symbol("joinedReadsRaw");
const DIRECT = Symbol("joinedReadsDirect");

/**
 * The DirectQuery `client` was wrapped with (`withJoinedReads(client, direct)`: the PostgreSQL pool of
 * createDatabase, or a `directTransaction`'s connection), or undefined: another transaction's client,
 * a PGlite client, a client not wrapped. A statement given to it runs on the pool, outside any
 * transaction, or on the direct transaction's connection, inside it.
 */
export function directQueryOf(client: object): DirectQuery | undefined {
  return (client as { [DIRECT]?: DirectQuery })[DIRECT];
}

/** The client under `withJoinedReads` (Prisma's own reads only), for comparing both in tests. */
export function withoutJoinedReads<C extends object>(client: C): C {
  return ((client as { [RAW]?: C })[RAW] ?? client) as C;
}

/**
 * `client` with joined reads (module comment): the same client for everything else, its
 * `$transaction(fn)` handing `fn` a wrapped transaction client. `plainReads` (with `direct`): reads
 * without relations whose where translates go to `direct` as well (one statement either way; the
 * driver's costs less CPU than Prisma's client runtime and query compiler): direct-transaction.ts
 * gives it for the billing run's transactions.
 */
export function withJoinedReads<C extends object>(
  client: C,
  direct?: DirectQuery,
  options: { plainReads?: boolean } = {},
): C {
  if ((client as { [WRAPPED]?: boolean })[WRAPPED]) return client;
  const batch = new Batcher();
  const runner: Runner = direct
    ? { query: direct, plain: options.plainReads }
    : prismaRunner(client as unknown as RawClient);
  const delegates = new Map<string, unknown>();
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === WRAPPED) return true;
      if (prop === RAW) return target;
      if (prop === DIRECT) return direct;
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop !== "string") return value;
      if (prop === "$extends" && typeof value === "function")
        return (...extensions: unknown[]) => withJoinedReads(value.apply(target, extensions));
      if (prop === "$transaction" && typeof value === "function") {
        return (arg: unknown, options?: unknown) =>
          typeof arg === "function"
            ? value.call(target, (tx: object) => (arg as (tx: object) => unknown)(withJoinedReads(tx)), options)
            : value.call(target, arg, options);
      }
      const modelName = MODEL_OF_DELEGATE.get(prop);
      if (!modelName || typeof value !== "object" || value === null)
        return typeof value === "function" ? value.bind(target) : value;
      let wrapped = delegates.get(prop);
      if (!wrapped) {
        const model = MODELS.get(modelName)!;
        const delegate = value as Delegate;
        wrapped = new Proxy(delegate, {
          get(d, op, r) {
            const original = Reflect.get(d, op, r);
            if (typeof op !== "string" || !READS.has(op)) return original;
            return async (args: Args = {}) => {
              const result = await joinedRead(runner, delegate, model, op, args, batch);
              return result === undefined ? original.call(d, args) : result;
            };
          },
        });
        delegates.set(prop, wrapped);
      }
      return wrapped;
    },
  });
}
