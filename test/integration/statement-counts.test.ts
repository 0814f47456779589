/**
 * SQL statements per request (docs/performance.md "Statements per request"), counted at the driver
 * adapter (test/helpers/server.ts `statements`: every statement sent, BEGIN/COMMIT included), and
 * the API key cache (services/api-key-cache.ts): revocation and expiry at once, bounded, unknown
 * keys never cached.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, statementTable, type TestServer } from "../helpers/server.js";
import { authenticate, createApiKey, revokeApiKey } from "../../src/services/api-keys.js";
import { ApiKeyCache } from "../../src/services/api-key-cache.js";
import { Plan } from "@pothos/selection-mapper";
import { TEST_DB } from "../helpers/databases.js";

let s: TestServer;
let customer: string;
beforeAll(async () => {
  s = await startTestServer();
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

/**
 * The tables of the statements `run` sends, without the rate limit's (on PostgreSQL one per request: its test is
 * below). `withoutKey`: leaves out the API key's too (a SELECT when its cached entry has ended, the `lastUsedAt`
 * UPDATE once a minute), which depend on timing; the key cache's own tests below count those.
 */
async function statementsOf(run: () => Promise<unknown>, withoutKey = false): Promise<string[]> {
  s.statements.length = 0;
  await run();
  return s.statements.map(statementTable).filter((t) => t !== "RateLimit" && (!withoutKey || t !== "ApiKey"));
}

/**
 * A read's statements as a multiset: Prisma sends the relation reads of one level concurrently
 * (on PostgreSQL each on its own pooled connection), so they arrive in no fixed order.
 */
const sorted = (tables: string[]) => [...tables].sort();

const THREE_LINES = [
  { name: "a", amount: 100 },
  { name: "b", amount: 200 },
  { name: "c", amount: 300 },
];
const PAGE =
  `{ invoices(first: 50) { edges { node { id total customer { name country { name } } lines { name total ` +
  `} payments { id amount } } } } }`;

describe("statements per request", () => {
  it(
    "GET /v1/invoices/{id}/: no API key statement once the key is cached; the invoice and all its relations in one " +
      "statement",
    async () => {
      const id = (await s.rest("POST", "/v1/invoices/", { body: { customer, lines: THREE_LINES } })).body.id;
      let body: any;
      // the invoice read over REST; the statements it sent, the API key's aside
      const retrieve = () =>
        statementsOf(async () => {
          const res = await s.rest("GET", `/v1/invoices/${id}/`);
          expect(res.status).toBe(200);
          body = res.body;
        }, true);
      const got = await retrieve();
      // customer, its country, document type, currency, lines and payments (with their source,
      // customer and invoice) as nested JSON of one SELECT (infra/sql/joined-reads.ts)
      expect(got).toEqual(["Invoice (joined)"]);
      expect(body.lines.map((l: any) => [l.name, l.amount])).toEqual([
        ["a", 100],
        ["b", 200],
        ["c", 300],
      ]);
      expect(body.customer.id).toBe(customer);
      expect(body.document.id).toBe("CL33");
      // finalized, partly paid, partly credited (and a draft note, which does not count): still one statement, the
      // payments and notes read with it (graphql/types/invoice.ts balanceSelection)
      expect((await s.rest("GET", `/v1/invoices/${id}/finalize/`)).status).toBe(200);
      const card = (
        await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token: "tok_visa" } } })
      ).body.id;
      const pay = await s.rest("POST", "/v1/payments/", {
        body: { amount: 100, currency: "CLP", customer, invoice: id, description: "Abono" },
      });
      expect((await s.rest("POST", `/v1/payments/${pay.body.id}/authorize/`, { body: { source: card } })).status).toBe(
        200,
      );
      for (const finalize of [true, false]) {
        const note = await s.rest("POST", "/v1/creditnotes/", {
          body: { invoice: id, lines: [{ name: "Descuento", amount: 50 }] },
        });
        expect(note.status, note.text).toBe(201);
        if (finalize) expect((await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`)).status).toBe(200);
      }
      const finalized = await retrieve();
      expect(finalized).toEqual(["Invoice (joined)"]);
      // 714 = 600 + 19 % IVA; 100 paid; a note of 50 + 19 % = 59.5, rounded to 60 CLP
      expect([body.amount_paid, body.amount_due, body.payment_status]).toEqual([100, 554, "partially_paid"]);
    },
  );

  it(
    "a GraphQL page of 50 invoices with customer, country, lines and payments: one statement whatever the page " +
      "size; by cursor two; totalCount one more",
    async () => {
      const addInvoices = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const other = (
            await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: `Cliente ${n}-${i}` }) })
          ).body.id;
          expect(
            (await s.rest("POST", "/v1/invoices/", { body: { customer: other, lines: THREE_LINES } })).status,
          ).toBe(201);
        }
      };
      await addInvoices(2);
      const small = await statementsOf(async () => expect((await s.graphql(PAGE)).body.errors).toBeUndefined(), true);
      await addInvoices(8);
      let page: any;
      const large = await statementsOf(async () => (page = (await s.graphql(PAGE)).body), true);
      expect(page.errors).toBeUndefined();
      expect(page.data.invoices.edges.length).toBeGreaterThanOrEqual(10);
      expect(
        page.data.invoices.edges.every(
          (e: any) => e.node.lines.length === 3 && e.node.customer.country.name === "Chile",
        ),
      ).toBe(true);
      expect(large).toEqual(small);
      expect(large).toEqual(["Invoice (joined)"]);
      // the next page by cursor: the keyset condition (on created) is Prisma's, then the joined
      // read of those ids; totalCount adds its COUNT
      const first = await s.graphql(`{ invoices(first: 3) { pageInfo { endCursor } } }`);
      const cursorPage =
        `{ invoices(first: 3, after: "${first.body.data.invoices.pageInfo.endCursor}") { totalCount ` +
        `edges { node { id lines { name } customer { country { name } } } } } }`;
      let next: any;
      const paged = await statementsOf(async () => (next = (await s.graphql(cursorPage)).body), true);
      expect(next.errors).toBeUndefined();
      expect(next.data.invoices.edges).toHaveLength(3);
      expect(sorted(paged)).toEqual(sorted(["Invoice", "Invoice (joined)", "Invoice"]));
    },
  );

  it(
    "GET /v1/invoices/: a page of finalized invoices with amount_paid and amount_due in two statements, whatever " +
      "its size",
    async () => {
      const listed = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Lista" }) })).body.id;
      const card = (
        await s.rest("POST", "/v1/sources/", {
          body: { gateway: "test", customer: listed, data: { token: "tok_visa" } },
        })
      ).body.id;
      const addFinalized = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const id = (await s.rest("POST", "/v1/invoices/", { body: { customer: listed, lines: THREE_LINES } })).body
            .id;
          expect((await s.rest("GET", `/v1/invoices/${id}/finalize/`)).status).toBe(200);
          // half of them partly paid
          if (i % 2 === 0) {
            const pay = await s.rest("POST", "/v1/payments/", {
              body: { amount: 100, currency: "CLP", customer: listed, invoice: id, description: "Abono" },
            });
            const paid = await s.rest("POST", `/v1/payments/${pay.body.id}/authorize/`, { body: { source: card } });
            expect(paid.body.status).toBe("succeeded");
          }
        }
      };
      const page = (size: number) => async () => {
        const res = await s.rest("GET", `/v1/invoices/?customer=${listed}&page_size=${size}`);
        expect(res.status).toBe(200);
        return res.body;
      };
      await addFinalized(2);
      const small = await statementsOf(page(2), true);
      await addFinalized(8);
      let body: any;
      const large = await statementsOf(async () => (body = await page(50)()), true);
      expect(body.results).toHaveLength(10);
      // 714 = 600 + 19 % IVA; every other invoice has 100 paid
      expect(body.results.map((r: any) => [r.amount_paid, r.amount_due]).sort()).toEqual([
        ...Array(5).fill([0, 714]),
        ...Array(5).fill([100, 614]),
      ]);
      // the page (joined, with every invoice's payments and notes for its balance) and its COUNT: no N+1
      expect(sorted(large)).toEqual(sorted(small));
      expect(sorted(large)).toEqual(sorted(["Invoice (joined)", "Invoice"]));
    },
  );

  it("GET /v1/creditnotes/: one page in the same statements at any size (voided_by read with the notes)", async () => {
    const customerOf = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Notas" }) })).body.id;
    const invoice = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer: customerOf, lines: [{ name: "Servicio", amount: 100000 }] },
      })
    ).body.id;
    expect((await s.rest("GET", `/v1/invoices/${invoice}/finalize/`)).status).toBe(200);
    const addNotes = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const note = await s.rest("POST", "/v1/creditnotes/", {
          body: { invoice, lines: [{ name: `Ajuste ${i}`, amount: 100 }] },
        });
        expect(note.status).toBe(201);
        if (i % 2 === 0) expect((await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`)).status).toBe(200);
      }
    };
    const page = (size: number) => async () => {
      const res = await s.rest("GET", `/v1/creditnotes/?invoice=${invoice}&page_size=${size}`);
      expect(res.status).toBe(200);
      return res.body;
    };
    await addNotes(2);
    const small = await statementsOf(page(2), true);
    await addNotes(8);
    let body: any;
    const large = await statementsOf(async () => (body = await page(50)()), true);
    expect(body.results).toHaveLength(10);
    expect(body.results.every((n: any) => n.voided_by === null && n.invoice === invoice)).toBe(true);
    // the page (joined, with each note's voided_by) and its COUNT
    expect(sorted(large)).toEqual(sorted(small));
    expect(sorted(large)).toEqual(sorted(["CreditNote (joined)", "CreditNote"]));
  });

  it("GET /v1/orders/: one page in the same statements at any size (customer aggregations for the page)", async () => {
    const buyer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Pedidos" }) })).body.id;
    const addOrders = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const order = await s.rest("POST", "/v1/orders/", { body: { customer: buyer, lines: THREE_LINES } });
        expect(order.status).toBe(201);
        if (i % 2 === 0) expect((await s.rest("GET", `/v1/orders/${order.body.id}/finalize/`)).status).toBe(200);
      }
    };
    const page = (size: number) => async () => {
      const res = await s.rest("GET", `/v1/orders/?customer=${buyer}&page_size=${size}`);
      expect(res.status).toBe(200);
      return res.body;
    };
    await addOrders(2);
    const small = await statementsOf(page(2), true);
    await addOrders(8);
    let body: any;
    const large = await statementsOf(async () => (body = await page(50)()), true);
    expect(body.results).toHaveLength(10);
    expect(body.results.map((o: any) => [o.customer.id, typeof o.customer.aggregations?.balance])).toEqual(
      Array(10).fill([buyer, "number"]),
    );
    expect(sorted(large)).toEqual(sorted(small));
    // the page (joined) and its COUNT; the aggregations of the page's customers (services/aggregations.ts:
    // the organization's time zone, then one query of every customer's sums), once for the whole page
    expect(sorted(large)).toEqual(sorted(["Order (joined)", "Order", "Organization", "Currency"]));
  });

  it("nodes(ids:): one joined statement and one query plan per type at any count, each node as node(id:)", async () => {
    const NODE =
      `id ... on Invoice { total lines { name total } customer { name country { name } } } ` +
      `... on Customer { name country { name } }`;
    const NODES = `query($ids: [ID!]!) { nodes(ids: $ids) { ${NODE} } }`;
    const buyers: string[] = [];
    const invoices: string[] = [];
    for (let i = 0; i < 3; i++) {
      const buyer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: `Nodos ${i}` }) })).body.id;
      buyers.push(buyer);
      for (let j = 0; j < 2; j++)
        invoices.push(
          (await s.rest("POST", "/v1/invoices/", { body: { customer: buyer, lines: THREE_LINES } })).body.id,
        );
    }
    // the plans Plan.fromInfo answers, by field execution and type (node-plans.ts shares them per nodes field)
    const planned: { info: unknown; typeName?: string; plan: unknown }[] = [];
    const mapper = Plan as unknown as { fromInfo: (adapter: object, options: any) => unknown };
    const fromInfo = mapper.fromInfo;
    mapper.fromInfo = (adapter, options) => {
      const plan = fromInfo.call(Plan, adapter, options);
      planned.push({ info: options.info, typeName: options.typeName, plan });
      return plan;
    };
    const read = (ids: string[]) => async () => {
      const res = await s.graphql(NODES, { ids });
      expect(res.body.errors).toBeUndefined();
      return res.body.data.nodes;
    };
    let small: string[];
    let large: string[];
    let nodes: any[] = [];
    try {
      small = await statementsOf(read([invoices[0], buyers[0]]), true);
      planned.length = 0;
      large = await statementsOf(async () => (nodes = await read([...invoices, ...buyers])()), true);
    } finally {
      mapper.fromInfo = fromInfo;
    }
    expect(sorted(large)).toEqual(sorted(small));
    expect(sorted(large)).toEqual(sorted(["Invoice (joined)", "Customer (joined)"]));
    // 6 invoices and 3 customers loaded with one plan each
    const plansOf = (typeName: string) => new Set(planned.filter((p) => p.typeName === typeName).map((p) => p.plan));
    expect(planned.filter((p) => p.typeName === "Invoice")).toHaveLength(6);
    expect(plansOf("Invoice").size).toBe(1);
    expect(plansOf("Customer").size).toBe(1);
    // each node as node(id:) reads it alone
    for (const [i, id] of [...invoices, ...buyers].entries()) {
      const one = await s.graphql(`query($id: ID!) { node(id: $id) { ${NODE} } }`, { id });
      expect(nodes[i]).toEqual(one.body.data.node);
    }
    expect(nodes[0].lines).toHaveLength(3);
    expect(nodes[6].country.name).toBe("Chile");
  });

  it("POST /v1/invoices/ with 3 lines: 7 statements, the answer built from what was written", async () => {
    let res: any;
    const got = await statementsOf(
      async () => (res = await s.rest("POST", "/v1/invoices/", { body: { customer, lines: THREE_LINES } })),
      true,
    );
    expect(res.status).toBe(201);
    // the customer with its country and the organization's time zone in one joined read (document
    // types and currencies are reference data read once per process: services/reference.ts); the
    // invoice and its 3 lines by two INSERT ... RETURNING in one transaction; its invoice.created event in
    // the same transaction: the invoice as REST prints it by one joined read, the event (with its webhook
    // messages and notification) by one statement (docs/webhooks.md); no read after the commit
    expect(got).toEqual([
      "Customer (joined)",
      "BEGIN",
      "Invoice",
      "InvoiceLine",
      "Invoice (joined)",
      "Event",
      "COMMIT",
    ]);
    expect(got.length).toBeLessThanOrEqual(7);
    // the answer is the same JSON as GET's
    const again = await s.rest("GET", `/v1/invoices/${res.body.id}/`);
    expect(res.body).toEqual(again.body);
  });
});

describe("the rate limit's statement", () => {
  it(
    "a request with a cached key spends its bucket with one statement on PostgreSQL (the RateLimit table, shared " +
      "by every process), none on the embedded database (in memory)",
    async () => {
      await s.rest("GET", "/v1/customers/");
      s.statements.length = 0;
      expect((await s.rest("GET", "/v1/customers/")).status).toBe(200);
      const limits = s.statements.filter((sql) => statementTable(sql) === "RateLimit");
      if (TEST_DB === "postgres") {
        expect(limits).toHaveLength(1);
        expect(limits[0]).toMatch(
          /^\s*INSERT INTO "RateLimit" VALUES \(\$1, \$2, \$3\)\s+ON CONFLICT\(key\) DO UPDATE/,
        );
      } else expect(limits).toEqual([]);
    },
  );
});

describe("API key cache", () => {
  it("serves a key from the cache: the first request reads it, the next ones run no statement for it", async () => {
    const created = await createApiKey(s.database.prisma, {
      organizationName: "Acme SpA",
      email: "cache@acme.cl",
      mode: "test",
    });
    const first = await statementsOf(async () =>
      expect((await s.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200),
    );
    expect(first.slice(0, 2)).toEqual(["ApiKey", "ApiKey"]); // the SELECT, then lastUsedAt's first write
    const next = await statementsOf(async () =>
      expect((await s.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200),
    );
    expect(next).not.toContain("ApiKey");
  });

  it("a key revoked in this process answers 401 at once, on /v1 and /graphql", async () => {
    const created = await createApiKey(s.database.prisma, {
      organizationName: "Acme SpA",
      email: "revoke@acme.cl",
      mode: "test",
    });
    expect((await s.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200);
    expect((await s.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200); // cached
    await revokeApiKey(s.database.prisma, created.id);
    const rest = await s.rest("GET", "/v1/customers/", { key: created.key });
    expect([rest.status, rest.body.error.message]).toEqual([401, "Unknown or revoked API key"]);
    const gql = await s.graphql("{ customers(first: 1) { totalCount } }", {}, created.key);
    expect([gql.status, gql.body.errors[0].extensions.code]).toEqual([401, "authentication_required"]);
  });

  it("a cached key answers 401 from its expiry instant on, without waiting for the cache", async () => {
    const expiresAt = new Date(Date.now() + 1_500);
    const created = await createApiKey(s.database.prisma, {
      organizationName: "Acme SpA",
      email: "expiring@acme.cl",
      mode: "test",
      expiresAt,
    });
    expect((await s.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200);
    const cached = await statementsOf(async () =>
      expect((await s.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200),
    );
    expect(cached).not.toContain("ApiKey");
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() + 50)));
    const rest = await s.rest("GET", "/v1/customers/", { key: created.key });
    expect([rest.status, rest.body.error.message]).toEqual([401, `API key expired at ${expiresAt.toISOString()}`]);
  });

  it("a key revoked by another process (here: in the database directly) stops once its cached entry ends", async () => {
    const short = await startTestServer({ settings: { apiKeyCacheTtlSeconds: 1 } });
    try {
      const created = await createApiKey(short.database.prisma, {
        organizationName: "Acme SpA",
        email: "elsewhere@acme.cl",
        mode: "test",
      });
      expect((await short.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200);
      const readAt = Date.now();
      await short.database.prisma.apiKey.update({ where: { id: created.id }, data: { revokedAt: new Date() } });
      // within the TTL this process still serves it from memory (docs/operations.md "API key cache")
      if (Date.now() - readAt < 800)
        expect((await short.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, readAt + 1_050 - Date.now())));
      expect((await short.rest("GET", "/v1/customers/", { key: created.key })).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it("never caches an unknown or revoked key: each attempt is one SELECT and the cache stays empty", async () => {
    const cache = new ApiKeyCache(30_000, 10);
    try {
      const revoked = await createApiKey(s.database.prisma, {
        organizationName: "Acme SpA",
        email: "gone@acme.cl",
        mode: "test",
      });
      await revokeApiKey(s.database.prisma, revoked.id);
      for (const key of [`sk_test_${"x".repeat(32)}`, `sk_test_${"y".repeat(32)}`, revoked.key, revoked.key]) {
        const sent = await statementsOf(() =>
          authenticate(s.database.prisma, `Bearer ${key}`, new Date(), cache).then(
            () => expect.unreachable(),
            (e) => expect(e.status).toBe(401),
          ),
        );
        expect(sent).toEqual(["ApiKey"]);
      }
      expect(cache.size).toBe(0);
    } finally {
      cache.close();
    }
  });

  it(
    "is bounded: past maxEntries the least recently used key is dropped, and read again when it " + "comes back",
    async () => {
      const cache = new ApiKeyCache(30_000, 2);
      try {
        const keys = [];
        for (const email of ["lru1@acme.cl", "lru2@acme.cl", "lru3@acme.cl"])
          keys.push(await createApiKey(s.database.prisma, { organizationName: "Acme SpA", email, mode: "test" }));
        const auth = (key: string) =>
          statementsOf(() => authenticate(s.database.prisma, `Bearer ${key}`, new Date(), cache));
        await auth(keys[0].key);
        await auth(keys[1].key);
        expect(await auth(keys[0].key)).toEqual([]); // hit: key 0 is now the most recently used
        await auth(keys[2].key); // drops key 1
        expect(cache.size).toBe(2);
        expect(await auth(keys[0].key)).toEqual([]);
        expect(await auth(keys[2].key)).toEqual([]);
        expect(await auth(keys[1].key)).toEqual(["ApiKey"]);
        expect(cache.size).toBe(2);
      } finally {
        cache.close();
      }
    },
  );

  it("drops an entry after its TTL", () => {
    let now = 1_000;
    const cache = new ApiKeyCache(30_000, 10, () => now);
    try {
      const key = {
        id: "key_a",
        organizationId: "org_a",
        testMode: true,
        userEmail: "a@a.cl",
        expiresAt: null,
        lastUsedAt: null,
      };
      cache.set("h", key);
      now += 29_999;
      expect(cache.get("h")).toEqual(key);
      now += 1;
      expect(cache.get("h")).toBeUndefined();
      expect(cache.size).toBe(0);
      // a read that started before a revocation is not cached
      const before = cache.generation;
      cache.forget("key_other");
      cache.set("h", key, before);
      expect(cache.get("h")).toBeUndefined();
    } finally {
      cache.close();
    }
  });
});
