/**
 * Prints the REST surface's OpenAPI document to schema/openapi.json (committed; test/openapi.test.ts fails when stale).
 */
import { openApiDocument } from "../src/rest/openapi.js";

export const OPENAPI_PATH = new URL("../schema/openapi.json", import.meta.url);

/** The document as committed: two-space JSON with a final newline. */
export function printedOpenApi(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
