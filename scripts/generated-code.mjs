/**
 * Whether the generated code (scripts/generate.mjs) is current: the SHA-256 of its inputs, and the stamp its last
 * complete run wrote. Paths are relative to the project root given to each function.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** The generated folders: outputs, never inputs. */
export const GENERATED = ["src/infra/prisma/generated", "src/graphql/generated"];
/** Written last by a complete run: the inputs' hash (hex) and a newline. */
export const STAMP = "src/graphql/generated/.inputs.sha256";
/** What the generators read: folders are walked, missing entries are skipped. */
export const INPUTS = [
  "src",
  "prisma/schema.prisma",
  "prisma.config.ts",
  "schema/schema.graphql",
  "codegen.ts",
  "scripts/rest-operations.ts",
  "scripts/generate.mjs",
  "scripts/generated-code.mjs",
  "scripts/steps.mjs",
  "package-lock.json",
];
/** Files every run writes: without them the stamp alone does not count. */
export const OUTPUTS = [
  "src/infra/prisma/generated/client.ts",
  "src/infra/prisma/generated/pothos-types.ts",
  "src/graphql/generated/rest-operations.graphql",
  "src/graphql/generated/operations.ts",
];

/**
 * SHA-256 (hex) over the inputs under `root`: each file's relative path (with `/`) and contents, in path order, the
 * generated folders left out. File times do not count, contents and names do.
 */
export function inputsHash(root) {
  const hash = createHash("sha256");
  const visit = (relative) => {
    if (GENERATED.includes(relative)) return;
    const absolute = path.join(root, ...relative.split("/"));
    const stat = fs.statSync(absolute, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(absolute).sort()) visit(`${relative}/${name}`);
      return;
    }
    hash.update(`${relative}\0`);
    hash.update(fs.readFileSync(absolute));
    hash.update("\0");
  };
  for (const input of INPUTS) visit(input);
  return hash.digest("hex");
}

/** Whether `root`'s stamp holds `hash` (default: the inputs' hash now) and every output file is there. */
export function generatedCodeIsCurrent(root, hash = inputsHash(root)) {
  const stamp = path.join(root, STAMP);
  return (
    fs.existsSync(stamp) &&
    fs.readFileSync(stamp, "utf8").trim() === hash &&
    OUTPUTS.every((file) => fs.existsSync(path.join(root, file)))
  );
}
