/**
 * `npx tsx bench/event-printing.ts [--count 300] [--rounds 12] [--runs 0]`: what printing events costs
 * (docs/performance.md "After events: the cost of printing events"), on the local PostgreSQL
 * (BENCH_POSTGRES_URL's server, default postgresql://postgres@127.0.0.1:5432/postgres).
 *
 * - Printing: seeds `--count` subscriptions (bench/billing-seed.ts) in a fresh database, bills them
 *   (`runBilling`, cycles 1 and 2), then prints every subscription and every invoice as the billing
 *   run's events do (services/events.ts `printedObjects`, 100 ids per call, one `directTransaction` per
 *   100) for `--rounds` rounds, and prints the median and lowest CPU time of this process per object by
 *   kind (the first round, cold, left out; `--rounds 0`: none of this). With `--split 20` also each
 *   100 ids in calls of 20 (more GraphQL executions for the same objects), interleaved with the calls
 *   of 100.
 * - `--runs N`: N rounds of the billing run itself over `--count` fresh subscriptions each, in turn with
 *   the REST printer and with a stub printer that prints every object as `{"id": ...}` (the events are
 *   still written, with that data): the CPU per subscription printing costs the run.
 *
 * CPU is `process.cpuUsage()` of this process (the run and the printing run on its main thread). The
 * databases are dropped at the end.
 */
import { Command } from "commander";
import pg from "pg";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { directTransaction } from "../src/infra/sql/index.js";
import { installEventPrinting, settings as loadSettings } from "../src/cli/open.js";
import { runBilling, runContext } from "../src/services/billing-run.js";
import { installEventPrinter, printedObjects, type EventPrinter } from "../src/services/events.js";
import type { PrismaClient } from "../src/infra/prisma/generated/client.js";
import { seedSubscriptions } from "./billing-seed.js";

const options = new Command()
  .option("--count <n>", "subscriptions to seed", "300")
  .option("--rounds <n>", "rounds of printing every object", "12")
  .option("--split <n>", "also print each 100 ids in calls of n")
  .option("--runs <n>", "rounds of the billing run with the REST printer and with a stub", "0")
  .parse()
  .opts<{ count: string; rounds: string; split?: string; runs: string }>();
const count = Number(options.count);
const server = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const admin = new pg.Client({ connectionString: server });
await admin.connect();
process.env.LOG_LEVEL ??= "silent";
const { settings } = await loadSettings();
await installEventPrinting();
const { restEventPrinter } = await import("../src/rest/event-objects.js");
const stubPrinter: EventPrinter = {
  objects: async (_ctx, _kind, ids) => ids.map((id) => ({ id })),
  json: restEventPrinter.json,
};
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let databases = 0;

/** A fresh migrated database with `count` seeded subscriptions; `use` runs with it, then it is dropped. */
async function withSeeded<T>(use: (prisma: PrismaClient, organizationId: string) => Promise<T>): Promise<T> {
  const name = `event_printing_${process.pid}_${databases++}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  try {
    await migrateTarget({ kind: "postgres", url: url.toString() });
    const database = await createDatabase({ kind: "postgres", url: url.toString() });
    try {
      const seeded = await seedSubscriptions(database.prisma, { count, readBack: false });
      await database.prisma.$executeRawUnsafe(
        `VACUUM ANALYZE "Subscription", "SubscriptionLine", "Customer", "Usage", "Plan"`,
      );
      return await use(database.prisma, seeded.organizationId);
    } finally {
      await database.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

try {
  if (Number(options.rounds) > 0)
    await withSeeded(async (prisma, organizationId) => {
      await runBilling({ prisma, settings, until: "2026-02-01" });
      const ctx = runContext(prisma, settings, () => new Date(), {
        organizationId,
        testMode: true,
        userEmail: "seed@example.cl",
      });
      const ids = {
        subscription: (await prisma.subscription.findMany({ select: { id: true } })).map((s) => s.id),
        invoice: (await prisma.invoice.findMany({ select: { id: true } })).map((i) => i.id),
      };
      const splits = [100, ...(options.split ? [Number(options.split)] : [])];
      const perObject = new Map<string, number[]>();
      for (let round = 0; round < Number(options.rounds); round++)
        for (const split of splits)
          for (const kind of ["subscription", "invoice"] as const) {
            const since = process.cpuUsage();
            for (let start = 0; start < ids[kind].length; start += 100)
              await directTransaction(prisma, async (tx) => {
                const batch = ids[kind].slice(start, start + 100);
                for (let at = 0; at < batch.length; at += split)
                  await printedObjects(
                    { ...ctx, prisma: tx as unknown as PrismaClient, inTransaction: true },
                    kind,
                    batch.slice(at, at + split),
                  );
              });
            const key = `${kind}, calls of ${split}`;
            if (round > 0) perObject.set(key, [...(perObject.get(key) ?? []), cpuMs(since) / ids[kind].length]);
          }
      console.log(
        `printing ${ids.subscription.length} subscriptions and ${ids.invoice.length} invoices, ` +
          `${Number(options.rounds) - 1} rounds (CPU of this process per object):`,
      );
      for (const [key, ms] of perObject)
        console.log(`  ${key}: median ${median(ms).toFixed(3)} ms, lowest ${Math.min(...ms).toFixed(3)} ms`);
    });
  for (let round = 0; round < Number(options.runs); round++)
    for (const [label, printer] of [
      ["REST printer", restEventPrinter],
      ["stub printer", stubPrinter],
    ] as const) {
      installEventPrinter(printer);
      const ms = await withSeeded(async (prisma) => {
        const since = process.cpuUsage();
        await runBilling({ prisma, settings, until: "2026-02-01" });
        return cpuMs(since) / count;
      });
      console.log(`billing run, ${label}, round ${round + 1}: ${ms.toFixed(2)} ms CPU per subscription`);
    }
} finally {
  installEventPrinter(restEventPrinter);
  await admin.end();
}
