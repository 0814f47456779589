/**
 * SQL statements of usage ingestion (docs/performance.md "Usage ingestion"), counted at the driver
 * adapter (test/helpers/server.ts `statements`, BEGIN/COMMIT included): one read validating every
 * record's subscription line, one INSERT ... ON CONFLICT DO NOTHING ... RETURNING, and the
 * answer's read of the distinct lines; the same for one record and for 1,000, with no transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meteredSubscriptionLines, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let line: string;
let other: string;

beforeAll(async () => {
  s = await startTestServer();
  [line, other] = await meteredSubscriptionLines(s, 2);
  // a first request caches the API key, so the counts below hold no key statement
  expect((await s.rest("POST", "/v1/usages/", { body: { subscription_line: line, quantity: 1 } })).status).toBe(201);
});
afterAll(async () => s?.close());

/** What each statement does: `BEGIN`/`COMMIT`, or its verb and first table, e.g. `INSERT Usage`. */
const kinds = (statements: string[]) =>
  statements.map((sql) => {
    const tx = /^\s*(BEGIN|COMMIT|ROLLBACK)\b/.exec(sql)?.[1];
    if (tx) return tx;
    const verb = /^\s*(\w+)/.exec(sql)?.[1].toUpperCase();
    const table = /(?:FROM|INTO|UPDATE)\s+(?:"public"\.)?"(\w+)"/.exec(sql)?.[1];
    return `${verb} ${table}`;
  });

async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  s.statements.length = 0;
  await run();
  // the key's lookup and the rate limit's bucket (one statement on PostgreSQL: statement-counts.test.ts) aside
  return kinds(s.statements.filter((sql) => !/"ApiKey"/.test(sql) && !/INSERT INTO "RateLimit"/.test(sql)));
}

const records = (n: number, tag: string, lineOf: (i: number) => string = () => line) =>
  Array.from({ length: n }, (_, i) => ({
    subscription_line: lineOf(i),
    quantity: (i % 7) + 0.25,
    date_time: "2026-11-20T12:00:00Z",
    transaction_id: `${tag}-${i}`,
  }));

const INGEST = ["SELECT SubscriptionLine", "INSERT Usage", "SELECT SubscriptionLine"];

describe("usage ingestion statements", () => {
  it("one record: the line's check, the INSERT returning the row, the answer's line; no transaction", async () => {
    let res: any;
    const got = await statementsOf(
      async () =>
        (res = await s.rest("POST", "/v1/usages/", {
          body: { subscription_line: line, quantity: 2.5, transaction_id: "single-1" },
        })),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      subscription_line: line,
      quantity: 2.5,
      invoice: null,
      transaction_id: "single-1",
    });
    expect(got).toEqual(INGEST);
  });

  it("a batch of 1,000 over two lines: the same three statements", async () => {
    let res: any;
    const got = await statementsOf(
      async () =>
        (res = await s.rest("POST", "/v1/usages/", {
          body: { usages: records(1000, "batch", (i) => (i % 2 ? other : line)) },
        })),
    );
    expect(res.status).toBe(201);
    expect(res.body.usages).toHaveLength(1000);
    expect(res.body.usages[1]).toMatchObject({ subscription_line: other, quantity: 1.25, transaction_id: "batch-1" });
    expect(got).toEqual(INGEST);
  });

  it(
    "a batch repeating transaction ids of an earlier request: one more statement reads the " + "recorded usages",
    async () => {
      const first = await s.rest("POST", "/v1/usages/", { body: { usages: records(3, "retry") } });
      expect(first.status).toBe(201);
      let res: any;
      const got = await statementsOf(
        async () => (res = await s.rest("POST", "/v1/usages/", { body: { usages: records(5, "retry") } })),
      );
      expect([res.status, res.body.duplicates]).toEqual([201, [0, 1, 2]]);
      expect(res.body.usages.slice(0, 3).map((u: any) => u.id)).toEqual(first.body.usages.map((u: any) => u.id));
      expect(got).toEqual(["SELECT SubscriptionLine", "INSERT Usage", "SELECT Usage", "SELECT SubscriptionLine"]);
    },
  );

  it("GraphQL recordUsages selecting the usages' own fields: two statements, no read of what was written", async () => {
    let res: any;
    const got = await statementsOf(
      async () =>
        (res = await s.graphql(
          `mutation($input: RecordUsagesInput!) { recordUsages(input: $input) { created usages { id quantity ` +
            `dateTime transactionId } } }`,
          {
            input: {
              usages: [
                { subscriptionLine: line, quantity: "1.5", transactionId: "g-own-1" },
                { subscriptionLine: other, quantity: "3" },
              ],
            },
          },
        )),
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.recordUsages.usages.map((u: any) => [u.quantity, u.transactionId])).toEqual([
      ["1.5", "g-own-1"],
      ["3", null],
    ]);
    expect(got).toEqual(["SELECT SubscriptionLine", "INSERT Usage"]);
  });

  it("a deeper selection (the line's plan) reads the written usages with the query, and answers it", async () => {
    const res = await s.graphql(
      `mutation($input: UsageInput!) { createUsage(input: $input) { id quantity subscriptionLine { id plan { ` +
        `usageScheme } } invoice { id } } }`,
      {
        input: { subscriptionLine: line, quantity: "4" },
      },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createUsage).toMatchObject({
      quantity: "4",
      subscriptionLine: { id: line, plan: { usageScheme: "metered" } },
      invoice: null,
    });
  });
});
