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
  project.provide("template", path.join(dir, "pglite"));
  return async () => fs.rmSync(dir, { recursive: true, force: true });
}
