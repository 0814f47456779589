/** Migrates one template database per test run (the in-process migrations `npm start` applies). */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { migrateTarget } from "../../src/infra/database.js";
import { ensureBuilt } from "./build.js";
import { adminQuery, POSTGRES_URL, withDatabase } from "./databases.js";

declare module "vitest" {
  export interface ProvidedContext {
    template: string;
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
    return async () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-template-"));
  await migrateTarget({ kind: "pglite", dir: path.join(dir, "pglite") });
  // Every copy of the template (each integration file's database, each child service's data directory) starts with
  // 16 MB of shared buffers instead of PostgreSQL's 128 MB: PGlite sets the buffer pool up in its WebAssembly memory
  // at every start, half of a start's CPU (0.5-0.6 s of 1.0-1.3 s, measured on the development machine); a test
  // database of a few megabytes fits in 16 MB. Only the tests' databases: the service keeps PostgreSQL's default.
  fs.appendFileSync(
    path.join(dir, "pglite", "postgresql.conf"),
    "\n# the tests' template (test/helpers/global-setup.ts): a smaller buffer pool, a faster start\n" +
      "shared_buffers = 16MB\n",
  );
  project.provide("template", path.join(dir, "pglite"));
  return async () => fs.rmSync(dir, { recursive: true, force: true });
}
