/**
 * docs/graphql.md "A client's view" runs as written: every ```graphql block with the ```json
 * variables block after it (or a ```json request block, a raw body) is POSTed to /graphql, and the
 * answer must be the ```json answer block that follows (info string: `answer [status]
 * [retry-after]`). A string "<name>" in an answer matches whatever the service returned there and
 * binds it; in variables or a request it sends the bound value. The section "Rate limit" runs on a
 * server with a limit of one request a minute.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

const DOC = new URL("../../docs/graphql.md", import.meta.url);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

interface Block {
  lang: string;
  info: string[];
  text: string;
}

/** The fenced blocks of each "### " subsection of "## A client's view". */
function sections(): Map<string, Block[]> {
  const markdown = fs.readFileSync(DOC, "utf8");
  const start = markdown.indexOf("\n## A client's view\n");
  expect(start).toBeGreaterThan(0);
  const rest = markdown.slice(start + 1);
  const end = rest.indexOf("\n## ", 3);
  const part = end < 0 ? rest : rest.slice(0, end);
  const result = new Map<string, Block[]>();
  for (const chunk of part.split(/\n### /).slice(1)) {
    const title = chunk.slice(0, chunk.indexOf("\n"));
    const blocks = [...chunk.matchAll(/^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
      lang: m[1],
      info: m[2].trim().split(/\s+/).filter(Boolean),
      text: m[3],
    }));
    result.set(title, blocks);
  }
  return result;
}

const PLACEHOLDER = /^<([^<>]+)>$/;

/** `value` with every "<name>" string replaced by its binding. */
function fill(value: unknown, bound: Map<string, unknown>): unknown {
  if (typeof value === "string") {
    const m = PLACEHOLDER.exec(value);
    if (!m) return value;
    expect(bound.has(m[1]), `"<${m[1]}>" is used before an answer shows it`).toBe(true);
    return bound.get(m[1]);
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, bound));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, bound)]));
  return value;
}

/**
 * Binds the placeholders of `expected` from `actual` (first occurrence), then returns `expected` filled, for toEqual.
 */
function bind(expected: unknown, actual: unknown, bound: Map<string, unknown>): void {
  if (typeof expected === "string") {
    const m = PLACEHOLDER.exec(expected);
    if (m && !bound.has(m[1]) && actual !== undefined) bound.set(m[1], actual);
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) expected.forEach((e, i) => bind(e, actual[i], bound));
  else if (expected && typeof expected === "object" && actual && typeof actual === "object") {
    for (const [k, v] of Object.entries(expected)) bind(v, (actual as Record<string, unknown>)[k], bound);
  }
}

/** Runs the blocks of one subsection in order. */
async function run(server: TestServer, blocks: Block[], bound: Map<string, unknown>) {
  let body: Record<string, unknown> | null = null;
  let answers = 0;
  for (const block of blocks) {
    if (block.lang === "graphql") {
      const name = /^(?:query|mutation)\s+(\w+)/m.exec(block.text)?.[1];
      body = { query: block.text, variables: {}, ...(name ? { operationName: name } : {}) };
    } else if (block.lang === "json" && block.info[0] === "variables") {
      body!.variables = fill(JSON.parse(block.text), bound);
    } else if (block.lang === "json" && block.info[0] === "request") {
      body = fill(JSON.parse(block.text), bound) as Record<string, unknown>;
    } else if (block.lang === "json" && block.info[0] === "answer") {
      expect(body, "an answer without a request before it").not.toBeNull();
      const res = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${server.keys.acme}` },
        body: JSON.stringify(body),
      });
      const actual = await res.json();
      const expected = JSON.parse(block.text);
      const status = Number(block.info.find((i) => /^\d{3}$/.test(i)) ?? 200);
      const shown = `${JSON.stringify(body)}\n -> ${res.status} ${JSON.stringify(actual)}`;
      expect(res.status, shown).toBe(status);
      if (block.info.includes("retry-after")) expect(Number(res.headers.get("retry-after")), shown).toBeGreaterThan(0);
      bind(expected, actual, bound);
      expect(actual, shown).toEqual(fill(expected, bound));
      answers++;
    } else {
      throw new Error(`unexpected block ${block.lang} ${block.info.join(" ")}`);
    }
  }
  expect(answers).toBeGreaterThan(0);
}

describe("docs/graphql.md, a client's view", () => {
  let s: TestServer;
  let limited: TestServer;
  const bound = new Map<string, unknown>();
  const docs = sections();
  beforeAll(async () => {
    s = await startTestServer();
    for (const [name, email] of [
      ["Ana SpA", "ana@example.cl"],
      ["Beto Ltda", "beto@example.cl"],
      ["Cata SpA", "cata@example.cl"],
    ]) {
      const res = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name, email }) });
      expect(res.status).toBe(201);
      await new Promise((r) => setTimeout(r, 20)); // distinct creation times: the order shown is the creation order
    }
    limited = await startTestServer({
      settings: { rateLimitRequests: 1, rateLimitWindowSeconds: 60, rateLimitBurst: 0 },
    });
  });
  afterAll(async () => {
    await s?.close();
    await limited?.close();
  });

  it("has the sections a client needs", () => {
    expect([...docs.keys()]).toEqual([
      "Paging a connection",
      "Refetching a node",
      "A mutation and its errors",
      "Persisted queries on the wire",
      "Limits a client must respect",
      "Rate limit",
    ]);
  });

  it("pages forwards then backwards", async () => {
    await run(s, docs.get("Paging a connection")!, bound);
    expect(new Set([bound.get("ana"), bound.get("beto"), bound.get("cata")]).size).toBe(3);
    // cursors are opaque strings, and the backward page is the first page again
    for (const cursor of ["page1End", "page2Start", "page2End", "page1Start"])
      expect(typeof bound.get(cursor)).toBe("string");
  });

  it("refetches a node", async () => {
    await run(s, docs.get("Refetching a node")!, bound);
  });

  it("shows a refused mutation with its field path, and writes nothing", async () => {
    await run(s, docs.get("A mutation and its errors")!, bound);
    expect((await s.rest("GET", "/v1/customers/")).body.count).toBe(3);
  });

  it("shows the persisted-query round trip with the real hash", async () => {
    const query = "query CustomerCount { customers { totalCount } }";
    bound.set("hash", sha256(query));
    expect(fs.readFileSync(DOC, "utf8")).toContain(sha256(query));
    await run(s, docs.get("Persisted queries on the wire")!, bound);
  });

  it("shows a document over the cost limit", async () => {
    await run(s, docs.get("Limits a client must respect")!, bound);
  });

  it("shows the rate limit's 429 with Retry-After", async () => {
    await run(limited, docs.get("Rate limit")!, bound);
    expect(bound.get("retryMessage")).toMatch(/^Too many requests for this API key; retry in \d+ s\.$/);
  });
});
