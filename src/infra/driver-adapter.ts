/**
 * Driver adapters (no Prisma client import, so scripts can load it before `prisma generate`). Two databases, one
 * PostgreSQL dialect:
 * - embedded PGlite in `<dataDir>/pglite` (default, nothing to install);
 * - PostgreSQL through `pg` when `DATABASE_URL` is set.
 * Both go through Prisma 7 driver adapters (docs/decisions.md "Operations": Prisma 7).
 */
import fs from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import pg from "pg";

export { databaseTarget, type DatabaseTarget } from "./database-target.js";

/**
 * The message of an error from opening or using a database: its own, or, for Node's AggregateError
 * (a connection refused on every address of a host, which has an empty message), its errors'
 * messages joined; else its code.
 */
export function errorMessage(e: unknown): string {
  const err = e as Error & { code?: string; errors?: Error[] };
  return err.message || err.errors?.map((x) => x.message).join("; ") || err.code || String(e);
}

const PG_NAME_OID = 19;
const PG_TEXT_OID = 25;

/**
 * A `pg.Pool` whose results report pg_catalog's `name` columns as `text`. Works around
 * prisma/orm#27403 ("Column type 'name' could not be deserialized"), which broke `prisma migrate`
 * over @prisma/adapter-pg 6.19 on a real PostgreSQL, and keeps a `$queryRaw` that selects a
 * catalog column readable. Applies to pool queries and pooled clients. With `namedStatements` false
 * (DATABASE_PREPARED_STATEMENTS=false) every query is sent unnamed, whatever name it was given.
 */
export function nameAsTextPool(config: pg.PoolConfig, { namedStatements = true } = {}): pg.Pool {
  const pool = new pg.Pool(config);
  patchQuery(pool);
  pool.on("connect", (client) => {
    patchQuery(client);
    serializeQueries(client);
    boundPreparedStatements(client, namedStatements ? MAX_PREPARED_PER_CONNECTION : 0);
  });
  // An idle client whose connection the server ends (restart, failover, or a test's DROP DATABASE
  // ... WITH (FORCE) racing pool.end(), which does not wait for sockets to close) is re-emitted
  // here after pg-pool has discarded it; without a listener that error would crash the process.
  pool.on("error", () => undefined);
  return pool;
}

/** pg's `query` as the wrappers below see it: its overloads (promise, callback, submittable) taken as one. */
type QueryFunction = (...args: unknown[]) => unknown;

function patchQuery(target: { query: QueryFunction }): void {
  const query = target.query.bind(target);
  target.query = (...args: unknown[]) => {
    const result = query(...args) as PromiseLike<pg.QueryResult | undefined> | undefined;
    if (!result || typeof result.then !== "function") return result;
    return result.then((res: pg.QueryResult | undefined) => {
      for (const field of res?.fields ?? []) {
        if (field.dataTypeID === PG_NAME_OID) field.dataTypeID = PG_TEXT_OID;
      }
      return res;
    });
  };
}

/**
 * Queries sent to one client while it runs another wait for it here instead of in pg's own queue,
 * which pg 8 deprecates (a warning; pg 9 will refuse them). It happens inside an interactive
 * transaction whose queries are issued in parallel, as GraphQL resolves a keyed request's fields
 * (services/request-transaction.ts). Promise-style calls only; callback and submittable calls
 * pass through unchanged.
 */
function serializeQueries(client: { query: QueryFunction }): void {
  const query = client.query.bind(client);
  let last: Promise<unknown> = Promise.resolve();
  client.query = (...args: unknown[]) => {
    const first = args[0] as { submit?: unknown } | null | undefined;
    if (typeof args[args.length - 1] === "function" || typeof first?.submit === "function") return query(...args);
    const result = last.then(() => query(...args));
    last = result.catch(() => undefined);
    return result;
  };
}

/**
 * Named statements one connection prepares at most; beyond, a new text is sent unnamed (parsed and
 * planned each time, as before), so the server's memory for them stays bounded per connection. A
 * connection's statements go with it (the pool closes connections idle for 10 s). The names are the
 * SQL path's (infra/sql/statement-names.ts); the bound is the pool's, here, in a module that loads no
 * Prisma client.
 */
export const MAX_PREPARED_PER_CONNECTION = 200;

/** What boundPreparedStatements reads of pg's private connection state (test/integration/sql-fence.test.ts). */
interface PgConnectionState {
  parsedStatements: Record<string, string>;
  submittedNamedStatements?: Record<string, string>;
}

/**
 * Drops the name of a query that would prepare a statement past `max` on `client` (MAX_PREPARED_PER_CONNECTION; 0 with
 * DATABASE_PREPARED_STATEMENTS=false: every statement is sent unnamed, as a pooler in transaction mode needs, where
 * the next statement may run on another server connection that never prepared the name).
 */
function boundPreparedStatements(client: pg.PoolClient, max: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const connection = (client as unknown as { connection: PgConnectionState }).connection;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as { name?: string } | undefined;
    const name = config?.name;
    if (
      name &&
      connection.parsedStatements[name] === undefined &&
      connection.submittedNamedStatements?.[name] === undefined &&
      Object.keys(connection.parsedStatements).length >= max
    )
      args[0] = { ...config, name: undefined };
    return query(...args);
  };
}

/** Opens the PGlite database at `dir` (created when missing) or in memory. */
export async function openPGlite(dir?: string): Promise<PGlite> {
  if (dir) fs.mkdirSync(dir, { recursive: true });
  const db = new PGlite(dir);
  await db.waitReady;
  return db;
}

/** Resolves after the event loop's pending I/O callbacks and timers have had their turn (`setImmediate`). */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Makes every query of a connected Prisma driver adapter (and of its transactions: the query method
 * `performIO` is on the prototype both share, in pglite-prisma-adapter and @prisma/adapter-pg)
 * yield to the event loop before it is sent and after its rows arrive. PGlite runs in the
 * service's own thread and answers without any I/O, so without this one request's queries, their
 * result processing (Prisma) and the GraphQL completion run as one synchronous stretch: 3 pages of
 * 100 invoices with their lines held the event loop 150-370 ms, and every other request (even
 * `/healthz`) waited (docs/limits.md "Event loop"). With it the longest stretch is one query's work.
 * On PostgreSQL the rows already arrive by I/O; the yield after them separates Prisma's processing
 * of one result from the work that was queued before it. Costs one macrotask turn (microseconds)
 * per query.
 */
const yieldingPrototypes = new WeakSet<object>();
export function yieldAroundQueries(adapter: object): void {
  let proto = Object.getPrototypeOf(adapter);
  while (proto && !Object.hasOwn(proto, "performIO")) proto = Object.getPrototypeOf(proto);
  if (!proto || yieldingPrototypes.has(proto)) return;
  yieldingPrototypes.add(proto);
  const original = proto.performIO as (query: unknown) => Promise<unknown>;
  proto.performIO = async function (this: unknown, query: unknown) {
    await yieldToEventLoop();
    const result = await original.call(this, query);
    await yieldToEventLoop();
    return result;
  };
}

/** A driver adapter factory whose adapters yield to the event loop around every query (yieldAroundQueries). */
export function yieldingAdapter<F extends { connect: () => Promise<object> }>(factory: F): F {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    yieldAroundQueries(adapter);
    return adapter;
  };
  return factory;
}

/**
 * The PGlite driver adapter factory. pglite-prisma-adapter 0.7 turns Prisma's `Bytes` arguments
 * (base64 strings) into bytes itself; 0.6.1 did not, and this module used to patch it.
 */
export function pgliteAdapter(pglite: PGlite): PrismaPGlite {
  return new PrismaPGlite(pglite);
}

/**
 * Called with the SQL text of every statement a driver adapter sends (statementCountingAdapter),
 * and its arguments when it has any (bench/pages.ts runs EXPLAIN on them).
 */
export type StatementListener = (sql: string, args?: readonly unknown[]) => void;

/**
 * A driver adapter factory whose adapters report every SQL statement to `listener`, transactions
 * included: `BEGIN` when one starts, then each query, then `COMMIT` or `ROLLBACK`. @prisma/adapter-pg
 * sends BEGIN itself and COMMIT/ROLLBACK as queries (reported as sent); pglite-prisma-adapter's
 * transactions are "phantom" (PGlite's own `transaction()` sends them), so they are reported from
 * `startTransaction`, `commit` and `rollback`. Wraps the adapter and transaction instances only
 * (not the shared prototypes), so two databases in one process count apart. For tests and
 * diagnostics (test/helpers/server.ts `statements`); costs one function call per statement.
 */
export function statementCountingAdapter<F extends { connect: () => Promise<object> }>(
  factory: F,
  listener: StatementListener,
): F {
  const connect = factory.connect.bind(factory);
  const wrapQueries = (target: Record<string, unknown>) => {
    for (const method of ["queryRaw", "executeRaw"] as const) {
      const original = target[method];
      if (typeof original !== "function") continue;
      target[method] = (query: { sql: string; args?: readonly unknown[] }) => {
        listener(query.sql, query.args);
        return original.call(target, query);
      };
    }
  };
  factory.connect = async () => {
    const adapter = (await connect()) as Record<string, unknown>;
    wrapQueries(adapter);
    const start = adapter.startTransaction;
    if (typeof start === "function") {
      adapter.startTransaction = async (...args: unknown[]) => {
        listener("BEGIN");
        const tx = (await start.apply(adapter, args)) as Record<string, unknown> & {
          options?: { usePhantomQuery?: boolean };
        };
        wrapQueries(tx);
        if (tx.options?.usePhantomQuery) {
          for (const [method, sql] of [
            ["commit", "COMMIT"],
            ["rollback", "ROLLBACK"],
          ] as const) {
            const original = tx[method] as (...a: unknown[]) => unknown;
            tx[method] = (...a: unknown[]) => {
              listener(sql);
              return original.apply(tx, a);
            };
          }
        }
        return tx;
      };
    }
    return adapter;
  };
  return factory;
}
