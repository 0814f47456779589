/**
 * Database migrations, applied in process through the database connection the app itself uses
 * (the PGlite instance or a client of the PostgreSQL pool): no Prisma CLI child process, so a start
 * with nothing to migrate costs one small query.
 *
 * The migrations are the folders of `prisma/migrations/` (written by `prisma migrate dev`), applied
 * oldest first. Bookkeeping uses Prisma's own table `_prisma_migrations` with Prisma's columns and
 * checksum (SHA-256 of migration.sql), so `prisma migrate status` and `migrate deploy` agree with
 * what this module did and either can take over. Two differences from Prisma's `migrate deploy`,
 * both on the safe side:
 * - each migration runs in one transaction with its bookkeeping row: a migration that fails leaves
 *   nothing behind (no half-applied schema, no "failed migration" row to resolve by hand);
 * - on PostgreSQL, concurrent starts serialize on Prisma's advisory lock (key 72707369), held by
 *   each migration's transaction, so two instances never apply the same migration twice, and no
 *   lock outlives a transaction (safe through PgBouncer in transaction mode).
 */
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One database session: statements run in order on the same connection. */
export interface SqlSession {
  /** runs a script of one or more statements (simple query protocol), no parameters */
  exec(script: string): Promise<void>;
  /** runs one statement with `$1`-style parameters; returns its rows */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** true on PostgreSQL (advisory lock available); PGlite has a single connection */
  readonly concurrent: boolean;
}

/** A migration folder of prisma/migrations. */
export interface Migration {
  /** folder name, e.g. `20261122000000_init` */
  name: string;
  /** contents of its migration.sql */
  sql: string;
  /** hex SHA-256 of migration.sql, as Prisma computes it */
  checksum: string;
}

/** What `migrationStatus` finds. */
export interface MigrationStatus {
  /** applied migrations, oldest first */
  applied: string[];
  /** local migrations not applied yet, oldest first */
  pending: string[];
  /** applied migrations whose migration.sql changed since (a warning: the schema may differ) */
  modified: string[];
  /** rows Prisma left unfinished after a failed `migrate deploy` (must be resolved before migrating) */
  failed: string[];
  /** applied migrations that do not exist in this build (a database newer than the code) */
  unknown: string[];
}

/** Folder of the migrations: `prisma/migrations` of the project (two levels above src/infra or dist/infra). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));

/** Prisma's advisory lock key for migrations (schema-engine), shared so the CLI and the app exclude each other. */
const ADVISORY_LOCK_KEY = 72707369;

const BOOKKEEPING_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** Names of the migration folders in `dir`, oldest first. */
async function folderNames(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** The migrations in `dir` (default MIGRATIONS_DIR), oldest first. */
export async function localMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = await folderNames(dir);
  return Promise.all(
    names.map(async (name) => {
      const sql = await fs.readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

let names: Promise<string[]> | undefined;

/** Names of the migrations in prisma/migrations, oldest first (read once per process: /readyz asks often). */
export function migrationNames(): Promise<string[]> {
  names ??= folderNames(MIGRATIONS_DIR);
  return names;
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | string | null;
  rolled_back_at: Date | string | null;
}

function compare(local: Migration[], rows: AppliedRow[]): MigrationStatus {
  const live = rows.filter((r) => r.rolled_back_at === null);
  const finished = new Map(live.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r.checksum]));
  const localNames = new Set(local.map((m) => m.name));
  return {
    applied: local.filter((m) => finished.has(m.name)).map((m) => m.name),
    pending: local.filter((m) => !finished.has(m.name)).map((m) => m.name),
    modified: local.filter((m) => finished.has(m.name) && finished.get(m.name) !== m.checksum).map((m) => m.name),
    failed: live.filter((r) => r.finished_at === null).map((r) => r.migration_name),
    unknown: [...finished.keys()].filter((n) => !localNames.has(n)),
  };
}

async function appliedRows(session: SqlSession): Promise<AppliedRow[]> {
  const exists = await session.query<{ found: string | null }>(
    `SELECT to_regclass('"_prisma_migrations"')::text AS found`,
  );
  if (!exists[0]?.found) return [];
  return session.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );
}

/** Compares the database's applied migrations with the local ones; changes nothing. */
export async function migrationStatus(session: SqlSession, local?: Migration[]): Promise<MigrationStatus> {
  return compare(local ?? (await localMigrations()), await appliedRows(session));
}

/** Thrown when the database cannot be migrated: a failed Prisma migration to resolve, or a migration's SQL error. */
export class MigrationError extends Error {
  constructor(
    message: string,
    readonly migration?: string,
  ) {
    super(message);
    this.name = "MigrationError";
  }
}

/** What `applyMigrations` did. */
export interface MigrationReport {
  /** migrations applied now, oldest first (empty when the database was up to date) */
  applied: string[];
  /** applied earlier but changed since (logged by the caller as a warning) */
  modified: string[];
  /** milliseconds the check (and the migrations) took */
  ms: number;
}

/**
 * Applies the pending migrations, each in its own transaction together with its
 * `_prisma_migrations` row. Throws MigrationError, naming the migration and the database's message,
 * when one fails (that migration is rolled back; the ones before it stay applied) or when a failed
 * migration left by Prisma's CLI must be resolved first (`prisma migrate resolve`).
 *
 * On PostgreSQL each migration's transaction first takes Prisma's advisory lock as a transaction
 * lock (`pg_advisory_xact_lock`, released by its commit or rollback), then reads what is applied
 * again: a concurrent start waits there and finds the migration done. Nothing of the session
 * outlives a transaction, so this works through a pooler in transaction mode too (PgBouncer;
 * docs/scaling.md "Through PgBouncer"), where a session lock could stay held on a server connection.
 */
export async function applyMigrations(session: SqlSession, local?: Migration[]): Promise<MigrationReport> {
  const started = performance.now();
  const migrations = local ?? (await localMigrations());
  // fast path: nothing to do is one query (plus the table check), and no lock taken
  let status = compare(migrations, await appliedRows(session));
  if (status.pending.length === 0 && status.failed.length === 0) {
    return { applied: [], modified: status.modified, ms: performance.now() - started };
  }
  const applied: string[] = [];
  for (;;) {
    await session.exec("BEGIN");
    let migration: Migration | undefined;
    try {
      if (session.concurrent) await session.query(`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_KEY})`);
      await session.exec(BOOKKEEPING_TABLE);
      status = compare(migrations, await appliedRows(session)); // another instance may have migrated meanwhile
      if (status.failed.length) {
        throw new MigrationError(
          `migration ${status.failed[0]} failed earlier and was left unfinished; fix the database, then mark it ` +
            `with \`npx prisma migrate resolve --applied|--rolled-back ${status.failed[0]}\``,
          status.failed[0],
        );
      }
      migration = migrations.find((m) => status.pending.includes(m.name));
      if (!migration) {
        await session.exec("COMMIT");
        return { applied, modified: status.modified, ms: performance.now() - started };
      }
      await session.exec(migration.sql);
      await session.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, ` +
          `applied_steps_count) VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
        [randomUUID(), migration.checksum, migration.name],
      );
      await session.exec("COMMIT");
    } catch (e) {
      await session.exec("ROLLBACK").catch(() => undefined);
      if (e instanceof MigrationError || !migration) throw e;
      throw new MigrationError(
        `migration ${migration.name} failed and was rolled back: ${(e as Error).message}`,
        migration.name,
      );
    }
    applied.push(migration.name);
  }
}
