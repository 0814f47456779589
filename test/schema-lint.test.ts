/**
 * The schema lint (eslint.config.mjs, @graphql-eslint; the rules and why in docs/graphql.md
 * "Schema lint") over the committed schema/schema.graphql: zero problems. `npm run lint:schema`
 * runs the same from the command line.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint, type Linter } from "eslint";
import { describe, expect, it } from "vitest";
import { buildSchema, isInterfaceType, isNonNullType, isObjectType } from "graphql";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DESCRIPTION_RULE = "@graphql-eslint/require-description";

const show = (m: Linter.LintMessage) =>
  `schema/schema.graphql:${m.line}:${m.column} ${m.ruleId ?? "(parse)"}: ${m.message}`;

describe("schema lint", () => {
  it("reports no problem in schema/schema.graphql, descriptions included", async () => {
    const eslint = new ESLint({ cwd: root });
    const [result] = await eslint.lintFiles(["schema/schema.graphql"]);
    expect(result.filePath).toBe(path.join(root, "schema/schema.graphql"));
    // a parse error or a missing config would show as a message without a rule
    expect(result.messages.map(show), result.messages.map(show).join("\n")).toEqual([]);
  });

  it("fails on an element without a description (the check can fail)", async () => {
    const sdl = fs.readFileSync(path.join(root, "schema/schema.graphql"), "utf8");
    const undescribed = sdl.replace(/"""[^"]*"""\n(type Invoice implements Node)/, "$1");
    expect(undescribed).not.toBe(sdl);
    const [result] = await new ESLint({ cwd: root }).lintText(undescribed, {
      filePath: path.join(root, "schema/schema.graphql"),
    });
    expect(result.messages.map((m) => [m.ruleId, m.message])).toContainEqual([
      DESCRIPTION_RULE,
      'Description is required for type "Invoice"',
    ]);
  });

  it("has every rule of the config switched on (a typo in a rule name would fail ESLint itself)", async () => {
    const config = await new ESLint({ cwd: root }).calculateConfigForFile("schema/schema.graphql");
    const on = Object.entries(config.rules ?? {})
      .filter(([, v]) => (Array.isArray(v) ? v[0] : v) === 2 || (Array.isArray(v) ? v[0] : v) === "error")
      .map(([k]) => k);
    for (const rule of [
      DESCRIPTION_RULE,
      "@graphql-eslint/naming-convention",
      "@graphql-eslint/no-unreachable-types",
      "@graphql-eslint/relay-connection-types",
      "@graphql-eslint/relay-page-info",
      "@graphql-eslint/require-deprecation-reason",
    ]) {
      expect(on).toContain(rule);
    }
  });

  it("says when each nullable field of an object type is null (its description names null)", () => {
    const schema = buildSchema(fs.readFileSync(path.join(root, "schema/schema.graphql"), "utf8"));
    const silent: string[] = [];
    let nullable = 0;
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith("__") || !(isObjectType(type) || isInterfaceType(type))) continue;
      if (type === schema.getQueryType() || type === schema.getMutationType() || type === schema.getSubscriptionType())
        continue;
      for (const field of Object.values(type.getFields())) {
        if (isNonNullType(field.type)) continue;
        nullable++;
        if (!/\bnull\b/i.test(field.description ?? "")) silent.push(`${type.name}.${field.name}`);
      }
    }
    // the schema has nullable fields to check (a parse that found none would pass for nothing)
    expect(nullable).toBeGreaterThan(150);
    expect(silent, "nullable fields whose description does not say when they are null").toEqual([]);
  });
});
