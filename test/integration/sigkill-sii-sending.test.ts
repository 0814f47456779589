/**
 * SII sending when its process is killed with SIGKILL while an upload is at SII (issue 32, "No work
 * lost or done twice when a process dies"; docs/sii-sending.md "Claims, leases and fencing",
 * docs/scaling.md "When a process dies").
 *
 * The built command line (`node dist/cli.js sii send`, one round) runs as a child process against
 * the fake SII (test/helpers/fake-sii.ts), which keeps the upload and holds its answer (a track id);
 * the process is killed there. What is guaranteed, and checked:
 *
 * - the killed claim holds the row for its lease (10 minutes): a round before it runs out (run by
 *   this process) uploads nothing (no second upload while the first process might still be alive and waiting);
 * - once the lease has run out (moved back here), the next process claims the row again (attempt 2)
 *   and uploads it: SII has the DTE twice, the killed process's upload (which SII took, and whose
 *   track id nobody recorded) and the new one. That one extra upload is what docs/sii-sending.md
 *   allows ("One duplicate upload can still happen"): the dead process cannot say whether SII took
 *   its upload, so the DTE is sent again rather than lost;
 * - the row and the document carry the new upload's track id only; the killed round's outcome never
 *   lands (it died before writing it) and its envelope file was never stored;
 * - later rounds poll that track id and settle the document, with no third upload.
 *
 * The opposite case, a live but slow upload whose lease ran out and whose late outcome must not
 * overwrite the new claim's, is test/integration/sii-sending-fencing.test.ts (rounds in process).
 *
 * PostgreSQL only, the deployment where several processes share the work (docs/scaling.md). The
 * code is written for both databases and passes on the embedded one too (without the skip), where
 * each process and each look at the data opens PGlite, which would about triple the test's cost in
 * CI. That a process on the embedded database takes over the lock a killed one left and finds its
 * committed writes is idempotency-crash.test.ts and runtime.test.ts.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { cloneTemplate, inDatabase, TEST_DB } from "../helpers/databases.js";
import { databaseVariables, serviceEnv, startProcess, ROOT, type ServiceProcess } from "../helpers/processes.js";
import { startFakeSii, type FakeUpload } from "../helpers/fake-sii.js";
import { SCHEMA_DIR, generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";
import { chileanCustomer, startTestServer } from "../helpers/server.js";
import { createLogger } from "../../src/infra/logger.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { sendDueSubmissions } from "../../src/services/sii-sending.js";
import type { PrismaClient } from "../../src/infra/prisma/generated/client.js";

const KEY = randomBytes(32);
const MINUTE = 60_000;

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

describe.skipIf(TEST_DB !== "postgres")("SII sending killed with SIGKILL while an upload is at SII", () => {
  it(
    "the row is held for its lease, then uploaded again once; the new track id is the one recorded",
    { timeout: 180_000 },
    async () => {
      const { target, drop } = await cloneTemplate(inject("template"));
      cleanups.push(drop);
      const p12 = generatePkcs12({ rut: "11111111-1" });
      const sii = await startFakeSii({
        trustedCertificatePem: p12.certificatePem,
        schema: join(SCHEMA_DIR, "EnvioDTE_v10.xsd"),
      });
      cleanups.push(() => sii.stop());
      const settings = { sii: sii.hosts, certificateEncryptionKey: KEY };

      // a finalized CL33 invoice, its DTE queued for SII (set up through the API in this process)
      const s = await startTestServer({ target, settings });
      const certificate = await s.rest("POST", "/v1/billers/built_in/certificates/", {
        body: { file: p12.file.toString("base64"), password: p12.password },
      });
      expect(certificate.status).toBe(201);
      const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 80, resolution_date: "2014-08-22" },
      });
      expect(profile.status).toBe(200);
      const caf = generateCaf({
        rut: "76042235-5",
        type: 33,
        from: 1,
        to: 10,
        authorizedOn: new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10),
      });
      expect(
        (await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } })).status,
      ).toBe(201);
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ tax_id: "77.777.777-7" }) }))
        .body.id;
      const invoice = await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 1, amount: 10000 }] },
      });
      expect((await s.rest("GET", `/v1/invoices/${invoice.body.id}/finalize/`)).status).toBe(200);
      const id = invoice.body.id as string;
      await s.close();

      const env = serviceEnv({
        ...databaseVariables(target),
        LOG_LEVEL: "warn",
        CERTIFICATE_ENCRYPTION_KEY: KEY.toString("base64"),
        SII_CERTIFICATION_URL: sii.hosts.certificationUrl,
        SII_PRODUCTION_URL: sii.hosts.productionUrl,
      });
      const siiSend = () => {
        const round = startProcess(process.execPath, ["dist/cli.js", "sii", "send"], env, ROOT);
        running.push(round);
        return round;
      };
      const where = { documentKind_documentId: { documentKind: "invoice", documentId: id } };
      const taxAgency = async (prisma: PrismaClient) =>
        (await prisma.invoice.findUniqueOrThrow({ where: { id }, select: { taxAgency: true } })).taxAgency as Record<
          string,
          unknown
        >;
      /** what a round of SII sending in this process needs */
      const deps = (prisma: PrismaClient) => ({
        prisma,
        logger: createLogger("silent"),
        settings: { ...DEFAULT_SETTINGS, ...settings },
      });
      const uploadsOfDte = (folio: number) =>
        sii.uploads.filter((u) => u.file.toString("latin1").includes(`<Documento ID="F${folio}T33">`));

      // 1. the upload reaches SII, which keeps it and holds its answer: the process is killed there
      let arrived!: (upload: FakeUpload) => void;
      const atSii = new Promise<FakeUpload>((resolve) => (arrived = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      sii.beforeUploadAnswer = async (upload) => {
        arrived(upload);
        await held;
      };
      const started = Date.now();
      const first = siiSend();
      const killedUpload = await Promise.race([atSii, first.exited.then(() => null)]);
      expect(killedUpload, first.lines.join("\n")).not.toBeNull();
      first.child.kill("SIGKILL");
      const killed = Date.now();
      expect(await first.exited).toBe("SIGKILL");
      release();
      sii.beforeUploadAnswer = async () => {};

      const folio = await inDatabase(target, async ({ prisma }) => {
        // the killed claim: attempt 1, leased for 10 minutes, no outcome
        const row = await prisma.siiSubmission.findUniqueOrThrow({ where });
        expect([row.status, row.attempts, row.trackId, row.envelopeFile]).toEqual(["pending", 1, null, null]);
        expect(row.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(started + 10 * MINUTE);
        expect(row.nextAttemptAt.getTime()).toBeLessThanOrEqual(killed + 10 * MINUTE);
        expect(await taxAgency(prisma)).toMatchObject({ status: "pending" });
        expect(uploadsOfDte(row.folio).map((u) => u.trackId)).toEqual([killedUpload!.trackId]);

        // 2. while the lease lasts, another process's round (this one's) uploads nothing
        expect(await sendDueSubmissions(deps(prisma), new Date())).toMatchObject({ uploaded: 0, retrying: 0 });
        expect(uploadsOfDte(row.folio)).toHaveLength(1);

        // 3. the lease runs out (moved back 10 minutes): the next process claims the row again and uploads it
        await prisma.$executeRaw`
        UPDATE "SiiSubmission" SET "nextAttemptAt" = "nextAttemptAt" - interval '10 minutes'
        WHERE "documentKind" = 'invoice' AND "documentId" = ${id}`;
        return row.folio;
      });
      const second = siiSend();
      expect(await second.exited, second.lines.join("\n")).toBe(0);
      expect(second.logs().find((l) => "uploaded" in l)).toMatchObject({ uploaded: 1, envelopes: 1 });
      const uploads = uploadsOfDte(folio);
      expect(uploads.map((u) => u.trackId)).toEqual([killedUpload!.trackId, expect.any(String)]);
      const newTrackId = uploads[1].trackId;

      await inDatabase(target, async ({ prisma }) => {
        // only the new claim's outcome is recorded; the killed round's envelope was never stored
        const row = await prisma.siiSubmission.findUniqueOrThrow({ where });
        expect([row.status, row.attempts, row.trackId]).toEqual(["sent", 0, newTrackId]);
        expect(await taxAgency(prisma)).toMatchObject({
          status: "sent",
          track_id: newTrackId,
          envelope_file: `/v1/files/${row.envelopeFile}`,
        });
        expect(await prisma.storedFile.count({ where: { name: killedUpload!.fileName } })).toBe(0);

        // 4. the next poll (a round two minutes later) settles the document from the recorded track id; no third upload
        expect(await sendDueSubmissions(deps(prisma), new Date(Date.now() + 2 * MINUTE))).toMatchObject({
          uploaded: 0,
          decided: 1,
        });
        expect(await taxAgency(prisma)).toMatchObject({ status: "accepted", track_id: newTrackId });
        expect(uploadsOfDte(folio)).toHaveLength(2);
      });
    },
  );
});
