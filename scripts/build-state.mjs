/**
 * Whether dist/ is up to date with the sources: `fresh`, `stale` (a source is newer than
 * dist/build-info.json, which the build writes last), `missing` (no complete build), or
 * `missing-sources` (neither sources nor a build), and `runBuild` to build. Used by scripts/run.mjs
 * (npm start, cli, demo) and by the test setup. `buildState` reads file times only (a few
 * milliseconds).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));
export const stamp = path.join(root, "dist", "build-info.json");
/** Generated into src/ by the build itself: not sources. */
const GENERATED = [
  path.join(root, "src", "infra", "prisma", "generated"),
  path.join(root, "src", "graphql", "generated"),
];
const INPUTS = [
  "src",
  "web",
  "prisma/schema.prisma",
  "schema/schema.graphql",
  "codegen.ts",
  "scripts/rest-operations.ts",
  "tsconfig.json",
  "tsconfig.build.json",
  "package-lock.json",
];

/** Newest modification time (ms) under `file` (directories included: a deleted file changes its folder's time). */
function newest(file) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  if (GENERATED.includes(file)) return 0;
  let max = stat.mtimeMs;
  for (const name of fs.readdirSync(file)) max = Math.max(max, newest(path.join(file, name)));
  return max;
}

/** @returns {"fresh" | "stale" | "missing" | "missing-sources"} */
export function buildState() {
  const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
  if (!fs.existsSync(path.join(root, "src"))) return built ? "fresh" : "missing-sources";
  if (!built) return "missing";
  const changed = Math.max(...INPUTS.map((f) => newest(path.join(root, f))));
  return changed > built ? "stale" : "fresh";
}

/**
 * Runs the build (scripts/build.mjs, what `npm run build` runs) to completion.
 * @returns {{ ok: boolean, output: string }} whether it succeeded, and what it printed
 */
export function runBuild() {
  const r = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs")], { cwd: root, encoding: "utf8" });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}
