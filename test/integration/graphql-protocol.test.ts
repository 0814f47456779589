/**
 * The GraphQL protocol around /graphql (docs/graphql.md): Apollo's automatic persisted queries as
 * Apollo Client's persisted-queries link sends them (hash alone, then hash and query, then hash
 * alone; POST and GET), a wrong hash refused, persisted queries held to the same document limits,
 * and every error on /graphql in the GraphQL shape with the project's lower-case codes (413, parse
 * error, missing query, body that is not JSON, wrong method), while REST keeps its own shape.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { buildSchema, type GraphQLObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { MAX_BODY_BYTES } from "../../src/server.js";
import { SCHEMA_PATH } from "../../scripts/print-schema.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const codes = (body: any): string[] => (body.errors ?? []).map((e: any) => e.extensions?.code);

describe("GraphQL protocol", () => {
  let s: TestServer;
  let customer: string;
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.keys.acme}`, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  beforeAll(async () => {
    s = await startTestServer();
    const created = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
    expect(created.status).toBe(201);
    customer = created.body.id;
  });
  afterAll(async () => s?.close());

  it(
    "APQ over POST: hash alone is PersistedQueryNotFound, hash and query runs and stores it, then the hash " +
      "alone runs",
    async () => {
      const query = `query Customer($id: ID!) { node(id: $id) { id ... on Customer { name } } }`;
      const persistedQuery = { version: 1, sha256Hash: sha256(query) };
      const variables = { id: customer };
      const first = await post({ operationName: "Customer", variables, extensions: { persistedQuery } });
      expect(first.status).toBe(404);
      // what Apollo's link reads to send the query again: the message and the code
      expect(first.body.errors).toEqual([
        { message: "PersistedQueryNotFound", extensions: { code: "PERSISTED_QUERY_NOT_FOUND" } },
      ]);
      const second = await post({ operationName: "Customer", variables, query, extensions: { persistedQuery } });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({ data: { node: { id: customer, name: chileanCustomer().name } } });
      const third = await post({ operationName: "Customer", variables, extensions: { persistedQuery } });
      expect(third.status).toBe(200);
      expect(third.body).toEqual(second.body);
    },
  );

  it("APQ over GET, with extensions and variables in the query string as Apollo's link sends them", async () => {
    const query = `query Me { node(id: "${customer}") { id } }`;
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });
    const get = async (params: Record<string, string>) => {
      const res = await fetch(`${s.url}/graphql?${new URLSearchParams(params)}`, {
        headers: { authorization: `Bearer ${s.keys.acme}`, accept: "application/json" },
      });
      return { status: res.status, body: await res.json() };
    };
    const missing = await get({ operationName: "Me", variables: "{}", extensions });
    expect(missing.status).toBe(404);
    expect(codes(missing.body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
    const full = await get({ operationName: "Me", variables: "{}", extensions, query });
    expect(full).toEqual({ status: 200, body: { data: { node: { id: customer } } } });
    expect(await get({ operationName: "Me", variables: "{}", extensions })).toEqual(full);
  });

  it("refuse a query whose hash does not match, and store nothing under that hash", async () => {
    const query = `{ node(id: "${customer}") { id } }`;
    const wrong = { version: 1, sha256Hash: sha256("something else") };
    const res = await post({ query, extensions: { persistedQuery: wrong } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ message: "PersistedQueryMismatch", extensions: { code: "validation_error" } }]);
    const after = await post({ extensions: { persistedQuery: wrong } });
    expect(codes(after.body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
  });

  it("hold a persisted query to the same document limits", async () => {
    const aliased = Array.from({ length: 31 }, (_, i) => `a${i}: node(id: "x") { id }`).join(" ");
    const query = `{ ${aliased} }`;
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    const stored = await post({ query, extensions: { persistedQuery } });
    expect(codes(stored.body)).toEqual(["query_too_complex"]);
    const again = await post({ extensions: { persistedQuery } });
    expect(again.body.data).toBeUndefined();
    expect(codes(again.body)).toEqual(["query_too_complex"]);
  });

  it(
    "answer a body over 5 MiB with 413 payload_too_large in the GraphQL shape on /graphql and the REST " +
      "shape on /v1",
    async () => {
      const big = JSON.stringify({ query: "{ __typename }", variables: { pad: "x".repeat(MAX_BODY_BYTES) } });
      const graphql = await post(big);
      expect(graphql.status).toBe(413);
      expect(graphql.body).toEqual({
        errors: [
          { message: `The body is larger than ${MAX_BODY_BYTES} bytes`, extensions: { code: "payload_too_large" } },
        ],
      });
      const rest = await s.rest("POST", "/v1/customers/", { raw: big });
      expect(rest.status).toBe(413);
      expect(rest.body).toEqual({
        error: { code: "payload_too_large", message: `The body is larger than ${MAX_BODY_BYTES} bytes` },
      });
    },
  );

  it("answer Yoga's own errors with lower-case codes in the GraphQL shape, keeping their HTTP status", async () => {
    // Yoga's status for a parse error: 200 to a client that accepts application/json (GraphQL over
    // HTTP's legacy rule), 400 to one that accepts application/graphql-response+json
    const parse = await post({ query: "{ node(id: " });
    expect(parse.status).toBe(200);
    expect(codes(parse.body)).toEqual(["validation_error"]);
    expect(parse.body.errors[0].message).toMatch(/^Syntax Error/);
    const strict = await post({ query: "{ node(id: " }, { accept: "application/graphql-response+json" });
    expect(strict.status).toBe(400);
    expect(codes(strict.body)).toEqual(["validation_error"]);
    const missing = await post({ variables: {} });
    expect(missing.status).toBe(200); // Yoga's status, as for a parse error

    expect(missing.body.errors).toEqual([
      { message: "Must provide query string.", extensions: { code: "validation_error" } },
    ]);
    const notJson = await post("{not json");
    expect(notJson.status).toBe(400);
    expect(codes(notJson.body)).toEqual(["validation_error"]);
    const put = await fetch(`${s.url}/graphql`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.keys.acme}` },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    expect(put.status).toBe(405);
    expect(codes(await put.json())).toEqual(["method_not_allowed"]);
    // the REST adapter keeps working and keeps its shape
    const list = await s.rest("GET", "/v1/customers/");
    expect(list.status).toBe(200);
    expect(list.text).toContain(customer);
  });

  it(
    "name the subscription root SubscriptionRoot: in the committed SDL and introspection, the billing type " +
      "Subscription a Node; a subscription that does not accept Server-Sent Events is a 406 before it starts",
    async () => {
      // an SDL reader (codegen, relay-compiler, Apollo) takes a type named Subscription as the root unless a schema
      // block says otherwise
      const sdl = buildSchema(fs.readFileSync(SCHEMA_PATH, "utf8"));
      expect(sdl.getQueryType()?.name).toBe("Query");
      expect(sdl.getMutationType()?.name).toBe("Mutation");
      expect(sdl.getSubscriptionType()?.name).toBe("SubscriptionRoot");
      expect(Object.keys(sdl.getSubscriptionType()!.getFields())).toEqual(["events"]);
      // the billing type is still there, as a Node
      expect((sdl.getType("Subscription") as GraphQLObjectType).getInterfaces().map((i) => i.name)).toEqual(["Node"]);
      const introspection = await post({
        query: "{ __schema { queryType { name } mutationType { name } subscriptionType { name } } }",
      });
      expect(introspection).toEqual({
        status: 200,
        body: {
          data: {
            __schema: {
              queryType: { name: "Query" },
              mutationType: { name: "Mutation" },
              subscriptionType: { name: "SubscriptionRoot" },
            },
          },
        },
      });
      const message =
        "A subscription streams its results as Server-Sent Events: send it with `Accept: text/event-stream`.";
      for (const accept of ["application/json", "application/graphql-response+json"]) {
        const refused = await post({ query: "subscription { events { id } }" }, { accept });
        expect(refused, accept).toEqual({
          status: 406,
          body: { errors: [{ message, extensions: { code: "not_acceptable" } }] },
        });
      }
      // a subscription's document is validated as any other
      const invalid = await post({ query: "subscription Watch { id }" });
      expect(invalid.status).toBe(200);
      expect(invalid.body.errors).toEqual([
        {
          message: 'Cannot query field "id" on type "SubscriptionRoot".',
          locations: [{ line: 1, column: 22 }],
          extensions: { code: "validation_error" },
        },
      ]);
    },
  );
});
