/**
 * A frontend's GraphQL code as docs/graphql.md "Typed documents for a frontend" writes it: documents in
 * graphql-codegen's client preset (`graphql()` from the generated `./gql`), sent with fetch, the answers read with
 * their generated types. test/integration/graphql-codegen-client.test.ts generates `./gql` from the committed
 * schema, compiles this file under `strict` with no non-null assertion, and runs it against the service
 * (BILLING_URL, BILLING_API_KEY).
 */
import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { graphql } from "./gql/index.js";

/** Runs `document` with `variables`; the typed `data`, or an Error with the answer's errors. */
async function run<Result, Variables>(document: TypedDocumentNode<Result, Variables>, variables: Variables) {
  const answer = await fetch(`${process.env.BILLING_URL}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${process.env.BILLING_API_KEY}` },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const body = (await answer.json()) as { data?: Result; errors?: { message: string }[] };
  if (body.errors?.length || !body.data) throw new Error(body.errors?.map((e) => e.message).join("; "));
  return body.data;
}

const CreateCustomer = graphql(`
  mutation CreateCustomer($input: CustomerInput!) {
    createCustomer(input: $input) {
      id
      name
      taxId
    }
  }
`);

const CreateInvoice = graphql(`
  mutation CreateInvoice($input: InvoiceInput!) {
    createInvoice(input: $input) {
      id
      total
      status
    }
  }
`);

const CustomerInvoices = graphql(`
  query CustomerInvoices($customer: String!, $first: Int!) {
    invoices(first: $first, where: { customer: { equals: $customer } }) {
      count {
        count
      }
      edges {
        node {
          id
          total
          status
          customer {
            name
          }
          lines {
            name
            quantity
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const { createCustomer } = await run(CreateCustomer, {
  input: { name: "Cliente Frontend SpA", taxId: "76.086.428-5", country: "CL" },
});
for (const amount of ["1000", "2000"]) {
  const { createInvoice } = await run(CreateInvoice, {
    input: { customer: createCustomer.id, lines: [{ name: "Consultoría", quantity: "1", amount }] },
  });
  console.log(`created ${createInvoice.status} ${createInvoice.total}`);
}
const { invoices } = await run(CustomerInvoices, { customer: createCustomer.id, first: 10 });
const totals = invoices.edges.map(
  (edge) => `${edge.node.customer.name}: ${edge.node.total} (${edge.node.lines.length})`,
);
console.log(`${invoices.count.count} invoices, more: ${invoices.pageInfo.hasNextPage}; ${totals.join(", ")}`);
