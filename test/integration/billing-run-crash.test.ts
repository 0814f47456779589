/**
 * Crash safety of the billing run (docs/billing-run.md): the CLI (`billing run`) runs as a child
 * process on a PostgreSQL database seeded with subscriptions, is killed with SIGKILL in the middle
 * of the run, and is run again. Every subscription must end billed exactly once per cycle, every
 * usage record billed once, and the invoice numbers gapless. PostgreSQL only (PGlite is an
 * in-process database: a second process cannot open it while the test holds it).
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { seedSubscriptions, type Seeded } from "../../bench/billing-seed.js";

const COUNT = 240;
let database: Database;
let drop: () => Promise<void>;
let url: string;
let seeded: Seeded;

function cli(args: string[]) {
  return spawn(process.execPath, ["dist/cli.js", ...args], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

describe.skipIf(TEST_DB !== "postgres")("billing run crash", () => {
  beforeAll(async () => {
    const clone = await cloneTemplate(inject("template"));
    if (clone.target.kind !== "postgres") throw new Error("postgres only");
    url = clone.target.url;
    drop = clone.drop;
    database = await createDatabase(clone.target);
    seeded = await seedSubscriptions(database.prisma, { count: COUNT, dateStart: "2026-01-01" });
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it(
    "killed with SIGKILL mid-run, the next run bills every subscription exactly once",
    { timeout: 600_000 },
    async () => {
      const where = { organizationId: seeded.organizationId };
      const first = cli(["billing", "run", "--until", "2026-02-01", "--batch-size", "5", "--no-progress"]);
      let exited = false;
      first.on("exit", () => (exited = true));
      // wait until some batches have committed, then kill it without warning
      for (;;) {
        await new Promise((r) => setTimeout(r, 200));
        if (exited) throw new Error("the run finished before it could be killed; seed more subscriptions");
        if ((await database.prisma.invoice.count({ where })) >= 20) break;
      }
      first.kill("SIGKILL");
      await new Promise((r) => first.once("exit", r));
      const partial = await database.prisma.invoice.count({ where });
      const pending = await database.prisma.subscription.count({ where: { ...where, nextBillingCycle: { lt: 3 } } });
      expect(partial).toBeGreaterThan(0);
      expect(pending, "the kill left subscriptions unbilled").toBeGreaterThan(0);

      const second = cli(["billing", "run", "--until", "2026-02-01", "--json"]);
      let out = "";
      second.stdout.on("data", (d) => (out += d));
      const code = await new Promise((r) => second.once("exit", r));
      expect(code).toBe(0);
      const summary = JSON.parse(out.trim().split("\n").pop()!);
      expect(summary.failed).toBe(0);

      const subscriptions = await database.prisma.subscription.findMany({
        where,
        include: { lines: { include: { plan: true } } },
      });
      expect(subscriptions).toHaveLength(COUNT);
      expect(subscriptions.every((s) => s.nextBillingCycle === 3 && s.status === "active")).toBe(true);
      const invoices = await database.prisma.invoice.findMany({
        where,
        select: { subscriptionId: true, billingCycle: true, number: true, status: true },
      });
      // licensed plans bill cycles 1 and 2, metered ones only cycle 2 (usage in arrears)
      const metered = subscriptions.filter((s) => s.lines[0].plan.usageScheme === "metered");
      expect(invoices).toHaveLength(2 * COUNT - metered.length);
      const keys = new Set(invoices.map((i) => `${i.subscriptionId}/${i.billingCycle}`));
      expect(keys.size).toBe(invoices.length);
      expect(invoices.every((i) => i.status === "finalized")).toBe(true);
      expect(invoices.map((i) => i.number!).sort((a, b) => a - b)).toEqual(invoices.map((_, i) => i + 1));

      // every usage billed once, by its subscription's cycle 2 invoice, for the quantity it bills
      const usages = await database.prisma.usage.findMany({
        where,
        select: { subscriptionLineId: true, invoiceId: true },
      });
      expect(usages.every((u) => u.invoiceId !== null)).toBe(true);
      const lines = await database.prisma.invoiceLine.findMany({
        where: { invoice: { ...where, billingCycle: 2 }, plan: { usageScheme: "metered" } },
        include: { invoice: { select: { subscriptionId: true } } },
      });
      expect(lines).toHaveLength(metered.length);
      for (const line of lines) {
        const sub = metered.find((s) => s.id === line.invoice.subscriptionId)!;
        expect(Number(line.quantity)).toBe(seeded.meteredUsage.get(sub.lines[0].id));
      }
    },
  );
});
