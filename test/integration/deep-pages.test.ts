/**
 * Deep pages and counts (docs/performance.md "Deep pages", docs/graphql.md "Counting"): the lists'
 * indexes (migration 2026112423000000_keyset_list_indexes) and every foreign key's, a page after a
 * cursor planned as one index range scan that starts at the cursor, and `count(limit:)`, exact up
 * to its limit and `at_least` beyond. The app runs in process over a real database of this run's
 * kind, its SQL recorded with arguments so the test can EXPLAIN what the app sent.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { createLogger } from "../../src/infra/logger.js";
import { createApiKey } from "../../src/services/api-keys.js";
import { createApp, type App } from "../../src/server.js";
import { cloneTemplate } from "../helpers/databases.js";

const INVOICES = 3_000;
let database: Database;
let app: App;
let drop: () => Promise<void>;
let key: string;
let recording: { sql: string; args: readonly unknown[] }[] | null = null;

beforeAll(async () => {
  const clone = await cloneTemplate(inject("template"));
  drop = clone.drop;
  database = await createDatabase(clone.target, {
    onStatement: (sql, args) => recording?.push({ sql, args: args ?? [] }),
  });
  app = createApp({
    database,
    logger: createLogger("silent"),
    settings: { rateLimitRequests: 0 },
    outboxIntervalMs: 3_600_000,
  });
  const created = await createApiKey(database.prisma, {
    organizationName: "Deep SpA",
    email: "ops@deep.cl",
    mode: "test",
  });
  key = created.key;
  const org = created.organization;
  await database.prisma.$executeRawUnsafe(
    `INSERT INTO "Customer" ("id", "organizationId", "testMode", "name", "countryId", "createdAt", "updatedAt")
     SELECT 'cus_deep' || i, '${org}', true, 'Cliente ' || i, 'CL', now(), now() FROM generate_series(0, 9) AS i`,
  );
  // one invoice a minute, every 10th a draft, every 5th a CL34, customers in turn; some share a createdAt (ties on id)
  await database.prisma.$executeRawUnsafe(
    `INSERT INTO "Invoice" ("id", "organizationId", "testMode", "customerId", "documentTypeId", "currencyId",
      "number", "date", "status", "userEmail", "createdAt", "updatedAt")
     SELECT 'inv_deep' || lpad(g::text, 6, '0'), '${org}', true, 'cus_deep' || (g % 10), CASE
     WHEN g % 5 = 1 THEN 'CL34' ELSE 'CL33' END, 'CLP',
            CASE WHEN g % 10 = 0 THEN NULL ELSE g END, date '2026-01-01', CASE WHEN g % 10 = 0 THEN 'draft'
            ELSE 'finalized' END, 'ops@deep.cl',
            timestamptz '2026-01-01 00:00:00+00' + (g / 2) * interval '1 minute', now()
     FROM generate_series(1, ${INVOICES}) AS g`,
  );
  await database.prisma.$executeRawUnsafe(`VACUUM ANALYZE "Invoice"`);
});
afterAll(async () => {
  await app?.close();
  await database?.close();
  await drop?.();
});

async function graphql(query: string, variables: Record<string, unknown> = {}) {
  const response = await app.handle(
    new Request("http://test.local/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    }),
  );
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
}

/** The invoice statements (not lines, customers) one request sends, and the request's answer. */
async function recorded(query: string, variables: Record<string, unknown>) {
  recording = [];
  const res = await graphql(query, variables);
  const statements = recording.filter((s) => /FROM "public"\."Invoice"/.test(s.sql));
  recording = null;
  expect(res.body.errors).toBeUndefined();
  return { data: res.body.data, statements };
}

/** EXPLAIN of a recorded statement, as text lines. */
async function explain(statement: { sql: string; args: readonly unknown[] }): Promise<string> {
  const rows = await database.prisma.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
    `EXPLAIN ${statement.sql}`,
    ...statement.args,
  );
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

const PAGE = `query($first: Int, $after: String, $offset: Int, $where: InvoiceWhere) {
  invoices(first: $first, after: $after, offset: $offset,
  where: $where) { edges { node { id } } pageInfo { endCursor hasNextPage } }
}`;

describe("list indexes", () => {
  it("serve each list filter in the list's order (equalities, then createdAt, a document's number, id)", async () => {
    const indexes = await database.prisma.$queryRawUnsafe<{ indexname: string; indexdef: string }[]>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'`,
    );
    const columns = new Map(
      indexes.map((i) => [i.indexname, i.indexdef.replace(/.*\((.*)\)$/, "$1").replaceAll('"', "")]),
    );
    const expected: Record<string, string> = {
      // documents: newest first, then number, then id (migration 2026120100000001_document_list_order)
      Invoice_organizationId_testMode_createdAt_number_id_idx: "organizationId, testMode, createdAt, number, id",
      Invoice_organizationId_testMode_status_createdAt_number_id_idx:
        "organizationId, testMode, status, createdAt, number, id",
      Invoice_customerId_createdAt_number_id_idx: "customerId, createdAt, number, id",
      Invoice_org_testMode_documentTypeId_createdAt_number_id_idx:
        "organizationId, testMode, documentTypeId, createdAt, number, id",
      Invoice_organizationId_testMode_number_createdAt_id_idx: "organizationId, testMode, number, createdAt, id",
      Invoice_organizationId_testMode_date_idx: "organizationId, testMode, date",
      CreditNote_organizationId_testMode_createdAt_number_id_idx: "organizationId, testMode, createdAt, number, id",
      CreditNote_org_testMode_status_createdAt_number_id_idx: "organizationId, testMode, status, createdAt, number, id",
      CreditNote_org_testMode_documentTypeId_createdAt_number_id_idx:
        "organizationId, testMode, documentTypeId, createdAt, number, id",
      CreditNote_organizationId_testMode_number_createdAt_id_idx: "organizationId, testMode, number, createdAt, id",
      CreditNote_organizationId_testMode_date_idx: "organizationId, testMode, date",
      Order_organizationId_testMode_createdAt_number_id_idx: "organizationId, testMode, createdAt, number, id",
      Order_organizationId_testMode_status_createdAt_number_id_idx:
        "organizationId, testMode, status, createdAt, number, id",
      Order_org_testMode_shippingType_createdAt_number_id_idx:
        "organizationId, testMode, shippingType, createdAt, number, id",
      Order_customerId_createdAt_number_id_idx: "customerId, createdAt, number, id",
      Order_organizationId_testMode_number_createdAt_id_idx: "organizationId, testMode, number, createdAt, id",
      Order_organizationId_testMode_date_idx: "organizationId, testMode, date",
      Payment_organizationId_testMode_status_createdAt_id_idx: "organizationId, testMode, status, createdAt, id",
      Payment_customerId_createdAt_id_idx: "customerId, createdAt, id",
      Customer_organizationId_testMode_countryId_createdAt_id_idx: "organizationId, testMode, countryId, createdAt, id",
      Customer_organizationId_testMode_email_createdAt_id_idx: "organizationId, testMode, email, createdAt, id",
      Usage_organizationId_testMode_dateTime_id_idx: "organizationId, testMode, dateTime, id",
    };
    for (const [name, cols] of Object.entries(expected)) expect(columns.get(name), name).toBe(cols);
    // the narrower indexes they replace are gone
    for (const name of [
      "Invoice_organizationId_testMode_createdAt_idx",
      "Invoice_organizationId_testMode_createdAt_id_idx",
      "Invoice_customerId_createdAt_id_idx",
      "CreditNote_org_testMode_documentTypeId_createdAt_id_idx",
      "Order_organizationId_testMode_shippingType_createdAt_id_idx",
      "Invoice_customerId_status_idx",
      "Payment_organizationId_testMode_status_idx",
      "Usage_organizationId_testMode_dateTime_idx",
    ]) {
      expect(columns.has(name), name).toBe(false);
    }
  });

  it(
    "cover every foreign key: each has an index whose leading columns are its columns (the check finds one " +
      "dropped)",
    async () => {
      const unindexed = async (client: Pick<Database["prisma"], "$queryRawUnsafe"> = database.prisma) =>
        (
          await client.$queryRawUnsafe<{ tbl: string; conname: string }[]>(
            `SELECT con.conrelid::regclass::text AS tbl, con.conname FROM pg_constraint con
           WHERE con.contype = 'f' AND con.connamespace = 'public'::regnamespace
             AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = con.conrelid
               AND (i.indkey::int2[])[0:cardinality(con.conkey) - 1] @> con.conkey
               AND (i.indkey::int2[])[0:cardinality(con.conkey) - 1] <@ con.conkey)
           ORDER BY 1, 2`,
          )
        ).map((r) => r.conname);
      expect(await unindexed()).toEqual([]);
      // dropped inside a transaction that is rolled back
      const rollback = new Error("rollback");
      await expect(
        database.prisma.$transaction(async (tx) => {
          await tx.$executeRawUnsafe(`DROP INDEX "Invoice_currencyId_idx"`);
          expect(await unindexed(tx)).toEqual(["Invoice_currencyId_fkey"]);
          throw rollback;
        }),
      ).rejects.toBe(rollback);
      expect(await unindexed()).toEqual([]);
    },
  );
});

describe("a page after a cursor", () => {
  it(
    "bounds the sort key so the plan is one backward index range scan from the cursor, no sort, " + "however deep",
    async () => {
      const deep = await recorded(PAGE, { first: 100, offset: 2_000 - 100 });
      const cursor = deep.data.invoices.pageInfo.endCursor;
      const byOffset = await recorded(PAGE, { first: 100, offset: 2_000 });
      const byCursor = await recorded(PAGE, { first: 100, after: cursor });
      expect(byCursor.data.invoices.edges).toEqual(byOffset.data.invoices.edges);
      expect(byCursor.data.invoices.edges).toHaveLength(100);
      expect(byCursor.statements).toHaveLength(1);
      const plan = await explain(byCursor.statements[0]!);
      expect(plan).toMatch(/Index Scan Backward using "Invoice_organizationId_testMode_createdAt_number_id_idx"/);
      expect(plan).toMatch(/Index Cond: .*"createdAt" <= /);
      expect(plan).not.toMatch(/Sort|Seq Scan|Bitmap/);
      // with a filter: its own index
      const draft = { status: { equals: "draft" } };
      const first = await recorded(PAGE, { first: 10, where: draft });
      const next = await recorded(PAGE, { first: 10, after: first.data.invoices.pageInfo.endCursor, where: draft });
      const filtered = await explain(next.statements[0]!);
      expect(filtered).toMatch(
        /Index Scan Backward using "Invoice_organizationId_testMode_status_createdAt_number_id_idx"/,
      );
      expect(filtered).not.toMatch(/Sort|Seq Scan/);
    },
  );
});

describe("count(limit:)", () => {
  const COUNT =
    `query($limit: Int, $where: InvoiceWhere) { invoices(first: 0, where: $where) { totalCount ` +
    `count(limit: $limit) { count precision } } }`;

  it("is exact up to its limit and the limit with at_least beyond; totalCount stays exact", async () => {
    const all = await recorded(COUNT, {});
    expect(all.data.invoices).toEqual({ totalCount: INVOICES, count: { count: INVOICES, precision: "exact" } });
    expect((await recorded(COUNT, { limit: 1_000 })).data.invoices).toEqual({
      totalCount: INVOICES,
      count: { count: 1_000, precision: "at_least" },
    });
    expect((await recorded(COUNT, { limit: INVOICES })).data.invoices.count).toEqual({
      count: INVOICES,
      precision: "exact",
    });
    expect((await recorded(COUNT, { limit: INVOICES - 1 })).data.invoices.count).toEqual({
      count: INVOICES - 1,
      precision: "at_least",
    });
    const drafts = await recorded(COUNT, { limit: 100, where: { status: { equals: "draft" } } });
    expect(drafts.data.invoices).toEqual({ totalCount: INVOICES / 10, count: { count: 100, precision: "at_least" } });
    const customer = await recorded(COUNT, {
      limit: 1_000,
      where: { customer: { equals: "cus_deep3" }, document: { equals: "cl34" } },
    });
    expect(customer.data.invoices).toEqual({ totalCount: 0, count: { count: 0, precision: "exact" } });
  });

  it("stops reading at its limit: the COUNT's plan has a Limit under the aggregate", async () => {
    const { statements } = await recorded(`{ invoices(first: 0) { count(limit: 500) { count } } }`, {});
    const capped = statements.filter((s) => /COUNT\(/i.test(s.sql));
    expect(capped).toHaveLength(1);
    const plan = await explain(capped[0]!);
    const index = "Invoice_organizationId_testMode_createdAt_number_id_idx";
    expect(plan).toMatch(new RegExp(`Aggregate[\\s\\S]*Limit[\\s\\S]*Index Only Scan Backward using "${index}"`));
    expect(plan).not.toMatch(/Seq Scan|Sort/);
  });

  it("refuses a limit outside 1..100,000 with validation_error on limit", async () => {
    for (const limit of [0, -1, 100_001]) {
      const res = await graphql(`query($limit: Int) { invoices { count(limit: $limit) { count } } }`, { limit });
      expect(res.status).toBe(200);
      expect(res.body.errors?.[0]?.extensions).toEqual({
        code: "validation_error",
        fields: { limit: ["must be between 1 and 100000"] },
      });
    }
  });
});
