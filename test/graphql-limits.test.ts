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
  maxDepthRule({
    n: GRAPHQL_LIMITS.maxDepth,
    flattenFragments: true,
    propagateOnRejection: false,
    onReject: [(c, e) => c!.reportError(e)],
  }),
  maxAliasesRule({
    n: GRAPHQL_LIMITS.maxAliases,
    propagateOnRejection: false,
    onReject: [(c, e) => c!.reportError(e)],
  }),
  maxDirectivesRule({
    n: GRAPHQL_LIMITS.maxDirectives,
    propagateOnRejection: false,
    onReject: [(c, e) => c!.reportError(e)],
  }),
];

const errors = (doc: DocumentNode, rules = [...shapeRules, costRule()]) =>
  validate(schema, doc, [...specifiedRules, ...rules]).map((e) => e.message);
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

  it("price a PDF far above an object, an object above a scalar (free), and multiply lists by their size", () => {
    expect(cost(`{ node(id: "inv_x") { id } }`)).toBe(1);
    expect(cost(`{ node(id: "inv_x") { ... on Invoice { id pdf } } }`)).toBe(1_001);
    // a connection: its edges run first times, else the default page of 20; a variable counts as the
    // largest page (100); each item is a node (1), its scalars free; pageInfo and totalCount run once
    expect(cost(`{ customers(first: 5) { edges { node { id name } } } }`)).toBe(1 + 1 + 5 * (1 + 0));
    expect(cost(`{ customers { edges { node { id } } } }`)).toBe(1 + 1 + 20 * 1);
    expect(
      cost(
        `query($n: Int) { customers(first: $n) { totalCount pageInfo { hasNextPage } edges { cursor node { id } } } }`,
      ),
    ).toBe(1 + 500 + 1 + (1 + 100 * 1));
    // a plain list counts 5 items; nodes(ids:) its ids; single objects cost 1 each
    expect(cost(`{ node(id: "inv_x") { ... on Invoice { lines { name } customer { id country { id } } } } }`)).toBe(
      1 + (1 + 5 * 0) + (1 + 1),
    );
    expect(cost(`{ nodes(ids: ["a", "b", "c"]) { id } }`)).toBe(1);
    expect(cost(`{ nodes(ids: ["a", "b", "c"]) { ... on Invoice { customer { id } } } }`)).toBe(1 + 3 * 1);
    // fragments and inline fragments add up
    expect(cost(`{ node(id: "inv_x") { ... on Invoice { pdf } ...F } } fragment F on Order { pdf }`)).toBe(1 + 2_000);
  });

  it(
    "let an ordinary page of 50 with one nested list through (3,001 when every scalar cost 1), and a page of 50 " +
      "with every object joined",
    () => {
      // 12 invoice fields, the payments' 9: 1 + 50 x (1 + 1 + 12 + 1 + 5 x 9) = 3,001 when scalars cost 1, over the
      // limit of 3,000
      const page = (n: number) => `{ invoices(first: ${n}, where: { status: { equals: finalized } }) { edges { node {
      id number date dueDate status subtotal tax total amountDue note metadata created
      payments { id date paymentDate amount status description metadata created updated } } } } }`;
      expect(cost(page(50))).toBe(1 + 1 + 50 * (1 + (1 + 5 * 0)));
      expect(errors(parse(page(50)))).toEqual([]);
      expect(errors(parse(page(100)))).toEqual([]);
      // a page of 50 with every single object joined and two nested lists (550 rows)
      const wide = `{ invoices(first: 50) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id
      customer { id country { id } state { id } }
      lines { id name } payments { id source { id } invoice { id } } } } } }`;
      expect(cost(wide)).toBe(1 + 500 + 1 + 1 + 50 * (1 + (1 + 1 + 1) + (1 + 5 * 0) + (1 + 5 * (1 + 1))));
      expect(errors(parse(wide))).toEqual([]);
    },
  );

  it("price an exact totalCount at 500 (five in a request, not six) and the capped count as an object", () => {
    const counts = (n: number, field = "totalCount") =>
      `{ ${Array.from({ length: n }, (_, i) => `c${i}: invoices(first: 0) { ${field} }`).join(" ")} }`;
    expect(cost(counts(1))).toBe(1 + 500);
    expect(errors(parse(counts(5)))).toEqual([]);
    expect(errors(parse(counts(6)))[0]).toMatch(
      /^The query costs 3006, more than the limit of 3000 \(a PDF costs 1000, an exact totalCount 500;/,
    );
    expect(cost(`{ invoices(first: 0) { count(limit: 100000) { count precision } } }`)).toBe(1 + 1);
    expect(errors(parse(counts(30, "count { count precision }")))).toEqual([]);
  });

  it(
    "allow two PDFs and refuse three or a list of them; a page of 100 invoices with their lines' ids costs 202 and " +
      "reads 600 rows: one fits, two do not",
    () => {
      const pdf = (alias: string) => `${alias}: node(id: "inv_${alias}") { ... on Invoice { pdf } }`;
      expect(errors(parse(`{ ${pdf("a")} ${pdf("b")} }`))).toEqual([]);
      expect(errors(parse(`{ ${pdf("a")} ${pdf("b")} ${pdf("c")} }`))[0]).toMatch(
        /^The query costs 3003, more than the limit of 3000/,
      );
      expect(errors(parse(`{ invoices(first: 3) { edges { node { pdf } } } }`))[0]).toMatch(
        /^The query costs 3005, more than the limit of 3000/,
      );
      expect(errors(parse(`{ invoices(first: 2) { edges { node { pdf } } } }`))).toEqual([]);
      const page = `invoices(first: 100) { edges { node { id lines { id } } } }`;
      expect(errors(parse(`{ ${page} }`))).toEqual([]);
      expect(cost(`{ ${page} }`)).toBe(1 + 1 + 100 * (1 + (1 + 5 * 0)));
      const pages = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `p${i}: ${page}`).join(" ")} }`;
      expect(errors(parse(pages(1)))).toEqual([]);
      expect(errors(parse(pages(2)))).toEqual([
        "The query reads up to 1200 rows, more than the limit of 1000 (a list or page multiplies the rows " +
          "under it by " +
          "its size: a page of 100 invoices with their lines is 600). Ask for fewer or smaller pages.",
      ]);
      // 600 + 66 x 6 = 996 rows: the most the bench sends
      expect(errors(parse(`{ p0: ${page} p1: ${page.replace("first: 100", "first: 66")} }`))).toEqual([]);
      expect(errors(parse(`{ p0: ${page} p1: ${page.replace("first: 100", "first: 67")} }`))).toHaveLength(1);
    },
  );

  it("price the worked examples of docs/limits.md as its table says", () => {
    const price = (query: string) => {
      const found = validate(schema, parse(query), [costRule(0, 0)]);
      return {
        cost: Number(found[0]?.extensions.cost ?? 0),
        rows: Number(found[0]?.extensions.rows ?? 0),
        fits: errors(parse(query)).length === 0,
      };
    };
    const pdf = (alias: string) => `${alias}: node(id: "inv_${alias}") { ... on Invoice { pdf } }`;
    const lines = `invoices(first: 100) { edges { node { id lines { id } } } }`;
    const page50 = `invoices(first: 50) { edges { node { id number date dueDate status subtotal tax total amountDue note
      metadata created payments { id date paymentDate amount status description metadata created updated } } } }`;
    const aliased = (n: number, selection: string) =>
      Array.from({ length: n }, (_, i) => `c${i}: ${selection}`).join(" ");
    const table: [string, number, number, boolean][] = [
      [`{ node(id: "inv_x") { id } }`, 1, 0, true],
      [`{ ${pdf("a")} ${pdf("b")} }`, 2_002, 0, true],
      [`{ ${pdf("a")} ${pdf("b")} ${pdf("c")} }`, 3_003, 0, false],
      [`{ invoices(first: 2) { edges { node { pdf } } } }`, 2_004, 2, true],
      [`{ invoices(first: 3) { edges { node { pdf } } } }`, 3_005, 3, false],
      [`{ invoices(first: 5) { edges { node { id pdf } } } }`, 5_007, 5, false],
      [`{ ${lines} }`, 202, 600, true],
      [`{ a: ${lines} b: ${lines} }`, 404, 1_200, false],
      [`{ ${page50} }`, 102, 300, true],
      [`{ ${aliased(5, "invoices { totalCount }")} }`, 2_505, 100, true],
      [`{ ${aliased(6, "invoices { totalCount }")} }`, 3_006, 120, false],
      [`{ ${aliased(30, "invoices(first: 0) { count { count precision } }")} }`, 60, 30, true],
    ];
    for (const [query, cost, rows, fits] of table) expect(price(query), query).toEqual({ cost, rows, fits });
  });

  it(
    "count as rows the items of pages, lists and ids (fragments and variables too), not edges or " + "single objects",
    () => {
      const rows = (query: string) => {
        const found = validate(schema, parse(query), [costRule(1_000_000, 0)]);
        return found.length ? Number(found[0].extensions.rows) : 0;
      };
      expect(rows(`{ invoices(first: 100) { pageInfo { hasNextPage } edges { cursor node { id } } } }`)).toBe(100);
      expect(rows(`{ node(id: "inv_x") { ... on Invoice { lines { id } customer { id } } } }`)).toBe(5);
      expect(rows(`{ invoices(first: 10) { edges { node { customer { id } lines { id } } } } }`)).toBe(10 + 10 * 5);
      expect(rows(`{ nodes(ids: ["a", "b"]) { id } }`)).toBe(2);
      expect(
        rows(`query($n: Int) { customers(first: $n) { edges { node { ...C } } } } fragment C on Customer { id }`),
      ).toBe(100);
      expect(rows(`{ customers(first: 10) { edges { node { id } } } }`)).toBe(10);
    },
  );
});
