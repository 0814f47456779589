/**
 * Prisma client factory over the driver adapters of driver-adapter.ts (PGlite by default,
 * PostgreSQL when `DATABASE_URL` is set; docs/decisions.md "Operations"), and the migrations that
 * `npm start` and the CLI apply through the same driver before anything else runs.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import type { PGlite } from "@electric-sql/pglite";
import type pg from "pg";
import { PrismaClient } from "./prisma/generated/client.js";
import {
  databaseTarget,
  nameAsTextPool,
  openPGlite,
  pgliteAdapter,
  statementCountingAdapter,
  yieldingAdapter,
  type DatabaseTarget,
  type StatementListener,
} from "./driver-adapter.js";
import type { PostgresTarget } from "./database-target.js";
import { lockDataDir } from "./data-dir-lock.js";
import {
  directQueryOn,
  directTransactions,
  preparedStatementName,
  withJoinedReads,
  type DirectQuery,
} from "./sql/index.js";
import {
  applyMigrations,
  migrationStatus,
  type MigrationReport,
  type MigrationStatus,
  type SqlSession,
} from "./migrate.js";

export { databaseTarget, type DatabaseTarget } from "./driver-adapter.js";

/** Interactive transactions may queue behind row locks (numbering) or PGlite's single connection. */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 15_000 };

/** Connections of a process's pool when DATABASE_POOL_SIZE is unset (docs/scaling.md "Pool sizes"). */
export const DEFAULT_POOL_SIZE = 10;

/**
 * PostgreSQL pool options (`max`: DATABASE_POOL_SIZE, default DEFAULT_POOL_SIZE). A connection
 * attempt (or a wait for a free client of a full pool) fails after CONNECT_TIMEOUT_MS instead of
 * hanging on an unreachable server; TCP keep-alive finds dead sockets; pg-pool discards a client
 * whose connection errored, so the pool recovers by itself when the server is back. No
 * query_timeout: billing runs and reports may legitimately run long (the readiness probe bounds its
 * own query, server.ts).
 */
const POOL_OPTIONS = {
  max: DEFAULT_POOL_SIZE,
  connectionTimeoutMillis: 5_000,
  idleTimeoutMillis: 10_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
};

export interface DatabasePool {
  /** clients open (idle and in use) */
  total(): number;
  /** open clients not in use */
  idle(): number;
  /** requests queued for a client */
  waiting(): number;
}

export interface Database {
  /**
   * the Prisma client; createDatabase's is on the SQL path (`withJoinedReads`, a SqlPathClient): its
   * reads with relations are joined reads, one statement each, not Prisma's query engine (infra/sql/,
   * docs/architecture.md "The fast SQL path"). Typed as Prisma's own: any client works (a test's
   * unwrapped one), only more slowly
   */
  prisma: PrismaClient;
  target: DatabaseTarget;
  /**
   * Runs `fn` on one session of the app's own driver (a client of the pool, or the PGlite
   * instance). For migrations and other scripts that must run before the app serves requests: on
   * PGlite the session is the app's single connection.
   */
  session<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on a session inside one read-only REPEATABLE READ transaction, so everything it reads
   * is one snapshot, and rolls it back at the end (the copy to PostgreSQL, infra/database-copy.ts).
   * On PostgreSQL a client of the pool; on PGlite its one connection, held for `fn`'s whole run
   * (PGlite's own transaction: the app's other queries wait meanwhile), so it is safe beside a
   * running server's requests (the command line's `db copy` through the server, cli/serve.ts).
   */
  readSnapshot<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** the connection pool's counts (PostgreSQL only; PGlite is one in-process connection) */
  pool?: DatabasePool;
  /**
   * PostgreSQL only: sends one statement through the pool, outside any transaction, as pg's `{ name, text, values }`
   * (`name`: a named prepared statement), reported to `onStatement` like Prisma's. For stores that write their own
   * SQL: the rate limits' shared counts (infra/rate-limit.ts `StoreQuery`).
   */
  query?: (statement: {
    name?: string;
    text: string;
    values?: unknown[];
  }) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  /**
   * Listens to notifications on `channels` (`LISTEN`; a `pg_notify` delivers on its transaction's
   * commit, on PostgreSQL to every process, on PGlite inside this one): `onNotification` gets each
   * one's channel and payload. On PostgreSQL the listening connection is a client of its own, to
   * DATABASE_LISTEN_URL when set (a pooler in transaction mode cannot keep a LISTEN), made again (with
   * backoff) when it breaks; notifications sent meanwhile are lost: `onLost` is called when it breaks, and `onGap`
   * once it listens again, for the listener to catch up by reading the database. `close` stops listening.
   */
  listen(
    channels: readonly string[],
    onNotification: (channel: string, payload: string) => void,
    onGap?: () => void,
    onLost?: () => void,
  ): Promise<Listener>;
  /** releases the pool or closes the PGlite instance (and its data directory lock) */
  close(): Promise<void>;
}

/** One session over a PGlite instance (its single connection): what `Database.session` gives on PGlite. */
export function pgliteSession(pglite: PGlite): SqlSession {
  return {
    concurrent: false,
    exec: async (script) => void (await pglite.exec(script)),
    query: async <T>(sql: string, params?: unknown[]) => (await pglite.query<T>(sql, params)).rows,
  };
}

function pgSession(client: pg.PoolClient): SqlSession {
  return {
    concurrent: true,
    exec: async (script) => void (await client.query(script)),
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  };
}

/** A channel being listened to (Database.listen). */
export interface Listener {
  close(): Promise<void>;
}

/** Waits before listening again after PostgreSQL's listening connection broke (ms, doubling up to 30 s). */
const RELISTEN_MIN_MS = 250;
const RELISTEN_MAX_MS = 30_000;

/**
 * `LISTEN` each of `channels` on a connection of its own, made again whenever it breaks (Database.listen).
 */
async function listenOnPostgres(
  config: pg.ClientConfig,
  channels: readonly string[],
  onNotification: (channel: string, payload: string) => void,
  onGap?: () => void,
  onLost?: () => void,
): Promise<Listener> {
  const { default: pgModule } = await import("pg");
  let client: pg.Client | null = null;
  let closed = false;
  let delay = RELISTEN_MIN_MS;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (first: boolean): Promise<void> => {
    const c = new pgModule.Client({ ...config, keepAlive: true });
    c.on("notification", (n) => {
      if (channels.includes(n.channel)) onNotification(n.channel, n.payload ?? "");
    });
    const broken = () => {
      if (client !== c) return;
      client = null;
      c.end().catch(() => undefined);
      if (closed) return;
      onLost?.();
      schedule();
    };
    c.on("error", broken);
    c.on("end", broken);
    try {
      await c.connect();
      for (const channel of channels) await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    } catch (e) {
      c.end().catch(() => undefined);
      if (first) throw e;
      schedule();
      return;
    }
    if (closed) {
      await c.end().catch(() => undefined);
      return;
    }
    client = c;
    delay = RELISTEN_MIN_MS;
    if (!first) onGap?.();
  };
  const schedule = () => {
    retry = setTimeout(() => void connect(false), delay);
    retry.unref();
    delay = Math.min(delay * 2, RELISTEN_MAX_MS);
  };
  await connect(true);
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}

/** An embedded database: PGlite in the directory `dir`, or in memory without one. */
type PgliteTarget = Exclude<DatabaseTarget, PostgresTarget>;

/** Options of createDatabase. */
export interface DatabaseOptions {
  /**
   * called with every SQL statement the Prisma client sends, BEGIN/COMMIT included (driver-adapter.ts
   * statementCountingAdapter); tests count them
   */
  onStatement?: StatementListener;
}

/**
 * Creates the Prisma client for `target`. An embedded database on disk is locked for this process
 * first (data-dir-lock.ts): a second process gets DataDirInUseError at once, naming the directory
 * and the owner. Nothing is migrated here: see `migrate`.
 */
export async function createDatabase(
  target: DatabaseTarget = databaseTarget(),
  options: DatabaseOptions = {},
): Promise<Database> {
  return target.kind === "postgres" ? postgresDatabase(target, options) : pgliteDatabase(target, options);
}

/** `factory` reporting every statement to `options.onStatement` when it is set (statementCountingAdapter). */
function counted<F extends { connect: () => Promise<object> }>(factory: F, options: DatabaseOptions): F {
  return options.onStatement ? statementCountingAdapter(factory, options.onStatement) : factory;
}

/**
 * The Database of a PostgreSQL `target`: a pool (POOL_OPTIONS, `max` the target's pool size), the
 * Prisma client over it on the SQL path, sessions and snapshots on clients of the pool, LISTEN on a
 * connection of its own (listenOnPostgres).
 */
function postgresDatabase(target: PostgresTarget, options: DatabaseOptions): Database {
  const pool = nameAsTextPool(
    { connectionString: target.url, ...POOL_OPTIONS, max: target.poolSize ?? POOL_OPTIONS.max },
    { namedStatements: target.preparedStatements ?? true },
  );
  // the SQL path (infra/sql/, docs/architecture.md "The fast SQL path"): its statements outside
  // transactions go straight to the pool as named prepared statements, without Prisma's raw query
  // layer (docs/performance.md); in a directTransaction, to the transaction's connection
  const directOn = (queryable: pg.Pool | pg.PoolClient): DirectQuery => directQueryOn(queryable, options.onStatement);
  const prisma = new PrismaClient({
    // a query without a name (undefined) is sent unnamed: the type says string, pg takes either
    adapter: counted(
      yieldingAdapter(
        directTransactions(
          new PrismaPg(pool, { statementNameGenerator: preparedStatementName as (query: { sql: string }) => string }),
          directOn,
        ),
      ),
      options,
    ),
    transactionOptions: TRANSACTION_OPTIONS,
  });
  const session = async <T>(fn: (session: SqlSession) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      return await fn(pgSession(client));
    } finally {
      client.release();
    }
  };
  return {
    prisma: withJoinedReads(prisma, directOn(pool)),
    target,
    listen: (channels, onNotification, onGap, onLost) =>
      listenOnPostgres(
        { connectionString: target.listenUrl ?? target.url, connectionTimeoutMillis: 5_000 },
        channels,
        onNotification,
        onGap,
        onLost,
      ),
    pool: { total: () => pool.totalCount, idle: () => pool.idleCount, waiting: () => pool.waitingCount },
    query: async (statement) => {
      options.onStatement?.(statement.text, statement.values);
      const { rows, rowCount } = await pool.query<Record<string, unknown>>(statement);
      return { rows, rowCount };
    },
    session,
    readSnapshot: (fn) =>
      session(async (s) => {
        await s.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        try {
          return await fn(s);
        } finally {
          await s.exec("ROLLBACK").catch(() => undefined);
        }
      }),
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * The Database of an embedded `target`: its data directory locked for this process (when on disk),
 * then the PGlite instance opened (the lock released again when that fails) and the Prisma client
 * over its one connection. Throws DataDirInUseError (the lock) or PGlite's error on opening.
 */
async function pgliteDatabase(target: PgliteTarget, options: DatabaseOptions): Promise<Database> {
  const lock = target.dir ? lockDataDir(target.dir) : null;
  let pglite: PGlite;
  try {
    pglite = await openPGlite(target.dir);
  } catch (e) {
    lock?.release();
    throw e;
  }
  const prisma = new PrismaClient({
    adapter: counted(yieldingAdapter(pgliteAdapter(pglite)), options),
    transactionOptions: TRANSACTION_OPTIONS,
  });
  return {
    prisma: withJoinedReads(prisma),
    target,
    session: (fn) => fn(pgliteSession(pglite)),
    async listen(channels, onNotification) {
      const unlisten = await Promise.all(
        channels.map((channel) => pglite.listen(channel, (payload) => onNotification(channel, payload))),
      );
      return { close: async () => void (await Promise.all(unlisten.map((u) => u()))) };
    },
    readSnapshot: (fn) => pgliteSnapshot(pglite, fn),
    async close() {
      try {
        await prisma.$disconnect();
        await pglite.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** Database.readSnapshot on PGlite: `fn` in PGlite's own read-only REPEATABLE READ transaction, rolled back. */
function pgliteSnapshot<T>(pglite: PGlite, fn: (session: SqlSession) => Promise<T>): Promise<T> {
  return pglite.transaction(async (tx) => {
    // the first statement of PGlite's transaction (after its BEGIN), as SET TRANSACTION must be
    await tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const result = await fn({
      concurrent: false,
      exec: async (script) => void (await tx.exec(script)),
      query: async <T>(sql: string, params?: unknown[]) => (await tx.query<T>(sql, params)).rows,
    });
    await tx.rollback();
    return result;
  });
}

/** Applies pending migrations (infra/migrate.ts) on `database`; throws MigrationError when one fails. */
export function migrate(database: Database): Promise<MigrationReport> {
  return database.session((session) => applyMigrations(session));
}

/** Applied, pending, modified and failed migrations of `database`; changes nothing. */
export function migrationsOf(database: Database): Promise<MigrationStatus> {
  return database.session((session) => migrationStatus(session));
}

/** Opens `target`, applies its pending migrations and closes it (test templates, scripts). */
export async function migrateTarget(target: DatabaseTarget): Promise<MigrationReport> {
  const database = await createDatabase(target);
  try {
    return await migrate(database);
  } finally {
    await database.close();
  }
}
