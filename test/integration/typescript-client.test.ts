/**
 * The TypeScript client (clients/typescript, docs/clients.md): its quickstart program compiles under `strict` with
 * no non-null assertion (the OpenAPI document says what is always there), and run against the service it creates a
 * customer and three invoices, finalizes them, lists them a page at a time, and gets a 400 with its field errors.
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ROOT } from "../helpers/processes.js";

const CLIENT = path.join(ROOT, "clients/typescript");
const QUICKSTART = path.join(CLIENT, "examples/quickstart.ts");

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

/** The non-null assertions (`x!`) of a TypeScript file, as `line:column`. */
function nonNullAssertions(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isNonNullExpression(node)) {
      const { line, character } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${line + 1}:${character + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the TypeScript client", () => {
  it("compiles its quickstart under strict, without a non-null assertion", () => {
    expect(nonNullAssertions(QUICKSTART)).toEqual([]);
    expect(nonNullAssertions(path.join(CLIENT, "src/index.ts"))).toEqual([]);
    const tsc = spawnSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", CLIENT], {
      encoding: "utf8",
    });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
  });

  it("runs its quickstart against the service", async () => {
    // not spawnSync: the service answers in this process, so its event loop must keep running
    const run = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), QUICKSTART],
      {
        encoding: "utf8",
        env: { ...process.env, BILLING_URL: s.url, BILLING_API_KEY: s.keys.acme },
      },
    );
    expect(run.stderr).toBe("");
    // 2 x 1000 + 19 % IVA = 2380, and so on; listed newest first, two per page
    expect(run.stdout.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^invoice \d+: 2380 finalized$/),
      expect.stringMatching(/^invoice \d+: 4760 finalized$/),
      expect.stringMatching(/^invoice \d+: 7140 finalized$/),
      "listed: 7140, 4760, 2380",
      "refused: 400 validation_error lines.0.quantity",
    ]);
  });
});
