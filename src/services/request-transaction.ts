/**
 * One database transaction around a whole request (docs/decisions.md "Idempotency keys"): a POST
 * with an Idempotency-Key runs every query it makes, and stores its answer, in one transaction, so
 * after a crash the key is either done (its answer committed with the request's writes) or free.
 *
 * - `runInTransaction` opens the transaction and hands out a *joinable* client over it: every
 *   query goes through the transaction, and the client's own `$transaction(fn)` (which services
 *   call for each state change) runs `fn` inside a SAVEPOINT of the same transaction instead of
 *   opening a second one. A service whose `fn` throws is rolled back to its savepoint, exactly as
 *   its own transaction would have been; the rest of the request and the outer transaction go on.
 * - `withRequestDatabase` / `requestDatabase` make that client the request's ambient database
 *   (AsyncLocalStorage): the GraphQL context factory (server.ts) reads it, so authentication,
 *   services and Pothos' reads all use the open transaction. On PGlite (one connection) a query
 *   outside it would wait for it to end, and on PostgreSQL it would not see its writes.
 * - `afterCommit` defers work with effects outside the database (mail delivery) until the outer
 *   transaction has committed; outside such a transaction it runs the work at once.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { Tx } from "./context.js";

/**
 * Options of Prisma's interactive transactions: how long to wait for a connection, how long the transaction may stay
 * open (ms).
 */
export interface TransactionOptions {
  maxWait: number;
  timeout: number;
}

type AfterCommit = (base: PrismaClient) => Promise<unknown>;

interface Joined {
  /** the client the transaction was opened on (usable again after commit) */
  base: PrismaClient;
  /** work to run once the outer transaction has committed */
  afterCommit: AfterCommit[];
}

/** Joinable clients, mapped to what they were opened on. */
const joined = new WeakMap<object, Joined>();

let savepoints = 0;

/**
 * A client over transaction `tx` whose `$transaction` joins `tx`: `$transaction(fn)` runs
 * `fn(client)` inside `SAVEPOINT` / `RELEASE SAVEPOINT` (`ROLLBACK TO SAVEPOINT` when `fn`
 * throws, then the error is rethrown); `$transaction([...])` awaits the queries in order inside a
 * savepoint. Transaction options given to it are ignored (the outer transaction's apply). Joined
 * transactions of one request run one after the other, as services call them (a GraphQL
 * request's mutations run in order).
 */
function joinableClient(tx: Tx, state: Joined): PrismaClient {
  const savepoint = async <T>(fn: () => Promise<T>): Promise<T> => {
    const name = `request_tx_${++savepoints}`;
    await tx.$executeRawUnsafe(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      // when even this fails the transaction is unusable: the outer request fails and rolls back
      await tx.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
      await tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`).catch(() => undefined);
      throw e;
    }
    await tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`);
    return result;
  };
  const $transaction = (arg: unknown) => {
    if (Array.isArray(arg)) {
      return savepoint(async () => {
        const results: unknown[] = [];
        for (const query of arg) results.push(await query);
        return results;
      });
    }
    return savepoint(() => (arg as (client: PrismaClient) => Promise<unknown>)(client));
  };
  const client = new Proxy(tx as object, {
    get(target, prop) {
      if (prop === "$transaction") return $transaction;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as PrismaClient;
  joined.set(client, state);
  return client;
}

/** True when `db` is a client of an open request transaction (runInTransaction). */
export function isRequestTransaction(db: object): boolean {
  return joined.has(db);
}

/**
 * Runs `fn` with a joinable client over a new interactive transaction of `prisma`, commits, then
 * runs the work `afterCommit` queued (in order, each awaited; their errors are theirs to handle:
 * one that throws is logged by nobody and skipped). `fn` throwing rolls everything back and
 * rethrows; nothing queued runs then.
 */
export async function runInTransaction<T>(
  prisma: PrismaClient,
  options: TransactionOptions,
  fn: (db: PrismaClient) => Promise<T>,
): Promise<T> {
  const state: Joined = { base: prisma, afterCommit: [] };
  const result = await prisma.$transaction((tx) => fn(joinableClient(tx, state)), options);
  for (const work of state.afterCommit) await work(prisma).catch(() => undefined);
  return result;
}

/**
 * Runs `work` with a client usable outside any transaction: after the request transaction of
 * `db` has committed when `db` is one (never when it rolls back), else now with `db`. Resolves
 * once `work` has run, or at once when it was deferred.
 */
export async function afterCommit(db: PrismaClient, work: (db: PrismaClient) => Promise<unknown>): Promise<void> {
  const state = joined.get(db);
  if (state) state.afterCommit.push(work);
  else await work(db);
}

const ambient = new AsyncLocalStorage<PrismaClient>();

/** Runs `fn` with `db` as the ambient database of everything it calls (the request's transaction). */
export function withRequestDatabase<T>(db: PrismaClient, fn: () => T): T {
  return ambient.run(db, fn);
}

/** The ambient database set by `withRequestDatabase`, if any (the GraphQL context factory uses it). */
export function requestDatabase(): PrismaClient | undefined {
  return ambient.getStore();
}
