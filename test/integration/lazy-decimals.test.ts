/**
 * Reads marked `forSerialization` (infra/sql/row-decoding.ts: a GraphQL connection's page) give decimals
 * that keep PostgreSQL's text until their digits are read: still `Prisma.Decimal`s, with the same
 * values, printing (toFixed, toString, JSON) and arithmetic as the decimals of an unmarked read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { forSerialization } from "../../src/infra/sql/index.js";
import { Prisma } from "../../src/infra/prisma/generated/client.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  await s.rest("POST", "/v1/invoices/", {
    body: {
      customer,
      lines: [
        { name: "a", quantity: "1.5", amount: "1000.25", discount: 10 },
        { name: "b", quantity: 3, amount: "0.000001" },
        { name: "c", amount: 0 },
      ],
    },
  });
});
afterAll(async () => s?.close());

describe("decimals of a read for serialization", () => {
  it("are Prisma.Decimals equal to an unmarked read's, printing and computing alike", async () => {
    const args = () => ({ include: { lines: { orderBy: { position: "asc" as const } } } });
    const [plain] = await s.database.prisma.invoice.findMany(args());
    const [lazy] = await s.database.prisma.invoice.findMany(forSerialization(args()));
    const pairs: [Prisma.Decimal, Prisma.Decimal][] = [
      [plain!.total, lazy!.total],
      [plain!.taxPercent, lazy!.taxPercent],
      ...plain!.lines.flatMap((line, i) => {
        const other = lazy!.lines[i]!;
        return [
          [line.quantity, other.quantity],
          [line.amount, other.amount],
          [line.discount, other.discount],
          [line.total, other.total],
        ] as [Prisma.Decimal, Prisma.Decimal][];
      }),
    ];
    expect(pairs.map(([p]) => p.toFixed())).toContain("0.000001");
    for (const [p, l] of pairs) {
      expect(l).toBeInstanceOf(Prisma.Decimal);
      expect(Decimal.isDecimal(l)).toBe(true);
      expect(l.toFixed()).toBe(p.toFixed());
      expect(l.toFixed(2)).toBe(p.toFixed(2));
      expect(String(l)).toBe(String(p));
      expect(JSON.stringify({ l })).toBe(JSON.stringify({ l: p }));
      expect(l.equals(p)).toBe(true);
      expect(l.plus("0.5").times(3).toFixed()).toBe(p.plus("0.5").times(3).toFixed());
      expect(new Prisma.Decimal(l).toFixed()).toBe(p.toFixed());
    }
  });
});
