/**
 * Interactive transactions whose hand-written statements skip Prisma's raw-query layer
 * (docs/performance.md "After: the billing run's statements straight to pg"). On PostgreSQL,
 * `directTransaction(prisma, fn)` opens a Prisma interactive transaction as `$transaction(fn)` does,
 * and hands `fn` a transaction client whose `directQueryOf` (joined-reads.ts) is the transaction's
 * own `pg` connection: the statements given to it (prepared-sql.ts `sqlRows`, `queryPrepared`, and
 * the joined reads, here also the reads without relations that joined-reads.ts translates:
 * `plainReads`) go on that connection, inside the same database transaction as the Prisma calls
 * left on the client (writes, counts, reads it does not translate), and commit or roll back with it.
 * On PGlite, or when the connection could not be found, `fn` gets Prisma's transaction client
 * unchanged and every statement goes through Prisma as before.
 *
 * How the connection is found: @prisma/adapter-pg opens a transaction by taking a client from the
 * pool (`PgTransaction.client`); `directTransactions` wraps the adapter's `startTransaction` and
 * records that client in the slot of the `directTransaction` call whose asynchronous context started
 * it (AsyncLocalStorage), so concurrent transactions (several claim loops) each get their own.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type pg from "pg";
import { withJoinedReads, withoutJoinedReads } from "./joined-reads.js";
import type { DirectQuery } from "./direct-query.js";

/** Where a transaction started in a `directTransaction` call records its direct query. */
interface Slot {
  direct?: DirectQuery;
}

const starting = new AsyncLocalStorage<Slot>();

/**
 * A driver adapter factory (@prisma/adapter-pg's) whose transactions, when started inside
 * `directTransaction`, record `directOn(connection)` for it. `directOn` turns the transaction's pg
 * connection into a DirectQuery (createDatabase's: statement reporting, prepared statement names).
 * Other adapters (no `client` on the transaction) are left alone.
 */
export function directTransactions<F extends { connect: () => Promise<object> }>(
  factory: F,
  directOn: (client: pg.PoolClient) => DirectQuery,
): F {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = (await connect()) as Record<string, unknown>;
    const start = adapter.startTransaction;
    if (typeof start !== "function") return adapter;
    adapter.startTransaction = async (...args: unknown[]) => {
      const tx = (await start.apply(adapter, args)) as AdapterTransaction;
      const slot = starting.getStore();
      if (slot && !slot.direct && tx.client && typeof tx.client.query === "function")
        slot.direct = whileOpen(tx, directOn(tx.client));
      return tx;
    };
    return adapter;
  };
  return factory;
}

/** What this module touches of @prisma/adapter-pg's transaction object. */
interface AdapterTransaction {
  client?: pg.PoolClient;
  [method: string]: unknown;
}

/**
 * `direct`, refusing to run once Prisma ends `tx`: from the COMMIT or ROLLBACK Prisma sends (also
 * when the transaction times out, or `fn` throws) and from `commit()`/`rollback()`, which hand the
 * connection back to the pool. A statement sent after that would otherwise run outside the
 * transaction, or inside another one on the reused connection; it throws instead, and the batch
 * fails as a Prisma call on a closed transaction does.
 */
function whileOpen(tx: AdapterTransaction, direct: DirectQuery): DirectQuery {
  let open = true;
  for (const method of ["queryRaw", "executeRaw", "commit", "rollback"]) {
    const original = tx[method];
    if (typeof original !== "function") continue;
    tx[method] = function (this: unknown, ...args: unknown[]) {
      const sql = (args[0] as { sql?: unknown } | undefined)?.sql;
      if (method === "commit" || method === "rollback" || sql === "COMMIT" || sql === "ROLLBACK") open = false;
      return original.apply(this, args);
    };
  }
  return (sql, values) => {
    if (!open)
      return Promise.reject(new Error("the direct transaction is closed (committed, rolled back or timed out)"));
    return direct(sql, values);
  };
}

/** The part of a Prisma client `directTransaction` uses. */
interface TransactionClient<Tx> {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

/**
 * Runs `fn` in one interactive transaction of `prisma` (same `options` as `$transaction`: maxWait
 * and timeout in ms), giving it a transaction client whose direct query runs on the transaction's
 * pg connection (module comment); resolves to `fn`'s result after the commit, rejects (after the
 * rollback) with what `fn` threw. The client is joined-reads wrapped as Prisma's own would be.
 */
export function directTransaction<Tx extends object, R>(
  prisma: TransactionClient<Tx>,
  fn: (tx: Tx) => Promise<R>,
  options?: { maxWait?: number; timeout?: number },
): Promise<R> {
  const slot: Slot = {};
  return starting.run(slot, () =>
    prisma.$transaction(
      (tx) => fn(slot.direct ? withJoinedReads(withoutJoinedReads(tx), slot.direct, { plainReads: true }) : tx),
      options,
    ),
  );
}
