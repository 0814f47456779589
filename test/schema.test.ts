import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { printedSchema, SCHEMA_PATH } from "../scripts/print-schema.js";

describe("schema/schema.graphql", () => {
  it("is the printed schema of the code (run `npm run schema:print` after changing types)", () => {
    expect(fs.readFileSync(SCHEMA_PATH, "utf8")).toBe(printedSchema());
  });
});
