/**
 * Which database a process works on, from its environment: `DATABASE_URL` (PostgreSQL) or the
 * embedded database under `BILLING_DATA_DIR` (default `./data`). Only Node's own modules, so the
 * command line can decide where a command runs (cli/run.ts: itself, or through the running
 * server's control socket) before any database driver loads.
 */
import path from "node:path";

export type DatabaseTarget =
  | PostgresTarget
  /** `dir` undefined = in-memory */
  | { kind: "pglite"; dir?: string };

/** A PostgreSQL database and how this process connects to it (docs/scaling.md). */
export interface PostgresTarget {
  kind: "postgres";
  /** DATABASE_URL: every query and transaction (PostgreSQL itself, or a pooler such as PgBouncer) */
  url: string;
  /**
   * DATABASE_LISTEN_URL: the one connection that LISTENs for notifications (committed events, webhook messages);
   * default `url`. A pooler in transaction mode cannot keep a LISTEN: this then names PostgreSQL itself.
   */
  listenUrl?: string;
  /** DATABASE_POOL_SIZE: connections of this process's pool (default 10), the listening one not counted */
  poolSize?: number;
  /**
   * DATABASE_PREPARED_STATEMENTS (default true): send the frequent statements as named prepared statements
   * (infra/sql/: the joined reads, prepared-sql.ts); false sends every statement unnamed, as a pooler in
   * transaction mode without prepared statement support (PgBouncer before 1.21) needs
   */
  preparedStatements?: boolean;
}

/**
 * The database selected by `DATABASE_URL` / `BILLING_DATA_DIR`, with DATABASE_LISTEN_URL, DATABASE_POOL_SIZE and
 * DATABASE_PREPARED_STATEMENTS for PostgreSQL (their form is checked by infra/config.ts loadConfig).
 */
export function databaseTarget(env: NodeJS.ProcessEnv = process.env): DatabaseTarget {
  if (env.DATABASE_URL) {
    const target: PostgresTarget = { kind: "postgres", url: env.DATABASE_URL };
    if (env.DATABASE_LISTEN_URL) target.listenUrl = env.DATABASE_LISTEN_URL;
    if (env.DATABASE_POOL_SIZE) target.poolSize = Number(env.DATABASE_POOL_SIZE);
    if (env.DATABASE_PREPARED_STATEMENTS === "false" || env.DATABASE_PREPARED_STATEMENTS === "0")
      target.preparedStatements = false;
    return target;
  }
  return { kind: "pglite", dir: path.join(path.resolve(env.BILLING_DATA_DIR || "data"), "pglite") };
}

/**
 * The data directory (BILLING_DATA_DIR, absolute) of an embedded database on disk: the parent of its
 * `pglite` directory, which also holds its lock, its certificate key file and the server's control
 * socket. Null for PostgreSQL and an in-memory database.
 */
export function dataDirOf(target: DatabaseTarget): string | null {
  return target.kind === "pglite" && target.dir ? path.dirname(target.dir) : null;
}

/**
 * The database in words for a person, never with a password: `the embedded database in /srv/billing/data`,
 * `the in-memory embedded database`, or `PostgreSQL database billing on db.internal:5432 as billing`
 * (host, port, database and user from the URL; `PostgreSQL (DATABASE_URL)` when it cannot be read).
 */
export function describeDatabase(target: DatabaseTarget): string {
  if (target.kind === "pglite") {
    const dir = dataDirOf(target);
    return dir ? `the embedded database in ${dir}` : "the in-memory embedded database";
  }
  try {
    const url = new URL(target.url);
    const name = decodeURIComponent(url.pathname.replace(/^\//, "")) || "(default)";
    const user = url.username ? ` as ${decodeURIComponent(url.username)}` : "";
    return `PostgreSQL database ${name} on ${url.hostname}:${url.port || "5432"}${user}`;
  } catch {
    return "PostgreSQL (DATABASE_URL)";
  }
}
