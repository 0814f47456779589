/**
 * Moving from the embedded database to PostgreSQL (src/infra/database-copy.ts, `db copy`,
 * docs/moving-to-postgresql.md): an embedded PGlite database filled through the REST API (a
 * customer, a finalized invoice, a card and a paid payment) plus rows with tricky values (bytea of
 * every byte, a 20-digit money amount, a text[] with quotes and commas, a changed reference row)
 * is copied into new PostgreSQL databases. Every table's rows must be identical (ordered
 * row_to_json compared per table), a second copy into the same target is refused and changes
 * nothing, and an app on the copy answers the same JSON as the app on the source.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, migrate, type Database } from "../../src/infra/database.js";
import { copyDatabase, DatabaseCopyError, insertionOrder } from "../../src/infra/database-copy.js";
import type { SqlSession } from "../../src/infra/migrate.js";
import { createLogger } from "../../src/infra/logger.js";
import { createApiKey } from "../../src/services/api-keys.js";
import { createApp, createHttpServer, listen } from "../../src/server.js";
import { databaseCommands } from "../../src/cli/database.js";
import { adminQuery, POSTGRES_URL, TEST_DB, withDatabase } from "../helpers/databases.js";
import { chileanCustomer } from "../helpers/server.js";
import { ACME_TAX_PROFILE } from "../helpers/acme.js";

const PUBLIC_URL = "http://billing.test";
const BIG_MONEY = "12345678901234.123456"; // 20 significant digits: no double holds it
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

/** An app over `database` on a random port; `rest` calls it with `key`. */
async function serve(database: Database, key: string) {
  const app = createApp({ database, logger: createLogger("silent"), publicUrl: PUBLIC_URL, outboxIntervalMs: 0 });
  const server: Server = createHttpServer(app);
  server.keepAliveTimeout = 120_000;
  const url = await listen(server, 0, "127.0.0.1");
  const close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.close();
  };
  const rest = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    expect(res.status, `${method} ${route}: ${text}`).toBeLessThan(300);
    return text ? JSON.parse(text) : null;
  };
  return { rest, close };
}

/** A new PostgreSQL database (not migrated), dropped after the file. */
async function newPostgres(): Promise<Database> {
  const name = `billing_copy_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  const database = await createDatabase({ kind: "postgres", url: withDatabase(POSTGRES_URL, name) });
  cleanup.push(() => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  cleanup.push(() => database.close());
  return database;
}

/** Every table of `public` but `_prisma_migrations` -> row count and md5 of its rows as JSON in primary key order. */
async function snapshot(database: Database): Promise<Record<string, { rows: number; md5: string }>> {
  return database.session(async (s: SqlSession) => {
    await s.exec(`SET TimeZone = 'UTC'; SET bytea_output = 'hex'`);
    const tables = await s.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE ` +
        `TABLE' AND table_name <> '_prisma_migrations' ORDER BY 1`,
    );
    const result: Record<string, { rows: number; md5: string }> = {};
    for (const { name } of tables) {
      // ordered by the whole row's text: independent of keys, identical rows give identical digests
      const [row] = await s.query<{ rows: number; md5: string }>(
        `SELECT count(*)::int AS rows, md5(coalesce(string_agg(j, E'\\n' ORDER BY j), '')) AS md5 FROM (SELECT ` +
          `row_to_json(t)::text AS j FROM "${name}" t) x`,
      );
      result[name] = row;
    }
    return result;
  });
}

let dir: string;
let source: Database;
let key: string;
let invoiceJson: unknown;
let paymentJson: unknown;
let invoiceId: string;
let paymentId: string;
let before: Record<string, { rows: number; md5: string }>;

describe.skipIf(TEST_DB !== "postgres")("moving from the embedded database to PostgreSQL", () => {
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-copy-"));
    cleanup.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    source = await createDatabase({ kind: "pglite", dir: path.join(dir, "pglite") });
    cleanup.push(() => source.close());
    await migrate(source);
    const created = await createApiKey(source.prisma, {
      organizationName: "Acme SpA",
      email: "ops@acme.cl",
      mode: "test",
    });
    key = created.key;
    await source.prisma.organizationSettings.update({
      where: { organizationId_testMode: { organizationId: created.organization, testMode: true } },
      data: ACME_TAX_PROFILE,
    });
    const app = await serve(source, key);
    try {
      const customer = await app.rest(
        "POST",
        "/v1/customers/",
        chileanCustomer({ metadata: { segment: "pyme", ñandú: "sí" } }),
      );
      const draft = await app.rest("POST", "/v1/invoices/", {
        customer: customer.id,
        lines: [
          { name: "Consultoría", quantity: 2, amount: 1000 },
          { name: "Soporte", amount: 500, discount: 10 },
        ],
      });
      invoiceId = draft.id;
      await app.rest("GET", `/v1/invoices/${invoiceId}/finalize/`);
      const card = await app.rest("POST", "/v1/sources/", {
        gateway: "test",
        data: { token: "tok_visa" },
        customer: customer.id,
      });
      const payment = await app.rest("POST", "/v1/payments/", {
        amount: 2916,
        currency: "CLP",
        customer: customer.id,
        description: "Factura 1",
      });
      paymentId = payment.id;
      await app.rest("POST", `/v1/payments/${paymentId}/authorize/`, { source: card.id });
      invoiceJson = await app.rest("GET", `/v1/invoices/${invoiceId}/`);
      paymentJson = await app.rest("GET", `/v1/payments/${paymentId}/`);
      // a second payment, left pending, holding an amount no float can carry
      const pending = await app.rest("POST", "/v1/payments/", { amount: 1000, currency: "CLP", customer: customer.id });
      await source.session((s) =>
        s.query(`UPDATE "Payment" SET amount = $1::numeric WHERE id = $2`, [BIG_MONEY, pending.id]),
      );
    } finally {
      await app.close();
    }
    // bytea: every byte value; text[]: quotes, commas, braces and an empty string
    await source.prisma.storedFile.create({
      data: {
        name: "every-byte.bin",
        organizationId: created.organization,
        testMode: true,
        contentType: "application/octet-stream",
        content: Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      },
    });
    await source.prisma.outboxMessage.create({
      data: {
        id: "out_copy_test",
        organizationId: created.organization,
        recipients: ['"Quoted, Name" <a@b.cl>', "{braces}", ""],
        subject: "Copia",
        body: "línea 1\nlínea 2",
        sentAt: new Date("2026-01-02T03:04:05.678Z"),
      },
    });
    // more rows than one batch: 1100 messages (batches of 500) and 120 files (batches of 50)
    await source.session((s) =>
      s.query(
        `INSERT INTO "OutboxMessage" (id, "organizationId", recipients, subject, body) SELECT 'out_bulk_' || i, $1, ` +
          `ARRAY['bulk' || i || '@x.cl'], 'Bulk ' || i, repeat('x', i % 7) FROM generate_series(1, 1100) i`,
        [created.organization],
      ),
    );
    await source.session((s) =>
      s.query(
        `INSERT INTO "StoredFile" (name, "organizationId", "testMode", "contentType", content) SELECT 'bulk-' || i, ` +
          `$1, i % 2 = 0, 'application/octet-stream', decode(md5(i::text), 'hex') FROM generate_series(1, 120) i`,
        [created.organization],
      ),
    );
    // reference data changed by the operator travels too (the seeded rows are the source's)
    await source.session((s) =>
      s.query(
        `UPDATE "Country" SET "taxPercent" = 12.3456 WHERE id = (SELECT min(id) FROM "Country" WHERE id <> 'CL')`,
      ),
    );
    before = await snapshot(source);
  });

  it("copies every row of every table exactly, in one transaction, parents first", async () => {
    const target = await newPostgres();
    await migrate(target);
    const seen: [string, number][] = [];
    const report = await copyDatabase(source, target, { onTable: (table, rows) => seen.push([table, rows]) });

    const after = await snapshot(target);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const table of Object.keys(before)) expect({ table, ...after[table] }).toEqual({ table, ...before[table] });
    expect(report.tables.map((t) => [t.table, t.rows])).toEqual(seen);
    expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(Object.entries(before).map(([t, d]) => [t, d.rows])));
    expect(report.rows).toBe(Object.values(before).reduce((sum, d) => sum + d.rows, 0));
    expect(
      report.tables
        .filter((t) => t.seeded)
        .map((t) => t.table)
        .sort(),
    ).toEqual(["Country", "Currency", "DocumentType", "State"]);
    expect(seen.map(([t]) => t)).not.toContain("_prisma_migrations");
    // parents before children
    const position = new Map(seen.map(([t], i) => [t, i]));
    expect(position.get("Organization")!).toBeLessThan(position.get("Customer")!);
    expect(position.get("Customer")!).toBeLessThan(position.get("Invoice")!);
    expect(position.get("Country")!).toBeLessThan(position.get("Currency")!);
    expect(position.get("Reminder")!).toBeLessThan(position.get("OutboxMessage")!);

    // the data that was there: real rows of each kind
    for (const table of [
      "Organization",
      "ApiKey",
      "Customer",
      "Invoice",
      "InvoiceLine",
      "Payment",
      "PaymentCharge",
      "Source",
    ])
      expect(after[table].rows, table).toBeGreaterThan(0);
    expect(after.OutboxMessage.rows).toBeGreaterThan(1100);
    expect(after.StoredFile.rows).toBeGreaterThan(120);
    // money exact as text, and through Prisma's Decimal
    const amounts = await target.session((s) =>
      s.query<{ amount: string }>(`SELECT p.amount::text AS amount FROM "Payment" p ORDER BY p.amount`),
    );
    expect(amounts.map((a) => a.amount)).toEqual(["2916.000000", BIG_MONEY]);
    expect(
      (await target.prisma.payment.findFirstOrThrow({ where: { amount: { gt: 1_000_000 } } })).amount.toString(),
    ).toBe(BIG_MONEY);
    const invoice = await target.prisma.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
    const sourceInvoice = await source.prisma.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
    expect(invoice).toEqual(sourceInvoice);
    // bytea, text[], timestamptz, jsonb, booleans
    expect((await target.prisma.storedFile.findUniqueOrThrow({ where: { name: "every-byte.bin" } })).content).toEqual(
      new Uint8Array(Array.from({ length: 256 }, (_, i) => i)),
    );
    const outbox = await target.prisma.outboxMessage.findUniqueOrThrow({ where: { id: "out_copy_test" } });
    expect(outbox).toMatchObject({
      recipients: ['"Quoted, Name" <a@b.cl>', "{braces}", ""],
      body: "línea 1\nlínea 2",
      sentAt: new Date("2026-01-02T03:04:05.678Z"),
    });
    expect((await target.prisma.customer.findFirstOrThrow()).metadata).toEqual({ segment: "pyme", ñandú: "sí" });
    const changed = await target.session((s) =>
      s.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Country" WHERE "taxPercent" = 12.3456`),
    );
    expect(changed[0].n).toBe(1);
    // every column type of the schema that holds data here came through (the digests above compare them)
    const kinds = await source.session((s) =>
      s.query<{ data_type: string }>(
        `SELECT DISTINCT data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`,
      ),
    );
    expect(kinds.map((k) => k.data_type)).toEqual(
      expect.arrayContaining(["ARRAY", "boolean", "bytea", "jsonb", "numeric", "timestamp with time zone"]),
    );

    // the serial column continues after the copied values, and the target is ready for the app
    const sequence = (db: Database) =>
      db.session((s) => s.query(`SELECT last_value::text AS last_value, is_called FROM "Swap_code_seq"`));
    expect(await sequence(target)).toEqual(await sequence(source));

    // a second copy into the now non-empty target is refused and changes nothing
    const again = await copyDatabase(source, target).catch((e) => e);
    expect(again).toBeInstanceOf(DatabaseCopyError);
    expect(again.message).toMatch(
      /^the target database is not empty: table Organization has 1 row\(s\); copy into a new, empty database$/,
    );
    expect(await snapshot(target)).toEqual(after);

    // an app on the copy answers what the app on the source answered
    const app = await serve(target, key);
    try {
      expect(await app.rest("GET", `/v1/invoices/${invoiceId}/`)).toEqual(invoiceJson);
      expect(await app.rest("GET", `/v1/payments/${paymentId}/`)).toEqual(paymentJson);
    } finally {
      await app.close();
    }
  });

  it("refuses a target that is not migrated, naming the side to migrate, and writes nothing", async () => {
    const target = await newPostgres();
    const error = await copyDatabase(source, target).catch((e) => e);
    expect(error).toBeInstanceOf(DatabaseCopyError);
    expect(error.message).toMatch(
      /^the target database has \d+ pending migration\(s\) \(first: 20261122000000_init\); migrate it first/,
    );
    const tables = await target.session((s) =>
      s.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = 'public'`),
    );
    expect(tables).toEqual([]);
  });

  it("refuses a target whose reference data was changed (a database in use)", async () => {
    const target = await newPostgres();
    await migrate(target);
    await target.session((s) => s.query(`DELETE FROM "State" WHERE id = (SELECT min(id) FROM "State")`));
    const error = await copyDatabase(source, target).catch((e) => e);
    expect(error.message).toBe(
      "the target database is not empty: table State differs from the reference data its migrations insert; copy " +
        "into a new, empty database",
    );
    const counts = await snapshot(target);
    expect(counts.Customer.rows).toBe(0);
  });

  it("a copy failing in its last tables leaves the target as it was (one transaction)", async () => {
    const target = await newPostgres();
    await migrate(target);
    const fresh = await snapshot(target);
    // a constraint the source's rows break, on the table copied last
    await target.session((s) =>
      s.query(`ALTER TABLE "OutboxMessage" ADD CONSTRAINT no_copy CHECK (subject <> 'Copia')`),
    );
    const seen: string[] = [];
    const error = await copyDatabase(source, target, { onTable: (table) => seen.push(table) }).catch((e) => e);
    expect(error.message).toMatch(/no_copy/);
    expect(seen).toContain("Invoice");
    expect(seen).not.toContain("OutboxMessage");
    expect(await snapshot(target)).toEqual(fresh);
  });

  it("db copy --to migrates the target, copies and prints one line per table and a total", async () => {
    const target = await newPostgres();
    const url = target.target.kind === "postgres" ? target.target.url : "";
    let printed = "";
    let noted = "";
    const out = { write: (text: string) => (printed += text) };
    const notes = { write: (text: string) => (noted += text) };
    // the command closes what openDatabase returns: hand it the source without its close
    const run = (args: string[]) =>
      databaseCommands({
        openDatabase: async () => ({ ...source, close: async () => undefined }),
        out,
        notes,
        database: "the source database",
      })
        .exitOverride()
        .parseAsync(args, { from: "user" });
    await run(["copy", "--to", url]);
    const lines = printed.trimEnd().split("\n");
    expect(lines.at(-1)).toBe(
      `total ${Object.values(before).reduce((sum, d) => sum + d.rows, 0)} rows in ${Object.keys(before).length} tables`,
    );
    expect(Object.fromEntries(lines.slice(0, -1).map((l) => [l.split(" ")[0], Number(l.split(" ")[1])]))).toEqual(
      Object.fromEntries(Object.entries(before).map(([t, d]) => [t, d.rows])),
    );
    expect(await snapshot(target)).toEqual(before);
    const parsed = new URL(url);
    expect(noted).toBe(
      `copying the source database into PostgreSQL database ${parsed.pathname.slice(1)} on ${parsed.hostname}:` +
        `${parsed.port || "5432"}${parsed.username ? ` as ${parsed.username}` : ""} (the source is read as one ` +
        "snapshot; on the embedded database its other users wait meanwhile)\n",
    );
    expect(noted).not.toContain(parsed.password || "no password in the test URL");

    await expect(run(["copy", "--to", "mysql://localhost/billing"])).rejects.toThrow(
      "--to must be a PostgreSQL URL (postgresql://...), got the scheme mysql",
    );
    await expect(run(["copy", "--to", "not a url"])).rejects.toThrow(
      '--to must be a PostgreSQL URL such as postgresql://user@host:5432/billing, got "not a url"',
    );
  });

  it("orders tables by their foreign keys and names a cycle", () => {
    expect(
      insertionOrder(
        ["c", "b", "a"],
        [
          { child: "c", parent: "b" },
          { child: "b", parent: "a" },
          { child: "a", parent: "a" },
        ],
      ),
    ).toEqual(["a", "b", "c"]);
    expect(() =>
      insertionOrder(
        ["a", "b", "c"],
        [
          { child: "a", parent: "b" },
          { child: "b", parent: "a" },
        ],
      ),
    ).toThrow("the foreign keys between a, b form a cycle");
  });
});

describe.skipIf(TEST_DB === "postgres")("moving to PostgreSQL (pglite project)", () => {
  it.skip("runs in the postgres project only: the copy's target is a PostgreSQL server", () => undefined);
});
