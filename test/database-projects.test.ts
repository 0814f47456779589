/**
 * The lists that send integration files to both databases or to PGlite only (test/database-projects.ts) name files
 * that exist: a file renamed without its entry would silently run on PostgreSQL only.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { EVERY_DATABASE, PGLITE_ONLY } from "./database-projects.js";

describe("the database projects' lists", () => {
  it("name existing integration files, each once and in one list", () => {
    const names = [...EVERY_DATABASE, ...PGLITE_ONLY];
    const missing = names.filter((name) => !fs.existsSync(`test/integration/${name}.test.ts`));
    expect(missing).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });
});
