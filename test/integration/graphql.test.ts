import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { print } from "graphql";
import {
  RestCreateCustomerDocument,
  RestCreateInvoiceDocument,
  type RestCreateInvoiceMutation,
} from "../../src/graphql/generated/operations.js";
import { startTestServer, TEST_METRICS_TOKEN, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const CREATE_CUSTOMER =
  `mutation($input: CustomerInput!) { createCustomer(input: $input) { id name country { id } ` +
  `state { id } taxId } }`;
const CREATE_INVOICE =
  `mutation($input: InvoiceInput!) { createInvoice(input: $input) { id status amount tax total ` +
  `currency { id } lines { name total } } }`;

describe("GraphQL at /graphql", () => {
  it("creates, reads through node(), lists with totalCount and finalizes", async () => {
    const c = await s.graphql(CREATE_CUSTOMER, {
      input: { name: "Cliente GQL", country: "CL", state: "CL-VS", taxId: "77879240-0" },
    });
    expect(c.body.errors).toBeUndefined();
    expect(c.body.data.createCustomer).toMatchObject({
      name: "Cliente GQL",
      country: { id: "CL" },
      state: { id: "CL-VS" },
      taxId: "77879240-0",
    });
    const customer = c.body.data.createCustomer.id;

    const inv = await s.graphql(CREATE_INVOICE, {
      input: { customer, lines: [{ name: "A", quantity: "2.5", amount: "1234.5", discount: "12.5" }] },
    });
    expect(inv.body.errors).toBeUndefined();
    expect(inv.body.data.createInvoice).toMatchObject({
      status: "draft",
      amount: "2700",
      tax: "513",
      total: "3213",
      currency: { id: "CLP" },
      lines: [{ name: "A", total: "2700" }],
    });
    const id = inv.body.data.createInvoice.id;

    const node = await s.graphql(
      `query($id: ID!) { node(id: $id) { id __typename ... on Invoice { customer { id } document { id } } } }`,
      { id },
    );
    expect(node.body.data.node).toEqual({
      id,
      __typename: "Invoice",
      customer: { id: customer },
      document: { id: "CL33" },
    });

    const list = await s.graphql(
      `{ invoices(first: 10, where: { status: { equals: draft } }) { totalCount edges { cursor node { id } } ` +
        `pageInfo { hasNextPage } } }`,
    );
    expect(list.body.data.invoices.totalCount).toBe(1);
    expect(list.body.data.invoices.edges[0].node.id).toBe(id);

    const fin = await s.graphql(`mutation($id: ID!) { finalizeInvoice(id: $id) { status number } }`, { id });
    expect(fin.body.data.finalizeInvoice).toEqual({ status: "finalized", number: 1 });

    const upd = await s.graphql(`mutation($id: ID!) { updateInvoice(id: $id, input: { note: "x" }) { id } }`, { id });
    expect(upd.body.errors[0].extensions.code).toBe("invalid_state");
    const del = await s.graphql(`mutation($id: ID!) { deleteInvoice(id: $id) { deleted } }`, { id });
    expect(del.body.errors[0].extensions.code).toBe("invalid_state");
  });

  it("runs the typed documents codegen generates (the ones the REST adapter uses)", async () => {
    const customer = await s.graphql(print(RestCreateCustomerDocument), { input: { name: "Typed", country: "CL" } });
    const res = await s.graphql(print(RestCreateInvoiceDocument), {
      input: { customer: customer.body.data.createCustomer.id, lines: [{ name: "x", quantity: "1", amount: "2350" }] },
    });
    const invoice: RestCreateInvoiceMutation["createInvoice"] = res.body.data.createInvoice;
    expect(invoice).toMatchObject({
      amount: "2350",
      tax: "447",
      total: "2797",
      document: { id: "CL33" },
      customer: { id: customer.body.data.createCustomer.id },
      issuedCustomer: { name: "Typed" },
    });
  });

  it("pages connections with cursors the REST pages share", async () => {
    const page = await s.graphql(
      `{ states(first: 5, country: { equals: "CL" }) { totalCount edges { cursor node { id } } pageInfo { endCursor ` +
        `hasNextPage } } }`,
    );
    const { states } = page.body.data;
    expect(states.totalCount).toBe(16);
    expect(states.edges).toHaveLength(5);
    expect(states.pageInfo.hasNextPage).toBe(true);
    const next = await s.graphql(
      `query($after: String) { states(first: 5, after: $after, country: { equals: "CL" }) { edges { node { id } } } }`,
      { after: states.pageInfo.endCursor },
    );
    const rest = await s.rest("GET", "/v1/generals/states/?country=CL&page=2&page_size=5");
    expect(next.body.data.states.edges.map((e: any) => e.node.id)).toEqual(rest.body.results.map((r: any) => r.id));
  });

  it("returns validation errors with code and field paths", async () => {
    const res = await s.graphql(CREATE_CUSTOMER, { input: { country: "XX", state: "TOOLONGSTATE" } });
    expect(res.body.errors[0].extensions.code).toBe("validation_error");
    expect(Object.keys(res.body.errors[0].extensions.fields).sort()).toEqual(["country", "state"]);
    const typed = await s.graphql(CREATE_INVOICE, { input: { lines: [{ name: "x", amount: "ten" }] } });
    expect(typed.body.errors[0].extensions.code).toBe("validation_error");
    expect(typed.body.errors[0].extensions.fields).toHaveProperty(["lines.0.amount"]);
  });

  it("rejects requests without a valid key with 401", async () => {
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ currencies { totalCount } }" }),
    });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.errors[0].extensions.code).toBe("authentication_required");
  });

  it("does not leak other tenants' nodes", async () => {
    const c = await s.graphql(CREATE_CUSTOMER, { input: { name: "Secret" } }, s.keys.other);
    const id = c.body.data.createCustomer.id;
    const res = await s.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id });
    expect(res.body.data.node).toBeNull();
    const list = await s.graphql(`{ customers(where: { name: { equals: "Secret" } }) { totalCount } }`);
    expect(list.body.data.customers.totalCount).toBe(0);
  });

  it("serves health, readiness and metrics", async () => {
    expect(await (await fetch(`${s.url}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).status).toBe("ready");
    const metrics = await (
      await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } })
    ).text();
    expect(metrics).toContain("billing_http_requests_total");
  });
});
