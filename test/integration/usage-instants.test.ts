/**
 * Usage ingestion carries instants as epoch milliseconds to and from the INSERT (services/usages.ts
 * INSERT_USAGES): what is stored and what the answer says are the instants sent, to the millisecond,
 * and the answer's creation time is the stored one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meteredSubscriptionLine, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let line: string;

beforeAll(async () => {
  s = await startTestServer();
  line = await meteredSubscriptionLine(s);
});
afterAll(async () => s?.close());

describe("usage instants", () => {
  it("are stored and answered to the millisecond, from any offset, before 1970 too", async () => {
    const sent = [
      "2026-11-20T12:00:00.123Z",
      "2026-11-20T09:00:00.999-03:00",
      "2026-02-28T23:59:59Z",
      "1969-12-31T23:59:59.001Z",
    ];
    const res = await s.rest("POST", "/v1/usages/", {
      body: {
        usages: sent.map((date_time, i) => ({
          subscription_line: line,
          quantity: 1,
          date_time,
          transaction_id: `at-${i}`,
        })),
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const stored = await s.database.prisma.usage.findMany({
      where: { transactionId: { in: sent.map((_, i) => `at-${i}`) } },
    });
    const byTx = new Map(stored.map((u) => [u.transactionId, u]));
    res.body.usages.forEach((u: { transaction_id: string; date_time: string; created: string }, i: number) => {
      const row = byTx.get(`at-${i}`)!;
      expect(row.dateTime.getTime()).toBe(Date.parse(sent[i]));
      expect(Date.parse(u.date_time)).toBe(Date.parse(sent[i]));
      expect(Date.parse(u.created)).toBe(row.createdAt.getTime());
    });
    const single = await s.rest("POST", "/v1/usages/", {
      body: {
        subscription_line: line,
        quantity: 1,
        date_time: "2026-11-21T00:00:00.5+01:00",
        transaction_id: "at-single",
      },
    });
    expect(single.status).toBe(201);
    const row = await s.database.prisma.usage.findFirstOrThrow({ where: { transactionId: "at-single" } });
    expect(row.dateTime.toISOString()).toBe("2026-11-20T23:00:00.500Z");
    expect(Date.parse(single.body.created)).toBe(row.createdAt.getTime());
  });
});
