/**
 * No id is shared by two GraphQL types (Relay's store keys every record by its id alone). Node
 * types carry their own id prefix (src/graphql/builder.ts NODE_TYPES); the other types with an
 * `id: ID` are rows of their own tables with random ids (checked over a data set made through the
 * API); the reference data types keep their codes as ids (String, e.g. `CL`, `CLP`, `CL-RM`,
 * `CL33`), and the seeded sets are checked disjoint from each other and from every prefixed id.
 */
import fs from "node:fs";
import { buildSchema, getNamedType, isObjectType, type GraphQLObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_PATH } from "../../scripts/print-schema.js";
import { NODE_TYPES } from "../../src/graphql/builder.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

const sdl = buildSchema(fs.readFileSync(SCHEMA_PATH, "utf8"));
const objectTypes = Object.values(sdl.getTypeMap()).filter(
  (t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith("__"),
);
const idType = (t: GraphQLObjectType) => (t.getFields().id ? getNamedType(t.getFields().id.type).name : null);

/** Types with an `id: ID` that are not Nodes: embedded rows of their own tables, with their id prefix. */
const VALUE_ID_TYPES: Record<string, string> = {
  ApiKey: "key",
  Certificate: "cer",
  CreditNoteLine: "lin",
  InvoiceLine: "lin",
  Member: "mem",
  OrderLine: "lin",
  PaymentCharge: "chg",
  PendingInvoiceItem: "pii",
  SubscriptionLine: "lin",
};
/**
 * Reference data: the id is the code, a String (never auto-selected by relay-compiler, still the store key when
 * selected).
 */
const REFERENCE_TYPES = {
  Country: "countries",
  Currency: "currencies",
  State: "states",
  DocumentType: "documentTypes",
} as const;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

describe("ids in the schema", () => {
  it("every object type with an `id: ID` implements Node or is a listed value type", () => {
    const withId = objectTypes.filter((t) => idType(t) === "ID");
    const nodes = withId.filter((t) => t.getInterfaces().some((i) => i.name === "Node")).map((t) => t.name);
    const others = withId.filter((t) => !nodes.includes(t.name)).map((t) => t.name);
    expect(others.sort()).toEqual(Object.keys(VALUE_ID_TYPES).sort());
    // each Node type has a prefix of its own
    expect(nodes.sort()).toEqual(Object.values(NODE_TYPES).sort());
    expect(new Set(Object.values(NODE_TYPES)).size).toBe(Object.keys(NODE_TYPES).length);
  });

  it("no type but the reference data has a String id that is not deprecated", () => {
    const stringIds = objectTypes
      .filter((t) => idType(t) === "String" && !t.getFields().id.deprecationReason)
      .map((t) => t.name);
    // SubscriptionPendingLine.id (the replaced line's `lin_` id) is deprecated, so not listed;
    // PlanFrequency.id is a frequency's code (monthly, yearly...), never a record of its own
    expect(stringIds.filter((name) => name !== "PlanFrequency").sort()).toEqual(Object.keys(REFERENCE_TYPES).sort());
  });
});

describe("ids in the data", () => {
  /** every id of a reference connection, page by page */
  async function allIds(field: string): Promise<string[]> {
    const ids: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res = await s.graphql(
        `query($after: String) { ${field}(first: 100, after: $after) { edges { node { id } } pageInfo { hasNextPage ` +
          `endCursor } } }`,
        { after },
      );
      expect(res.body.errors).toBeUndefined();
      const page = res.body.data[field];
      ids.push(...page.edges.map((e: any) => e.node.id));
      if (!page.pageInfo.hasNextPage) return ids;
      after = page.pageInfo.endCursor;
    }
  }

  it("the seeded reference data of the four types have disjoint ids, none like a prefixed id", async () => {
    const sets: Record<string, string[]> = {};
    for (const [type, field] of Object.entries(REFERENCE_TYPES)) sets[type] = await allIds(field);
    expect(sets.Country).toContain("CL");
    expect(sets.Currency).toContain("CLP");
    expect(sets.DocumentType).toContain("CL33");
    expect(sets.State.length).toBeGreaterThan(0);
    const owner = new Map<string, string>();
    const collisions: string[] = [];
    for (const [type, ids] of Object.entries(sets)) {
      expect(new Set(ids).size, `${type} ids repeat`).toBe(ids.length);
      for (const id of ids) {
        if (owner.has(id)) collisions.push(`${id}: ${owner.get(id)} and ${type}`);
        owner.set(id, type);
      }
    }
    expect(collisions).toEqual([]);
    const prefixes = [...Object.keys(NODE_TYPES), ...Object.values(VALUE_ID_TYPES)];
    expect([...owner.keys()].filter((id) => prefixes.some((p) => id.startsWith(`${p}_`)))).toEqual([]);
  });

  it("document lines, subscription lines and pending items have ids of their own, with their prefix", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const invoice = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        document: "CL33",
        lines: [
          { name: "Servicio", quantity: 1, amount: 1000 },
          { name: "Otro", quantity: 2, amount: 500 },
        ],
      },
    });
    expect(invoice.status, JSON.stringify(invoice.body)).toBe(201);
    const order = await s.rest("POST", "/v1/orders/", {
      body: { customer, lines: [{ name: "Cajas", quantity: 2, amount: 1000 }] },
    });
    expect(order.status, JSON.stringify(order.body)).toBe(201);
    const product = await s.rest("POST", "/v1/products/", {
      body: {
        name: "Nube",
        plans: [
          { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
          { name: "Business", amount: 25000, currency: "CLP", frequency: "monthly" },
        ],
      },
    });
    const [pro, business] = product.body.plans;
    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: { customer, date_start: "2026-11-01", lines: [{ plan: pro.id }] },
    });
    await s.database.prisma.subscription.update({
      where: { id: sub.body.id },
      data: { nextBillingCycle: 2, nextBilling: new Date("2026-12-01"), previousBilling: new Date("2026-11-01") },
    });
    // an upgrade mid-cycle: prorated pending items
    const upgraded = await s.rest("PATCH", `/v1/subscriptions/${sub.body.id}/`, {
      body: { lines: [{ plan: business.id }], proration_date: "2026-11-16" },
    });
    expect(upgraded.status, JSON.stringify(upgraded.body)).toBe(200);

    const res = await s.graphql(
      `query($invoice: ID!, $order: ID!, $sub: ID!) {
        invoice: node(id: $invoice) { ... on Invoice { lines { __typename id } } }
        order: node(id: $order) { ... on Order { lines { __typename id } } }
        sub: node(id: $sub) { ... on Subscription { lines { __typename id } pendingInvoiceItems { __typename id } } }
      }`,
      { invoice: invoice.body.id, order: order.body.id, sub: sub.body.id },
    );
    expect(res.body.errors).toBeUndefined();
    const records: { __typename: string; id: string }[] = [
      ...res.body.data.invoice.lines,
      ...res.body.data.order.lines,
      ...res.body.data.sub.lines,
      ...res.body.data.sub.pendingInvoiceItems,
    ];
    expect(records.map((r) => r.__typename)).toEqual([
      "InvoiceLine",
      "InvoiceLine",
      "OrderLine",
      "SubscriptionLine",
      "PendingInvoiceItem",
      "PendingInvoiceItem",
    ]);
    for (const r of records)
      expect(r.id.startsWith(`${VALUE_ID_TYPES[r.__typename]}_`), `${r.__typename} ${r.id}`).toBe(true);
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
  });
});
