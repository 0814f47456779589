/**
 * Test databases: a migrated template per run, cloned per test file (PGlite dir copy or CREATE DATABASE ... TEMPLATE).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { DatabaseTarget } from "../../src/infra/driver-adapter.js";
import { createDatabase, type Database } from "../../src/infra/database.js";

export const TEST_DB = (process.env.TEST_DB ?? "pglite") as "pglite" | "postgres";
export const POSTGRES_URL = process.env.TEST_DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test";

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database cloned from the template prepared by global-setup.ts; `drop` removes it. */
export async function cloneTemplate(template: string): Promise<{ target: DatabaseTarget; drop: () => Promise<void> }> {
  const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  if (TEST_DB === "postgres") {
    const name = `billing_test_${suffix}`;
    await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    return {
      target: { kind: "postgres", url: withDatabase(POSTGRES_URL, name) },
      drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
    };
  }
  const dir = templateDataDir(template, `billing-test-${suffix}-`);
  return {
    target: { kind: "pglite", dir: path.join(dir, "pglite") },
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A new data directory for a child service on the embedded database (its BILLING_DATA_DIR, in a
 * temporary folder named `prefix`...) holding a copy of this run's migrated template (`inject("template")`,
 * global-setup.ts): the child applies no migration at its first start, 3-5 s less per test than an
 * empty directory. The caller removes it.
 */
export function templateDataDir(template: string, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.cpSync(template, path.join(dir, "pglite"), { recursive: true });
  return dir;
}

/**
 * A new empty database of this run's kind (no migration applied), for migration tests; `drop`
 * removes it. `label` names it (`billing_<label>_...` or a `billing-<label>-` temporary folder).
 * On PGlite a copy of the run's empty cluster (`inject("emptyTemplate")`, global-setup.ts): PGlite's
 * initdb runs once per run instead of once per empty database.
 */
export async function emptyTarget(label: string): Promise<{ target: DatabaseTarget; drop: () => Promise<void> }> {
  if (TEST_DB === "postgres") {
    const name = `billing_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE DATABASE "${name}"`);
    return {
      target: { kind: "postgres", url: withDatabase(POSTGRES_URL, name) },
      drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
    };
  }
  // imported here: global-setup.ts imports this module outside any test, where vitest's API must not load
  const { inject } = await import("vitest");
  const dir = templateDataDir(inject("emptyTemplate"), `billing-${label}-`);
  return {
    target: { kind: "pglite", dir: path.join(dir, "pglite") },
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Opens `target` in this process, runs `use` with it and closes it: between the runs of child
 * processes on one database (the embedded one is one process's at a time, and opening it takes
 * over the lock a killed child left: src/infra/data-dir-lock.ts).
 */
export async function inDatabase<T>(target: DatabaseTarget, use: (database: Database) => Promise<T>): Promise<T> {
  const database = await createDatabase(target);
  try {
    return await use(database);
  } finally {
    await database.close();
  }
}
