/**
 * Prints the GraphQL schema to schema/schema.graphql and the REST OpenAPI document to
 * schema/openapi.json (both committed; test/schema.test.ts and test/openapi.test.ts fail when stale).
 */
import fs from "node:fs";
import { printSchema, lexicographicSortSchema } from "graphql";
import { schema } from "../src/graphql/schema.js";
import { OPENAPI_PATH, printedOpenApi } from "./print-openapi.js";

export const SCHEMA_PATH = new URL("../schema/schema.graphql", import.meta.url);

/**
 * The printed SDL, with an explicit `schema { query mutation subscription }` block first. graphql-js
 * leaves the block out when the roots have the common names, and an SDL reader without it takes the
 * billing type `Subscription` for the subscription root, which is `SubscriptionRoot`
 * (docs/graphql.md "Ids and the schema's roots").
 */
export function printedSchema(): string {
  const sorted = lexicographicSortSchema(schema);
  const roots = [`  query: ${sorted.getQueryType()!.name}`];
  const mutation = sorted.getMutationType();
  if (mutation) roots.push(`  mutation: ${mutation.name}`);
  const subscription = sorted.getSubscriptionType();
  if (subscription) roots.push(`  subscription: ${subscription.name}`);
  const printed = printSchema(sorted);
  // graphql-js prints the block itself when a root has an uncommon name: keep a single one
  const body = printed.startsWith("schema {") ? printed.slice(printed.indexOf("}\n\n") + 3) : printed;
  return `schema {\n${roots.join("\n")}\n}\n\n${body}\n`;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  fs.writeFileSync(SCHEMA_PATH, printedSchema());
  fs.writeFileSync(OPENAPI_PATH, printedOpenApi());
  console.log("wrote schema/schema.graphql and schema/openapi.json");
}
