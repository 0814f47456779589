/**
 * A connection's joined read selects the columns its GraphQL selection reads (graphql/narrow-selection.ts):
 * exposed columns, relations, fields that declare their columns; a level with any other field keeps all of
 * its columns. The answers are those of the same fields read through `node(id:)`, which Pothos plans
 * with every column.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  for (let i = 0; i < 3; i++) {
    const invoice = (
      await s.rest("POST", "/v1/invoices/", {
        body: {
          customer,
          lines: [
            { name: `a${i}`, amount: 100 + i },
            { name: "b", quantity: "1.5", amount: 200 },
          ],
        },
      })
    ).body;
    if (i > 0) await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`);
  }
});
afterAll(async () => s?.close());

const FIELDS = `id number date total status discountScheme customer { id name country { id name } }
  lines { id name quantity amount total discountScheme } payments { id amount status }`;

/** The joined statement a request sends (infra/sql/joined-reads.ts), and its answer. */
async function joined(query: string) {
  s.statements.length = 0;
  const res = await s.graphql(query);
  expect(res.body.errors).toBeUndefined();
  const statements = s.statements.filter((sql) => /^SELECT row_to_json\(s\) AS r FROM/.test(sql));
  expect(statements).toHaveLength(1);
  return { sql: statements[0]!, data: res.body.data };
}

describe("a page's joined read", () => {
  it("selects only the columns its fields read, at every level, and answers as node(id:) does", async () => {
    const { sql, data } = await joined(`{ invoices(first: 10) { edges { node { ${FIELDS} } } } }`);
    for (const column of ['"total"', '"status"', '"discountScheme"', '"quantity"', '"name"'])
      expect(sql).toContain(column);
    // columns no selected field reads
    for (const column of ['"customerSnapshot"', '"issuerSnapshot"', '"metadata"', '"taxSettings"', '"nameEn"'])
      expect(sql).not.toContain(column);
    const nodes = data.invoices.edges.map((e: { node: { id: string } }) => e.node);
    expect(nodes).toHaveLength(3);
    for (const node of nodes) {
      const byId = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Invoice { ${FIELDS} } } }`, {
        id: node.id,
      });
      expect(byId.body.data.node).toEqual(node);
    }
  });

  it("keeps every column of a level where a field's resolver may read any (issuedCustomer, issuer)", async () => {
    for (const field of ["issuedCustomer { name }", "issuer { __typename }"]) {
      const { sql, data } = await joined(
        `{ invoices(first: 10) { edges { node { id ${field} customer { name } lines { name } } } } }`,
      );
      expect(sql).toContain('"customerSnapshot"');
      expect(data.invoices.edges).toHaveLength(3);
    }
    // a field that declares its columns (Customer.contacts: select { contacts: true }) keeps its level narrow
    const { sql } = await joined(`{ invoices(first: 10) { edges { node { id customer { id contacts { name } } } } } }`);
    expect(sql).toContain('"contacts"');
    expect(sql).not.toContain('"taxSettings"');
    expect(sql).not.toContain('"customerSnapshot"');
  });
});
