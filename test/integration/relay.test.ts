/**
 * relay-runtime 21 against the real service: the artifacts relay-compiler compiles from
 * test/relay/src (test/helpers/relay.ts) run in a Relay Environment whose network posts to the
 * test server's /graphql. A @connection paged forward with its compiled pagination query, a Node
 * refetched through node(id:), a subscription with a scheduled change normalized, a delete's
 * deletedId removing the record (@deleteRecord), and a finalized invoice's customer beside the
 * customer it was issued to after a rename. Relay reports ids shared by two types (and other
 * store conflicts) with console.error in development: any console.error or console.warn fails
 * the test.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import {
  commitMutation,
  ConnectionHandler,
  createOperationDescriptor,
  Environment,
  fetchQuery,
  getSelector,
  Network,
  RecordSource,
  Store,
  type GraphQLResponse,
  type SingularReaderSelector,
} from "relay-runtime";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { compileRelay, type RelayCompilation } from "../helpers/relay.js";

let s: TestServer;
let relay: RelayCompilation;
let consoleError: MockInstance;
let consoleWarn: MockInstance;

async function created(path: string, body: unknown) {
  const res = await s.rest("POST", path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A Relay environment over real HTTP, as an application builds it; `requests` records the operations sent. */
function environment(requests: string[] = []) {
  const network = Network.create(async (params, variables) => {
    requests.push(params.name);
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.keys.acme}` },
      body: JSON.stringify({ query: params.text, variables }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as GraphQLResponse;
  });
  return new Environment({ network, store: new Store(new RecordSource()) });
}

/** What a fragment reads from the store, as useFragment would. */
function readFragment(env: Environment, fragment: unknown, reference: unknown) {
  const selector = getSelector(fragment as never, reference as never) as SingularReaderSelector;
  return env.lookup(selector).data as any;
}

beforeAll(async () => {
  relay = compileRelay();
  expect(relay.status, relay.output).toBe(0);
  s = await startTestServer();
});
afterAll(async () => {
  relay?.remove();
  await s?.close();
});
beforeEach(() => {
  consoleError = vi.spyOn(console, "error");
  consoleWarn = vi.spyOn(console, "warn");
});
afterEach(() => {
  const calls = [...consoleError.mock.calls, ...consoleWarn.mock.calls];
  consoleError.mockRestore();
  consoleWarn.mockRestore();
  expect(calls, "relay-runtime warned").toEqual([]);
});

describe("relay-runtime over /graphql", () => {
  it(
    "pages a @connection forward with the compiled pagination query, merging the pages into one " + "connection",
    async () => {
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++)
        ids.push(
          (await created("/v1/customers/", chileanCustomer({ name: `Cliente ${i}`, email: `c${i}@cliente.cl` }))).id,
        );
      // the service's order (newest first), read without Relay
      const all = await s.graphql(`{ customers(first: 10) { edges { node { id } } } }`);
      const order: string[] = all.body.data.customers.edges.map((e: any) => e.node.id);
      expect([...order].sort()).toEqual([...ids].sort());

      const requests: string[] = [];
      const env = environment(requests);
      const query = relay.artifact("CustomersListQuery");
      const fragment = relay.artifact("CustomersList_query");
      const pagination = relay.artifact("CustomersListPaginationQuery");
      const operation = createOperationDescriptor(query, {});
      await fetchQuery(env, query, {}).toPromise();
      const root = env.lookup(operation.fragment).data;
      const read = () => readFragment(env, fragment, root).customers;

      let page = read();
      expect(page.totalCount).toBe(5);
      expect(page.edges.map((e: any) => e.node.id)).toEqual(order.slice(0, 2));
      expect(page.pageInfo.hasNextPage).toBe(true);
      // loadNext: the pagination query from the connection's end cursor; Relay's connection handler appends its edges
      while (page.pageInfo.hasNextPage) {
        await fetchQuery(env, pagination, { count: 2, cursor: page.pageInfo.endCursor }).toPromise();
        page = read();
      }
      expect(page.edges.map((e: any) => e.node.id)).toEqual(order);
      expect(page.edges.map((e: any) => e.node.name)).toEqual(order.map((id) => `Cliente ${ids.indexOf(id) + 1}`));
      expect(requests).toEqual(["CustomersListQuery", "CustomersListPaginationQuery", "CustomersListPaginationQuery"]);
      // one connection record in the store, under the @connection key, holding every edge
      const source = env.getStore().getSource();
      const connectionId = ConnectionHandler.getConnectionID("client:root", "CustomersList_customers");
      expect((source.get(connectionId)?.edges as { __refs: string[] }).__refs).toHaveLength(5);
      for (const [i, id] of ids.entries())
        expect(source.get(id)).toMatchObject({
          __typename: "Customer",
          name: `Cliente ${i + 1}`,
          email: `c${i + 1}@cliente.cl`,
        });
    },
  );

  it("refetches a Node through node(id:) with the compiled refetch query", async () => {
    const customer = await created("/v1/customers/", chileanCustomer({ name: "Antes SpA" }));
    const env = environment();
    const query = relay.artifact("CustomerCardQuery");
    const fragment = relay.artifact("CustomerCard_customer");
    await fetchQuery(env, query, { id: customer.id }).toPromise();
    const root = env.lookup(createOperationDescriptor(query, { id: customer.id }).fragment).data as any;
    expect(readFragment(env, fragment, root.node.customer)).toEqual({
      id: customer.id,
      name: "Antes SpA",
      email: "pagos@cliente.cl",
      taxId: "76042235-5",
    });

    expect(
      (
        await s.rest("PATCH", `/v1/customers/${customer.id}/`, {
          body: { name: "Después SpA", email: "nuevo@cliente.cl" },
        })
      ).status,
    ).toBe(200);
    // refetch(): the generated query with the fragment's id
    const refetch = relay.artifact("CustomerCardRefetchQuery");
    expect(fragment.metadata.refetch.operation).toBe(refetch);
    await fetchQuery(env, refetch, { id: customer.id }).toPromise();
    expect(readFragment(env, fragment, root.node.customer)).toEqual({
      id: customer.id,
      name: "Después SpA",
      email: "nuevo@cliente.cl",
      taxId: "76042235-5",
    });
    expect(env.getStore().getSource().get(customer.id)).toMatchObject({ __typename: "Customer", name: "Después SpA" });
  });

  it(
    "normalizes a subscription with a scheduled change: the current line keeps its record, the pending lines are " +
      "the change's",
    async () => {
      const customer = await created("/v1/customers/", chileanCustomer());
      const [pro, business] = (
        await created("/v1/products/", {
          name: "Nube",
          plans: [
            { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
            { name: "Business", amount: 25000, currency: "CLP", frequency: "monthly" },
          ],
        })
      ).plans;
      const sub = await created("/v1/subscriptions/", {
        customer: customer.id,
        date_start: "2026-11-01",
        lines: [{ plan: business.id, quantity: 2 }],
      });
      // cycle 1 billed (as in test/integration/proration.test.ts), so a line change can wait for the renewal
      await s.database.prisma.subscription.update({
        where: { id: sub.id },
        data: { nextBillingCycle: 2, nextBilling: new Date("2026-12-01"), previousBilling: new Date("2026-11-01") },
      });
      const scheduled = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: pro.id, quantity: 3 }], at_period_end: true },
      });
      expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
      expect(scheduled.body.pending_changes).toMatchObject({ cycle: 2, lines: [{ plan: pro.id, quantity: 3 }] });

      const env = environment();
      const query = relay.artifact("SubscriptionDetailQuery");
      const data = (await fetchQuery(env, query, { id: sub.id }).toPromise()) as any;
      const line = sub.lines[0].id as string;
      expect(data.node).toEqual({
        nextBillingCycle: 2,
        lines: [{ id: line, quantity: "2", plan: { name: "Business" } }],
        pendingChanges: { cycle: 2, lines: [{ quantity: "3", line: { id: line, quantity: "2" } }] },
      });
      const source = env.getStore().getSource();
      expect(source.get(sub.id)).toMatchObject({ __typename: "Subscription", nextBillingCycle: 2 });
      expect(source.get(line)).toMatchObject({ __typename: "SubscriptionLine", quantity: "2" });
      // the pending change and its lines are client records under the subscription, not the line's record
      const pending = source.get((source.get(sub.id)!.pendingChanges as { __ref: string }).__ref)!;
      expect(pending).toMatchObject({ __typename: "SubscriptionPendingChanges", cycle: 2 });
      const pendingLine = source.get((pending.lines as { __refs: string[] }).__refs[0])!;
      expect(pendingLine).toMatchObject({ __typename: "SubscriptionPendingLine", quantity: "3" });
      expect(pendingLine.__id).not.toBe(line);
      // ... which points at the current line's record (the one it replaces) rather than repeating its id
      expect(pendingLine.line).toEqual({ __ref: line });
    },
  );

  it("removes a deleted record with @deleteRecord on the payload's deletedId", async () => {
    const product = await created("/v1/products/", { name: "Efímero" });
    const env = environment();
    await fetchQuery(env, relay.artifact("ProductDeleteQuery"), { id: product.id }).toPromise();
    expect(env.getStore().getSource().get(product.id)).toMatchObject({ __typename: "Product", name: "Efímero" });
    const response = await new Promise<any>((resolve, reject) =>
      commitMutation(env, {
        mutation: relay.artifact("ProductDeleteMutation"),
        variables: { id: product.id },
        onCompleted: resolve,
        onError: reject,
      }),
    );
    expect(response).toEqual({ deleteProduct: { deletedId: product.id, deleted: true, archived: false } });
    expect(env.getStore().getSource().get(product.id)).toBeNull(); // deleted from the store
    expect((await s.rest("GET", `/v1/products/${product.id}/`)).status).toBe(404);
  });

  it(
    "keeps a renamed customer's new name and a finalized invoice's issued name apart, in either order: the " +
      "invoice's customer is the live Customer record, its issuedCustomer a record inside the invoice",
    async () => {
      const customer = await created("/v1/customers/", chileanCustomer({ name: "Emitida SpA" }));
      const invoice = await created("/v1/invoices/", {
        customer: customer.id,
        lines: [{ name: "Consultoría", amount: 1000 }],
      });
      expect((await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`)).status).toBe(200);
      const renamed = await s.rest("PATCH", `/v1/customers/${customer.id}/`, { body: { name: "Renombrada SpA" } });
      expect(renamed.status).toBe(200);

      const invoiceQuery = relay.artifact("InvoiceCustomerQuery");
      const customerQuery = relay.artifact("CustomerCardQuery");
      const card = relay.artifact("CustomerCard_customer");
      for (const order of [
        ["invoice", "customer"],
        ["customer", "invoice"],
      ]) {
        const env = environment();
        for (const query of order)
          if (query === "invoice") await fetchQuery(env, invoiceQuery, { id: invoice.id }).toPromise();
          else await fetchQuery(env, customerQuery, { id: customer.id }).toPromise();

        // what the invoice's screen reads: the customer now, and the customer as issued
        const read = env.lookup(createOperationDescriptor(invoiceQuery, { id: invoice.id }).fragment).data as any;
        expect(read.node, order.join(" then ")).toEqual({
          number: 1,
          customer: { id: customer.id, name: "Renombrada SpA" },
          issuedCustomer: { name: "Emitida SpA", taxId: "76042235-5" },
        });
        // what the customer's own page reads
        const root = env.lookup(createOperationDescriptor(customerQuery, { id: customer.id }).fragment).data as any;
        expect(readFragment(env, card, root.node.customer).name).toBe("Renombrada SpA");

        // one Customer record, the live one; the issued customer is a client record of the invoice
        const source = env.getStore().getSource();
        expect(source.get(customer.id)).toMatchObject({ __typename: "Customer", name: "Renombrada SpA" });
        const issued = (source.get(invoice.id)!.issuedCustomer as { __ref: string }).__ref;
        expect(issued).toMatch(/^client:/);
        expect(source.get(issued)).toMatchObject({ __typename: "IssuedCustomer", name: "Emitida SpA" });
      }
    },
  );

  it(
    "would fail on an id shared by two types: Relay warns through console.error (the check the other tests " +
      "rely on)",
    async () => {
      const customer = await created("/v1/customers/", chileanCustomer());
      consoleError.mockImplementation(() => {}); // the warning is expected here
      const env = environment();
      const query = relay.artifact("CustomerCardQuery");
      await fetchQuery(env, query, { id: customer.id }).toPromise();
      const operation = createOperationDescriptor(query, { id: customer.id });
      // a response giving the customer's id to another type, as pending lines and delete payloads did
      env.commitPayload(operation, { node: { __typename: "Invoice", id: customer.id } });
      const warnings = consoleError.mock.calls.map((call) => String(call[0]));
      consoleError.mockClear();
      expect(warnings.some((w) => w.includes("globally unique id requirement"))).toBe(true);
    },
  );
});
