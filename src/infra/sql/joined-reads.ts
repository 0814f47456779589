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
 *
 * This module is the client wrapper and where a read runs; a read's one statement is planned in
 * read-plan.ts (from read-sql.ts's parts and datamodel.ts's models), and its rows are decoded in
 * row-decoding.ts.
 */
import { Prisma } from "../prisma/generated/client.js";
import { MODEL_OF_DELEGATE, MODELS, type ModelInfo } from "./datamodel.js";
import { Unsupported, type Args } from "./read-sql.js";
import { cachedPlan, shapeOf, tenantOf, valuesOf, type Plan } from "./read-plan.js";
import { convertRow, serializedReads } from "./row-decoding.js";
import type { DirectQuery } from "./direct-query.js";

const READS = new Set(["findUnique", "findUniqueOrThrow", "findFirst", "findFirstOrThrow", "findMany"]);

type Delegate = Record<string, (args?: Args) => Promise<unknown>>;
interface RawClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

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
 * The reads of one model of a wrapped client: where its statements run, the model, Prisma's own
 * delegate (for the ids of a where this path does not translate) and the client's batcher.
 */
interface ModelReads {
  runner: Runner;
  model: ModelInfo;
  delegate: Delegate;
  batch: Batcher;
}

/**
 * One read (`operation`: findUnique, findUniqueOrThrow, findFirst, findFirstOrThrow or findMany)
 * through the joined path: its result (the rows, a row or null), or `undefined` when it is not
 * translatable (the caller then runs Prisma's own read). Throws Prisma's P2025 for an `OrThrow`
 * read that finds nothing.
 */
async function joinedRead(reads: ModelReads, operation: string, args: Args): Promise<unknown> {
  const { runner, model } = reads;
  const many = operation === "findMany";
  const orThrow = operation.endsWith("OrThrow");
  const where = (args.where ?? {}) as Args;
  const shape = shapeOf(args, false);
  // the selection must be translatable at all, else Prisma's own read
  let read: Plan;
  try {
    read = cachedPlan(model, args, many ? "many" : "one", shape, runner.plain);
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    return readByPrismaIds(reads, operation, args, shape);
  }
  // findUnique by id alone: read with the other findUnique calls of this tick
  if (!many && (operation === "findUnique" || operation === "findUniqueOrThrow") && isIdOnly(where)) {
    const row = await reads.batch.load(runner, model, args, shape, where.id as string);
    if (!row && orThrow) throw notFound(model.name);
    return row;
  }
  const rows = (await run(runner, read, valuesOf(read, args), serializedReads.has(args))).map(
    (row) => (delete row.__id, row),
  );
  if (many) return rows;
  if (rows.length === 0 && orThrow) throw notFound(model.name);
  return rows[0] ?? null;
}

/**
 * joinedRead of a read whose where (or paging) is not translated: the ids by Prisma's own read (with
 * the same where, order, take and skip), then the joined read of those ids, in that order; `undefined`
 * when the model has no id or the selection is not translatable either (Prisma's own read, one
 * statement). Throws P2025 for an `OrThrow` read that finds nothing.
 */
async function readByPrismaIds(reads: ModelReads, operation: string, args: Args, shape: string): Promise<unknown> {
  const { runner, model, delegate } = reads;
  const many = operation === "findMany";
  const orThrow = operation.endsWith("OrThrow");
  // (a read without relations whose where is not translated: Prisma's own, one statement)
  if (!model.hasId) return undefined;
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
  const byId = await runById(runner, byIds, valuesOf(byIds, args, ids), serializedReads.has(args));
  // a row deleted between the two statements is left out, as if the first had not seen it
  const ordered = ids.map((id) => byId.get(id)).filter((r): r is Record<string, unknown> => r !== undefined);
  if (!many && ordered.length === 0 && orThrow) throw notFound(model.name);
  return many ? ordered : (ordered[0] ?? null);
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

const WRAPPED: unique symbol = Symbol("joinedReads");
const RAW = Symbol("joinedReadsRaw");
const DIRECT = Symbol("joinedReadsDirect");

/**
 * A Prisma client (or transaction client) on the SQL path, as `withJoinedReads` returns it: its
 * `findUnique`, `findUniqueOrThrow`, `findFirst`, `findFirstOrThrow` and `findMany` with relations
 * (and a `findMany` of rows by ids) are answered by ONE SQL statement planned here (read-plan.ts),
 * not by Prisma's query engine; on PostgreSQL that statement goes straight to pg (`directQueryOf`).
 * Everything else (writes, counts, aggregates, raw queries, the reads it does not translate) is
 * Prisma's own, and every result has the shape and the types of Prisma's. `Database.prisma`
 * (infra/database.ts) is one. The mark is real: the wrapper answers `true` for it.
 */
export type SqlPathClient<C extends object> = C & { readonly [WRAPPED]: true };

/**
 * The DirectQuery `client` was wrapped with (`withJoinedReads(client, direct)`: the PostgreSQL pool of
 * createDatabase, or a `directTransaction`'s connection), or undefined: another transaction's client,
 * a PGlite client, a client not wrapped. A statement given to it runs on the pool, outside any
 * transaction, or on the direct transaction's connection, inside it.
 */
export function directQueryOf(client: object): DirectQuery | undefined {
  return (client as { [DIRECT]?: DirectQuery })[DIRECT];
}

/**
 * The client under `withJoinedReads` (Prisma's own reads only), for comparing both in tests; `client`
 * itself when it is not wrapped. Its static type is the argument's, so it can stand where the
 * wrapped client does (a test's read run on both).
 */
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
): SqlPathClient<C> {
  if ((client as { [WRAPPED]?: boolean })[WRAPPED]) return client as SqlPathClient<C>;
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
        const delegate = value as Delegate;
        const reads: ModelReads = { runner, model: MODELS.get(modelName)!, delegate, batch };
        wrapped = new Proxy(delegate, {
          get(d, op, r) {
            const original = Reflect.get(d, op, r);
            if (typeof op !== "string" || !READS.has(op)) return original;
            return async (args: Args = {}) => {
              const result = await joinedRead(reads, op, args);
              return result === undefined ? original.call(d, args) : result;
            };
          },
        });
        delegates.set(prop, wrapped);
      }
      return wrapped;
    },
  }) as SqlPathClient<C>;
}
