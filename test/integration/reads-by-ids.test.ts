/**
 * A read of rows by ids without relations (`findMany({ where: { id: { in } } })`, at most the tenant's
 * equalities beside; infra/sql/read-plan.ts `isReadByIds`) is translated like a joined read, so on
 * PostgreSQL it goes straight to the pool: the same objects as Prisma's own read, in one statement.
 * Any other read without relations stays Prisma's.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate } from "../helpers/databases.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { withoutJoinedReads } from "../../src/infra/sql/index.js";
import { createApiKey } from "../../src/services/api-keys.js";
import { Prisma } from "../../src/infra/prisma/generated/client.js";

let database: Database;
let drop: () => Promise<void>;
const statements: string[] = [];
let organizationId: string;
const ids = ["cus_readsByIds000000000001", "cus_readsByIds000000000002", "cus_readsByIds000000000003"];

beforeAll(async () => {
  const clone = await cloneTemplate(inject("template"));
  drop = clone.drop;
  database = await createDatabase(clone.target, { onStatement: (sql) => statements.push(sql) });
  organizationId = (
    await createApiKey(database.prisma, { organizationName: "Ids SpA", email: "ops@ids.cl", mode: "test" })
  ).organization;
  for (const [i, id] of ids.entries())
    await database.prisma.customer.create({
      data: {
        id,
        organizationId,
        testMode: true,
        name: `Cliente ${i}`,
        countryId: "CL",
        currencyId: "CLP",
        contacts: [{ name: "Ana" }],
        metadata: i === 0 ? { plan: "gold", n: 1 } : undefined,
      },
    });
  await database.prisma.invoice.create({
    data: {
      id: "inv_readsByIds000000000001",
      organizationId,
      testMode: true,
      customerId: ids[0],
      documentTypeId: "CL33",
      currencyId: "CLP",
      date: new Date("2026-11-01"),
      collectionMethod: "deferred",
      userEmail: "ops@ids.cl",
      status: "draft",
      amount: new Prisma.Decimal("12345678901234.123457"),
      total: new Prisma.Decimal("0.000001"),
      lines: {
        create: [0, 1].map((position) => ({
          id: `lin_readsByIds${position}00000000000`,
          position,
          name: `line ${position}`,
          // 20 significant digits: a JS double would round it
          quantity: new Prisma.Decimal("99999999999999.999999"),
          amount: new Prisma.Decimal(position),
        })),
      },
    },
  });
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

/** The same read through the joined path and through Prisma's own, and the statements the first sent. */
async function both<T>(read: (prisma: Database["prisma"]) => Promise<T>) {
  statements.length = 0;
  const joined = await read(database.prisma);
  const sent = [...statements];
  const own = await read(withoutJoinedReads(database.prisma));
  return { joined, own, sent };
}

const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));

describe("reads by ids without relations", () => {
  it("give Prisma's own objects in one translated statement, with or without the tenant", async () => {
    for (const where of [
      { id: { in: ids } },
      { id: { in: [ids[1], "cus_none"] }, organizationId, testMode: true },
      { id: { in: ids }, organizationId, testMode: false },
    ]) {
      const r = await both((p) => p.customer.findMany({ where }));
      expect(byId(r.joined)).toEqual(byId(r.own));
      expect(r.sent).toHaveLength(1);
      expect(r.sent[0]).toMatch(/^SELECT row_to_json/);
    }
    const lines = await both((p) =>
      p.invoiceLine.findMany({ where: { id: { in: ["lin_readsByIds000000000000", "lin_readsByIds100000000000"] } } }),
    );
    expect(byId(lines.joined)).toEqual(byId(lines.own));
    expect(lines.sent).toHaveLength(1);
    expect(lines.joined.map((l) => l.quantity.toFixed())).toEqual(["99999999999999.999999", "99999999999999.999999"]);
  });

  it("any other read without relations is Prisma's own", async () => {
    for (const read of [
      (p: Database["prisma"]) => p.customer.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } }),
      (p: Database["prisma"]) => p.customer.findMany({ where: { id: { in: ids }, name: "Cliente 0" } }),
      (p: Database["prisma"]) => p.customer.findMany({ where: { organizationId } }),
    ]) {
      const r = await both(read);
      expect(byId(r.joined)).toEqual(byId(r.own));
      expect(r.sent.some((sql) => sql.startsWith("SELECT row_to_json"))).toBe(false);
    }
  });
});
