/**
 * relay-compiler 21 (the real binary) compiles the Relay fixtures in test/relay/src against the
 * committed schema/schema.graphql with no error: a @connection paginated by a @refetchable
 * fragment on Query, a @refetchable fragment on a Node type (refetched through node(id:)), and a
 * subscription with its lines and scheduled change, a delete whose deletedId has @deleteRecord, a
 * finalized invoice's live `customer` beside its `issuedCustomer`.
 * test/integration/relay.test.ts runs them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { compileRelay, type RelayCompilation } from "./helpers/relay.js";

describe("relay-compiler over schema/schema.graphql", () => {
  let compiled: RelayCompilation;
  afterAll(() => compiled?.remove());

  it("compiles the fixtures with exit code 0, and validates them", () => {
    compiled = compileRelay();
    expect(compiled.status, compiled.output).toBe(0);
    expect(compiled.output).toContain("Compilation completed");
    expect(compiled.files).toEqual([
      "CustomerCardQuery.graphql.js",
      "CustomerCardRefetchQuery.graphql.js",
      "CustomerCard_customer.graphql.js",
      "CustomersListPaginationQuery.graphql.js",
      "CustomersListQuery.graphql.js",
      "CustomersList_query.graphql.js",
      "InvoiceCustomerQuery.graphql.js",
      "ProductDeleteMutation.graphql.js",
      "ProductDeleteQuery.graphql.js",
      "SubscriptionDetailQuery.graphql.js",
    ]);
    // a second run in validate mode finds the artifacts current (the output is deterministic)
    const validated = compiled.validate();
    expect(validated.status, validated.output).toBe(0);
  });

  it("generates the pagination query of the @connection and the node(id:) refetch query", () => {
    const list = compiled.artifact("CustomersList_query");
    expect(list.metadata.connection).toEqual([
      { count: "count", cursor: "cursor", direction: "forward", path: ["customers"] },
    ]);
    expect(list.metadata.refetch.operation.params.name).toBe("CustomersListPaginationQuery");
    const pagination = compiled.artifact("CustomersListPaginationQuery");
    expect(pagination.params.operationKind).toBe("query");
    // the connection's edges and pageInfo, as Relay's paging needs them
    expect(pagination.params.text).toMatch(/customers\(first: \$count, after: \$cursor\)/);
    for (const field of ["cursor", "endCursor", "hasNextPage", "__typename"])
      expect(pagination.params.text).toContain(field);

    const card = compiled.artifact("CustomerCard_customer");
    expect(card.metadata.refetch.fragmentPathInResult).toEqual(["node"]);
    expect(card.metadata.refetch.identifierInfo).toEqual({ identifierField: "id", identifierQueryVariableName: "id" });
    const refetch = compiled.artifact("CustomerCardRefetchQuery");
    expect(refetch.params.text).toMatch(/node\(id: \$id\)/);
  });

  it(
    "selects no id of a pending line's own (its deprecated String id is the replaced line's); the line it replaces " +
      "is a reference",
    () => {
      const text: string = compiled.artifact("SubscriptionDetailQuery").params.text;
      const pending = text.slice(text.indexOf("pendingChanges")).replace(/\s+/g, " ");
      expect(pending).toMatch(/^pendingChanges \{ cycle lines \{ quantity line \{ id quantity \} \} \}/);
    },
  );
});
