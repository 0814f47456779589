/**
 * Direct transactions (src/infra/sql/direct-transaction.ts, docs/performance.md "After: the billing
 * run's statements straight to pg"): on PostgreSQL the hand-written statements and the translated
 * reads of a `directTransaction` run on the transaction's own pg connection, in the same database
 * transaction as the Prisma calls; on PGlite they go through Prisma. Either way: the same rows,
 * exact decimals and instants, and a rollback undoes both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../src/infra/prisma/generated/client.js";
import { directQueryOf, directTransaction, sqlRows, withoutJoinedReads } from "../../src/infra/sql/index.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { TEST_DB } from "../helpers/databases.js";

let s: TestServer;
let customerId: string;

beforeAll(async () => {
  s = await startTestServer();
  const res = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Before" }) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  customerId = res.body.id;
});
afterAll(async () => s?.close());

/** The server process id of the connection a statement runs on, through sqlRows and through Prisma. */
async function backends(tx: object): Promise<{ direct: number; prisma: number }> {
  const [direct] = await sqlRows<{ pid: number }>(tx, Prisma.sql`SELECT pg_backend_pid() AS "pid"`);
  const [prisma] = await (tx as { $queryRaw: (q: Prisma.Sql) => Promise<{ pid: number }[]> }).$queryRaw(
    Prisma.sql`SELECT pg_backend_pid() AS "pid"`,
  );
  return { direct: direct.pid, prisma: prisma.pid };
}

describe("directTransaction", () => {
  it("runs its statements on the transaction's own connection (PostgreSQL) or through Prisma (PGlite)", async () => {
    const seen = await directTransaction(s.database.prisma, async (tx) => ({
      driver: directQueryOf(tx) !== undefined,
      backends: await backends(tx),
    }));
    expect(seen.driver).toBe(TEST_DB === "postgres");
    expect(seen.backends.direct).toBe(seen.backends.prisma);
    // outside a transaction, the app's client has the pool (PostgreSQL) and a transaction of
    // Prisma's own does not
    expect(directQueryOf(s.database.prisma) !== undefined).toBe(TEST_DB === "postgres");
    expect(await s.database.prisma.$transaction(async (tx) => directQueryOf(tx))).toBeUndefined();
  });

  it("gives two concurrent transactions their own connections, each shared with its Prisma calls", async () => {
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        directTransaction(s.database.prisma, async (tx) => {
          const first = await backends(tx);
          // both transactions are open at once: neither can finish before the other started
          await new Promise((resolve) => setTimeout(resolve, 50));
          return { ...first, again: await backends(tx) };
        }),
      ),
    );
    for (const t of [a, b]) {
      expect(t.direct).toBe(t.prisma);
      expect(t.again).toEqual({ direct: t.direct, prisma: t.prisma });
    }
    if (TEST_DB === "postgres") expect(a.direct).not.toBe(b.direct);
  });

  it("commits and rolls back the direct statements with the Prisma ones", async () => {
    const nameOf = async () =>
      (await s.database.prisma.customer.findUniqueOrThrow({ where: { id: customerId }, select: { name: true } })).name;
    await expect(
      directTransaction(s.database.prisma, async (tx) => {
        await sqlRows(tx, Prisma.sql`UPDATE "Customer" SET "name" = 'Direct' WHERE "id" = ${customerId}`);
        // Prisma's own read on the transaction sees the direct write: one transaction, one connection
        const read = await withoutJoinedReads(tx).customer.findUniqueOrThrow({ where: { id: customerId } });
        expect(read.name).toBe("Direct");
        await tx.customer.update({ where: { id: customerId }, data: { email: "both@example.com" } });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await nameOf()).toBe("Before");
    expect((await s.database.prisma.customer.findUniqueOrThrow({ where: { id: customerId } })).email).not.toBe(
      "both@example.com",
    );
    await directTransaction(s.database.prisma, async (tx) => {
      await sqlRows(tx, Prisma.sql`UPDATE "Customer" SET "name" = 'Committed' WHERE "id" = ${customerId}`);
    });
    expect(await nameOf()).toBe("Committed");
  });

  it("refuses statements after the transaction timed out, so nothing runs outside it", async () => {
    let late: unknown = null;
    await expect(
      directTransaction(
        s.database.prisma,
        async (tx) => {
          // Prisma rolls the transaction back after 100 ms; the write below comes after that
          await new Promise((resolve) => setTimeout(resolve, 500));
          await sqlRows(tx, Prisma.sql`UPDATE "Customer" SET "name" = 'Late' WHERE "id" = ${customerId}`).catch(
            (e: unknown) => (late = e),
          );
        },
        { timeout: 100 },
      ),
    ).rejects.toThrow();
    expect(late).toBeInstanceOf(Error);
    const after = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: customerId } });
    expect(after.name).not.toBe("Late");
  });

  it("sends decimals as their exact digits and instants as UTC, as Prisma does", async () => {
    const amount = new Prisma.Decimal("12345678901234567890.000000001");
    const tiny = new Prisma.Decimal("0.0000001");
    const at = new Date("2026-03-08T10:30:00.123Z");
    const [row] = await directTransaction(s.database.prisma, (tx) =>
      sqlRows<{ amount: string; tiny: string; at: Date; epoch: string }>(
        tx,
        Prisma.sql`SELECT ${amount}::numeric::text AS "amount", ${tiny}::numeric::text AS "tiny",
          ${at}::timestamptz AS "at", trim_scale(extract(epoch from ${at}::timestamptz))::text AS "epoch"`,
      ),
    );
    expect(row.amount).toBe("12345678901234567890.000000001");
    expect(row.tiny).toBe("0.0000001");
    expect(row.at).toEqual(at);
    expect(row.epoch).toBe("1772965800.123");
  });

  it("reads rows without relations (a compound key, by id, a findFirst) as Prisma's own reads give them", async () => {
    const org = s.orgs.acme;
    const plain = withoutJoinedReads(s.database.prisma);
    const expected = {
      settings: await plain.organizationSettings.findUnique({
        where: { organizationId_testMode: { organizationId: org, testMode: true } },
      }),
      customer: await plain.customer.findUniqueOrThrow({ where: { id: customerId } }),
      first: await plain.customer.findFirst({ where: { organizationId: org, testMode: true }, select: { id: true } }),
    };
    s.statements.length = 0;
    const read = await directTransaction(s.database.prisma, async (tx) => ({
      settings: await tx.organizationSettings.findUnique({
        where: { organizationId_testMode: { organizationId: org, testMode: true } },
      }),
      customer: await tx.customer.findUniqueOrThrow({ where: { id: customerId } }),
      first: await tx.customer.findFirst({ where: { organizationId: org, testMode: true }, select: { id: true } }),
    }));
    expect(read).toEqual(expected);
    expect(read.customer.createdAt).toBeInstanceOf(Date);
    const reads = s.statements.filter((sql) => /^\s*SELECT/.test(sql));
    expect(reads).toHaveLength(3);
    // on PostgreSQL each is one translated statement on the driver; on PGlite, Prisma's own
    if (TEST_DB === "postgres") for (const sql of reads) expect(sql).toMatch(/^SELECT row_to_json\(s\) AS r FROM/);
  });
});
