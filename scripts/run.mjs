#!/usr/bin/env node
/**
 * `npm start`, `npm run cli`, `npm run demo`, `npm run quickstart`: runs dist/<entry>.js (main, cli,
 * demo or quickstart) in this same process, so signals sent to npm reach the service directly (npm
 * forwards them to this process; no shell, tsx or second node in between). When dist/ is missing or
 * older than the sources (a fresh clone, a pull), it runs the build (scripts/build.mjs, `npm run
 * build`) first; its progress goes to stderr as JSON lines. In an installation without sources or
 * without the dev dependencies (a production install over a built dist/), dist/ is used as it is.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { buildState, root, runBuild } from "./build-state.mjs";

const entry = process.argv[2];
if (!["main", "cli", "demo", "quickstart"].includes(entry)) {
  process.stderr.write("usage: node scripts/run.mjs main|cli|demo|quickstart [arguments]\n");
  process.exit(2);
}
function log(level, msg, fields = {}) {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
}

const state = buildState();
if (state === "missing-sources") {
  log(60, "dist/ is missing and there are no sources to build it from");
  process.exit(1);
}
if (state !== "fresh") {
  // a dev dependency only the build uses (typescript itself is also installed by prisma in production)
  const canBuild = fs.existsSync(path.join(root, "node_modules", "@graphql-codegen", "cli"));
  if (!canBuild && state === "missing") {
    log(60, "dist/ is missing: run `npm run build` (it needs the dev dependencies: npm install)");
    process.exit(1);
  }
  if (canBuild) {
    log(
      30,
      state === "missing" ? "building dist/ (first run)" : "building dist/ (sources changed since the last build)",
    );
    const started = performance.now();
    const built = runBuild();
    if (!built.ok) {
      log(60, "build failed", { output: built.output });
      process.exit(1);
    }
    log(30, "built dist/", { ms: Math.round(performance.now() - started) });
  } else log(40, "dist/ is older than the sources and the dev dependencies are not installed: running it as it is");
}
process.argv.splice(2, 1);
await import(pathToFileURL(path.join(root, "dist", `${entry}.js`)).href);
