/**
 * Fencing of SII sending's claims (docs/sii-sending.md "Claims, leases and fencing"): an upload
 * slower than the claim's lease is claimed and uploaded again by a second worker; the first
 * worker's late outcome matches no row (the claim's attempt count moved on) and is dropped. Rounds
 * are run by calling `sendDueSubmissions` with explicit times (the lease is 10 minutes), against
 * the fake SII, which holds the first upload's answer until the test releases it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createLogger } from "../../src/infra/logger.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { sendDueSubmissions, type SiiSendingDeps } from "../../src/services/sii-sending.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { SCHEMA_DIR, generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";
import { FakeSii, startFakeSii, type FakeUpload } from "../helpers/fake-sii.js";

const RUT = "76042235-5";
const KEY = randomBytes(32);
const MINUTE = 60_000;
let s: TestServer;
let sii: FakeSii;
let customerId: string;
let deps: SiiSendingDeps;
/** the warnings the sending logged */
const warnings: Record<string, unknown>[] = [];

beforeAll(async () => {
  const p12 = generatePkcs12({ rut: "11111111-1" });
  sii = await startFakeSii({ trustedCertificatePem: p12.certificatePem, schema: join(SCHEMA_DIR, "EnvioDTE_v10.xsd") });
  s = await startTestServer({ settings: { sii: sii.hosts, certificateEncryptionKey: KEY } });
  const uploaded = await s.rest("POST", "/v1/billers/built_in/certificates/", {
    body: { file: p12.file.toString("base64"), password: p12.password },
  });
  expect(uploaded.status).toBe(201);
  const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
    body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 80, resolution_date: "2014-08-22" },
  });
  expect(profile.status).toBe(200);
  const caf = generateCaf({
    rut: RUT,
    type: 33,
    from: 1,
    to: 100,
    authorizedOn: new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10),
  });
  expect(
    (await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } })).status,
  ).toBe(201);
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ tax_id: "77.777.777-7" }) })).body.id;
  const logger = createLogger("silent");
  const warn = logger.warn.bind(logger);
  logger.warn = ((obj: unknown, ...rest: unknown[]) => {
    if (obj && typeof obj === "object") warnings.push(obj as Record<string, unknown>);
    return (warn as (...a: unknown[]) => void)(obj, ...rest);
  }) as typeof logger.warn;
  deps = {
    prisma: s.database.prisma,
    logger,
    settings: { ...DEFAULT_SETTINGS, sii: sii.hosts, certificateEncryptionKey: KEY },
  };
});
afterAll(async () => {
  await s?.close();
  await sii?.stop();
});

/** A finalized CL33 invoice: its DTE is queued for SII. */
async function finalizedDte(): Promise<string> {
  const inv = (
    await s.rest("POST", "/v1/invoices/", {
      body: { customer: customerId, document: "CL33", lines: [{ name: "Consultoría", quantity: 1, amount: 10000 }] },
    })
  ).body;
  expect((await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`)).status).toBe(200);
  return inv.id as string;
}

const submissionOf = (id: string) =>
  s.database.prisma.siiSubmission.findUniqueOrThrow({
    where: { documentKind_documentId: { documentKind: "invoice", documentId: id } },
  });
const taxAgencyOf = async (id: string) =>
  (await s.database.prisma.invoice.findUniqueOrThrow({ where: { id }, select: { taxAgency: true } }))
    .taxAgency as Record<string, unknown>;
/** The fake SII's uploads holding the DTE of invoice folio `folio`. */
const uploadsOf = (folio: number) =>
  sii.uploads.filter((u) => u.file.toString("latin1").includes(`<Documento ID="F${folio}T33">`));

describe("SII sending: claims fenced by their attempt count", () => {
  it("a normal upload: one upload, the row sent with its track id, then accepted", async () => {
    const id = await finalizedDte();
    const { folio } = await submissionOf(id);
    const t0 = new Date(Date.now() + 1000);
    const report = await sendDueSubmissions(deps, t0);
    expect(report).toMatchObject({ uploaded: 1, envelopes: 1, retrying: 0 });
    const row = await submissionOf(id);
    expect(uploadsOf(folio)).toHaveLength(1);
    expect([row.status, row.trackId, row.attempts]).toEqual(["sent", uploadsOf(folio)[0].trackId, 0]);
    expect(await taxAgencyOf(id)).toMatchObject({ status: "sent", track_id: row.trackId });
    expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 2 * MINUTE))).toMatchObject({ decided: 1 });
    expect(await taxAgencyOf(id)).toMatchObject({ status: "accepted", track_id: row.trackId });
    expect(uploadsOf(folio)).toHaveLength(1);
  });

  it("an upload slower than its lease: a second worker uploads again, the first's late answer is dropped", async () => {
    const id = await finalizedDte();
    const { folio } = await submissionOf(id);
    const t0 = new Date(Date.now() + 1000);
    // the first upload's answer is held until released; later ones are answered at once
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let first: FakeUpload | undefined;
    sii.beforeUploadAnswer = async (u) => {
      if (first) return;
      first = u;
      await held;
    };
    try {
      const slow = sendDueSubmissions(deps, t0);
      while (!first) await new Promise((r) => setTimeout(r, 20));
      expect((await submissionOf(id)).attempts).toBe(1);

      // 11 minutes later by the second worker's clock: the 10-minute lease ran out, it claims (attempt 2) and uploads
      const second = await sendDueSubmissions(deps, new Date(t0.getTime() + 11 * MINUTE));
      expect(second).toMatchObject({ uploaded: 1, envelopes: 1, retrying: 0 });
      const secondTrackId = uploadsOf(folio)[1].trackId;
      expect(await submissionOf(id)).toMatchObject({ status: "sent", trackId: secondTrackId, attempts: 0 });

      // the first upload is answered now: SII took it (a track id), but its claim is lost
      release();
      const late = await slow;
      expect(late).toMatchObject({ uploaded: 0, envelopes: 0, retrying: 0 });
      expect(
        warnings.some((w) => (w.documents as string[] | undefined)?.includes(id) && w.trackId === first!.trackId),
      ).toBe(true);

      // the stored state is the second worker's, row and document alike
      const row = await submissionOf(id);
      expect([row.status, row.trackId, row.attempts]).toEqual(["sent", secondTrackId, 0]);
      const envelope = row.envelopeFile!;
      expect(await taxAgencyOf(id)).toMatchObject({
        status: "sent",
        track_id: secondTrackId,
        envelope_file: `/v1/files/${envelope}`,
      });
      // the first worker's envelope was not stored (nothing refers to it)
      expect(await s.database.prisma.storedFile.count({ where: { name: first.fileName } })).toBe(0);
      expect(uploadsOf(folio).map((u) => u.trackId)).toEqual([first.trackId, secondTrackId]);

      // later rounds poll the stored track id and settle the document; there is no third upload
      const third = await sendDueSubmissions(deps, new Date(t0.getTime() + 13 * MINUTE));
      expect(third).toMatchObject({ uploaded: 0, decided: 1 });
      expect(await taxAgencyOf(id)).toMatchObject({ status: "accepted", track_id: secondTrackId });
      expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 30 * MINUTE))).toMatchObject({
        uploaded: 0,
        decided: 0,
      });
      expect(uploadsOf(folio)).toHaveLength(2);
    } finally {
      release?.();
      sii.beforeUploadAnswer = async () => {};
    }
  });

  it("the first's answer arrives while the second worker still uploads: dropped by the attempt count", async () => {
    const id = await finalizedDte();
    const { folio } = await submissionOf(id);
    const t0 = new Date(Date.now() + 1000);
    // every upload's answer is held until the test releases it, in the order it chooses
    const releases: (() => void)[] = [];
    sii.beforeUploadAnswer = () => new Promise<void>((r) => releases.push(r));
    const waitForUploads = async (n: number) => {
      while (releases.length < n) await new Promise((r) => setTimeout(r, 20));
    };
    try {
      const slow = sendDueSubmissions(deps, t0);
      await waitForUploads(1);
      const second = sendDueSubmissions(deps, new Date(t0.getTime() + 11 * MINUTE));
      await waitForUploads(2);
      expect(await submissionOf(id)).toMatchObject({ status: "pending", attempts: 2 });
      const [firstTrackId, secondTrackId] = uploadsOf(folio).map((u) => u.trackId);

      // the first upload is answered while the row is still pending under the second claim (attempt 2)
      releases[0]();
      expect(await slow).toMatchObject({ uploaded: 0, envelopes: 0 });
      expect(await submissionOf(id)).toMatchObject({ status: "pending", attempts: 2, trackId: null });
      expect(await taxAgencyOf(id)).toMatchObject({ status: "pending" });
      expect(
        warnings.some((w) => (w.documents as string[] | undefined)?.includes(id) && w.trackId === firstTrackId),
      ).toBe(true);

      releases[1]();
      expect(await second).toMatchObject({ uploaded: 1, envelopes: 1 });
      expect(await submissionOf(id)).toMatchObject({ status: "sent", trackId: secondTrackId, attempts: 0 });
      expect(await taxAgencyOf(id)).toMatchObject({ status: "sent", track_id: secondTrackId });
      expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 13 * MINUTE))).toMatchObject({
        uploaded: 0,
        decided: 1,
      });
      expect(await taxAgencyOf(id)).toMatchObject({ status: "accepted", track_id: secondTrackId });
      expect(uploadsOf(folio)).toHaveLength(2);
    } finally {
      releases.forEach((r) => r());
      sii.beforeUploadAnswer = async () => {};
    }
  });
});
