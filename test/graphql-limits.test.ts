/**
 * GraphQL limits (src/graphql/limits.ts) as a validation of documents against the real schema, with
 * no server: every document of the REST adapter passes the token, depth, alias and directive limits
 * and is exempt from the cost rule, which prices PDFs, lists and connections as docs/limits.md says.
 */
import { describe, expect, it } from "vitest";
import { Kind, parse, print, specifiedRules, validate, type DocumentNode } from "graphql";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDirectivesRule } from "@escape.tech/graphql-armor-max-directives";
import { MaxTokensParserWLexer } from "@escape.tech/graphql-armor-max-tokens";
import { schema } from "../src/graphql/schema.js";
import { costRule, GRAPHQL_LIMITS, isRestDocument } from "../src/graphql/limits.js";
import * as ops from "../src/graphql/generated/operations.js";

/** Each document of the REST adapter, printed as rest/router.ts sends it. */
function restOperations(): { name: string; text: string }[] {
  return Object.entries(ops)
    .filter(([name, d]) => name.endsWith("Document") && (d as DocumentNode).kind === Kind.DOCUMENT)
    .map(([name, d]) => ({ name, text: print(d as DocumentNode) }));
}

const shapeRules = [
  maxDepthRule({ n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, propagateOnRejection: false, onReject: [(c, e) => c!.reportError(e)] }),
  maxAliasesRule({ n: GRAPHQL_LIMITS.maxAliases, propagateOnRejection: false, onReject: [(c, e) => c!.reportError(e)] }),
  maxDirectivesRule({ n: GRAPHQL_LIMITS.maxDirectives, propagateOnRejection: false, onReject: [(c, e) => c!.reportError(e)] }),
];

const errors = (doc: DocumentNode, rules = [...shapeRules, costRule()]) => validate(schema, doc, [...specifiedRules, ...rules]).map((e) => e.message);
const cost = (query: string) => {
  const found = validate(schema, parse(query), [costRule(0)]);
  return found.length ? Number(found[0].extensions.cost) : 0;
};

describe("GraphQL limits", () => {
  it("pass every document of the REST adapter, which the cost rule leaves alone", () => {
    const operations = restOperations();
    expect(operations.length).toBeGreaterThan(50);
    for (const { name, text } of operations) {
      const parser = new MaxTokensParserWLexer(text, { n: GRAPHQL_LIMITS.maxTokens });
      expect(() => parser.parseDocument(), name).not.toThrow();
      expect(errors(parse(text), shapeRules), name).toEqual([]);
      expect(isRestDocument(text), name).toBe(true);
    }
    expect(isRestDocument("{ customers { totalCount } }")).toBe(false);
  });

  it("price a PDF far above a scalar and multiply lists by their size", () => {
    expect(cost(`{ node(id: "inv_x") { id } }`)).toBe(2);
    expect(cost(`{ node(id: "inv_x") { ... on Invoice { id pdf } } }`)).toBe(1_002);
    // a connection: first, else the default page of 20; a variable counts as the largest page (100)
    expect(cost(`{ customers(first: 5) { edges { node { id name } } } }`)).toBe(1 + 5 * (1 + 1 * (1 + 2)));
    expect(cost(`{ customers { edges { node { id } } } }`)).toBe(1 + 20 * (1 + 2));
    expect(cost(`query($n: Int) { customers(first: $n) { edges { node { id } } } }`)).toBe(1 + 100 * (1 + 2));
    // a plain list counts 5 items; nodes(ids:) its ids
    expect(cost(`{ node(id: "inv_x") { ... on Invoice { lines { name } } } }`)).toBe(1 + 1 + 5 * 1);
    expect(cost(`{ nodes(ids: ["a", "b", "c"]) { id } }`)).toBe(1 + 3 * 1);
    // fragments and inline fragments add up
    expect(cost(`{ node(id: "inv_x") { ... on Invoice { pdf } ...F } } fragment F on Order { pdf }`)).toBe(1 + 2_000);
  });

  it("allow two PDFs and refuse three or a list of them; a page of 100 invoices with their lines' ids costs 901 and reads 600 rows: one fits, two do not", () => {
    const pdf = (alias: string) => `${alias}: node(id: "inv_${alias}") { ... on Invoice { pdf } }`;
    expect(errors(parse(`{ ${pdf("a")} ${pdf("b")} }`))).toEqual([]);
    expect(errors(parse(`{ ${pdf("a")} ${pdf("b")} ${pdf("c")} }`))[0]).toMatch(/^The query costs 3003, more than the limit of 3000/);
    expect(errors(parse(`{ invoices(first: 3) { edges { node { pdf } } } }`))).toHaveLength(1);
    const page = `invoices(first: 100) { edges { node { id lines { id } } } }`;
    expect(errors(parse(`{ ${page} }`))).toEqual([]);
    expect(cost(`{ ${page} }`)).toBe(1 + 100 * (1 + 1 + 1 + (1 + 5 * 1)));
    const pages = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `p${i}: ${page}`).join(" ")} }`;
    expect(errors(parse(pages(1)))).toEqual([]);
    expect(errors(parse(pages(2)))).toEqual(["The query reads up to 1200 rows, more than the limit of 1000 (a list or page multiplies the rows under it by its size: a page of 100 invoices with their lines is 600). Ask for fewer or smaller pages."]);
    // 600 + 66 x 6 = 996 rows: the most the bench sends
    expect(errors(parse(`{ p0: ${page} p1: ${page.replace("first: 100", "first: 66")} }`))).toEqual([]);
    expect(errors(parse(`{ p0: ${page} p1: ${page.replace("first: 100", "first: 67")} }`))).toHaveLength(1);
  });

  it("count as rows the items of pages, lists and ids (fragments and variables too), not edges or single objects", () => {
    const rows = (query: string) => {
      const found = validate(schema, parse(query), [costRule(1_000_000, 0)]);
      return found.length ? Number(found[0].extensions.rows) : 0;
    };
    expect(rows(`{ invoices(first: 100) { pageInfo { hasNextPage } edges { cursor node { id } } } }`)).toBe(100);
    expect(rows(`{ node(id: "inv_x") { ... on Invoice { lines { id } customer { id } } } }`)).toBe(5);
    expect(rows(`{ invoices(first: 10) { edges { node { customer { id } lines { id } } } } }`)).toBe(10 + 10 * 5);
    expect(rows(`{ nodes(ids: ["a", "b"]) { id } }`)).toBe(2);
    expect(rows(`query($n: Int) { customers(first: $n) { edges { node { ...C } } } } fragment C on Customer { id }`)).toBe(100);
    expect(rows(`{ customers(first: 10) { edges { node { id } } } }`)).toBe(10);
  });
});
