/**
 * Prepares the databases of a test run: on PostgreSQL a migrated template database; on PGlite an empty cluster
 * (PGlite's initdb, once per run: `emptyTemplate`, copied by databases.ts emptyTarget) and a migrated copy of it
 * (`template`, the in-process migrations `npm start` applies).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { migrateTarget } from "../../src/infra/database.js";
import { openPGlite } from "../../src/infra/driver-adapter.js";
import { ensureBuilt } from "./build.js";
import { adminQuery, POSTGRES_URL, withDatabase } from "./databases.js";

declare module "vitest" {
  export interface ProvidedContext {
    template: string;
    /** PGlite only: an empty cluster's data directory (no migration applied) */
    emptyTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  // test/integration/runtime.test.ts runs the built service (npm start, dist/cli.js)
  await ensureBuilt();
  const kind = project.config.env?.TEST_DB ?? "pglite";
  if (kind === "postgres") {
    const name = `billing_template_${process.pid}`;
    await adminQuery(`DROP DATABASE IF EXISTS "${name}"`);
    await adminQuery(`CREATE DATABASE "${name}"`);
    await migrateTarget({ kind: "postgres", url: withDatabase(POSTGRES_URL, name) });
    project.provide("template", name);
    project.provide("emptyTemplate", "");
    return async () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-template-"));
  // PGlite's initdb, the CPU of about six starts of an existing directory (7-8 s against 1 s on the development
  // machine), runs once here: the migration tests' empty databases are copies of this cluster
  const empty = path.join(dir, "empty", "pglite");
  await (await openPGlite(empty)).close();
  // Every copy (each integration file's database, each child service's data directory) starts with 16 MB of shared
  // buffers instead of PostgreSQL's 128 MB: PGlite sets the buffer pool up in its WebAssembly memory at every start,
  // half of a start's CPU (0.5-0.6 s of 1.0-1.3 s, measured on the development machine); a test database of a few
  // megabytes fits in 16 MB. Only the tests' databases: the service keeps PostgreSQL's default.
  fs.appendFileSync(
    path.join(empty, "postgresql.conf"),
    "\n# the tests' template (test/helpers/global-setup.ts): a smaller buffer pool, a faster start\n" +
      "shared_buffers = 16MB\n",
  );
  const migrated = path.join(dir, "migrated", "pglite");
  fs.cpSync(empty, migrated, { recursive: true });
  await migrateTarget({ kind: "pglite", dir: migrated });
  project.provide("template", migrated);
  project.provide("emptyTemplate", empty);
  return async () => fs.rmSync(dir, { recursive: true, force: true });
}
