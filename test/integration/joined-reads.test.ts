/**
 * Joined reads (infra/sql/joined-reads.ts): reads with relations answered by one SQL statement give
 * exactly what Prisma's own reads give (the same objects, decimals exact to the 6th decimal, dates,
 * JSON, nulls, order), on both databases; what it does not translate goes to Prisma.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { preparedStatementName, withoutJoinedReads } from "../../src/infra/sql/index.js";
import { MAX_PREPARED_PER_CONNECTION, nameAsTextPool } from "../../src/infra/driver-adapter.js";
import { createApiKey } from "../../src/services/api-keys.js";
import { Prisma } from "../../src/infra/prisma/generated/client.js";

let database: Database;
let drop: () => Promise<void>;
const statements: string[] = [];
let organizationId: string;
const ids = { customer: "cus_joinedReads000000000001", invoices: [] as string[] };

beforeAll(async () => {
  const clone = await cloneTemplate(inject("template"));
  drop = clone.drop;
  database = await createDatabase(clone.target, { onStatement: (sql) => statements.push(sql) });
  organizationId = (
    await createApiKey(database.prisma, { organizationName: "Joined SpA", email: "ops@joined.cl", mode: "test" })
  ).organization;
  const prisma = database.prisma;
  await prisma.customer.create({
    data: {
      id: ids.customer,
      organizationId,
      testMode: true,
      name: "Cliente",
      countryId: "CL",
      currencyId: "CLP",
      contacts: [{ name: "Ana" }],
      metadata: { plan: "gold", n: 1 },
    },
  });
  for (let i = 0; i < 3; i++) {
    const id = `inv_joinedReads00000000000${i}`;
    ids.invoices.push(id);
    await prisma.invoice.create({
      data: {
        id,
        organizationId,
        testMode: true,
        customerId: ids.customer,
        documentTypeId: "CL33",
        currencyId: "CLP",
        date: new Date("2026-11-0" + (i + 1)),
        dueDate: i === 0 ? null : new Date("2026-12-01"),
        collectionMethod: "deferred",
        userEmail: "ops@joined.cl",
        status: "draft",
        // 20 significant digits: a JS double would round it
        amount: new Prisma.Decimal("12345678901234.123457"),
        total: new Prisma.Decimal("0.000001"),
        metadata: { i },
        lines: {
          create: [2, 0, 1].map((position) => ({
            id: `lin_joinedReads${i}${position}0000000000`,
            position,
            name: `line ${position}`,
            quantity: new Prisma.Decimal("99999999999999.999999"),
            amount: new Prisma.Decimal(position),
          })),
        },
      },
    });
  }
  await prisma.payment.create({
    data: {
      id: "pay_joinedReads00000000001",
      organizationId,
      testMode: true,
      customerId: ids.customer,
      invoiceId: ids.invoices[1],
      currencyId: "CLP",
      amount: new Prisma.Decimal("1.5"),
      status: "succeeded",
      date: new Date("2026-11-20"),
      userEmail: "ops@joined.cl",
    },
  });
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

/** The same read through the joined path and through Prisma's own, and the statements each sent. */
async function both<T>(read: (prisma: Database["prisma"]) => Promise<T>) {
  statements.length = 0;
  const joined = await read(database.prisma);
  const joinedStatements = [...statements];
  statements.length = 0;
  const own = await read(withoutJoinedReads(database.prisma));
  return { joined, own, joinedStatements, ownStatements: [...statements] };
}

const INVOICE_TREE = {
  customer: { include: { country: true, state: true } },
  documentType: true,
  currency: true,
  lines: { orderBy: { position: "asc" as const } },
  payments: {
    where: { status: "succeeded" },
    orderBy: { createdAt: "asc" as const },
    include: { source: true, customer: { select: { id: true } }, invoice: { select: { id: true } } },
  },
};

describe("joined reads", () => {
  it(
    "findUnique with a tree: one statement, the same objects as Prisma's (exact decimals, dates, JSON, " +
      "nulls, order)",
    async () => {
      const r = await both((p) => p.invoice.findUnique({ where: { id: ids.invoices[1] }, include: INVOICE_TREE }));
      expect(r.joined).toEqual(r.own);
      expect(r.joinedStatements).toHaveLength(1);
      expect(r.ownStatements.length).toBeGreaterThan(5);
      const invoice = r.joined!;
      expect(invoice.amount).toBeInstanceOf(Prisma.Decimal);
      expect(invoice.amount.toFixed()).toBe("12345678901234.123457");
      expect(invoice.lines.map((l) => [l.position, l.quantity.toFixed()])).toEqual([
        [0, "99999999999999.999999"],
        [1, "99999999999999.999999"],
        [2, "99999999999999.999999"],
      ]);
      expect(invoice.date).toEqual(new Date("2026-11-02T00:00:00Z"));
      expect(invoice.createdAt).toBeInstanceOf(Date);
      expect(invoice.customer.metadata).toEqual({ plan: "gold", n: 1 });
      expect(invoice.customer.state).toBeNull();
      expect(invoice.payments.map((p) => [p.amount.toFixed(), p.source, p.invoice?.id])).toEqual([
        ["1.5", null, ids.invoices[1]],
      ]);
    },
  );

  it("findMany with a select tree, order, take and skip: one statement, equal to Prisma's", async () => {
    const args = {
      where: { organizationId, testMode: true, status: { in: ["draft", "finalized"] } },
      orderBy: [{ date: "desc" as const }, { id: "asc" as const }],
      take: 2,
      skip: 1,
      select: {
        id: true,
        date: true,
        dueDate: true,
        amount: true,
        customer: { select: { name: true, country: { select: { name: true } } } },
        lines: { take: 2, orderBy: { position: "desc" as const }, select: { name: true, amount: true } },
      },
    };
    const r = await both((p) => p.invoice.findMany(args));
    expect(r.joined).toEqual(r.own);
    expect(r.joined.map((i) => i.id)).toEqual([ids.invoices[1], ids.invoices[0]]);
    expect(r.joined[0].lines.map((l) => l.name)).toEqual(["line 2", "line 1"]);
    expect(r.joinedStatements).toHaveLength(1);
  });

  it("a where it does not translate (dates): the ids by Prisma, then one joined read, in Prisma's order", async () => {
    const args = {
      where: { organizationId, date: { gte: new Date("2026-11-02") } },
      orderBy: { date: "asc" as const },
      include: { lines: { orderBy: { position: "desc" as const } }, customer: true },
    };
    const r = await both((p) => p.invoice.findMany(args));
    expect(r.joined).toEqual(r.own);
    expect(r.joined.map((i) => i.id)).toEqual([ids.invoices[1], ids.invoices[2]]);
    expect(r.joinedStatements).toHaveLength(2);
  });

  it(
    "a findUnique whose where it does not translate: Prisma's findUnique of the id, then the " + "joined read",
    async () => {
      const read = (p: Database["prisma"], from: string) =>
        p.invoice.findUnique({
          where: { id: ids.invoices[2], date: { gte: new Date(from) } },
          include: { customer: true },
        });
      const r = await both((p) => read(p, "2026-11-01"));
      expect(r.joined).toEqual(r.own);
      expect(r.joined?.customer.id).toBe(ids.customer);
      expect(r.joinedStatements).toHaveLength(2);
      const none = await both((p) => read(p, "2027-01-01"));
      expect([none.joined, none.own]).toEqual([null, null]);
    },
  );

  it("findUnique by id in one tick: one statement for all, each its own copy", async () => {
    const r = await both((p) =>
      Promise.all(ids.invoices.map((id) => p.invoice.findUnique({ where: { id }, include: { lines: true } }))),
    );
    // without an orderBy neither promises an order of the lines: the same lines
    const byId = (rows: typeof r.joined) =>
      rows.map((i) => ({ ...i!, lines: [...i!.lines].sort((a, b) => a.id.localeCompare(b.id)) }));
    expect(byId(r.joined)).toEqual(byId(r.own));
    expect(r.joinedStatements).toHaveLength(1);
    const twice = await Promise.all([
      database.prisma.invoice.findUnique({ where: { id: ids.invoices[0] }, include: { lines: true } }),
      database.prisma.invoice.findUnique({ where: { id: ids.invoices[0] }, include: { lines: true } }),
    ]);
    expect(twice[0]).toEqual(twice[1]);
    expect(twice[0]).not.toBe(twice[1]);
  });

  it("OrThrow reads: Prisma's P2025 error for a missing row", async () => {
    const missing = (p: Database["prisma"]) =>
      p.invoice
        .findUniqueOrThrow({ where: { id: "inv_missing" }, include: { lines: true } })
        .catch((e) => [e.constructor.name, e.code]);
    const r = await both(missing);
    expect(r.joined).toEqual(["PrismaClientKnownRequestError", "P2025"]);
    expect(r.joined).toEqual(r.own);
    const first = await both((p) =>
      p.invoice
        .findFirstOrThrow({ where: { organizationId, customerId: "cus_none" }, include: { lines: true } })
        .catch((e) => e.code),
    );
    expect(first.joined).toBe("P2025");
  });

  it("what it does not translate is Prisma's own read: relation counts, string filters", async () => {
    const counted = await both((p) =>
      p.invoice.findMany({
        where: { organizationId },
        include: { _count: { select: { lines: true } }, customer: true },
        orderBy: { id: "asc" },
      }),
    );
    expect(counted.joined).toEqual(counted.own);
    expect(counted.joined[0]._count.lines).toBe(3);
    const contains = await both((p) =>
      p.customer.findMany({ where: { organizationId, name: { contains: "lien" } }, include: { country: true } }),
    );
    expect(contains.joined).toEqual(contains.own);
    expect(contains.joined).toHaveLength(1);
  });

  it("inside a transaction: reads go through it and see its writes", async () => {
    const seen = await database.prisma.$transaction(async (tx) => {
      await tx.invoiceLine.update({ where: { id: `lin_joinedReads000000000000` }, data: { name: "renamed in tx" } });
      statements.length = 0;
      const invoice = await tx.invoice.findUnique({
        where: { id: ids.invoices[0] },
        include: { lines: { orderBy: { position: "asc" } } },
      });
      return { names: invoice!.lines.map((l) => l.name), sent: [...statements] };
    });
    expect(seen.names).toEqual(["renamed in tx", "line 1", "line 2"]);
    expect(seen.sent.filter((s) => s.startsWith("SELECT row_to_json"))).toHaveLength(1);
  });

  it("reads of one shape send one SQL text, with a prepared statement name, whatever the values", async () => {
    const read = (id: string, status: string) =>
      database.prisma.invoice.findFirst({
        where: { id, organizationId },
        include: { lines: { where: { name: { not: status } }, orderBy: { position: "asc" } }, customer: true },
      });
    statements.length = 0;
    const first = await read(ids.invoices[1], "line 0");
    const second = await read(ids.invoices[2], "line 2");
    const sent = statements.filter((s) => s.startsWith("SELECT row_to_json"));
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(sent[0]);
    expect(preparedStatementName({ sql: sent[0] })).toMatch(/^jr_[0-9a-f]{20}$/);
    // the values are each read's own
    expect(first!.id).toBe(ids.invoices[1]);
    expect(first!.lines.map((l) => l.name)).toEqual(["line 1", "line 2"]);
    expect(second!.id).toBe(ids.invoices[2]);
    expect(second!.lines.map((l) => l.name)).toEqual(["line 0", "line 1"]);
    // another shape (an `in` list of another length), another text
    statements.length = 0;
    const many = await database.prisma.invoice.findMany({
      where: { id: { in: ids.invoices.slice(0, 2) } },
      include: { customer: true },
      orderBy: { id: "asc" },
    });
    expect(many.map((i) => i.id)).toEqual(ids.invoices.slice(0, 2));
    expect(statements[0]).not.toBe(sent[0]);
  });

  it.skipIf(TEST_DB !== "postgres")(
    "PostgreSQL: a joined read is prepared once on its connection, and a connection prepares a bounded number",
    async () => {
      // one connection, so the read and the catalogue query share it
      const url = database.target.kind === "postgres" ? database.target.url : "";
      const pool = nameAsTextPool({ connectionString: url, max: 1 });
      try {
        const text = "SELECT $1::int + 1 AS n";
        for (let i = 0; i < 3; i++) await pool.query({ name: "jr_test_same", text, values: [i] });
        const names = async () =>
          (await pool.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map((r) => r.name);
        expect(await names()).toEqual(["jr_test_same"]);
        for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 5; i++) {
          const r = await pool.query<{ n: number }>({
            name: `jr_test_${i}`,
            text: `SELECT $1::int + ${i} AS n`,
            values: [1],
          });
          expect(r.rows[0].n).toBe(1 + i);
        }
        expect((await names()).length).toBe(MAX_PREPARED_PER_CONNECTION);
      } finally {
        await pool.end();
      }
      // and the app's own pool: the GET's read names its statement
      statements.length = 0;
      await database.prisma.invoice.findUnique({ where: { id: ids.invoices[1] }, include: INVOICE_TREE });
      const name = preparedStatementName({ sql: statements[0] });
      expect(name).toMatch(/^jr_/);
      // the pool hands out its most recently released connection: the one that just ran the read
      const prepared = await database.prisma.$queryRawUnsafe<{ name: string }[]>(
        "SELECT name FROM pg_prepared_statements",
      );
      expect(prepared.map((r) => r.name)).toContain(name);
    },
  );
});
