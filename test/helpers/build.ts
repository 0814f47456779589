/**
 * The tests that run the service as a user would (`npm start`, `node dist/cli.js`) need a current
 * dist/. `ensureBuilt` builds it once when it is missing or older than the sources (CI builds
 * before the tests, so there it only checks); concurrent callers (both database projects) wait for
 * one build, serialized by an exclusive lock directory.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildState, root } from "../../scripts/build-state.mjs";

export const DIST = path.join(root, "dist");

export async function ensureBuilt(): Promise<void> {
  if (buildState() === "fresh") return;
  const lock = path.join(root, ".build-lock");
  for (let waited = 0; ; waited += 200) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (waited > 300_000) throw new Error(`${lock} is held for more than 5 minutes; remove it if no build runs`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (buildState() === "fresh") return;
    const r = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs")], { cwd: root, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}${r.stderr}`);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
