/**
 * Writes the REST adapter's standard operations (src/rest/standard.ts: derived by rule from the
 * declarations in src/rest/resources.ts and the committed schema/schema.graphql) to
 * src/graphql/generated/rest-operations.graphql, which graphql-codegen then types beside
 * src/rest/operations/*.graphql. Run by `npm run generate` and `npm run build`, before graphql-codegen.
 */
import fs from "node:fs";
import { buildSchema } from "graphql";
import { standardOperations } from "../src/rest/standard.js";

const read = (path: string) => fs.readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
const written = new Set(
  fs
    .readdirSync(new URL("../src/rest/operations/", import.meta.url))
    .flatMap((file) => [...read(`src/rest/operations/${file}`).matchAll(/^(?:query|mutation) (\w+)/gm)])
    .map((m) => m[1]),
);
const out = new URL("../src/graphql/generated/", import.meta.url);
fs.mkdirSync(out, { recursive: true });
const header = "# Generated from src/rest/resources.ts by src/rest/standard.ts (scripts/rest-operations.ts).\n";
const text = standardOperations(buildSchema(read("schema/schema.graphql")), written);
fs.writeFileSync(new URL("rest-operations.graphql", out), `${header}${text}\n`);
