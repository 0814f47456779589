/**
 * The billing run's thread (src/cli/billing-run.ts `startBillingRunThread`, what the command
 * line's `billing run` and the billing bench's runners use; docs/performance.md "Billing run
 * memory"): it opens the configured database itself, bills every due subscription with the
 * summary and the progress the run in process gives, its V8 heap is bounded to
 * BILLING_RUN_OLD_SPACE_MB, and an error of the run comes back with its name, message and code.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDatabase } from "../../src/infra/database.js";
import type { DatabaseTarget } from "../../src/infra/driver-adapter.js";
import { BILLING_RUN_OLD_SPACE_MB, startBillingRunThread } from "../../src/cli/billing-run.js";
import { seedSubscriptions } from "../../bench/billing-seed.js";
import { cloneTemplate } from "../helpers/databases.js";

const COUNT = 40;
let target: DatabaseTarget;
let drop: () => Promise<void>;
let organizationId: string;

/** The environment the command line would have for `target`. */
function envOf(t: DatabaseTarget): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, BILLING_DATA_DIR: _dir, ...env } = process.env;
  return t.kind === "postgres"
    ? { ...env, DATABASE_URL: t.url, LOG_LEVEL: "silent" }
    : { ...env, BILLING_DATA_DIR: path.dirname(t.dir!), LOG_LEVEL: "silent" };
}

describe("the billing run's thread", () => {
  beforeAll(async () => {
    ({ target, drop } = await cloneTemplate(inject("template")));
    const database = await createDatabase(target);
    try {
      ({ organizationId } = await seedSubscriptions(database.prisma, { count: COUNT, dateStart: "2026-01-01" }));
    } finally {
      await database.close();
    }
  });
  afterAll(async () => {
    await drop?.();
  });

  it("bills every due subscription in a heap bounded to BILLING_RUN_OLD_SPACE_MB", { timeout: 120_000 }, async () => {
    const thread = await startBillingRunThread(envOf(target));
    const progress: [number, number][] = [];
    const { summary, heap } = await thread.run({ until: "2026-02-01", batchSize: 10 }, (done, total) =>
      progress.push([done, total]),
    );
    // a quarter of the plans are metered: billed on cycle 2 only
    expect(summary).toEqual({
      billed: COUNT,
      invoices: 2 * COUNT - COUNT / 4,
      cycles: 2 * COUNT,
      cancelled: 0,
      collected: 0,
      failed: 0,
      declined: 0,
      skipped: 0,
      errors: [],
    });
    expect(progress).toEqual([
      [10, COUNT],
      [20, COUNT],
      [30, COUNT],
      [40, COUNT],
    ]);
    // the limit is the old generation's bound plus the young generation's few MB
    expect(heap.heapLimitMb).toBeGreaterThanOrEqual(BILLING_RUN_OLD_SPACE_MB);
    expect(heap.heapLimitMb).toBeLessThan(BILLING_RUN_OLD_SPACE_MB + 100);

    const database = await createDatabase(target);
    try {
      const invoices = await database.prisma.invoice.findMany({ where: { organizationId }, select: { status: true } });
      expect(invoices).toHaveLength(2 * COUNT - COUNT / 4);
      expect(invoices.every((i) => i.status === "finalized")).toBe(true);
    } finally {
      await database.close();
    }
  });

  it("an error of the run comes back with its name, message and code", { timeout: 120_000 }, async () => {
    const thread = await startBillingRunThread(envOf(target));
    await expect(thread.run({ until: "2026-13-01" })).rejects.toMatchObject({
      name: "ValidationError",
      message: "until: must be a date yyyy-mm-dd, got 2026-13-01",
      code: "validation_error",
    });
  });
});
