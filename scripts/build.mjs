#!/usr/bin/env node
/**
 * `npm run build`: the generated code (scripts/generate.mjs, forced: Prisma client and Pothos types from
 * prisma/schema.prisma, the REST adapter's standard operations by rule (scripts/rest-operations.ts), typed GraphQL
 * operations from them and src/rest/operations/*.graphql), the TypeScript client's types from schema/openapi.json
 * (scripts/print-client.ts), then the TypeScript compiler
 * (type check and emit) from src/ to plain JavaScript in dist/, then the two frontends (web/: the customer portal
 * and the dashboard, Preact) type-checked and bundled by Vite into dist/portal and dist/dashboard. Needs the dev
 * dependencies.
 * dist/build-info.json, written last, marks a complete build (scripts/run.mjs compares its time
 * with the sources').
 *
 * `--generate-only` stops after the generated code; `--skip-generate` starts after it (the generated code must be
 * current), and with `--no-type-check` emits src/ without checking its types (tsc --noCheck: 22 s -> 7 s; with
 * isolatedModules the JavaScript is the same). CI (.ci/run) runs the first half, then the second without its type
 * check beside `tsc -p .`, which checks src/ with everything else.
 */
import fs from "node:fs";
import path from "node:path";
import { root, stamp } from "./build-state.mjs";
import { bin, step as runStep } from "./steps.mjs";

const step = (label, args) => runStep("build", label, args);

const options = process.argv.slice(2);
const known = ["--generate-only", "--skip-generate", "--no-type-check"];
if (
  options.some((o) => !known.includes(o)) ||
  (options.includes("--generate-only") && options.length > 1) ||
  (options.includes("--no-type-check") && !options.includes("--skip-generate"))
) {
  process.stderr.write("usage: node scripts/build.mjs [--generate-only | --skip-generate [--no-type-check]]\n");
  process.exit(2);
}

if (!options.includes("--skip-generate")) {
  // the Prisma client, the REST adapter's standard operations and their typed documents (scripts/generate.mjs),
  // regenerated whatever their inputs' hash says
  step("generate", ["scripts/generate.mjs", "--force"]);
  // the TypeScript client's types from the committed OpenAPI document (clients/typescript, docs/clients.md)
  step("client types", [bin("tsx", "tsx"), "scripts/print-client.ts"]);
  if (options.includes("--generate-only")) process.exit(0);
}
fs.rmSync(path.join(root, "dist"), { recursive: true, force: true });
// --no-type-check: emit only (isolatedModules: the same JavaScript), for a caller that type-checks src/ itself
// (.ci/run's `tsc -p .`, beside this)
step("tsc", [
  bin("typescript", "tsc"),
  "-p",
  "tsconfig.build.json",
  ...(options.includes("--no-type-check") ? ["--noCheck"] : []),
]);
// the frontends (web/): the customer portal (docs/customer-portal.md) and the dashboard (docs/dashboard.md), with
// what they share (web/shared), type-checked, then each bundled by Vite into dist/portal and dist/dashboard
step("tsc web", [bin("typescript", "tsc"), "-p", "web"]);
step("vite portal", [bin("vite", "vite"), "build", "--config", "web/portal/vite.config.mjs"]);
step("vite dashboard", [bin("vite", "vite"), "build", "--config", "web/dashboard/vite.config.mjs"]);
const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
fs.writeFileSync(stamp, `${JSON.stringify({ version, builtAt: new Date().toISOString(), node: process.version })}\n`);
