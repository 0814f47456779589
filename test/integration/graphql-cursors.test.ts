/**
 * Keyset cursors (issue 16; src/graphql/pagination.ts, docs/graphql.md "Paging"): stable under
 * inserts and deletes, scoped to their connection, null on an empty page, backward paging with
 * last/before, and `offset` for page numbers. Real server over real HTTP, real database.
 */
import { readFileSync } from "node:fs";
import { buildSchema, getNamedType, isObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customer: string;
/** The invoices of `customer`, newest first, as one page lists them. */
let all: string[];

beforeAll(async () => {
  s = await startTestServer();
  const c = await s.graphql(`mutation($input: CustomerInput!) { createCustomer(input: $input) { id } }`, {
    input: { name: "Cursor Cliente", country: "CL" },
  });
  expect(c.body.errors).toBeUndefined();
  customer = c.body.data.createCustomer.id;
  for (let i = 0; i < 7; i++) await createInvoice(`line ${i}`);
  all = (await invoices({ first: 100 })).edges.map((e: any) => e.node.id);
  expect(all).toHaveLength(7);
});
afterAll(async () => s?.close());

async function createInvoice(name: string): Promise<string> {
  const res = await s.graphql(`mutation($input: InvoiceInput!) { createInvoice(input: $input) { id } }`, {
    input: { customer, lines: [{ name, quantity: "1", amount: "1000" }] },
  });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.createInvoice.id;
}

const INVOICES = `query($first: Int, $last: Int, $after: String, $before: String, $offset: Int, $where: InvoiceWhere) {
  invoices(first: $first, last: $last, after: $after, before: $before, offset: $offset, where: $where) {
    edges { cursor node { id } }
    pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
  }
}`;

/** One page of the test customer's invoices (errors fail the test). */
async function invoices(args: Record<string, unknown>) {
  const res = await s.graphql(INVOICES, { ...args, where: { customer: { equals: customer } } });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.invoices;
}

/** The error of a page request that must fail. */
async function invoicesError(args: Record<string, unknown>) {
  const res = await s.graphql(INVOICES, { ...args, where: { customer: { equals: customer } } });
  expect(res.status).toBeLessThan(500);
  expect(res.body.data?.invoices ?? null).toBeNull();
  expect(res.body.errors).toHaveLength(1);
  return res.body.errors[0];
}

const ids = (page: any): string[] => page.edges.map((e: any) => e.node.id);

describe("keyset cursors", () => {
  it("pages forward through every item once, with edge cursors equal to the page's start and end cursors", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page: any = await invoices({ first: 3, after });
      seen.push(...ids(page));
      expect(page.pageInfo.startCursor).toBe(page.edges[0].cursor);
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1).cursor);
      expect(page.pageInfo.hasPreviousPage).toBe(pages > 0);
      pages++;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
  });

  it("repeats and skips nothing when an item is inserted between two page fetches", async () => {
    const first = await invoices({ first: 3 });
    expect(ids(first)).toEqual(all.slice(0, 3));
    const inserted = await createInvoice("inserted between pages");
    try {
      // newest first: the new invoice goes to the head of the list, where an offset cursor would
      // shift every later page by one and repeat all[2]
      const second = await invoices({ first: 3, after: first.pageInfo.endCursor });
      expect(ids(second)).toEqual(all.slice(3, 6));
      const third = await invoices({ first: 3, after: second.pageInfo.endCursor });
      expect(ids(third)).toEqual(all.slice(6));
      expect(third.pageInfo.hasNextPage).toBe(false);
      // and paging back from the first page's start finds the inserted one
      const newer = await invoices({ last: 3, before: first.pageInfo.startCursor });
      expect(ids(newer)).toEqual([inserted]);
      expect(newer.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    } finally {
      await deleteInvoice(inserted);
    }
  });

  it("follows a cursor whose item was deleted", async () => {
    const extra = [await createInvoice("to delete a"), await createInvoice("to delete b")];
    const first = await invoices({ first: 2 });
    expect(ids(first)).toEqual([extra[1], extra[0]]);
    await deleteInvoice(extra[0]!); // the item the end cursor points at
    const next = await invoices({ first: 3, after: first.pageInfo.endCursor });
    expect(ids(next)).toEqual(all.slice(0, 3));
    // honest: the after item is gone, so whether items precede the page is not claimed
    expect(next.pageInfo.hasPreviousPage).toBe(false);
    // the cursor of a deleted item also pages backward
    const back = await invoices({ last: 5, before: first.pageInfo.endCursor });
    expect(ids(back)).toEqual([extra[1]]);
    await deleteInvoice(extra[1]!);
    expect(ids(await invoices({ first: 100 }))).toEqual(all);
  });

  it("pages backward with last/before through the same items, in the same order", async () => {
    const pages: string[][] = [];
    let before: string | null = null;
    for (;;) {
      const page: any = await invoices({ last: 3, before });
      pages.unshift(ids(page));
      expect(page.pageInfo.hasNextPage).toBe(before !== null);
      if (!page.pageInfo.hasPreviousPage) break;
      before = page.pageInfo.startCursor;
    }
    expect(pages).toEqual([all.slice(0, 1), all.slice(1, 4), all.slice(4)]);
    expect(pages.flat()).toEqual(all);
  });

  it("takes `last` alone as the final page", async () => {
    const page = await invoices({ last: 2 });
    expect(ids(page)).toEqual(all.slice(5));
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const whole = await invoices({ last: 100 });
    expect(ids(whole)).toEqual(all);
    expect(whole.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it("mixes directions: forward to the middle, then back from there", async () => {
    const forward = await invoices({ first: 4 });
    const back = await invoices({ last: 2, before: forward.pageInfo.endCursor });
    expect(ids(back)).toEqual(all.slice(1, 3));
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const between = await invoices({ first: 10, after: forward.edges[0].cursor, before: forward.pageInfo.endCursor });
    expect(ids(between)).toEqual(all.slice(1, 3));
    expect(between.pageInfo.hasNextPage).toBe(false);
  });

  it("gives an empty page null cursors and no pages on either side", async () => {
    const res = await s.graphql(INVOICES, { first: 5, where: { customer: { equals: "cus_doesnotexist" } } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.invoices).toEqual({
      edges: [],
      pageInfo: { startCursor: null, endCursor: null, hasNextPage: false, hasPreviousPage: false },
    });
    const backward = await s.graphql(INVOICES, { last: 5, where: { customer: { equals: "cus_doesnotexist" } } });
    expect(backward.body.data.invoices.pageInfo).toEqual({
      startCursor: null,
      endCursor: null,
      hasNextPage: false,
      hasPreviousPage: false,
    });
    // past the end of a list: empty, null cursors
    const end = await invoices({ first: 3, after: (await invoices({ last: 1 })).pageInfo.endCursor });
    expect(end).toEqual({
      edges: [],
      pageInfo: { startCursor: null, endCursor: null, hasNextPage: false, hasPreviousPage: true },
    });
    const none = await invoices({ first: 0 });
    expect(none).toEqual({
      edges: [],
      pageInfo: { startCursor: null, endCursor: null, hasNextPage: true, hasPreviousPage: false },
    });
  });

  it(
    "rejects a cursor of another connection, a garbage one and a forged one as a validation_error naming the " +
      "argument",
    async () => {
      const customers = await s.graphql(`{ customers(first: 1) { pageInfo { endCursor } } }`);
      const foreign = customers.body.data.customers.pageInfo.endCursor;
      expect(foreign).toEqual(expect.any(String));

      const other = await invoicesError({ first: 2, after: foreign });
      expect(other.extensions.code).toBe("validation_error");
      expect(other.extensions.fields).toEqual({ after: ["is a cursor of Query.customers, not of Query.invoices"] });

      const before = await invoicesError({ last: 2, before: foreign });
      expect(before.extensions.code).toBe("validation_error");
      expect(Object.keys(before.extensions.fields)).toEqual(["before"]);

      const forge = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString("base64url");
      const valid = JSON.parse(Buffer.from((await invoices({ first: 1 })).pageInfo.endCursor, "base64url").toString());
      // created, number (null: these are drafts), id
      expect(valid).toMatchObject({ v: 1, c: "Query.invoices", k: [expect.any(String), null, all[0]] });
      for (const garbage of [
        "garbage",
        "!!",
        "OffsetConnection:3",
        Buffer.from("OffsetConnection:3").toString("base64"),
        "x".repeat(2000),
        forge({ ...valid, k: [12, null, all[0]] }), // a number where the date goes
        forge({ ...valid, k: ["yesterday", null, all[0]] }),
        forge({ ...valid, k: [null, null, all[0]] }), // created is never null
        forge({ ...valid, k: [valid.k[0], "7", all[0]] }), // a string where the number goes
        forge({ ...valid, k: [valid.k[0], 1.5, all[0]] }),
        forge({ ...valid, k: [valid.k[0], null, null] }), // nor is the id
        forge({ ...valid, k: [valid.k[0], all[0]] }), // too short: a cursor from before the number tie-breaker
        forge({ ...valid, k: [valid.k[0], null, { id: all[0] }] }),
        forge({ ...valid, v: 2 }),
        forge([1, 2]),
        forge(null),
      ]) {
        const error = await invoicesError({ first: 2, after: garbage });
        expect(error.extensions.code, garbage).toBe("validation_error");
        expect(Object.keys(error.extensions.fields), garbage).toEqual(["after"]);
      }
    },
  );

  it("scopes cursors by connection even between lists with the same order", async () => {
    const states = await s.graphql(`{ states(first: 1) { pageInfo { endCursor } } }`);
    const res = await s.graphql(
      `query($after: String) { currencies(first: 1, after: $after) { edges { node { id } } } }`,
      { after: states.body.data.states.pageInfo.endCursor },
    );
    expect(res.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { after: ["is a cursor of Query.states, not of Query.currencies"] },
    });
  });

  it("pages by offset for page numbers, and refuses offset with a cursor", async () => {
    expect(ids(await invoices({ first: 2, offset: 2 }))).toEqual(all.slice(2, 4));
    const last = await invoices({ first: 3, offset: 6 });
    expect(ids(last)).toEqual(all.slice(6));
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect((await invoices({ first: 3, offset: 0 })).pageInfo.hasPreviousPage).toBe(false);
    // a page's cursors are keyset cursors: paging on from an offset page follows it
    const page = await invoices({ first: 2, offset: 3 });
    expect(ids(await invoices({ first: 2, after: page.pageInfo.endCursor }))).toEqual(all.slice(5, 7));
    expect(await invoices({ first: 2, offset: 50 })).toEqual({
      edges: [],
      pageInfo: { startCursor: null, endCursor: null, hasNextPage: false, hasPreviousPage: false },
    });

    const withAfter = await invoicesError({ first: 2, offset: 2, after: page.pageInfo.endCursor });
    expect(withAfter.extensions).toMatchObject({
      code: "validation_error",
      fields: { offset: [expect.stringContaining("cannot be combined with after")] },
    });
    const withLast = await invoicesError({ last: 2, offset: 2 });
    expect(Object.keys(withLast.extensions.fields)).toEqual(["offset"]);
    for (const offset of [-1, 100_001]) {
      const error = await invoicesError({ first: 2, offset });
      expect(error.extensions).toMatchObject({
        code: "validation_error",
        fields: { offset: ["must be between 0 and 100000"] },
      });
    }
    const both = await invoicesError({ first: 2, last: 2 });
    expect(Object.keys(both.extensions.fields)).toEqual(["last"]);
  });

  it("runs one findMany per page and a COUNT only for totalCount", async () => {
    const first = await invoices({ first: 2 });
    s.queries.length = 0;
    await invoices({ first: 2, after: first.pageInfo.endCursor });
    await invoices({ last: 2, before: first.pageInfo.endCursor });
    await invoices({ first: 2, offset: 4 });
    expect(s.queries.filter((q) => q.startsWith("Invoice."))).toEqual([
      "Invoice.findMany",
      "Invoice.findMany",
      "Invoice.findMany",
    ]);
    s.queries.length = 0;
    // the sort fields are read even when the query asks only for ids (select), or for nothing of the node
    const counted = await s.graphql(
      `query($after: String) { invoices(first: 2, after: $after) { totalCount pageInfo { endCursor } } }`,
      { after: first.pageInfo.endCursor },
    );
    expect(counted.body.errors).toBeUndefined();
    expect(counted.body.data.invoices.pageInfo.endCursor).toEqual(expect.any(String));
    expect(s.queries.filter((q) => q.startsWith("Invoice.")).sort()).toEqual(["Invoice.count", "Invoice.findMany"]);
  });

  it("pages lists sorted by other keys (document types: country, then numeric code) both ways", async () => {
    const Q = `query($first: Int, $last: Int, $after: String, $before: String) {
      documentTypes(first: $first, last: $last, after: $after,
      before: $before) { edges { node { id } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } }
    }`;
    const whole = await s.graphql(Q, { first: 100 });
    const everything = whole.body.data.documentTypes.edges.map((e: any) => e.node.id);
    expect(everything.length).toBeGreaterThan(10);
    const forward: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res: any = await s.graphql(Q, { first: 4, after });
      expect(res.body.errors).toBeUndefined();
      forward.push(...res.body.data.documentTypes.edges.map((e: any) => e.node.id));
      if (!res.body.data.documentTypes.pageInfo.hasNextPage) break;
      after = res.body.data.documentTypes.pageInfo.endCursor;
    }
    expect(forward).toEqual(everything);
    const backward: string[] = [];
    let before: string | null = null;
    for (;;) {
      const res: any = await s.graphql(Q, { last: 4, before });
      backward.unshift(...res.body.data.documentTypes.edges.map((e: any) => e.node.id));
      if (!res.body.data.documentTypes.pageInfo.hasPreviousPage) break;
      before = res.body.data.documentTypes.pageInfo.startCursor;
    }
    expect(backward).toEqual(everything);
  });

  it("keeps REST page numbers (offset underneath) and refuses a page deeper than the offset bound", async () => {
    const page2 = await s.rest("GET", `/v1/generals/states/?country=CL&page=2&page_size=5`);
    expect(page2.status).toBe(200);
    const gql = await s.graphql(`{ states(first: 5, offset: 5, country: { equals: "CL" }) { edges { node { id } } } }`);
    expect(page2.body.results.map((r: any) => r.id)).toEqual(gql.body.data.states.edges.map((e: any) => e.node.id));
    const deep = await s.rest("GET", `/v1/generals/states/?page=5002&page_size=20`);
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({
      error: {
        code: "validation_error",
        message: "Invalid pagination",
        fields: { page: ["must be at most 5001 with page_size 20"] },
      },
    });
  });
});

describe("every connection", () => {
  it("pages forward and backward, scopes its cursors and takes offset (never a 5xx)", async () => {
    const schema = buildSchema(readFileSync(new URL("../../schema/schema.graphql", import.meta.url), "utf8"));
    const fields = Object.values(schema.getQueryType()!.getFields()).filter((f) => {
      const type = getNamedType(f.type);
      return (
        isObjectType(type) &&
        "pageInfo" in type.getFields() &&
        "offset" in Object.fromEntries(f.args.map((a) => [a.name, a]))
      );
    });
    expect(fields.length).toBeGreaterThanOrEqual(20);
    let previous: { name: string; cursor: string } | null = null;
    for (const { name } of fields) {
      const forward = await s.graphql(`{ ${name}(first: 2) { edges { cursor } pageInfo { endCursor } } }`);
      expect(forward.body.errors, name).toBeUndefined();
      const backward = await s.graphql(`{ ${name}(last: 2, offset: null) { pageInfo { startCursor hasNextPage } } }`);
      expect(backward.body.errors, name).toBeUndefined();
      expect(backward.body.data[name].pageInfo.hasNextPage, name).toBe(false);
      const byOffset = await s.graphql(
        `{ ${name}(first: 1, offset: 1) { edges { cursor } pageInfo { hasPreviousPage } } }`,
      );
      expect(byOffset.body.errors, name).toBeUndefined();
      const cursor: string | null = forward.body.data[name].pageInfo.endCursor;
      if (cursor) {
        const again = await s.graphql(
          `query($c: String) { ${name}(first: 2, after: $c) { pageInfo { hasPreviousPage } } }`,
          { c: cursor },
        );
        expect(again.body.errors, name).toBeUndefined();
        expect(again.body.data[name].pageInfo.hasPreviousPage, name).toBe(true);
      }
      for (const [bad, reason] of [
        ["garbage", "is not a valid cursor (use a cursor this connection returned)"],
        ...(previous ? [[previous.cursor, `is a cursor of Query.${previous.name}, not of Query.${name}`]] : []),
      ] as [string, string][]) {
        const res = await s.graphql(`query($c: String) { ${name}(first: 1, after: $c) { pageInfo { endCursor } } }`, {
          c: bad,
        });
        expect(res.status, name).toBeLessThan(500);
        expect(res.body.errors?.[0]?.extensions, name).toEqual({
          code: "validation_error",
          fields: { after: [reason] },
        });
      }
      if (cursor) previous = { name, cursor };
    }
  });
});

describe("docs/graphql.md Paging examples", () => {
  /** The `graphql` blocks of the Paging section, by operation name. */
  const examples = () => {
    const text = readFileSync(new URL("../../docs/graphql.md", import.meta.url), "utf8");
    const section = text.slice(text.indexOf("## Paging"), text.indexOf("\n## ", text.indexOf("## Paging") + 1));
    const blocks = [...section.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
    return Object.fromEntries(blocks.map((b) => [/query (\w+)/.exec(b)![1]!, b]));
  };

  it("run as documented: forward, backward, by page number, and the counts", async () => {
    const q = examples();
    expect(Object.keys(q).sort()).toEqual([
      "FirstPage",
      "InvoiceCounts",
      "LastPage",
      "NextPage",
      "PageThree",
      "PreviousPage",
    ]);
    const run = async (name: string, variables?: Record<string, unknown>) => {
      const res = await s.graphql(q[name]!, variables);
      expect(res.body.errors, name).toBeUndefined();
      return res.body.data.invoices;
    };
    // this file's database holds only the test customer's invoices
    const first = await run("FirstPage");
    expect(first.totalCount).toBe(all.length);
    const next = await run("NextPage", { after: first.pageInfo.endCursor });
    expect([...ids(first), ...ids(next)]).toEqual(all.slice(0, 4));
    expect(next.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const last = await run("LastPage");
    const previous = await run("PreviousPage", { before: last.pageInfo.startCursor });
    expect([...ids(previous), ...ids(last)]).toEqual(all.slice(-4));
    const page3 = await run("PageThree");
    expect(ids(page3)).toEqual(all.slice(4, 6));
    // Counting: the documented answer, for this file's 7 draft invoices
    expect(all).toHaveLength(7);
    const counts = await s.graphql(q.InvoiceCounts!);
    expect(counts.body).toEqual({
      data: {
        drafts: { count: { count: 7, precision: "exact" } },
        all: { count: { count: 5, precision: "at_least" } },
      },
    });
  });
});

async function deleteInvoice(id: string) {
  const res = await s.graphql(`mutation($id: ID!) { deleteInvoice(id: $id) { __typename } }`, { id });
  expect(res.body.errors).toBeUndefined();
}

// last: the examples above count this file's invoices
describe("ties of created (documents: by number, drafts first, then id)", () => {
  let tied: string;
  /** The tied customer's invoices: one newer, six created at the same instant, one older. */
  let expected: string[];
  const page = async (args: Record<string, unknown>) => {
    const res = await s.graphql(INVOICES, { ...args, where: { customer: { equals: tied } } });
    expect(res.body.errors).toBeUndefined();
    return res.body.data.invoices;
  };

  beforeAll(async () => {
    const c = await s.graphql(`mutation($input: CustomerInput!) { createCustomer(input: $input) { id } }`, {
      input: { name: "Empate Cliente", country: "CL" },
    });
    tied = c.body.data.createCustomer.id;
    const made: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await s.graphql(`mutation($input: InvoiceInput!) { createInvoice(input: $input) { id } }`, {
        input: { customer: tied, lines: [{ name: `tie ${i}`, amount: "1000" }] },
      });
      made.push(res.body.data.createInvoice.id);
    }
    // numbers in another order than creation: 1..4 go to made[4], made[1], made[6], made[2]
    // made[3] and made[5] stay drafts
    for (const i of [4, 1, 6, 2]) {
      const res = await s.graphql(`mutation($id: ID!) { finalizeInvoice(id: $id) { number } }`, { id: made[i] });
      expect(res.body.errors).toBeUndefined();
    }
    const instant = new Date("2026-03-01T12:00:00.000Z");
    const ids = made.slice(1, 7);
    await s.database.prisma.invoice.updateMany({ where: { id: { in: ids } }, data: { createdAt: instant } });
    await s.database.prisma.invoice.update({ where: { id: made[0] }, data: { createdAt: new Date(+instant + 1) } });
    await s.database.prisma.invoice.update({ where: { id: made[7] }, data: { createdAt: new Date(+instant - 1) } });
    // the six tied ones: the drafts first (by id, highest first, as the database compares text), then by number
    const drafts = await s.database.prisma.invoice.findMany({
      where: { id: { in: [made[3]!, made[5]!] } },
      orderBy: { id: "desc" },
      select: { id: true },
    });
    expected = [made[0]!, ...drafts.map((d) => d.id), made[2]!, made[6]!, made[1]!, made[4]!, made[7]!];
  });

  it("lists the tied invoices by number, highest first, drafts (no number) before them", async () => {
    const whole = await page({ first: 100 });
    expect(ids(whole)).toEqual(expected);
    const numbers = await s.graphql(
      `query($w: InvoiceWhere) { invoices(first: 100, where: $w) { edges { node { number } } } }`,
      { w: { customer: { equals: tied } } },
    );
    expect(numbers.body.data.invoices.edges.map((e: any) => e.node.number)).toEqual([
      null,
      null,
      null,
      4,
      3,
      2,
      1,
      null,
    ]);
  });

  for (const size of [1, 2, 3]) {
    it(`pages through the ties forward and backward ${size} at a time, each item once, in the same order`, async () => {
      const forward: string[] = [];
      let after: string | null = null;
      for (;;) {
        const p: any = await page({ first: size, after });
        forward.push(...ids(p));
        if (!p.pageInfo.hasNextPage) break;
        after = p.pageInfo.endCursor;
      }
      expect(forward).toEqual(expected);
      const backward: string[] = [];
      let before: string | null = null;
      for (;;) {
        const p: any = await page({ last: size, before });
        backward.unshift(...ids(p));
        if (!p.pageInfo.hasPreviousPage) break;
        before = p.pageInfo.startCursor;
      }
      expect(backward).toEqual(expected);
    });
  }

  it("pages on from any edge's cursor across the tie, both ways", async () => {
    const edges = (await page({ first: 100 })).edges as { cursor: string; node: { id: string } }[];
    for (const [i, edge] of edges.entries()) {
      expect(ids(await page({ first: 100, after: edge.cursor })), `after ${i}`).toEqual(expected.slice(i + 1));
      expect(ids(await page({ last: 100, before: edge.cursor })), `before ${i}`).toEqual(expected.slice(0, i));
    }
  });
});
