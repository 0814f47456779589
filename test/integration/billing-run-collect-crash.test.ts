/**
 * The billing run's collection after a process died between creating an invoice's payment and
 * charging it (docs/billing-run.md "Collection and the no-card rule", "A process that dies while
 * collecting"). The states such a death leaves are made with the services the run calls, stopped
 * where the process would have died:
 *
 * - "created, never charged": the run's payment in `requires_payment_method` with no attempt (what
 *   the version before this one left when killed between its two transactions);
 * - "charge started, never answered": the payment `processing` with attempt 1 pending, the gateway
 *   never called (the run killed between the transaction that creates the payment and starts its
 *   charge, and the gateway call).
 *
 * Here no process is killed: the first state no longer arises in this version, and two sweeps are
 * run at once over both (sigkill-billing-run.test.ts kills the command line with SIGKILL while a
 * gateway reached over HTTP holds a charge's answer, the second state). Two sweeps run
 * concurrently, twice; each payment must be charged exactly once (gateway calls and attempt rows
 * counted) and each invoice paid, with one payment. Both databases.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { runBilling } from "../../src/services/billing-run.js";
import { collectInvoices, collectionPaymentId } from "../../src/services/billing-run/collect.js";
import { runContext } from "../../src/services/billing-run/run-context.js";
import { authorizeLocked, createPayment } from "../../src/services/payments.js";
import { withinTransaction } from "../../src/services/context.js";
import { testCardGateway } from "../../src/infra/gateways/test-cards.js";
import type { PaymentGateway } from "../../src/infra/gateways/types.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";

let s: TestServer;
let plan: string;

beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  plan = product.body.plans[0].id;
});
afterAll(async () => s?.close());
afterEach(() => vi.restoreAllMocks());

/** A customer with a test card, subscribed from 2026-06-10; returns the subscription id and the card. */
async function subscriber(): Promise<{ subscription: string; card: string }> {
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  const card = await s.rest("POST", "/v1/sources/", {
    body: { customer, gateway: "test", usage: "reusable", data: { token: "tok_visa" } },
  });
  expect(card.status, JSON.stringify(card.body)).toBe(201);
  const sub = await s.rest("POST", "/v1/subscriptions/", {
    body: { customer, date_start: "2026-06-10", lines: [{ plan }] },
  });
  expect(sub.status, JSON.stringify(sub.body)).toBe(201);
  return { subscription: sub.body.id, card: card.body.id };
}

const sweep = (staleChargeMs?: number) =>
  collectInvoices({ prisma: s.database.prisma, settings: DEFAULT_SETTINGS, now: () => new Date(), staleChargeMs });

describe("collection after a process died between creating a payment and charging it", () => {
  it("two concurrent sweeps charge each left payment exactly once and pay its invoice", async () => {
    const subs = [await subscriber(), await subscriber(), await subscriber()];
    // billed, not collected: as if the process died right after the batch committed
    const billed = await runBilling({ prisma: s.database.prisma, until: "2026-06-10", collect: false });
    expect(billed.invoices).toBe(3);
    const invoices = await Promise.all(
      subs.map((x) => s.database.prisma.invoice.findFirstOrThrow({ where: { subscriptionId: x.subscription } })),
    );
    const ctxOf = (i: (typeof invoices)[number]) =>
      runContext(s.database.prisma, DEFAULT_SETTINGS, () => new Date(), {
        organizationId: i.organizationId,
        testMode: i.testMode,
        userEmail: i.userEmail,
      });
    const [created, started, fresh] = invoices;

    // 1. created, never charged (the run's payment id, no source, no attempt)
    await createPayment(
      ctxOf(created),
      { invoice: created.id, amount: created.total.toString(), description: "cycle 1" },
      { id: collectionPaymentId(created.id) },
    );
    // 2. created and its charge started in one transaction, then the process died before the gateway call
    await s.database.prisma.$transaction(async (tx) => {
      const txCtx = withinTransaction(ctxOf(started), tx);
      await createPayment(
        txCtx,
        { invoice: started.id, amount: started.total.toString(), description: "cycle 1" },
        { id: collectionPaymentId(started.id) },
      );
      expect(await authorizeLocked(txCtx, collectionPaymentId(started.id), subs[1].card)).not.toBeNull();
    });
    // 3. `fresh` has no payment at all
    expect(
      (await s.database.prisma.payment.findMany({ where: { invoiceId: { in: invoices.map((i) => i.id) } } }))
        .map((p) => p.status)
        .sort(),
    ).toEqual(["processing", "requires_payment_method"]);

    const charged: string[] = [];
    const charge = testCardGateway.charge!.bind(testCardGateway);
    vi.spyOn(testCardGateway as Required<PaymentGateway>, "charge").mockImplementation(async (request) => {
      charged.push(request.chargeId);
      // slow enough that the two sweeps overlap
      await new Promise((r) => setTimeout(r, 50));
      return charge(request);
    });

    // two sweeps at once, with the default staleness: the started attempt is recent, so it is left
    // to the process that started it; the other two invoices are charged once each
    const first = await Promise.all([sweep(), sweep()]);
    expect(first.flatMap((r) => r.failures)).toEqual([]);
    expect(first[0].collected + first[1].collected).toBe(2);
    expect(charged).toHaveLength(2);

    // two sweeps at once that take any pending attempt as stale: the started one is asked once more, with its id
    const second = await Promise.all([sweep(1), sweep(1)]);
    expect(second.flatMap((r) => r.failures)).toEqual([]);
    expect(second[0].collected + second[1].collected).toBe(1);
    expect(charged).toHaveLength(3);
    expect(new Set(charged).size).toBe(3);

    // and a later run charges nothing
    const later = await runBilling({ prisma: s.database.prisma, until: "2026-06-10" });
    expect([later.collected, later.failed]).toEqual([0, 0]);
    expect(await sweep(0)).toEqual({ collected: 0, declined: 0, failures: [] });
    expect(charged).toHaveLength(3);

    for (const invoice of [created, started, fresh]) {
      const payments = await s.database.prisma.payment.findMany({
        where: { invoiceId: invoice.id },
        include: { charges: true },
      });
      expect(
        payments.map((p) => [p.id, p.status]),
        invoice.id,
      ).toEqual([[collectionPaymentId(invoice.id), "succeeded"]]);
      expect(payments[0].charges.map((c) => [c.attempt, c.status])).toEqual([[1, "succeeded"]]);
      expect(charged.filter((id) => id === payments[0].charges[0].id)).toHaveLength(1);
      const printed = (await s.rest("GET", `/v1/invoices/${invoice.id}/`)).body;
      expect([printed.amount_paid, printed.amount_due]).toEqual([printed.total, 0]);
    }
  });
});
