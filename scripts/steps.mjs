/**
 * What the build scripts share (scripts/build.mjs, scripts/generate.mjs): a package's `bin` script found through
 * node_modules, and a step that runs a Node.js script to its end in the project root, stops the process on a failure
 * with the step's output, and reports its time.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { root } from "./build-state.mjs";

const require = createRequire(path.join(root, "package.json"));

/** Absolute path of the `bin` script `name` of package `pkg`. */
export function bin(pkg, name) {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(fs.readFileSync(manifest, "utf8"));
  return path.join(path.dirname(manifest), typeof bin === "string" ? bin : bin[name]);
}

/**
 * Runs `node ...args` in the project root; on a non-zero exit writes its output and `<prefix>: <label> failed` to
 * stderr and exits 1; otherwise writes `<prefix>: <label> <ms> ms` when `report`.
 */
export function step(prefix, label, args, report = true) {
  const started = performance.now();
  // prisma's generators (prisma-pothos-types) are found on PATH, as under `npm run`
  const PATH = [path.join(root, "node_modules", ".bin"), process.env.PATH].filter(Boolean).join(path.delimiter);
  const r = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, PATH, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
  });
  if (r.status !== 0) {
    const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    process.stderr.write(`${output}${prefix}: ${label} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
  if (report) process.stderr.write(`${prefix}: ${label} ${Math.round(performance.now() - started)} ms\n`);
}
