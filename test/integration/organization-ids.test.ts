/**
 * Every row of an organization carries its organization's id (docs/scaling.md "Beyond one PostgreSQL"):
 * the catalog of the migrated database has a NOT NULL `organizationId` in every table but the global ones
 * (GLOBAL_TABLES), each under a foreign key (to the organization, or with the parent's id to the parent's
 * (id, organizationId)); and the child rows the API and the billing run write (document lines, payment
 * charges, subscription lines and addons, webhook messages) carry their parent's organization.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBilling } from "../../src/services/billing-run.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The tables whose rows belong to no organization: the organization itself, the reference lists
 * seeded by migrations (docs/reference-data.md), Prisma's migration bookkeeping and the rate limits'
 * counts (by key hash and client address, counted before any organization is known:
 * src/infra/rate-limit.ts). Every other table is an organization's.
 */
const GLOBAL_TABLES = [
  "Country",
  "Currency",
  "DocumentType",
  "Organization",
  "RateLimit",
  "State",
  "_prisma_migrations",
];

type Client = Pick<TestServer["database"]["prisma"], "$queryRawUnsafe">;

/**
 * The tables of the current schema that break the rule, each with why: `organizationId` missing,
 * nullable, or under no foreign key that ties it to the organization (to Organization's id, or to
 * the referenced row's own organizationId). Also a global table that is gone (the list is stale).
 */
async function tablesWithoutOrganization(client: Client): Promise<string[]> {
  const tables = await client.$queryRawUnsafe<{ name: string; nullable: string | null }[]>(
    `SELECT t.table_name AS name, c.is_nullable AS nullable
       FROM information_schema.tables t
       LEFT JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name
         AND c.column_name = 'organizationId'
      WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY 1`,
  );
  // the foreign keys that hold organizationId, with the column each references
  const keys = await client.$queryRawUnsafe<{ name: string; parent: string; referenced: string }[]>(
    `SELECT child.relname AS name, parent.relname AS parent, ref.attname AS referenced
       FROM pg_constraint con
       CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(col, refcol)
       JOIN pg_class child ON child.oid = con.conrelid
       JOIN pg_class parent ON parent.oid = con.confrelid
       JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col
       JOIN pg_attribute ref ON ref.attrelid = con.confrelid AND ref.attnum = k.refcol
      WHERE con.contype = 'f' AND con.connamespace = current_schema()::regnamespace AND a.attname = 'organizationId'`,
  );
  const tied = new Set(
    keys
      .filter((k) => (k.parent === "Organization" && k.referenced === "id") || k.referenced === "organizationId")
      .map((k) => k.name),
  );
  const names = new Set(tables.map((t) => t.name));
  return [
    ...GLOBAL_TABLES.filter((g) => !names.has(g)).map((g) => `${g}: listed as global but not in the schema`),
    ...tables
      .filter((t) => !GLOBAL_TABLES.includes(t.name))
      .flatMap((t) =>
        t.nullable === null
          ? [`${t.name}: no organizationId`]
          : t.nullable !== "NO"
            ? [`${t.name}: organizationId is nullable`]
            : tied.has(t.name)
              ? []
              : [`${t.name}: organizationId is under no foreign key to the organization`],
      ),
  ];
}

let s: TestServer;
beforeAll(async () => {
  // the key seals webhook endpoints' signing secrets
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } });
});
afterAll(async () => s?.close());

describe("the schema", () => {
  it("has organizationId, NOT NULL and under a foreign key, in every table but the global ones", async () => {
    expect(await tablesWithoutOrganization(s.database.prisma)).toEqual([]);
  });

  it("the check fails on a table without it, and on a child's column tied to nothing", async () => {
    const rollback = new Error("rollback");
    await expect(
      s.database.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`CREATE TABLE "Stray" ("id" TEXT PRIMARY KEY)`);
        await tx.$executeRawUnsafe(`ALTER TABLE "OrderLine" DROP CONSTRAINT "OrderLine_orderId_organizationId_fkey"`);
        expect(await tablesWithoutOrganization(tx)).toEqual([
          "OrderLine: organizationId is under no foreign key to the organization",
          "Stray: no organizationId",
        ]);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  });
});

/** Child tables, the parent each references by (parent id, organizationId), and the column naming the parent. */
const CHILDREN = [
  ["InvoiceLine", "Invoice", "invoiceId"],
  ["OrderLine", "Order", "orderId"],
  ["CreditNoteLine", "CreditNote", "creditNoteId"],
  ["PaymentCharge", "Payment", "paymentId"],
  ["SubscriptionLine", "Subscription", "subscriptionId"],
  ["SubscriptionAddon", "Subscription", "subscriptionId"],
  ["WebhookMessage", "Event", "eventId"],
] as const;

describe("rows written through the API", () => {
  it("carry their parent's organization: lines, charges, subscription lines and addons, webhook messages", async () => {
    const post = async (path: string, body: unknown, expected = 201) => {
      const res = await s.rest("POST", path, { body });
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(expected);
      return res.body;
    };
    // an endpoint first: every event after it gets a message
    await post("/v1/webhook_endpoints/", { url: "https://example.com/hooks", enabled_events: ["*"] });
    const customer = (await post("/v1/customers/", chileanCustomer())).id;
    const lines = [
      { name: "Consultoría", quantity: 2, amount: 1000 },
      { name: "Soporte", amount: 500 },
    ];
    const invoice = await post("/v1/invoices/", { customer, date: "2026-11-20", lines });
    // replacing the lines of a draft (a nested create in the update)
    const patched = await s.rest("PATCH", `/v1/invoices/${invoice.id}/`, { body: { lines: lines.slice(0, 1) } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`)).status).toBe(200);
    await post("/v1/orders/", { customer, lines });
    await post("/v1/creditnotes/", {
      invoice: invoice.id,
      document: "CL61",
      date: "2026-11-22",
      lines: lines.slice(0, 1),
    });
    const payment = await post("/v1/payments/", { amount: 1190, currency: "CLP", customer, invoice: invoice.id });
    const source = await post("/v1/sources/", { gateway: "test", data: { token: "tok_visa" }, customer });
    await post(`/v1/payments/${payment.id}/authorize/`, { source: source.id }, 200);
    const product = await post("/v1/products/", {
      name: "Nube",
      plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }],
    });
    const addon = await post("/v1/addons/", { name: "Setup", amount: 9000, currency: "CLP" });
    await post("/v1/subscriptions/", {
      customer,
      date_start: "2026-10-01",
      lines: [{ plan: product.plans[0].id }],
      addons: [{ addon: addon.id }],
    });
    // the billing run's lines (written in bulk, raw SQL)
    expect((await runBilling({ prisma: s.database.prisma, until: "2026-11-01" })).invoices).toBeGreaterThan(0);

    const rows: Record<string, { child: string; parent: string; n: number }[]> = {};
    for (const [child, parent, column] of CHILDREN) {
      rows[child] = await s.database.prisma.$queryRawUnsafe(
        `SELECT c."organizationId" AS child, p."organizationId" AS parent, count(*)::int AS n
           FROM "${child}" c JOIN "${parent}" p ON p."id" = c."${column}" GROUP BY 1, 2`,
      );
    }
    const acme = s.orgs.acme;
    expect(rows).toEqual(
      Object.fromEntries(CHILDREN.map(([child]) => [child, [{ child: acme, parent: acme, n: expect.any(Number) }]])),
    );
    // the billing run's invoices have lines too
    const billed = await s.database.prisma.invoiceLine.count({
      where: { organizationId: acme, invoice: { subscriptionId: { not: null } } },
    });
    expect(billed).toBeGreaterThan(0);
  });
});
