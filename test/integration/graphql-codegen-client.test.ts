/**
 * A frontend's typed GraphQL documents (docs/graphql.md "Typed documents for a frontend"): graphql-codegen's client
 * preset generates `gql/` for test/codegen-client/program.ts from the committed schema/schema.graphql; the program
 * compiles under `strict` with no non-null assertion (fields always present are non-null in the schema), and run
 * against the service it creates a customer and two invoices and reads them back typed.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { generate } from "@graphql-codegen/cli";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ROOT } from "../helpers/processes.js";
import { nonNullAssertions } from "../helpers/typescript.js";

let s: TestServer;
/** the program and its generated `gql/`, under node_modules/.cache so that packages resolve from the repository */
let dir: string;
beforeAll(async () => {
  s = await startTestServer();
  const cache = path.join(ROOT, "node_modules/.cache");
  fs.mkdirSync(cache, { recursive: true });
  dir = fs.mkdtempSync(path.join(cache, "codegen-client-"));
  fs.copyFileSync(path.join(ROOT, "test/codegen-client/program.ts"), path.join(dir, "program.ts"));
  // an ES module, as a frontend's code is
  fs.writeFileSync(path.join(dir, "package.json"), '{"type": "module"}\n');
  await generate(
    {
      schema: path.join(ROOT, "schema/schema.graphql"),
      documents: [path.join(dir, "program.ts")],
      generates: {
        [`${dir}/gql/`]: {
          preset: "client",
          config: {
            scalars: { Decimal: "string", Date: "string", DateTime: "string", JSONObject: "Record<string, unknown>" },
            enumsAsTypes: true,
            useTypeImports: true,
          },
          presetConfig: { fragmentMasking: false },
        },
      },
      // imports with their `.js` extension, as NodeNext resolution (and browsers) want
      emitLegacyCommonJSImports: false,
      silent: true,
    },
    true,
  );
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("typed documents of graphql-codegen's client preset", () => {
  it("compile under strict with no non-null assertion", async () => {
    expect(nonNullAssertions(path.join(dir, "program.ts"))).toEqual([]);
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: ["node"],
    };
    const program = ts.createProgram([path.join(dir, "program.ts")], options);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);
  });

  it("run against the service", async () => {
    const run = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), path.join(dir, "program.ts")],
      { encoding: "utf8", env: { ...process.env, BILLING_URL: s.url, BILLING_API_KEY: s.keys.acme } },
    );
    expect(run.stderr).toBe("");
    // 1000 + 19 % IVA = 1190; the list is newest first
    expect(run.stdout.split("\n").filter(Boolean)).toEqual([
      "created draft 1190",
      "created draft 2380",
      "2 invoices, more: false; Cliente Frontend SpA: 2380 (1), Cliente Frontend SpA: 1190 (1)",
    ]);
  });
});
