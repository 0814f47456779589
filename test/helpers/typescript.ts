/**
 * What the typed-client tests check of a program's source (test/integration/typescript-client.test.ts,
 * graphql-codegen-client.test.ts): that it reads answers without non-null assertions.
 */
import fs from "node:fs";
import ts from "typescript";

/** The non-null assertions (`x!`) of a TypeScript file, as `line:column`. */
export function nonNullAssertions(file: string): string[] {
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
