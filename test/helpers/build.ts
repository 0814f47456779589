/**
 * The tests that run the service as a user would (`npm start`, `node dist/cli.js`) need a current
 * dist/. `ensureBuilt` builds it once when it is missing or older than the sources (CI builds
 * before the tests, so there it only checks); concurrent callers (both database projects) wait for
 * one build, serialized by an exclusive lock directory.
 */
import fs from "node:fs";
import path from "node:path";
import { buildState, root, runBuild } from "../../scripts/build-state.mjs";

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
    const built = runBuild();
    if (!built.ok) throw new Error(`npm run build failed:\n${built.output}`);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
