#!/usr/bin/env node
/**
 * `npm run generate` (run by `npm test`, the type check and the benchmarks; `npm run build` runs it with `--force`):
 * the generated code, from
 * 1. `prisma generate`: the Prisma client and Pothos' Prisma types (prisma/schema.prisma) into
 *    src/infra/prisma/generated;
 * 2. scripts/rest-operations.ts: the REST adapter's standard operations, derived by rule from src/rest and the
 *    committed schema/schema.graphql, into src/graphql/generated/rest-operations.graphql;
 * 3. graphql-codegen (codegen.ts): their typed documents, with src/rest/operations/*.graphql, into
 *    src/graphql/generated/operations.ts.
 * The three take about 9 s and give the same files for the same inputs, so a run whose inputs (everything under src/
 * but the generated folders, prisma/schema.prisma, schema/schema.graphql, the scripts and configurations involved
 * and package-lock.json, which fixes the generators' versions: scripts/generated-code.mjs) hash as they did at the
 * last complete run, with its files still there, writes nothing. `--force` generates whatever the hash says;
 * `--verbose` prints each step's time, or that nothing was needed.
 */
import fs from "node:fs";
import path from "node:path";
import { root } from "./build-state.mjs";
import { generatedCodeIsCurrent, inputsHash, STAMP } from "./generated-code.mjs";
import { bin, step as runStep } from "./steps.mjs";

const step = (label, args) => runStep("generate", label, args, verbose);

const options = process.argv.slice(2);
const unknown = options.filter((o) => o !== "--force" && o !== "--verbose");
if (unknown.length > 0) {
  process.stderr.write("usage: node scripts/generate.mjs [--force] [--verbose]\n");
  process.exit(2);
}
const verbose = options.includes("--verbose");
const hash = inputsHash(root);
if (!options.includes("--force") && generatedCodeIsCurrent(root, hash)) {
  if (verbose) process.stderr.write("generate: the generated code is current (its inputs are unchanged)\n");
  process.exit(0);
}
fs.rmSync(path.join(root, STAMP), { force: true });
step("prisma generate", [bin("prisma", "prisma"), "generate", "--no-hints"]);
step("rest operations", [bin("tsx", "tsx"), "scripts/rest-operations.ts"]);
step("graphql-codegen", [bin("@graphql-codegen/cli", "graphql-codegen"), "--config", "codegen.ts"]);
fs.writeFileSync(path.join(root, STAMP), `${hash}\n`);
