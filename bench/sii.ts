/**
 * `npm run bench:sii [-- --count 1000 --drafts 400 --rounds 3 --batch-size 100 --workers 2]`:
 * DTEs finalized and signed per second for an organization enrolled with SII, on PostgreSQL
 * (docs/performance.md "SII documents in the billing run"). Creates a fresh database
 * (BENCH_POSTGRES_URL's server, default postgresql://postgres@127.0.0.1:5432/postgres), migrates
 * it, enrolls an organization (tax profile, a made-up certificate and two CAFs of type 33 made on
 * the spot: src/infra/taxagency/sii/test-material.ts, needs `openssl`), then:
 *
 * 1. Finalize only, interleaved rounds: `--drafts` draft invoices (inserted untimed) finalized in
 *    transactions of `--batch-size`, by the bulk path (documents.ts finalizeNewInvoiceDrafts: one
 *    folio range per batch, DTEs signed in worker threads) and by the one-by-one path it replaced
 *    (finalizeLockedDocument per draft, signing on the main thread), alternating which goes first;
 *    prints each path's median DTEs/s and the ratio.
 * 2. The billing run end to end (services/billing-run.ts runBilling, `--workers` claim loops) over
 *    `--count` seeded subscriptions of the enrolled organization, two cycles each (bench/billing-seed.ts),
 *    beside the same run over an organization that is not enrolled (numbers, no DTE): DTEs/s.
 *
 * `--bulk-only` leaves the one-by-one baseline out (to profile the bulk path). CPU per DTE is this
 * process's (main thread and signing threads; PostgreSQL's own is not counted): on a loaded
 * machine it says more than the rate.
 *
 * Checks: every folio taken once and consecutive from the first CAF into the second, a sample of
 * the DTEs XSD-valid (xmllint, schema/sii/DTE_v10.xsd) with signatures that verify (xmlsec1). The
 * load average (os.loadavg) is printed at the start and the end: the machine may be shared.
 */
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import pg from "pg";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { DEFAULT_SETTINGS, type AppSettings } from "../src/infra/config.js";
import { newId } from "../src/infra/ids.js";
import { isoDate } from "../src/domain/formats.js";
import { runBilling, runContext } from "../src/services/billing-run.js";
import { finalizeLockedDocument, finalizeNewInvoiceDrafts } from "../src/services/document-lifecycle.js";
import { updateTaxProfile } from "../src/services/tax-profile.js";
import { uploadCertificate } from "../src/services/certificates.js";
import { uploadCaf } from "../src/services/cafs.js";
import { generateCaf, generatePkcs12, withTempDir } from "../src/infra/taxagency/sii/test-material.js";
import { installEventPrinter } from "../src/services/events.js";
import { restEventPrinter } from "../src/rest/event-objects.js";

// the use cases it runs write events, printed as the server prints them (docs/webhooks.md)
installEventPrinter(restEventPrinter);
import type { PrismaClient } from "../src/infra/prisma/generated/client.js";
import { seedSubscriptions } from "./billing-seed.js";

const options = new Command()
  .option("--count <n>", "subscriptions per billing run (two DTEs each)", "1000")
  .option("--drafts <n>", "drafts per path and round in the finalize-only part", "400")
  .option("--rounds <n>", "interleaved rounds of the finalize-only part", "3")
  .option("--batch-size <n>", "drafts (finalize-only) and subscriptions (billing run) per transaction", "100")
  .option("--workers <n>", "parallel claim loops of the billing run", "2")
  .option("--bulk-only", "finalize-only part without the one-by-one baseline (to profile the bulk path)")
  .parse()
  .opts<{ count: string; drafts: string; rounds: string; batchSize: string; workers: string; bulkOnly?: boolean }>();
const count = Number(options.count);
const draftsPerRound = Number(options.drafts);
const rounds = Number(options.rounds);
const batchSize = Number(options.batchSize);
const workers = Number(options.workers);

const RUT = "76042235-5";
const server = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const name = `sii_bench_${process.pid}`;
const admin = async (sql: string) => {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};
const url = new URL(server);
url.pathname = `/${name}`;
const target = { kind: "postgres" as const, url: url.toString() };
const settings: AppSettings = { ...DEFAULT_SETTINGS, certificateEncryptionKey: randomBytes(32) };
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const DAY = 86_400_000;

/** Enrolls `organizationId` (test mode): tax profile, certificate, CAFs 33 `1..firstTo` and `firstTo+1..lastTo`. */
async function enroll(
  prisma: PrismaClient,
  organizationId: string,
  authorizedOn: string,
  firstTo: number,
  lastTo: number,
) {
  const ctx = runContext(prisma, settings, () => new Date(), {
    organizationId,
    testMode: true,
    userEmail: "bench@example.cl",
  });
  await updateTaxProfile(ctx, {
    taxId: RUT,
    businessName: "Bench SpA",
    activity: "Servicios informáticos",
    activityCodes: ["620200"],
    city: "Santiago",
    commune: "Santiago",
    address: "Av. Siempre Viva 742",
  });
  const p12 = generatePkcs12({ rut: "12345678-5" });
  await uploadCertificate(ctx, { file: p12.file.toString("base64"), password: p12.password });
  for (const [from, to] of [
    [1, firstTo],
    [firstTo + 1, lastTo],
  ]) {
    await uploadCaf(ctx, { file: generateCaf({ rut: RUT, type: 33, from, to, authorizedOn }).file.toString("base64") });
  }
  return { ctx, certificatePem: p12.certificatePem };
}

/** Inserts `n` draft invoices of type 33 dated `date` (two lines each) for the organization's customers. */
async function insertDrafts(
  prisma: PrismaClient,
  organizationId: string,
  customers: string[],
  n: number,
  date: string,
): Promise<string[]> {
  const invoices: Record<string, unknown>[] = [];
  const lines: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const id = newId("inv");
    invoices.push({
      id,
      organizationId,
      testMode: true,
      customerId: customers[i % customers.length],
      documentTypeId: "CL33",
      currencyId: "CLP",
      date: new Date(`${date}T00:00:00Z`),
      dueDate: new Date(Date.parse(`${date}T00:00:00Z`) + 30 * DAY),
      amount: "25000",
      tax: "4750",
      taxPercent: "19",
      subtotal: "25000",
      total: "29750",
      status: "draft",
      userEmail: "bench@example.cl",
    });
    lines.push({
      id: newId("lin"),
      invoiceId: id,
      organizationId,
      position: 0,
      name: "Plan Pro",
      quantity: "2",
      amount: "10000",
      total: "20000",
    });
    lines.push({
      id: newId("lin"),
      invoiceId: id,
      organizationId,
      position: 1,
      name: "Soporte",
      description: "Mesa de ayuda",
      quantity: "1",
      amount: "5000",
      total: "5000",
    });
  }
  await prisma.invoice.createMany({ data: invoices as never });
  await prisma.invoiceLine.createMany({ data: lines as never });
  return invoices.map((i) => i.id as string);
}

/** Finalizes `ids` in transactions of `batchSize`, in bulk or one by one; returns seconds. */
async function finalizeAll(
  prisma: PrismaClient,
  ctx: ReturnType<typeof runContext>,
  ids: string[],
  bulk: boolean,
): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < ids.length; i += batchSize) {
    const batch = ids.slice(i, i + batchSize);
    await prisma.$transaction(
      async (tx) => {
        const inTx = { ...ctx, prisma: tx as unknown as PrismaClient };
        if (bulk) await finalizeNewInvoiceDrafts(tx, inTx, "CL33", batch);
        else for (const id of batch) await finalizeLockedDocument(tx, inTx, "invoice", id, "draft");
      },
      { maxWait: 30_000, timeout: 120_000 },
    );
  }
  return (performance.now() - t) / 1000;
}

/** xmllint (DTE_v10.xsd) and xmlsec1 over `files`; throws on the first failure. */
function checkDtes(files: Buffer[], certificatePem: string) {
  const xsd = fileURLToPath(new URL("../schema/sii/DTE_v10.xsd", import.meta.url));
  withTempDir((dir) => {
    const cert = join(dir, "cert.pem");
    writeFileSync(cert, certificatePem);
    files.forEach((file, i) => {
      const path = join(dir, `dte${i}.xml`);
      writeFileSync(path, file);
      const schema = spawnSync("xmllint", ["--noout", "--schema", xsd, path], { encoding: "utf8" });
      if (schema.status !== 0) throw new Error(`DTE ${i} is not XSD-valid: ${schema.stderr}`);
      const sig = spawnSync(
        "xmlsec1",
        [
          "--verify",
          "--enabled-key-data",
          "x509",
          "--id-attr:ID",
          "http://www.sii.cl/SiiDte:Documento",
          "--trusted-pem",
          cert,
          path,
        ],
        { encoding: "utf8" },
      );
      if (sig.status !== 0) throw new Error(`DTE ${i}'s signature does not verify: ${sig.stderr}`);
    });
  });
}

/** Folios of the organization's 33s: each once, consecutive from 1. */
async function checkFolios(prisma: PrismaClient, organizationId: string, expected: number) {
  const rows = await prisma.invoice.findMany({
    where: { organizationId, status: "finalized", documentTypeId: "CL33" },
    select: { number: true },
    orderBy: { number: "asc" },
  });
  const bad = rows.findIndex((r, i) => r.number !== i + 1);
  if (rows.length !== expected || bad !== -1)
    throw new Error(`folios: expected 1..${expected} once each, got ${rows.length} rows, first mismatch at ${bad}`);
  const submissions = await prisma.siiSubmission.count({ where: { organizationId } });
  if (submissions !== expected) throw new Error(`expected ${expected} SII submissions, got ${submissions}`);
}

console.log(`load average at start (1, 5, 15 min): ${load()}`);
await admin(`CREATE DATABASE "${name}"`);
try {
  await migrateTarget(target);
  const database = await createDatabase(target);
  const { prisma } = database;
  try {
    // dates: cycle 1 some 40 days ago, cycle 2 a month later (both billed), CAFs authorized the day before
    const start = new Date(Date.now() - 40 * DAY);
    const dateStart = isoDate(
      new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), Math.min(start.getUTCDate(), 28))),
    );
    const until = isoDate(
      new Date(Date.UTC(Number(dateStart.slice(0, 4)), Number(dateStart.slice(5, 7)), Number(dateStart.slice(8, 10)))),
    );
    const authorizedOn = isoDate(new Date(Date.parse(`${dateStart}T00:00:00Z`) - DAY));
    const today = isoDate(new Date());

    // 1. finalize only: bulk against one by one, interleaved
    const finalizeOrg = await seedSubscriptions(prisma, {
      count: 50,
      dateStart: today,
      organizationName: "SII finalize bench",
    });
    const total1 = draftsPerRound * rounds * 2;
    // the first CAF ends inside the first round, so batches cross into the second one
    const enrolled1 = await enroll(
      prisma,
      finalizeOrg.organizationId,
      isoDate(new Date(Date.now() - DAY)),
      Math.floor(draftsPerRound / 2) + 7,
      total1 + 1000,
    );
    const customers = (
      await prisma.customer.findMany({ where: { organizationId: finalizeOrg.organizationId }, select: { id: true } })
    ).map((c) => c.id);
    const rates: Record<"bulk" | "oneByOne", number[]> = { bulk: [], oneByOne: [] };
    // CPU of this process (main thread and signing threads; not PostgreSQL's) per DTE
    const cpuMs: Record<"bulk" | "oneByOne", number[]> = { bulk: [], oneByOne: [] };
    // warm-up (threads started, queries compiled), untimed
    for (const bulk of options.bulkOnly ? [true] : [true, false])
      await finalizeAll(
        prisma,
        enrolled1.ctx,
        await insertDrafts(prisma, finalizeOrg.organizationId, customers, batchSize, today),
        bulk,
      );
    for (let r = 0; r < rounds; r++) {
      for (const bulk of options.bulkOnly ? [true] : r % 2 === 0 ? [false, true] : [true, false]) {
        const ids = await insertDrafts(prisma, finalizeOrg.organizationId, customers, draftsPerRound, today);
        const cpu = process.cpuUsage();
        const seconds = await finalizeAll(prisma, enrolled1.ctx, ids, bulk);
        const used = process.cpuUsage(cpu);
        const perDte = (used.user + used.system) / 1000 / draftsPerRound;
        rates[bulk ? "bulk" : "oneByOne"].push(draftsPerRound / seconds);
        cpuMs[bulk ? "bulk" : "oneByOne"].push(perDte);
        console.log(
          `round ${r + 1} ${bulk ? "bulk      " : "one by one"}: ${draftsPerRound} DTEs in ${seconds.toFixed(2)} ` +
            `s, ${(draftsPerRound / seconds).toFixed(0)} DTEs/s, ${perDte.toFixed(2)} ms CPU per DTE (load ${load()})`,
        );
      }
    }
    await checkFolios(
      prisma,
      finalizeOrg.organizationId,
      (options.bulkOnly ? total1 / 2 : total1) + (options.bulkOnly ? 1 : 2) * batchSize,
    );
    const sample = await prisma.storedFile.findMany({
      where: { organizationId: finalizeOrg.organizationId },
      take: 6,
      orderBy: { createdAt: "desc" },
    });
    checkDtes(
      sample.map((f) => Buffer.from(f.content)),
      enrolled1.certificatePem,
    );
    const bulkRate = median(rates.bulk);
    if (options.bulkOnly)
      console.log(
        `finalize+sign, batches of ${batchSize}: bulk ${bulkRate.toFixed(0)} DTEs/s, ${median(cpuMs.bulk).toFixed(2)}` +
          ` ms CPU per DTE (medians of ${rounds})`,
      );
    else {
      const oneRate = median(rates.oneByOne);
      console.log(
        `finalize+sign, batches of ${batchSize}: bulk ${bulkRate.toFixed(0)} DTEs/s (${median(cpuMs.bulk).toFixed(2)}` +
          ` ms CPU per DTE), ` +
          `one by one ${oneRate.toFixed(0)} DTEs/s (${median(cpuMs.oneByOne).toFixed(2)} ms CPU per DTE), medians ` +
          `of ${rounds}; ratio ${(bulkRate / oneRate).toFixed(2)}`,
      );
    }

    // 2. the billing run end to end: an organization without SII, then an enrolled one
    await seedSubscriptions(prisma, { count, dateStart, organizationName: "Plain bench" });
    let t = performance.now();
    const plainCpu = process.cpuUsage();
    const plainRun = await runBilling({ prisma, settings, until, workers, batchSize, collect: false });
    const plainSeconds = (performance.now() - t) / 1000;
    const plainCpuUsed = process.cpuUsage(plainCpu);
    // metered subscriptions bill nothing on cycle 1 (usage is billed in arrears): about 1.75 invoices each
    if (plainRun.failed || plainRun.billed !== count)
      throw new Error(`plain run: ${JSON.stringify({ ...plainRun, errors: plainRun.errors.slice(0, 3) })}`);
    const seeded = await seedSubscriptions(prisma, { count, dateStart, organizationName: "SII billing bench" });
    const enrolled2 = await enroll(
      prisma,
      seeded.organizationId,
      authorizedOn,
      Math.floor(count / 3),
      2 * count + 1000,
    );
    t = performance.now();
    const siiCpu = process.cpuUsage();
    const siiRun = await runBilling({ prisma, settings, until, workers, batchSize, collect: false });
    const siiSeconds = (performance.now() - t) / 1000;
    const siiCpuUsed = process.cpuUsage(siiCpu);
    if (siiRun.failed || siiRun.billed !== count || siiRun.invoices !== plainRun.invoices)
      throw new Error(`SII run: ${JSON.stringify({ ...siiRun, errors: siiRun.errors.slice(0, 3) })}`);
    await checkFolios(prisma, seeded.organizationId, siiRun.invoices);
    const files = await prisma.storedFile.findMany({
      where: { organizationId: seeded.organizationId },
      take: 6,
      orderBy: { name: "asc" },
    });
    checkDtes(
      files.map((f) => Buffer.from(f.content)),
      enrolled2.certificatePem,
    );
    const plainRate = plainRun.invoices / plainSeconds;
    const siiRate = siiRun.invoices / siiSeconds;
    console.log(`billing run, ${count} subscriptions, 2 cycles, workers ${workers}, batch size ${batchSize}:`);
    const perInvoice = (u: NodeJS.CpuUsage, n: number) => ((u.user + u.system) / 1000 / n).toFixed(2);
    console.log(
      `  enrolled with SII: ${siiRun.invoices} DTEs in ${siiSeconds.toFixed(1)} s, ${siiRate.toFixed(0)} ` +
        `DTEs/s, ${perInvoice(siiCpuUsed, siiRun.invoices)} ms CPU per DTE`,
    );
    console.log(
      `  not enrolled:      ${plainRun.invoices} invoices in ${plainSeconds.toFixed(1)} s, ${plainRate.toFixed(0)} ` +
        `invoices/s, ${perInvoice(plainCpuUsed, plainRun.invoices)} ms CPU per invoice (SII run ` +
        `at ${(siiRate / plainRate).toFixed(2)} of it)`,
    );
    console.log(`load average at end (1, 5, 15 min): ${load()}`);
  } finally {
    await database.close();
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
