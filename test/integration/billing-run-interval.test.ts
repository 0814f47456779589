/**
 * The billing run inside the server (createApp `billingRunIntervalMs`, BILLING_RUN_INTERVAL_SECONDS):
 * a subscription starting today is billed by the server's own interval, with no CLI call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ billingRunIntervalMs: 300 });
});
afterAll(async () => s?.close());

describe("billing run interval", () => {
  it("bills a subscription due today without anyone running the CLI", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const product = (
      await s.rest("POST", "/v1/products/", {
        body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
      })
    ).body;
    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: { customer, lines: [{ plan: product.plans[0].id, quantity: 2 }] },
    });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    let invoice = null;
    for (let i = 0; i < 100 && !invoice; i++) {
      await new Promise((r) => setTimeout(r, 200));
      invoice = await s.database.prisma.invoice.findFirst({ where: { subscriptionId: sub.body.id } });
    }
    expect(invoice).not.toBeNull();
    expect([invoice!.status, invoice!.billingCycle, invoice!.total.toString()]).toEqual(["finalized", 1, "23800"]);
    const after = (await s.rest("GET", `/v1/subscriptions/${sub.body.id}/`)).body;
    expect([after.next_billing_cycle, after.previous_billing]).toEqual([2, sub.body.date_start]);
  });
});
