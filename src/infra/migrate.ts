/**
 * Applies pending migrations with `prisma migrate deploy` (the Prisma CLI, JS schema engine,
 * configured by prisma.config.ts) against the database `target` selects. Used by `npm start`
 * (prestart), the CLI and the test setup.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { DatabaseTarget } from "./driver-adapter.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Environment for the Prisma CLI that selects `target` in prisma.config.ts. */
export function targetEnv(target: DatabaseTarget): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  if (target.kind === "postgres") env.DATABASE_URL = target.url;
  else if (target.dir) env.BILLING_DATA_DIR = path.dirname(target.dir);
  else throw new Error("an in-memory PGlite database cannot be migrated by the Prisma CLI");
  return env;
}

/** Runs `prisma migrate deploy`; rejects with the CLI's output when it fails. */
export async function migrateDeploy(target: DatabaseTarget): Promise<string> {
  const prismaBin = path.join(projectRoot, "node_modules", "prisma", "build", "index.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [prismaBin, "migrate", "deploy"], {
      cwd: projectRoot,
      env: { ...targetEnv(target), PRISMA_HIDE_UPDATE_MESSAGE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`prisma migrate deploy failed (exit ${code}):\n${output}`));
    });
  });
}

/** Names of the migrations in prisma/migrations, oldest first. */
export async function migrationNames(): Promise<string[]> {
  const fs = await import("node:fs/promises");
  const dir = path.join(projectRoot, "prisma", "migrations");
  const entries = await fs.readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}
