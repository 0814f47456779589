/**
 * Apollo Client 4 with its persisted-queries link, unmodified, against the test server: the first
 * run of a query sends only its sha256 hash, gets PERSISTED_QUERY_NOT_FOUND and sends it again
 * with the query; the second run sends only the hash and gets the data (docs/graphql.md
 * "Persisted queries"). A fetch wrapper records what goes over the wire.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("Apollo Client's persisted-queries link", () => {
  let s: TestServer;
  let customer: string;
  beforeAll(async () => {
    s = await startTestServer();
    const created = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Apollo SpA" }) });
    expect(created.status).toBe(201);
    customer = created.body.id;
  });
  afterAll(async () => s?.close());

  it("sends the hash, falls back to the query on PERSISTED_QUERY_NOT_FOUND, then sends the hash alone", async () => {
    const sent: { body: any; status: number }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      sent.push({ body: JSON.parse(String(init?.body)), status: res.status });
      return res;
    };
    const client = new ApolloClient({
      link: ApolloLink.from([
        new PersistedQueryLink({ sha256 }),
        new HttpLink({
          uri: `${s.url}/graphql`,
          fetch: recording,
          headers: { authorization: `Bearer ${s.keys.acme}` },
        }),
      ]),
      cache: new InMemoryCache(),
    });
    const query = gql`
      query ApolloCustomer($id: ID!) {
        node(id: $id) {
          id
          ... on Customer {
            name
          }
        }
      }
    `;
    const first = await client.query({ query, variables: { id: customer }, fetchPolicy: "network-only" });
    expect(first.error).toBeUndefined();
    expect(first.data).toEqual({ node: { __typename: "Customer", id: customer, name: "Apollo SpA" } });
    const second = await client.query({ query, variables: { id: customer }, fetchPolicy: "network-only" });
    expect(second.data).toEqual(first.data);

    // the query text Apollo sends (with the __typename fields its cache adds) and its hash
    const text: string = sent[1].body.query;
    expect(text).toContain("query ApolloCustomer");
    // Apollo Client 4 also names itself in extensions.clientLibrary; the service ignores it
    const extensions = {
      persistedQuery: { version: 1, sha256Hash: sha256(text) },
      clientLibrary: { name: "@apollo/client", version: expect.any(String) },
    };
    expect(sent).toEqual([
      { status: 404, body: { operationName: "ApolloCustomer", variables: { id: customer }, extensions } },
      { status: 200, body: { operationName: "ApolloCustomer", variables: { id: customer }, query: text, extensions } },
      { status: 200, body: { operationName: "ApolloCustomer", variables: { id: customer }, extensions } },
    ]);
  });
});
