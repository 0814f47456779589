/**
 * services/usages.ts recordUsages and createUsage called directly (recordUsageList's steps: the
 * batch's lines read, the records checked, one row per transaction id, the insert, the rows of
 * transaction ids recorded before): ids and duplicates per record, the stored rows, and the 400 and
 * 409 naming records by index.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProduct } from "../../src/services/products.js";
import { cancelSubscription, createSubscription } from "../../src/services/subscriptions.js";
import { createUsage, recordUsages } from "../../src/services/usages.js";
import {
  chileanCustomerOf,
  rejection,
  startServiceDatabase,
  type ServiceDatabase,
} from "../helpers/service-context.js";

let s: ServiceDatabase;
let customerId: string;
let planId: string;

beforeAll(async () => {
  s = await startServiceDatabase();
  customerId = await chileanCustomerOf(s);
  const product = await createProduct(s.acme, {
    name: "API",
    plans: [{ name: "Llamadas", amount: 3, currency: "CLP", frequency: "monthly", usageScheme: "metered" }],
  });
  planId = (await s.database.prisma.plan.findFirstOrThrow({ where: { productId: product.id } })).id;
});
afterAll(async () => s?.close());

/** A new subscription's one metered line: its id, and the subscription's. */
async function meteredLine() {
  const sub = await createSubscription(s.acme, {
    customer: customerId,
    dateStart: "2026-11-01",
    lines: [{ plan: planId }],
  });
  const line = await s.database.prisma.subscriptionLine.findFirstOrThrow({ where: { subscriptionId: sub.id } });
  return { line: line.id, subscription: sub.id };
}

describe("recordUsages", () => {
  it("writes one row per transaction id: a later record with it is a duplicate, in the batch and after", async () => {
    const { line } = await meteredLine();
    const at = new Date("2026-11-10T12:00:00.000Z");
    const first = await recordUsages(s.acme, [
      { subscriptionLine: line, quantity: 5, dateTime: at, transactionId: "t1" },
      { subscriptionLine: line, quantity: "2.5", dateTime: at },
      { subscriptionLine: line, quantity: 9, dateTime: at, transactionId: "t1" },
    ]);
    expect(first.duplicates).toEqual([2]);
    expect(first.ids[2]).toBe(first.ids[0]);
    expect(first.usages.map((u) => [String(u.quantity), u.transactionId, u.dateTime.toISOString()])).toEqual([
      ["5", "t1", "2026-11-10T12:00:00.000Z"],
      ["2.5", null, "2026-11-10T12:00:00.000Z"],
      ["5", "t1", "2026-11-10T12:00:00.000Z"],
    ]);
    const rows = await s.database.prisma.usage.findMany({
      where: { subscriptionLineId: line },
      orderBy: { id: "asc" },
    });
    expect(rows.map((u) => u.id).sort()).toEqual([first.ids[0], first.ids[1]].sort());

    const again = await recordUsages(s.acme, [
      { subscriptionLine: line, quantity: 1, dateTime: at },
      { subscriptionLine: line, quantity: 7, dateTime: at, transactionId: "t1" },
    ]);
    expect(again.duplicates).toEqual([1]);
    expect(again.ids[1]).toBe(first.ids[0]);
    expect(String(again.usages[1].quantity)).toBe("5");
    expect(await s.database.prisma.usage.count({ where: { subscriptionLineId: line } })).toBe(3);
  });

  it("names every bad record by index in one 400 and writes nothing", async () => {
    const { line } = await meteredLine();
    const error = await rejection(
      recordUsages(s.acme, [
        { subscriptionLine: "lin_unknown", quantity: 1 },
        { subscriptionLine: line, quantity: -1 },
        { subscriptionLine: line, quantity: 1, transactionId: "" },
      ]),
    );
    expect([error.code, error.message.split(":")[0]]).toEqual(["validation_error", "Invalid usages"]);
    expect(Object.keys(error.fields)).toEqual([
      "usages.0.subscription_line",
      "usages.1.quantity",
      "usages.2.transaction_id",
    ]);
    expect(error.fields["usages.1.quantity"]).toEqual(["must not be negative"]);
    expect(await s.database.prisma.usage.count({ where: { subscriptionLineId: line } })).toBe(0);
  });

  it("refuses a cancelled subscription's usage: 409 naming the record, without a prefix for one", async () => {
    const { line, subscription } = await meteredLine();
    await cancelSubscription(s.acme, subscription);
    const batch = await rejection(recordUsages(s.acme, [{ subscriptionLine: line, quantity: 1 }]));
    expect([batch.code, batch.message]).toEqual([
      "invalid_state",
      "Cancelled subscriptions take no more usage: usages.0.subscription_line",
    ]);
    const one = await rejection(createUsage(s.acme, { subscriptionLine: line, quantity: 1 }));
    expect([one.code, one.message]).toEqual(["invalid_state", "The subscription is cancelled; it takes no more usage"]);
    expect(await s.database.prisma.usage.count({ where: { subscriptionLineId: line } })).toBe(0);
  });
});
