/**
 * The dunning attempts across processes (docs/dunning.md "Attempts", "Several processes and crashes"): the built
 * command line (`node dist/cli.js dunning run`) in two processes at once on one database makes each run's first
 * attempt once (one attempt row, one payment of its known id and one charge per invoice; the processes charge
 * through the fake gateway of test/helpers/fake-gateway.ts, which holds its answers until both hold claims, so
 * that each claims a part of the runs and they charge at the same time); a process killed with
 * SIGKILL while the charges of a page of attempts are at the gateway leaves its runs to the next round once their
 * lease lapsed, which asks the gateway again about the held charges with the same charge ids and charges nobody twice.
 *
 * PostgreSQL only, the deployment where several processes share the work (docs/scaling.md), as
 * sigkill-billing-run.test.ts and webhooks-processes.test.ts: the data is prepared through a test server on a
 * clone of the template, which is closed before the child processes start.
 */
import { afterAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate, inDatabase, TEST_DB } from "../helpers/databases.js";
import { databaseVariables, serviceEnv, startProcess, ROOT, type ServiceProcess } from "../helpers/processes.js";
import { GATEWAY_PRELOAD, startFakeGateway, type FakeGateway } from "../helpers/fake-gateway.js";
import { chileanCustomer, startTestServer } from "../helpers/server.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { attemptPaymentId, DUNNING_PAGES_IN_FLIGHT, DUNNING_RUN_PAGE } from "../../src/services/dunning-attempts.js";
import { sweepOverdueInvoices } from "../../src/services/overdue-invoices.js";
import type { DatabaseTarget } from "../../src/infra/database-target.js";

/** The day `dunning run --until` takes as today: the invoices (due 2026-11-10) are overdue, the runs due. */
const UNTIL = "2026-11-20";

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

/**
 * A clone of the template with the organization's default campaign (threshold CLP 0, an attempt a day, 3 attempts)
 * and `n` customers, each with a reusable card of `token` and a finalized invoice of 2916 CLP due 2026-11-10, swept
 * overdue. Returns the database and the invoices by customer.
 */
async function prepared(n: number, token: string): Promise<{ target: DatabaseTarget; invoices: Map<string, string> }> {
  const { target, drop } = await cloneTemplate(inject("template"));
  cleanups.push(drop);
  const s = await startTestServer({ target });
  const invoices = new Map<string, string>();
  try {
    const campaign = await s.rest("POST", "/v1/dunning_campaigns/", {
      body: {
        name: "Estándar",
        code: "standard",
        thresholds: [{ currency: "CLP", amount: 0 }],
        days_between_attempts: 1,
        max_attempts: 3,
        final_action: "none",
        applied_to_organization: true,
      },
    });
    expect(campaign.status, campaign.text).toBe(201);
    // 20 customers at a time (all at once, 110 of them wait too long for the test server's pool on a loaded machine)
    const one = async () => {
      const created = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
      expect(created.status, created.text).toBe(201);
      const customer = created.body.id as string;
      const card = await s.rest("POST", "/v1/sources/", {
        body: { gateway: "test", customer, usage: "reusable", data: { token } },
      });
      expect(card.status, card.text).toBe(201);
      const invoice = await s.rest("POST", "/v1/invoices/", {
        body: {
          customer,
          date: "2026-11-01",
          due_date: "2026-11-10",
          lines: [
            { name: "Consultoría", quantity: 2, amount: 1000 },
            { name: "Soporte", amount: 500, discount: 10 },
          ],
        },
      });
      expect(invoice.status, invoice.text).toBe(201);
      const finalized = await s.rest("GET", `/v1/invoices/${invoice.body.id}/finalize/`);
      expect(finalized.status, finalized.text).toBe(200);
      invoices.set(customer, invoice.body.id);
    };
    for (let start = 0; start < n; start += 20) await Promise.all(Array.from({ length: Math.min(20, n - start) }, one));
    const swept = await sweepOverdueInvoices({
      prisma: s.database.prisma,
      settings: DEFAULT_SETTINGS,
      now: () => new Date(),
      until: UNTIL,
    });
    expect(swept).toMatchObject({ overdue: n });
  } finally {
    await s.close();
  }
  return { target, invoices };
}

/** `dunning run --until UNTIL --json` of the built command line; through `gateway` when given. */
function dunningRun(target: DatabaseTarget, gateway?: FakeGateway): ServiceProcess {
  const preload = gateway ? ["--import", GATEWAY_PRELOAD] : [];
  const run = startProcess(
    process.execPath,
    [...preload, "dist/cli.js", "dunning", "run", "--until", UNTIL, "--json", "--no-progress"],
    serviceEnv({ ...databaseVariables(target), LOG_LEVEL: "warn", TEST_GATEWAY_URL: gateway?.url }),
    ROOT,
  );
  running.push(run);
  return run;
}

/** The summary a `dunning run --json` printed. */
function summaryOf(run: ServiceProcess): Record<string, number> {
  const summary = run.logs().find((l) => "attempts" in l && "entered" in l);
  expect(summary, run.lines.join("\n")).toBeDefined();
  return summary as Record<string, number>;
}

describe.skipIf(TEST_DB !== "postgres")("dunning attempts in several processes", () => {
  it(
    "two processes at once: each run's first attempt made once, one payment and one charge per invoice",
    {
      timeout: 120_000,
    },
    async () => {
      // more runs than the claims of one process take at once (DUNNING_PAGES_IN_FLIGHT pages of DUNNING_RUN_PAGE):
      // each process gets some
      const n = DUNNING_PAGES_IN_FLIGHT * DUNNING_RUN_PAGE + 10;
      const { target, invoices } = await prepared(n, "tok_chargeDeclinedInsufficientFunds");
      const gateway = await startFakeGateway();
      cleanups.push(() => gateway.stop());
      // the gateway holds its answers until both processes hold claims on all the runs: each claimed pages, and both
      // are charging at once
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      gateway.beforeAnswer = () => held;
      const runs = [dunningRun(target, gateway), dunningRun(target, gateway)];
      const exits = Promise.all(runs.map((r) => r.exited));
      const claimed = await inDatabase(target, async ({ prisma }) => {
        for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
          const count = await prisma.dunningRun.count({ where: { leaseUntil: { not: null } } });
          if (count === n || runs.some((r) => r.child.exitCode !== null)) return count;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        return -1;
      });
      release();
      expect(await exits, runs.map((r) => r.lines.join("\n")).join("\n----\n")).toEqual([0, 0]);
      expect(claimed).toBe(n);
      expect(gateway.requests).toHaveLength(n);
      expect([...gateway.charges.values()].every((c) => c.requests === 1)).toBe(true);
      const [a, b] = runs.map(summaryOf);
      // each made the attempts of the pages it claimed: both some
      expect(a.attempts * b.attempts).toBeGreaterThan(0);
      expect([a.entered + b.entered, a.attempts + b.attempts, a.declined + b.declined, a.charged + b.charged]).toEqual([
        n,
        n,
        n,
        0,
      ]);
      expect([a.failed, b.failed]).toEqual([0, 0]);

      await inDatabase(target, async ({ prisma }) => {
        const dunningRuns = await prisma.dunningRun.findMany({ include: { attemptRows: true } });
        expect(dunningRuns).toHaveLength(n);
        expect(new Set(dunningRuns.map((r) => r.customerId))).toEqual(new Set(invoices.keys()));
        const attempts = await prisma.dunningAttempt.findMany({ where: { number: 1 } });
        expect(attempts).toHaveLength(n);
        expect(await prisma.dunningAttempt.count()).toBe(n);
        for (const run of dunningRuns) {
          // one attempt 1, the next due a day later, the claim released
          expect(run.attemptRows.map((x) => x.number)).toEqual([1]);
          expect([run.status, run.leaseUntil, run.nextAttemptAt?.toISOString()]).toEqual([
            "active",
            null,
            "2026-11-21T00:00:00.000Z",
          ]);
        }
        const paymentIds = dunningRuns.map((r) => attemptPaymentId(r.id, 1, invoices.get(r.customerId)!));
        const payments = await prisma.payment.findMany({ include: { charges: true } });
        expect(payments).toHaveLength(n);
        expect(new Set(payments.map((p) => p.id))).toEqual(new Set(paymentIds));
        for (const p of payments) {
          expect([p.status, p.amount.toFixed(), p.charges.length]).toEqual(["requires_payment_method", "2916", 1]);
          expect([p.charges[0].status, p.charges[0].failureCode]).toEqual(["declined", "insufficient_funds"]);
        }
        expect(await prisma.paymentCharge.count()).toBe(n);
        expect(await prisma.event.count({ where: { type: "dunning.attempt" } })).toBe(n);
        // one e-mail per attempt, written with it (kept: the processes have no SMTP server)
        const messages = await prisma.outboxMessage.findMany({ where: { kind: "dunning" } });
        expect(messages.map((m) => m.customerId).sort()).toEqual([...invoices.keys()].sort());
        expect(new Set(messages.map((m) => m.status))).toEqual(new Set(["kept"]));
      });
    },
  );

  it(
    "a process killed with SIGKILL while a page's charges are at the gateway: the next round charges nobody twice",
    {
      timeout: 120_000,
    },
    async () => {
      // a page of runs made and written (DUNNING_RUN_PAGE), then a page of `held` runs whose charges the gateway holds
      const held = 3;
      const n = DUNNING_RUN_PAGE + held;
      const { target, invoices } = await prepared(n, "tok_visa");
      const gateway = await startFakeGateway();
      cleanups.push(() => gateway.stop());

      // 1. the charges of a page of `held` runs reach the gateway, which makes them and holds the answers; once the
      // other page's attempts are written, the process is killed (a page's charges go to the gateway together, after
      // its payments and charges are written). The process attempts two pages at once (DUNNING_PAGES_IN_FLIGHT), so
      // the held page is found by its charges' descriptions ("Dunning attempt 1 (run dnr_...)"): the runs whose
      // claim token `held` runs share
      let arrived!: () => void;
      const atGateway = new Promise<void>((resolve) => (arrived = resolve));
      let release!: () => void;
      const holding = new Promise<void>((resolve) => (release = resolve));
      const heldChargeIds: string[] = [];
      const first = await inDatabase(target, async ({ prisma }) => {
        gateway.beforeAnswer = async (charge) => {
          const runId = /\(run (dnr_\w+)\)/.exec(charge.request.description ?? "")?.[1];
          const [{ runs }] = await prisma.$queryRaw<{ runs: number }[]>`
          SELECT count(*)::int AS "runs" FROM "DunningRun"
          WHERE "claimToken" = (SELECT "claimToken" FROM "DunningRun" WHERE "id" = ${runId})`;
          if (runs !== held) return;
          heldChargeIds.push(charge.request.chargeId);
          if (heldChargeIds.length === held) arrived();
          await holding;
        };
        const first = dunningRun(target, gateway);
        await Promise.race([atGateway, first.exited]);
        expect(heldChargeIds, first.lines.join("\n")).toHaveLength(held);
        // the other page's attempts written (its charges were not held)
        let exited = false;
        void first.exited.then(() => (exited = true));
        while (!exited && (await prisma.dunningAttempt.count()) < DUNNING_RUN_PAGE)
          await new Promise((resolve) => setTimeout(resolve, 50));
        return first;
      });
      expect(gateway.requests, first.lines.join("\n")).toHaveLength(n);
      first.child.kill("SIGKILL");
      expect(await first.exited).toBe("SIGKILL");
      release();
      gateway.beforeAnswer = async () => {};

      await inDatabase(target, async ({ prisma }) => {
        // the killed round's state: the other page's attempts made (their runs paid), the held page's charges pending,
        // its runs claimed
        expect(await prisma.dunningAttempt.count()).toBe(DUNNING_RUN_PAGE);
        for (const id of heldChargeIds) {
          const charge = await prisma.paymentCharge.findUniqueOrThrow({ where: { id }, include: { payment: true } });
          expect([charge.status, charge.payment.status]).toEqual(["pending", "processing"]);
        }
        const runs = await prisma.dunningRun.findMany({ where: { status: "active" } });
        expect(runs).toHaveLength(held);
        for (const run of runs) expect(run.leaseUntil!.getTime()).toBeGreaterThan(Date.now());
        // DUNNING_LEASE_MS (10 minutes) pass: the killed process's claims lapse
        await prisma.$executeRaw`
        UPDATE "DunningRun" SET "leaseUntil" = "leaseUntil" - interval '11 minutes' WHERE "leaseUntil" IS NOT NULL`;
      });

      // 2. the next round makes the attempts left, asking the gateway about the held charge with its id
      const second = dunningRun(target, gateway);
      expect(await second.exited, second.lines.join("\n")).toBe(0);
      expect(summaryOf(second)).toMatchObject({ entered: 0, attempts: held, paid: held, charged: held, failed: 0 });

      // the gateway: one charge per invoice, the held ones asked twice (with their charge ids), the others once
      expect(gateway.charges.size).toBe(n);
      expect(new Set(heldChargeIds).size).toBe(held);
      for (const [id, charge] of gateway.charges)
        expect([id, charge.requests]).toEqual([id, heldChargeIds.includes(id) ? 2 : 1]);
      await inDatabase(target, async ({ prisma }) => {
        const runs = await prisma.dunningRun.findMany({ include: { attemptRows: true } });
        expect(runs).toHaveLength(n);
        for (const run of runs) {
          expect(run.attemptRows.map((a) => [a.number, a.outcome])).toEqual([[1, "paid"]]);
          expect(run.status).toBe("paid");
          const invoiceId = invoices.get(run.customerId)!;
          const invoice = await prisma.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
          const payments = await prisma.payment.findMany({ where: { invoiceId }, include: { charges: true } });
          // one payment of the attempt's known id, one charge at the gateway, paid once
          expect(payments.map((p) => [p.id, p.status, p.amount.toFixed(), p.charges.length])).toEqual([
            [attemptPaymentId(run.id, 1, invoiceId), "succeeded", invoice.total.toFixed(), 1],
          ]);
          const [charge] = payments[0].charges;
          expect([charge.status, charge.reference]).toEqual([
            "succeeded",
            gateway.charges.get(charge.id)!.result.reference,
          ]);
          const succeeded = payments
            .filter((p) => p.status === "succeeded")
            .reduce((t, p) => t + p.amount.toNumber(), 0);
          expect(succeeded).toBe(invoice.total.toNumber());
          expect(await prisma.event.count({ where: { type: "invoice.paid", objectId: invoiceId } })).toBe(1);
        }
        expect(await prisma.paymentCharge.count({ where: { status: "pending" } })).toBe(0);
        expect(await prisma.dunningAttempt.count()).toBe(n);
      });
    },
  );
});
