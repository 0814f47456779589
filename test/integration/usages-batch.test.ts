/**
 * Batched usage ingestion (issue 17 "Usage ingestion at scale"; docs/rest.md "Usage records"):
 * POST /v1/usages/ with `{"usages": [...]}` and GraphQL recordUsages, validated as a whole and
 * written with one multi-row INSERT; `transaction_id` counts a record once across and within
 * batches, also when two batches race; a cycle bills the same whether its usage came in batches
 * or one by one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let plans: { metered: string; licensed: string };
let customer: string;

/**
 * A subscription starting 2026-11-01 with one metered and one licensed line; returns [subscription id, metered line,
 * licensed line].
 */
async function subscribe(): Promise<[string, string, string]> {
  const res = await s.rest("POST", "/v1/subscriptions/", {
    body: { customer, date_start: "2026-11-01", lines: [{ plan: plans.metered }, { plan: plans.licensed }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return [res.body.id, res.body.lines[0].id, res.body.lines[1].id];
}

const count = (where: Record<string, unknown>) => s.database.prisma.usage.count({ where });
const records = (line: string, n: number, extra: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({
    subscription_line: line,
    quantity: 1,
    date_time: `2026-11-${String(1 + (i % 20)).padStart(2, "0")}T12:00:00Z`,
    ...extra(i),
  }));

beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: {
      name: "API",
      plans: [
        {
          name: "Llamadas",
          amount: "3",
          currency: "CLP",
          frequency: "monthly",
          usage_scheme: "metered",
          usage_aggregation: "sum",
        },
        { name: "Base", amount: "9990", currency: "CLP", frequency: "monthly" },
      ],
    },
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  plans = { metered: product.body.plans[0].id, licensed: product.body.plans[1].id };
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

describe("batched usage over REST", () => {
  it("writes a batch of 1,000 (rows counted) and answers every usage in order, 201", async () => {
    const [, line] = await subscribe();
    const batch = records(line, 1000, (i) => ({ quantity: String(i) }));
    const res = await s.rest("POST", "/v1/usages/", { body: { usages: batch } });
    expect(res.status, res.text.slice(0, 500)).toBe(201);
    expect(res.body.duplicates).toEqual([]);
    expect(res.body.usages).toHaveLength(1000);
    expect(res.body.usages[0]).toEqual({
      id: expect.stringMatching(/^usa_/),
      subscription_line: line,
      quantity: 0,
      date_time: "2026-11-01T12:00:00.000+00:00",
      invoice: null,
      created: expect.any(String),
    });
    expect(res.body.usages.map((u: any) => u.quantity)).toEqual(batch.map((_, i) => i));
    expect(new Set(res.body.usages.map((u: any) => u.id)).size).toBe(1000);
    expect(await count({ subscriptionLineId: line })).toBe(1000);
    const sum = await s.database.prisma.usage.aggregate({
      where: { subscriptionLineId: line },
      _sum: { quantity: true },
    });
    expect(sum._sum.quantity?.toString()).toBe(String((999 * 1000) / 2));
  });

  it("runs the same number of statements for a batch of 2 and of 500 (one multi-row INSERT)", async () => {
    const [, line] = await subscribe();
    const statementsOf = async (n: number) => {
      s.queries.length = 0;
      s.statements.length = 0;
      const res = await s.rest("POST", "/v1/usages/", {
        body: { usages: records(line, n, (i) => ({ transaction_id: `stmt-${n}-${i}` })) },
      });
      expect(res.status).toBe(201);
      return { queries: [...s.queries], statements: s.statements.filter((sql) => !/"ApiKey"/.test(sql)) };
    };
    const two = await statementsOf(2);
    const many = await statementsOf(500);
    expect(many.queries).toEqual(two.queries);
    expect(many.statements.length).toBe(two.statements.length);
    // the usages are written and returned by one INSERT (services/usages.ts), not read again
    expect(many.statements.filter((sql) => /INSERT INTO "Usage"/.test(sql))).toHaveLength(1);
    expect(many.queries.filter((q) => q.startsWith("Usage."))).toEqual([]);
    expect(many.queries.filter((q) => q.startsWith("SubscriptionLine."))).toEqual(["SubscriptionLine.findMany"]);
    expect(await count({ subscriptionLineId: line })).toBe(502);
  });

  it("refuses the whole batch for one bad record, naming it by index, and writes nothing", async () => {
    const [, line, licensed] = await subscribe();
    const batch = records(line, 5);
    batch[3] = { ...batch[3], quantity: -2 };
    batch[4] = { ...batch[4], subscription_line: licensed };
    const res = await s.rest("POST", "/v1/usages/", { body: { usages: batch } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.fields).toEqual({
      "usages.3.quantity": ["must not be negative"],
      "usages.4.subscription_line": ["only lines of metered plans take usage; this line's plan is licensed"],
    });
    const unknown = await s.rest("POST", "/v1/usages/", {
      body: {
        usages: [records(line, 1)[0], { subscription_line: "lin_nope", quantity: 1 }, { quantity: 1, colour: "red" }],
      },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.fields).toEqual({ "usages.2.colour": ["unknown field"] });
    const unknownLine = await s.rest("POST", "/v1/usages/", {
      body: { usages: [records(line, 1)[0], { subscription_line: "lin_nope", quantity: 1 }, { quantity: 1 }] },
    });
    expect(unknownLine.body.error.fields).toEqual({
      "usages.1.subscription_line": ["unknown subscription line lin_nope"],
      "usages.2.subscription_line": ["is required"],
    });
    const longKey = await s.rest("POST", "/v1/usages/", {
      body: { usages: [records(line, 1)[0], { ...records(line, 1)[0], transaction_id: "x".repeat(256) }] },
    });
    expect(longKey.status).toBe(400);
    expect(Object.keys(longKey.body.error.fields)).toEqual(["usages.1.transaction_id"]);
    expect(longKey.body.error.fields["usages.1.transaction_id"][0]).toContain("255");
    const emptyKey = await s.rest("POST", "/v1/usages/", {
      body: { usages: [records(line, 1)[0], { ...records(line, 1)[0], transaction_id: "" }] },
    });
    expect(emptyKey.body.error.fields).toEqual({
      "usages.1.transaction_id": ["must not be empty (leave it out for no idempotency key)"],
    });
    expect(await count({ subscriptionLineId: line })).toBe(0);
  });

  it("refuses 1,001 records and an empty batch (400 on usages)", async () => {
    const [, line] = await subscribe();
    const tooMany = await s.rest("POST", "/v1/usages/", { body: { usages: records(line, 1001) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.fields.usages[0]).toContain("1000");
    const empty = await s.rest("POST", "/v1/usages/", { body: { usages: [] } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.fields).toEqual({ usages: ["must have between 1 and 1000 records"] });
    expect(await count({ subscriptionLineId: line })).toBe(0);
  });

  it("a record of a cancelled subscription refuses the batch (409, its path), nothing written", async () => {
    const [sub, line] = await subscribe();
    const [, open] = await subscribe();
    await s.database.prisma.subscription.update({
      where: { id: sub },
      data: { status: "cancelled", cancelled: new Date() },
    });
    const res = await s.rest("POST", "/v1/usages/", { body: { usages: [...records(open, 2), ...records(line, 1)] } });
    expect(res.status).toBe(409);
    expect(res.body.error.fields).toEqual({
      "usages.2.subscription_line": ["The subscription is cancelled; it takes no more usage"],
    });
    expect(await count({ subscriptionLineId: { in: [line, open] } })).toBe(0);
  });

  it("counts a transaction_id once across batches, within a batch, and on the single-record POST", async () => {
    const [, line] = await subscribe();
    const first = await s.rest("POST", "/v1/usages/", {
      body: { usages: records(line, 3, (i) => ({ transaction_id: `evt-${i}`, quantity: 10 + i })) },
    });
    expect(first.status).toBe(201);
    expect(first.body.usages.map((u: any) => [u.transaction_id, u.quantity])).toEqual([
      ["evt-0", 10],
      ["evt-1", 11],
      ["evt-2", 12],
    ]);
    // a retry of evt-1 and evt-2 with a new evt-3, evt-3 twice in the batch, and a record without a key
    const retry = await s.rest("POST", "/v1/usages/", {
      body: {
        usages: [
          ...records(line, 3, (i) => ({ transaction_id: `evt-${i + 1}`, quantity: 99 })),
          { ...records(line, 1)[0], transaction_id: "evt-3", quantity: 98 },
          records(line, 1)[0],
        ],
      },
    });
    expect(retry.status).toBe(201);
    expect(retry.body.duplicates).toEqual([0, 1, 3]);
    expect(retry.body.usages.map((u: any) => u.id).slice(0, 2)).toEqual(
      first.body.usages.map((u: any) => u.id).slice(1),
    );
    expect(retry.body.usages.map((u: any) => u.quantity)).toEqual([11, 12, 99, 99, 1]);
    expect(retry.body.usages[3].id).toBe(retry.body.usages[2].id);
    expect(retry.body.usages[4]).not.toHaveProperty("transaction_id");
    // everything a duplicate: 200
    const again = await s.rest("POST", "/v1/usages/", {
      body: { usages: records(line, 2, (i) => ({ transaction_id: `evt-${i}` })) },
    });
    expect([again.status, again.body.duplicates]).toEqual([200, [0, 1]]);
    // the single-record POST: same key, same usage, nothing counted again
    const single = await s.rest("POST", "/v1/usages/", {
      body: { subscription_line: line, quantity: 5, transaction_id: "evt-0" },
    });
    expect(single.status).toBe(201);
    expect(single.body).toMatchObject({ id: first.body.usages[0].id, quantity: 10, transaction_id: "evt-0" });
    const fresh = await s.rest("POST", "/v1/usages/", {
      body: { subscription_line: line, quantity: 5, transaction_id: "evt-single" },
    });
    const freshAgain = await s.rest("POST", "/v1/usages/", {
      body: { subscription_line: line, quantity: 5, transaction_id: "evt-single" },
    });
    expect(freshAgain.body.id).toBe(fresh.body.id);
    expect(await count({ subscriptionLineId: line })).toBe(3 + 2 + 1);
    const keyed = await s.database.prisma.usage.findMany({
      where: { subscriptionLineId: line, transactionId: { not: null } },
      select: { transactionId: true },
    });
    expect(keyed.map((u) => u.transactionId).sort()).toEqual(["evt-0", "evt-1", "evt-2", "evt-3", "evt-single"]);
    // the key is unique per organization and mode: another organization's evt-0 is its own (and refused here: the line
    // is not its)
    const foreign = await s.rest("POST", "/v1/usages/", {
      key: s.keys.other,
      body: { usages: [{ subscription_line: line, quantity: 1, transaction_id: "evt-0" }] },
    });
    expect(foreign.body.error.fields).toEqual({ "usages.0.subscription_line": [`unknown subscription line ${line}`] });
  });

  it("two concurrent batches with overlapping transaction_ids count each id once", async () => {
    const [, line] = await subscribe();
    const a = records(line, 300, (i) => ({ transaction_id: `race-${i}` }));
    const b = records(line, 300, (i) => ({ transaction_id: `race-${i + 150}` }));
    const [ra, rb] = await Promise.all([
      s.rest("POST", "/v1/usages/", { body: { usages: a } }),
      s.rest("POST", "/v1/usages/", { body: { usages: b } }),
    ]);
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(await count({ subscriptionLineId: line })).toBe(450);
    // the overlap race-150 .. race-299 is a duplicate in exactly one of the two answers, and both name the same usage
    expect(ra.body.duplicates.length + rb.body.duplicates.length).toBe(150);
    for (let i = 150; i < 300; i++) expect(rb.body.usages[i - 150].id).toBe(ra.body.usages[i].id);
  });

  it("a cycle bills the same for usage reported in batches (with retries) as one by one", async () => {
    const [subSingles, singles] = await subscribe();
    const [subBatches, batched] = await subscribe();
    const usage = Array.from({ length: 40 }, (_, i) => ({
      quantity: (i % 7) + 0.5,
      date_time: `2026-11-${String(1 + (i % 23)).padStart(2, "0")}T0${i % 10}:00:00-03:00`,
      transaction_id: `bill-${i}`,
    }));
    for (const u of usage)
      expect(
        (
          await s.rest("POST", "/v1/usages/", {
            body: { ...u, subscription_line: singles, transaction_id: `single-${u.transaction_id}` },
          })
        ).status,
      ).toBe(201);
    // overlapping chunks: a sender retrying part of the previous batch
    for (const chunk of [usage.slice(0, 15), usage.slice(10, 30), usage.slice(25)]) {
      expect(
        (
          await s.rest("POST", "/v1/usages/", {
            body: { usages: chunk.map((u) => ({ ...u, subscription_line: batched })) },
          })
        ).status,
      ).toBe(201);
    }
    expect(await count({ subscriptionLineId: batched })).toBe(40);
    for (const sub of [subSingles, subBatches])
      await s.database.prisma.subscription.update({ where: { id: sub }, data: { nextBillingCycle: 2 } });
    const upcoming = async (sub: string) => (await s.rest("GET", `/v1/subscriptions/${sub}/upcoming_invoice/`)).body;
    const [one, other] = [await upcoming(subSingles), await upcoming(subBatches)];
    const metered = (inv: any) => inv.lines.find((l: any) => l.period_start === "2026-11-01" && l.amount === 3);
    const expected = usage.reduce((sum, u) => sum + u.quantity, 0);
    expect(metered(one).quantity).toBe(expected);
    expect(metered(other).quantity).toBe(expected);
    expect([other.amount, other.tax, other.total]).toEqual([one.amount, one.tax, one.total]);
  });
});

describe("GraphQL recordUsages", () => {
  const MUTATION =
    `mutation($input: RecordUsagesInput!) { recordUsages(input: $input) { created duplicates usages { ` +
    `id quantity transactionId subscriptionLine { id } } } }`;

  it("records a batch with the same rules, duplicates reported", async () => {
    const [, line, licensed] = await subscribe();
    const input = {
      usages: [
        { subscriptionLine: line, quantity: "2.5", transactionId: "g-1" },
        { subscriptionLine: line, quantity: "1", dateTime: "2026-11-20T10:00:00Z" },
        { subscriptionLine: line, quantity: "7", transactionId: "g-1" },
      ],
    };
    const res = await s.graphql(MUTATION, { input });
    expect(res.body.errors).toBeUndefined();
    const out = res.body.data.recordUsages;
    expect([out.created, out.duplicates]).toEqual([2, [2]]);
    expect(out.usages.map((u: any) => [u.quantity, u.transactionId, u.subscriptionLine.id])).toEqual([
      ["2.5", "g-1", line],
      ["1", null, line],
      ["2.5", "g-1", line],
    ]);
    expect(out.usages[2].id).toBe(out.usages[0].id);
    const bad = await s.graphql(MUTATION, {
      input: {
        usages: [
          { subscriptionLine: line, quantity: "1" },
          { subscriptionLine: licensed, quantity: "-1" },
        ],
      },
    });
    expect(bad.body.errors[0].extensions.code).toBe("validation_error");
    expect(Object.keys(bad.body.errors[0].extensions.fields).sort()).toEqual([
      "usages.1.quantity",
      "usages.1.subscription_line",
    ]);
    expect(await count({ subscriptionLineId: line })).toBe(2);
  });
});
