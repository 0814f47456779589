/**
 * Which database a process works on, from its environment: `DATABASE_URL` (PostgreSQL) or the
 * embedded database under `BILLING_DATA_DIR` (default `./data`). Only Node's own modules, so the
 * command line can decide where a command runs (cli/run.ts: itself, or through the running
 * server's control socket) before any database driver loads.
 */
import path from "node:path";

export type DatabaseTarget =
  | { kind: "postgres"; url: string }
  /** `dir` undefined = in-memory */
  | { kind: "pglite"; dir?: string };

/** The database selected by `DATABASE_URL` / `BILLING_DATA_DIR`. */
export function databaseTarget(env: NodeJS.ProcessEnv = process.env): DatabaseTarget {
  if (env.DATABASE_URL) return { kind: "postgres", url: env.DATABASE_URL };
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
