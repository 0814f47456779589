/**
 * The billing run's collection when its process is killed with SIGKILL while a charge is at the
 * gateway (issue 32, "No work lost or done twice when a process dies"; docs/billing-run.md "A process
 * that dies while collecting", docs/scaling.md "When a process dies").
 *
 * The built command line (`node dist/cli.js billing run`) runs as a child process whose `test`
 * gateway charges over HTTP through a fake gateway of this test (test/helpers/fake-gateway.ts,
 * idempotent by the charge attempt's id as a real gateway is). Two subscriptions are billed in one
 * batch; the first charge reaches the gateway, which makes it and holds its answer; the process is
 * killed there. That leaves one invoice whose payment is `processing` with its attempt pending (the
 * gateway charged it, the service never heard) and one invoice with no payment at all.
 *
 * The next run (the attempt aged past the 5 minutes after which a sweep takes it as left by a dead
 * process, STALE_CHARGE_MS, by moving its `updatedAt` back) charges the second invoice and asks the
 * gateway about the first again with the same attempt id: the gateway answers the charge it made,
 * and makes no second one. Each invoice ends with one payment, one attempt and one charge at the
 * gateway, paid once.
 *
 * PostgreSQL only, the deployment where several processes share the work (docs/scaling.md). The
 * code is written for both databases and passes on the embedded one too (without the skip), where
 * each process and each look at the data opens PGlite, which would about triple the test's cost in
 * CI. That a process on the embedded database takes over the lock a killed one left and finds its
 * committed writes is idempotency-crash.test.ts and runtime.test.ts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { cloneTemplate, inDatabase, TEST_DB } from "../helpers/databases.js";
import { databaseVariables, serviceEnv, startProcess, ROOT, type ServiceProcess } from "../helpers/processes.js";
import { GATEWAY_PRELOAD, startFakeGateway, type FakeGateway } from "../helpers/fake-gateway.js";
import { chileanCustomer, startTestServer } from "../helpers/server.js";
import { collectionPaymentId } from "../../src/services/billing-run/collect.js";

const running: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** `billing run` of the built command line, its `test` gateway charging through `gateway`. */
function billingRun(env: NodeJS.ProcessEnv, gateway: FakeGateway): ServiceProcess {
  const run = startProcess(
    process.execPath,
    ["--import", GATEWAY_PRELOAD, "dist/cli.js", "billing", "run", "--until", "2026-06-10", "--json", "--no-progress"],
    { ...env, TEST_GATEWAY_URL: gateway.url },
    ROOT,
  );
  running.push(run);
  return run;
}

describe.skipIf(TEST_DB !== "postgres")("billing run killed with SIGKILL while a charge is at the gateway", () => {
  it(
    "the next run charges each invoice once: the left attempt asked again with its id, the other charged",
    { timeout: 180_000 },
    async () => {
      const { target, drop } = await cloneTemplate(inject("template"));
      cleanups.push(drop);
      const gateway = await startFakeGateway();
      cleanups.push(() => gateway.stop());

      // two customers with a card, subscribed from 2026-06-10 (seeded through the API in this process)
      const s = await startTestServer({ target });
      const product = await s.rest("POST", "/v1/products/", {
        body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
      });
      expect(product.status, JSON.stringify(product.body)).toBe(201);
      const subscriptions: string[] = [];
      for (let i = 0; i < 2; i++) {
        const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
        const card = await s.rest("POST", "/v1/sources/", {
          body: { customer, gateway: "test", usage: "reusable", data: { token: "tok_visa" } },
        });
        expect(card.status, JSON.stringify(card.body)).toBe(201);
        const sub = await s.rest("POST", "/v1/subscriptions/", {
          body: { customer, date_start: "2026-06-10", lines: [{ plan: product.body.plans[0].id }] },
        });
        expect(sub.status, JSON.stringify(sub.body)).toBe(201);
        subscriptions.push(sub.body.id);
      }
      await s.close();
      const env = serviceEnv({ ...databaseVariables(target), LOG_LEVEL: "warn" });

      // 1. the first charge reaches the gateway, which makes it and holds the answer: the process is killed there
      let arrived!: () => void;
      const atGateway = new Promise<void>((resolve) => (arrived = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      gateway.beforeAnswer = async () => {
        arrived();
        await held;
      };
      const first = billingRun(env, gateway);
      await Promise.race([atGateway, first.exited]);
      expect(gateway.requests, first.lines.join("\n")).toHaveLength(1);
      first.child.kill("SIGKILL");
      expect(await first.exited).toBe("SIGKILL");
      release();
      gateway.beforeAnswer = async () => {};
      const [heldChargeId] = gateway.requests;

      const invoiceIds = await inDatabase(target, async ({ prisma }) => {
        const invoices = await prisma.invoice.findMany({
          where: { subscriptionId: { in: subscriptions } },
          select: { id: true, status: true, total: true },
          orderBy: { id: "asc" },
        });
        // the batch committed both invoices before collecting them
        expect(invoices.map((i) => i.status)).toEqual(["finalized", "finalized"]);
        const charge = await prisma.paymentCharge.findUniqueOrThrow({
          where: { id: heldChargeId },
          include: { payment: true },
        });
        // the killed run's state: one payment processing, its attempt pending; the other invoice without a payment
        expect([charge.status, charge.attempt, charge.payment.status]).toEqual(["pending", 1, "processing"]);
        const charged = invoices.find((i) => i.id === charge.payment.invoiceId)!;
        const uncharged = invoices.find((i) => i.id !== charged.id)!;
        expect(charge.paymentId).toBe(collectionPaymentId(charged.id));
        expect(await prisma.payment.count({ where: { invoiceId: uncharged.id } })).toBe(0);
        // 5 minutes pass: the attempt is now old enough for a sweep to take it as left by a dead process
        await prisma.$executeRaw`
        UPDATE "PaymentCharge" SET "updatedAt" = "updatedAt" - interval '6 minutes' WHERE "id" = ${heldChargeId}`;
        return { charged: charged.id, uncharged: uncharged.id };
      });

      // 2. the next run's sweep finishes both
      const second = billingRun(env, gateway);
      expect(await second.exited, second.lines.join("\n")).toBe(0);
      expect(second.logs().find((l) => "collected" in l)).toMatchObject({
        invoices: 0,
        collected: 2,
        failed: 0,
        errors: [],
      });

      // the gateway: two charges, the held one asked twice (same attempt id) and made once
      expect([...gateway.charges.values()].map((c) => [c.request.chargeId, c.requests])).toEqual([
        [heldChargeId, 2],
        [expect.any(String), 1],
      ]);
      await inDatabase(target, async ({ prisma }) => {
        for (const invoiceId of [invoiceIds.charged, invoiceIds.uncharged]) {
          const invoice = await prisma.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
          const payments = await prisma.payment.findMany({ where: { invoiceId }, include: { charges: true } });
          expect(payments.map((p) => [p.id, p.status, p.amount.toFixed()])).toEqual([
            [collectionPaymentId(invoiceId), "succeeded", invoice.total.toFixed()],
          ]);
          const [charge] = payments[0].charges;
          expect(payments[0].charges).toHaveLength(1);
          // the attempt records the gateway's one charge of its id
          expect([charge.status, charge.reference]).toEqual([
            "succeeded",
            gateway.charges.get(charge.id)!.result.reference,
          ]);
          expect(await prisma.event.count({ where: { type: "invoice.paid", objectId: invoiceId } })).toBe(1);
        }
        expect(await prisma.paymentCharge.count({ where: { status: "pending" } })).toBe(0);
      });
    },
  );
});
