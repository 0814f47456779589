/**
 * scripts/generated-code.mjs, which lets `npm run generate` (scripts/generate.mjs) skip the generators when their
 * inputs are unchanged: the hash follows contents and names, not file times, and leaves the generated folders out;
 * the stamp counts only with every output file there. On a made-up project tree in a temporary folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { generatedCodeIsCurrent, inputsHash, OUTPUTS, STAMP } from "../scripts/generated-code.mjs";

let root: string;
const write = (relative: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
  fs.writeFileSync(path.join(root, relative), text);
};

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "generated-code-"));
  write("src/rest/resources.ts", "export const resources = [];\n");
  write("prisma/schema.prisma", "model Invoice { id String @id }\n");
  write("schema/schema.graphql", "type Query { ok: Boolean }\n");
  write("package-lock.json", "{}\n");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe("the generated code's inputs hash", () => {
  it("changes with an input's contents or name, not with its time", () => {
    const before = inputsHash(root);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(root, "prisma/schema.prisma"), later, later);
    expect(inputsHash(root)).toBe(before);
    write("prisma/schema.prisma", "model Invoice { id String @id @default(cuid()) }\n");
    const changed = inputsHash(root);
    expect(changed).not.toBe(before);
    fs.renameSync(path.join(root, "src/rest/resources.ts"), path.join(root, "src/rest/resource.ts"));
    expect(inputsHash(root)).not.toBe(changed);
  });

  it("leaves the generated folders out, and sees a new file anywhere under src/", () => {
    const before = inputsHash(root);
    write("src/graphql/generated/operations.ts", "export {};\n");
    write("src/infra/prisma/generated/client.ts", "export {};\n");
    expect(inputsHash(root)).toBe(before);
    write("src/domain/new-rule.ts", "export const rule = 1;\n");
    expect(inputsHash(root)).not.toBe(before);
  });
});

describe("whether the generated code is current", () => {
  it("needs the stamp to hold the inputs' hash and every output file to be there", () => {
    expect(generatedCodeIsCurrent(root)).toBe(false); // no stamp
    for (const file of OUTPUTS) write(file, "generated\n");
    write(STAMP, `${inputsHash(root)}\n`);
    expect(generatedCodeIsCurrent(root)).toBe(true);
    write("schema/schema.graphql", "type Query { ok: Boolean, other: Int }\n");
    expect(generatedCodeIsCurrent(root)).toBe(false); // an input changed
    write(STAMP, `${inputsHash(root)}\n`);
    expect(generatedCodeIsCurrent(root)).toBe(true);
    fs.rmSync(path.join(root, OUTPUTS[3]));
    expect(generatedCodeIsCurrent(root)).toBe(false); // an output is gone
  });
});
