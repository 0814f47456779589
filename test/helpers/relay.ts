/**
 * Runs the real relay-compiler (the native binary of the relay-compiler package) over the Relay
 * fixtures in test/relay/src against the committed schema/schema.graphql, into a temporary
 * artifact directory, and loads the artifacts it wrote (CommonJS: `eagerEsModules: false`).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const RELAY_FIXTURES = path.join(root, "test/relay/src");
export const SCHEMA_FILE = path.join(root, "schema/schema.graphql");

export interface RelayCompilation {
  status: number | null;
  output: string;
  /** runs `relay-compiler --validate` on the same config: exit code 0 when the artifacts are current */
  validate(): { status: number | null; output: string };
  /** the temporary artifact directory */
  directory: string;
  /** names of the artifact files written, sorted */
  files: string[];
  /** the artifact of a fragment or operation by name (`CustomersListPaginationQuery`) */
  artifact<T = any>(name: string): T;
  remove(): void;
}

/** Compiles the fixtures with relay-compiler into a new temporary directory. */
export function compileRelay(): RelayCompilation {
  const binary: string | null = require("relay-compiler");
  if (!binary || !fs.existsSync(binary))
    throw new Error(`relay-compiler has no binary for ${process.platform}-${process.arch}`);
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "relay-artifacts-"));
  const artifacts = path.join(directory, "__generated__");
  fs.mkdirSync(artifacts); // relay-compiler needs an existing artifactDirectory
  const config = path.join(directory, "relay.config.json");
  fs.writeFileSync(
    config,
    JSON.stringify({
      src: RELAY_FIXTURES,
      schema: SCHEMA_FILE,
      language: "javascript",
      artifactDirectory: artifacts,
      eagerEsModules: false,
    }),
  );
  const relay = (args: string[]) => {
    const run = spawnSync(binary, [...args, config], { encoding: "utf8", timeout: 60_000 });
    // the binary colours its log lines
    return { status: run.status, output: `${run.stdout ?? ""}${run.stderr ?? ""}`.replace(/\u001b\[[0-9;]*m/g, "") };
  };
  const { status, output } = relay([]);
  return {
    status,
    output,
    validate: () => relay(["--validate"]),
    directory: artifacts,
    files: fs.readdirSync(artifacts).sort(),
    artifact: (name) => {
      const module = require(path.join(artifacts, `${name}.graphql.js`));
      return module.default ?? module;
    },
    remove: () => fs.rmSync(directory, { recursive: true, force: true }),
  };
}
