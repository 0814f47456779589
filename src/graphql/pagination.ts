/**
 * Keyset Relay connections (docs/graphql.md "Paging", docs/decisions.md).
 *
 * A cursor is opaque to clients: base64url of `{"v":1,"c":"Query.invoices","k":[...]}`, the
 * connection it belongs to (`<parent type>.<field>`) and the row's sort key (the values of the
 * connection's orderBy fields, an `id` tie-breaker appended when the order lacks one; null for a
 * nullable field without a value, such as a draft's `number`). A page after (before) a cursor is
 * the rows strictly after (before) that key in the connection's order, a WHERE on the sort fields,
 * so pages are stable under inserts and deletes (the cursor's row need not exist any more). A
 * nullable sort field orders null above every value, as PostgreSQL does by default: last going up,
 * first going down (`nulls` is written out in the ORDER BY all the same). `offset` gives
 * page-number access (what the REST adapter uses).
 *
 * One findMany per page, selecting what the query asks of `edges.node` plus the sort fields; it
 * takes one row more than the page to know whether the paging direction has more, and one row on
 * the cursor's side (the cursor's own row, or the row before the offset) to know whether the other
 * direction has any. `totalCount` runs a COUNT only when selected, `count(limit:)` a COUNT that stops
 * at `limit` + 1 rows.
 */
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLResolveInfo } from "graphql";
import type { GraphQLContext } from "./context.js";
import { ValidationError } from "../domain/errors.js";
import { getDatamodel } from "../infra/prisma/generated/pothos-types.js";
import { tenant } from "../services/context.js";
import { narrowSelection } from "./narrow-selection.js";
import { forSerialization } from "../infra/sql/index.js";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** Largest `offset` a connection takes (page-number access deeper than this should use cursors). */
export const MAX_OFFSET = 100_000;
/**
 * Default and largest `limit` of a connection's `count` (docs/graphql.md "Counting"): a count that
 * stops at `limit` + 1 matching rows costs at most that many index entries (about 5 ms for 10,000
 * on the development machine), where an exact `totalCount` of a million rows costs 0.2 to 0.7 s.
 */
export const DEFAULT_COUNT_LIMIT = 10_000;
export const MAX_COUNT_LIMIT = 100_000;

/** Whether a capped count is the number of matching items or a lower bound of it. */
export type CountPrecision = "exact" | "at_least";

/** The answer of a connection's `count(limit:)`. */
export interface CappedCount {
  count: number;
  precision: CountPrecision;
}

/** Version of the cursor format (a cursor of another version is rejected as malformed). */
const CURSOR_VERSION = 1;
/** Longest cursor accepted (ours are well under 300 characters). */
const MAX_CURSOR_LENGTH = 1000;

/** The description of every connection's `offset` argument. */
export const OFFSET_DESCRIPTION =
  `Page-number access: skips this many items from the start of the list (0 to ${MAX_OFFSET}), so page N of size S is ` +
  "`first: S, offset: S*(N-1)`; the REST adapter pages this way. Unlike cursors, an insert or delete between two " +
  "requests " +
  "shifts the pages: prefer `after`/`before`. Only with `first` (or no page size); combined with `after`, `before` " +
  "or `last` " +
  "it is a validation_error on offset.";

/** The `offset` argument of a connection field: `args: { ...filters, offset: offsetArg(t) }`. */
export function offsetArg<R>(t: { arg: { int(options: { description: string }): R } }): R {
  return t.arg.int({ description: OFFSET_DESCRIPTION });
}

export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  offset?: number | null;
}

type Direction = "asc" | "desc";
type ScalarKind = "String" | "Int" | "BigInt" | "DateTime";
type KeyValue = string | number | null;

interface SortField {
  field: string;
  direction: Direction;
  kind: ScalarKind;
  /** the column may be null (null sorts above every value) */
  nullable: boolean;
}

interface CursorPayload {
  v: number;
  c: string;
  k: KeyValue[];
}

/**
 * Any Prisma model's arguments and rows, for the code shared by every model's list. `any`, not
 * `unknown`: each delegate takes its own model's argument types (`InvoiceWhereInput`, ...), and
 * Pothos checks a connection's nodes against its model's row type; no one type names them all.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Prisma's and Pothos's per-model types
type AnyModel = any;

/** The part of a Prisma model delegate a list needs (`ctx.prisma.invoice`, ...). */
interface ListDelegate {
  /** the model's name (Prisma client delegates carry it) */
  $name?: string;
  findMany(args: AnyModel): Promise<AnyModel[]>;
  count(args: { where: AnyModel; take?: number; orderBy?: AnyModel }): Promise<number>;
}

const models = getDatamodel().datamodel.models as Record<
  string,
  { fields: readonly { name: string; type: string; kind: string; isRequired?: boolean }[] }
>;

/** Scalar field name -> Prisma type and nullability, per model name: read from the datamodel once per model. */
const fieldsByModel = new Map<string, Map<string, { type: string; nullable: boolean }>>();

function modelFields(model: ListDelegate): Map<string, { type: string; nullable: boolean }> {
  const name = model.$name ?? "";
  let fields = fieldsByModel.get(name);
  if (!fields) {
    const entry = models[name] ?? Object.entries(models).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
    if (!entry) throw new Error(`pagination: unknown Prisma model "${name}"`);
    fields = new Map(
      entry.fields
        .filter((f) => f.kind === "scalar")
        .map((f) => [f.name, { type: f.type, nullable: f.isRequired === false }]),
    );
    fieldsByModel.set(name, fields);
  }
  return fields;
}

/** The sort fields of `orderBy` (an object or a list of one-key objects), with an `id` tie-breaker. */
function sortFields(model: ListDelegate, orderBy: unknown): SortField[] {
  const types = modelFields(model);
  const entries = (Array.isArray(orderBy) ? orderBy : [orderBy]).flatMap((o) =>
    Object.entries(o as Record<string, Direction>),
  );
  if (!entries.some(([field]) => field === "id")) entries.push(["id", "asc"]);
  return entries.map(([field, direction]) => {
    const column = types.get(field);
    const kind = column?.type;
    if (kind !== "String" && kind !== "Int" && kind !== "BigInt" && kind !== "DateTime")
      throw new Error(`pagination: cannot sort by ${field} (${kind})`);
    if (direction !== "asc" && direction !== "desc") throw new Error(`pagination: sort ${field} asc or desc`);
    return { field, direction, kind, nullable: column!.nullable };
  });
}

/**
 * The ORDER BY of `sort` (reversed for a backward page), nulls placed where the keyset puts them:
 * above every value (last ascending, first descending).
 */
function orderOf(sort: SortField[], reverse: boolean) {
  return sort.map(({ field, direction, nullable }) => {
    const sorted = reverse ? (direction === "asc" ? "desc" : "asc") : direction;
    return { [field]: nullable ? { sort: sorted, nulls: sorted === "asc" ? "last" : "first" } : sorted };
  });
}

function keyOf(row: Record<string, unknown>, sort: SortField[]): KeyValue[] {
  return sort.map(({ field, kind }) => {
    const value = row[field];
    if (value === null || value === undefined) return null;
    // a BigInt (events' sequence) as its digits: JSON has no bigint
    return kind === "DateTime"
      ? (value as Date).toISOString()
      : kind === "BigInt"
        ? String(value as bigint)
        : (value as KeyValue);
  });
}

function encodeCursor(connection: string, key: KeyValue[]): string {
  const payload: CursorPayload = { v: CURSOR_VERSION, c: connection, k: key };
  return Buffer.from(JSON.stringify(payload)).toString("base64url");
}

/**
 * An edge of a page: its node, and its cursor encoded when read (the `cursor` field, or the page's
 * start and end cursors), not for every row of every page: most pages ask for no edge's cursor.
 */
class Edge<T extends Record<string, unknown>> {
  private encoded: string | undefined;
  constructor(
    readonly node: T,
    private readonly connection: string,
    private readonly sort: SortField[],
  ) {}

  /** The opaque keyset cursor of this edge's row (encodeCursor of its sort key). */
  get cursor(): string {
    return (this.encoded ??= encodeCursor(this.connection, keyOf(this.node, this.sort)));
  }
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

/** The sort key of `cursor`, or a validation_error on `arg` when it is not a cursor of `connection`. */
function decodeCursor(arg: "after" | "before", cursor: string, connection: string, sort: SortField[]): KeyValue[] {
  const invalid = () => ValidationError.field(arg, "is not a valid cursor (use a cursor this connection returned)");
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let payload: Partial<CursorPayload>;
  try {
    payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (
    typeof payload !== "object" ||
    payload === null ||
    payload.v !== CURSOR_VERSION ||
    typeof payload.c !== "string" ||
    !Array.isArray(payload.k)
  )
    throw invalid();
  if (payload.c !== connection) throw ValidationError.field(arg, `is a cursor of ${payload.c}, not of ${connection}`);
  const key = payload.k;
  if (key.length !== sort.length) throw invalid();
  sort.forEach(({ kind, nullable }, i) => {
    const value = key[i];
    const ok =
      value === null
        ? nullable
        : kind === "Int"
          ? Number.isSafeInteger(value)
          : kind === "BigInt"
            ? typeof value === "string" && /^-?\d{1,19}$/.test(value)
            : kind === "DateTime"
              ? typeof value === "string" && ISO_INSTANT.test(value) && !Number.isNaN(Date.parse(value))
              : typeof value === "string" && value.length <= 200;
    if (!ok) throw invalid();
  });
  return key;
}

function sqlValue(kind: ScalarKind, value: KeyValue) {
  return kind === "DateTime" ? new Date(value as string) : kind === "BigInt" ? BigInt(value as string) : value;
}

/** Prisma where: `field` equals `value` (null: IS NULL). */
function equalTo(s: SortField, value: KeyValue) {
  return { [s.field]: value === null ? null : sqlValue(s.kind, value) };
}

/**
 * Prisma where: `field` strictly above (`up`) or below `value`, null counting as above every
 * value; undefined when nothing is (above null).
 */
function beyond(s: SortField, value: KeyValue, up: boolean) {
  if (value === null) return up ? undefined : { [s.field]: { not: null } };
  const compared = { [s.field]: { [up ? "gt" : "lt"]: sqlValue(s.kind, value) } };
  return up && s.nullable ? { OR: [compared, { [s.field]: null }] } : compared;
}

/**
 * Prisma where for the rows strictly after `key` in the order `sort` (`side: "after"`) or strictly
 * before it (`"before"`), or also the row at `key` itself when `inclusive`: lexicographic over the
 * sort fields, each compared in its own direction.
 *
 * The lexicographic OR alone is no index range: PostgreSQL would read the whole list from its start
 * (or bitmap-scan and sort every row past the cursor), so a deep page would cost as much as an
 * offset. So the first sort field is bounded on its own as well (`createdAt <= x` for a page after x
 * in a newest-first list), a range the list's index (`..., createdAt, id`) starts the scan at: the
 * 1,000th page then reads the same ~100 index entries as the first (docs/performance.md "Deep pages").
 */
function keyset(sort: SortField[], key: KeyValue[], side: "after" | "before", inclusive: boolean) {
  const branches: object[] = [];
  const equal = (n: number) => sort.slice(0, n).map((s, i) => equalTo(s, key[i]!));
  sort.forEach((s, i) => {
    const past = beyond(s, key[i]!, (s.direction === "asc") === (side === "after"));
    if (past) branches.push({ AND: [...equal(i), past] });
  });
  if (inclusive) branches.push({ AND: equal(sort.length) });
  const lead = sort[0]!;
  // the lead bound: the index range the scan starts at (a nullable lead has no simple range)
  const bound =
    lead.nullable || key[0] === null
      ? []
      : [
          {
            [lead.field]: {
              [(lead.direction === "asc") === (side === "after") ? "gte" : "lte"]: sqlValue(lead.kind, key[0]!),
            },
          },
        ];
  return { AND: [...bound, { OR: branches }] };
}

function sameKey(a: KeyValue[], b: KeyValue[]) {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

function checkArgs(args: ConnectionArgs) {
  for (const key of ["first", "last"] as const) {
    const value = args[key];
    if (value !== null && value !== undefined && (value < 0 || value > MAX_PAGE_SIZE)) {
      throw ValidationError.field(key, `must be between 0 and ${MAX_PAGE_SIZE}`);
    }
  }
  if (args.first != null && args.last != null)
    throw ValidationError.field(
      "last",
      "cannot be combined with first: page forward with first/after or backward with last/before",
    );
  if (args.offset != null) {
    if (args.offset < 0 || args.offset > MAX_OFFSET)
      throw ValidationError.field("offset", `must be between 0 and ${MAX_OFFSET}`);
    if (args.after != null || args.before != null || args.last != null) {
      throw ValidationError.field(
        "offset",
        "cannot be combined with after, before or last: page with cursors or with first/offset",
      );
    }
  }
}

/** What a connection field resolves to: edges, pageInfo, the lazy totalCount and the lazy capped count. */
export interface ConnectionResult<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
  totalCount: () => Promise<number>;
  count: (limit?: number | null) => Promise<CappedCount>;
}

/**
 * The matching rows counted up to `limit` (DEFAULT_COUNT_LIMIT when absent): one COUNT over a
 * subquery that stops at `limit` + 1 rows, so its cost is bounded by `limit`, not by the list.
 * The subquery is in the list's order (`orderBy`): Prisma orders a `take` (by id when not told),
 * and in the list's order the filter's list index serves it with no sort.
 * Errors: validation_error on limit outside 1..MAX_COUNT_LIMIT.
 */
export async function cappedCount(
  model: ListDelegate,
  where: unknown,
  orderBy: unknown,
  limit: number | null | undefined,
): Promise<CappedCount> {
  const cap = limit ?? DEFAULT_COUNT_LIMIT;
  if (!Number.isSafeInteger(cap) || cap < 1 || cap > MAX_COUNT_LIMIT)
    throw ValidationError.field("limit", `must be between 1 and ${MAX_COUNT_LIMIT}`);
  const found = await model.count({ where, orderBy, take: cap + 1 });
  return found > cap ? { count: cap, precision: "at_least" } : { count: found, precision: "exact" };
}

/**
 * A keyset connection over a Prisma model: one findMany for the page, selecting exactly what the
 * query asks of `edges.node` (relations included, so no N+1) plus the sort fields, and a COUNT
 * only for totalCount. `query.orderBy` is the connection's order (an `id` tie-breaker is added).
 * Errors: validation_error on first/last (0..100), offset (0..100,000; not with cursors or last),
 * after/before (not a cursor of this connection).
 */
export async function prismaConnection(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  model: ListDelegate,
  args: ConnectionArgs,
  query: { where: unknown; orderBy: unknown },
): Promise<ConnectionResult<AnyModel>> {
  checkArgs(args);
  const connection = `${info.parentType.name}.${info.fieldName}`;
  const sort = sortFields(model, query.orderBy);
  const after = args.after != null ? decodeCursor("after", args.after, connection, sort) : null;
  const before = args.before != null ? decodeCursor("before", args.before, connection, sort) : null;
  const backward = args.last != null;
  const size = (backward ? args.last : args.first) ?? DEFAULT_PAGE_SIZE;
  const offset = args.offset ?? 0;

  // the row just before the page on the side it starts from (the cursor's own row, or the row at
  // offset - 1) tells whether items exist on that side
  const start = backward ? before : after;
  const peek = start !== null || offset > 0;
  const where = [
    query.where,
    ...(after ? [keyset(sort, after, "after", !backward)] : []),
    ...(before ? [keyset(sort, before, "before", backward)] : []),
  ];
  const orderBy = orderOf(sort, backward);

  // the columns the selection reads, not every column of every row (narrow-selection.ts)
  const selection = narrowSelection(
    info,
    ["edges", "node"],
    queryFromInfo({ context: ctx, info, path: ["edges", "node"] }),
  ) as {
    select?: Record<string, unknown>;
  };
  if (selection.select) for (const { field } of sort) selection.select[field] ??= true;

  // its rows are only serialized: decimals that parse their digits only if read (infra/sql/row-decoding.ts)
  let rows = await model.findMany(
    forSerialization({
      ...selection,
      where: { AND: where },
      orderBy,
      ...(offset > 0 ? { skip: offset - 1 } : {}),
      take: size + 1 + (peek ? 1 : 0),
    }),
  );

  let otherSide = false;
  if (peek && rows.length > 0 && (offset > 0 || sameKey(keyOf(rows[0], sort), start!))) {
    otherSide = true;
    rows = rows.slice(1);
  } else if (peek && rows.length > size + 1) {
    rows = rows.slice(0, size + 1);
  }
  const more = rows.length > size;
  const page = rows.slice(0, size);
  if (backward) page.reverse();

  const edges = page.map((node) => new Edge(node, connection, sort));
  let counted: Promise<number> | undefined;
  return {
    edges,
    pageInfo: {
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
      hasNextPage: backward ? otherSide : more,
      hasPreviousPage: backward ? more : otherSide,
    },
    totalCount: () => (counted ??= model.count({ where: query.where })),
    count: (limit) => cappedCount(model, query.where, orderOf(sort, false), limit),
  };
}

/** Prisma where: rows of the caller's organization and mode matching every one of `conditions` (AND-ed). */
function tenantWhere(ctx: GraphQLContext, conditions: object[]) {
  return { ...tenant(ctx), AND: conditions };
}

/** The order of a tenant resource's list: newest first (`createdAt`), then by `id`. */
const NEWEST_FIRST = [{ createdAt: "desc" }, { id: "desc" }] as const;

/**
 * The list of a tenant resource: rows of the caller's organization and mode matching every one of
 * `conditions` (Prisma where fragments, AND-ed), newest first (`createdAt`, then `id`). Errors:
 * those of prismaConnection.
 */
export function tenantConnection(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  model: ListDelegate,
  args: ConnectionArgs,
  conditions: object[],
) {
  return prismaConnection(ctx, info, model, args, { where: tenantWhere(ctx, conditions), orderBy: NEWEST_FIRST });
}

/**
 * The list of invoices, orders or credit notes: rows of the caller's organization and mode matching
 * every one of `conditions`, newest first (`createdAt`), documents created at the same instant (the
 * cycles one billing run or test clock advance bills) by `number`, highest first, a draft (no
 * number yet) before them, then by `id` (docs/graphql.md "Order of lists"). Served by the lists'
 * indexes `(..., createdAt, number, id)`. Errors: those of prismaConnection.
 */
export function documentConnection(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  model: ListDelegate,
  args: ConnectionArgs,
  conditions: object[],
) {
  return prismaConnection(ctx, info, model, args, { where: tenantWhere(ctx, conditions), orderBy: DOCUMENT_ORDER });
}

/** The order of every list of documents (documentConnection; relations oldest first reverse it). */
export const DOCUMENT_ORDER = [{ createdAt: "desc" }, { number: "desc" }, { id: "desc" }] as const;
