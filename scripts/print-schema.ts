/** Prints the GraphQL schema to schema/schema.graphql (committed; test/schema.test.ts fails when stale). */
import fs from "node:fs";
import { printSchema, lexicographicSortSchema } from "graphql";
import { schema } from "../src/graphql/schema.js";

export const SCHEMA_PATH = new URL("../schema/schema.graphql", import.meta.url);

export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  fs.writeFileSync(SCHEMA_PATH, printedSchema());
  console.log("wrote schema/schema.graphql");
}
