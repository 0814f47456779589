/**
 * `npm run bench:usage-service`: the CPU the usage service's batch path (services/usages.ts
 * `recordUsages`) spends per record, in this process, without HTTP, GraphQL or REST: on a fresh
 * PostgreSQL database (bench/harness.ts `openDatabase`), one metered subscription line, batches of
 * BENCH_BATCH (default 1,000) records each with a unique `transaction_id`, BENCH_WARMUP (default 5)
 * batches unmeasured then BENCH_BATCHES (default 30) measured one after another. Prints, per batch:
 * the process's CPU time (`process.cpuUsage`, user + system: not inflated by other processes
 * sharing the CPUs, unlike wall time) and the wall time, their medians, the CPU per record, the
 * SQL statements per batch, and the load average. `BENCH_PROFILE=<dir>` writes a CPU profile of the
 * measured batches (summarise with bench/profile-summary.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Session } from "node:inspector/promises";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { newId } from "../src/infra/ids.js";
import { DEFAULT_SETTINGS } from "../src/infra/config.js";
import { createApiKey } from "../src/services/api-keys.js";
import { recordUsages, type UsageInput } from "../src/services/usages.js";
import type { ServiceContext } from "../src/services/context.js";
import { openDatabase, seedMeteredLine } from "./harness.js";

const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 30);
const PROFILE_DIR = process.env.BENCH_PROFILE;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const db = await openDatabase("bench_usage_service");
await migrateTarget({ kind: "postgres", url: db.url });
let statements = 0;
const database = await createDatabase({ kind: "postgres", url: db.url }, { onStatement: () => void statements++ });
try {
  const prisma = database.prisma;
  const { organization, id: apiKeyId } = await createApiKey(prisma, {
    organizationName: "Bench usage service",
    email: "bench@example.cl",
    mode: "test",
  });
  const tenant = { organizationId: organization, testMode: true };
  const customerId = newId("cus");
  await prisma.customer.create({
    data: { id: customerId, ...tenant, name: "Cliente SpA", countryId: "CL", email: "pagos@cliente.cl" },
  });
  const line = await seedMeteredLine(prisma, tenant, customerId);

  const ctx: ServiceContext = {
    prisma,
    auth: { ...tenant, userEmail: "bench@example.cl", apiKeyId },
    now: () => new Date(),
    settings: DEFAULT_SETTINGS,
    baseUrl: "http://127.0.0.1",
  };
  let serial = 0;
  // the records as the GraphQL layer hands them over: quantity as text, the date parsed
  const batch = (): UsageInput[] =>
    Array.from({ length: BATCH }, () => ({
      subscriptionLine: line,
      quantity: String(1 + (serial % 7)),
      dateTime: new Date(Date.now() - 60_000),
      transactionId: `tx-${serial++}`,
    }));

  for (let i = 0; i < WARMUP; i++) await recordUsages(ctx, batch());
  let session: Session | undefined;
  if (PROFILE_DIR) {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  const cpu: number[] = [];
  const wall: number[] = [];
  const sent: number[] = [];
  for (let i = 0; i < BATCHES; i++) {
    const records = batch();
    const before = process.cpuUsage();
    const t0 = performance.now();
    const s0 = statements;
    const recorded = await recordUsages(ctx, records);
    wall.push(performance.now() - t0);
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
    sent.push(statements - s0);
    if (recorded.ids.length !== BATCH || recorded.duplicates.length) throw new Error("records not all written");
  }
  if (session) {
    const { profile } = await session.post("Profiler.stop");
    fs.mkdirSync(PROFILE_DIR!, { recursive: true });
    const file = path.join(PROFILE_DIR!, `usage-service-${process.pid}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    console.log(`profile: ${file} (npx tsx bench/profile-summary.ts ${file})`);
  }
  const written = await prisma.usage.count({ where: { subscriptionLineId: line } });
  if (written !== (WARMUP + BATCHES) * BATCH) throw new Error(`${written} rows written`);
  console.log(
    `batches of ${BATCH}: CPU ${median(cpu).toFixed(1)} ms per batch (median of ${BATCHES}; ${(
      (median(cpu) * 1000) /
      BATCH
    ).toFixed(
      1,
    )} µs per record), wall ${median(wall).toFixed(1)} ms, ${median(sent)} SQL statements per batch; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await database.close();
  await db.drop();
}
