/**
 * SII documents finalized in bulk (docs/sii-setup.md "The billing run"): the billing run and
 * documents.ts finalizeNewInvoiceDrafts take one CAF folio range per batch (cafs.ts takeFolios)
 * and sign the DTEs in worker threads (infra/taxagency/issue-pool.ts). Checked here: consecutive
 * folios crossing from one CAF into the next; every DTE XSD-valid (xmllint) with a signature that
 * verifies (xmlsec1); the same DTE, snapshot and submission as the one-by-one finalize
 * (finalizeLockedDocument) apart from the folio; a failing batch gives its folios back; concurrent
 * folio claims never take one folio twice.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import {
  generateCaf,
  generatePkcs12,
  xmllintValidate,
  xmlsecVerify,
  type FakePkcs12,
} from "../helpers/sii-fixtures.js";
import { runBilling, runContext } from "../../src/services/billing-run.js";
import { finalizeLockedDocument, finalizeNewInvoiceDrafts } from "../../src/services/document-lifecycle.js";
import { takeFolio, takeFolios } from "../../src/services/cafs.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { InvalidStateError, ValidationError } from "../../src/domain/errors.js";
import type { PrismaClient } from "../../src/infra/prisma/generated/client.js";

const RUT = "76042235-5";
let s: TestServer;
let prisma: PrismaClient;
let certificate: FakePkcs12;
let customer: string;
const certificateEncryptionKey = randomBytes(32);
const settings = { ...DEFAULT_SETTINGS, certificateEncryptionKey };
const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);
const tenantKey = () => ({ organizationId: s.orgs.acme, testMode: true });

async function uploadCaf(type: number, from: number, to: number): Promise<string> {
  const caf = generateCaf({ rut: RUT, type, from, to, authorizedOn });
  const res = await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** A stored DTE: XSD-valid and signature-verified; its text (ISO-8859-1). */
async function checkedXml(name: string): Promise<string> {
  const file = await prisma.storedFile.findUniqueOrThrow({ where: { name } });
  const bytes = Buffer.from(file.content);
  const schema = xmllintValidate(bytes);
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerify(bytes, certificate.certificatePem);
  expect(signature.ok, signature.output).toBe(true);
  return bytes.toString("latin1");
}

async function draft(
  type: string,
  lines: { name: string; quantity?: number; amount: number }[],
  customerId = customer,
): Promise<string> {
  const res = await s.rest("POST", "/v1/invoices/", {
    body: { customer: customerId, document: type, date: authorizedOn, lines, discount: 5 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const nextFolioOf = async (id: string) => (await prisma.caf.findUniqueOrThrow({ where: { id } })).nextFolio;

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey } });
  prisma = s.database.prisma;
  expect(
    (
      await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { activity_codes: ["620200"], city: "Santiago" },
      })
    ).status,
  ).toBe(200);
  certificate = generatePkcs12({ rut: "12345678-5" });
  const cert = await s.rest("POST", "/v1/billers/built_in/certificates/", {
    body: { file: certificate.file.toString("base64"), password: certificate.password },
  });
  expect(cert.status).toBe(201);
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Cliente Ñandú & Cía." }) })).body
    .id;
});
afterAll(async () => {
  await s?.close();
});

describe("the billing run of an enrolled organization", () => {
  it("issues consecutive folios from one CAF into the next, each DTE signed and queued once", async () => {
    const first = await uploadCaf(33, 1, 3);
    const second = await uploadCaf(33, 4, 40);
    const product = await s.rest("POST", "/v1/products/", {
      body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
    });
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const subs: string[] = [];
    for (const quantity of [1, 2, 3, 4, 5]) {
      const res = await s.rest("POST", "/v1/subscriptions/", {
        body: {
          customer,
          date_start: authorizedOn,
          expiration_days: 30,
          lines: [{ plan: product.body.plans[0].id, quantity }],
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      subs.push(res.body.id);
    }
    const summary = await runBilling({
      prisma,
      settings: { certificateEncryptionKey },
      until: authorizedOn,
      collect: false,
    });
    expect(summary.failed, summary.errors.join("; ")).toBe(0);
    expect(summary.invoices).toBe(5);
    const invoices = await prisma.invoice.findMany({
      where: { subscriptionId: { in: subs } },
      orderBy: { number: "asc" },
    });
    expect(invoices.map((i) => i.number)).toEqual([1, 2, 3, 4, 5]);
    expect(invoices.map((i) => (i.taxAgency as { caf: string }).caf)).toEqual([first, first, first, second, second]);
    expect([await nextFolioOf(first), await nextFolioOf(second)]).toEqual([4, 6]);
    for (const invoice of invoices) {
      expect(invoice.status).toBe("finalized");
      expect(invoice.taxAgency).toMatchObject({
        agency: "sii",
        status: "pending",
        track_id: null,
        document_id: `F${invoice.number}T33`,
        folio: invoice.number,
      });
      expect(invoice.localFile).toBe(`${invoice.id}_33_${invoice.number}.xml`);
      expect(invoice.customerSnapshot).toMatchObject({ name: "Cliente Ñandú & Cía." });
      const xml = await checkedXml(invoice.localFile!);
      expect(xml).toContain(`<TipoDTE>33</TipoDTE><Folio>${invoice.number}</Folio>`);
      expect(xml).toContain(`<MntTotal>${Number(invoice.total)}</MntTotal>`);
      expect(xml).toContain("<RznSocRecep>Cliente Ñandú &amp; Cía.</RznSocRecep>");
    }
    const submissions = await prisma.siiSubmission.findMany({
      where: { documentId: { in: invoices.map((i) => i.id) } },
      orderBy: { folio: "asc" },
    });
    expect(submissions.map((r) => [r.documentKind, r.dteType, r.folio, r.dteFile, r.status])).toEqual(
      invoices.map((i) => ["invoice", 33, i.number, i.localFile, "pending"]),
    );
  });
});

describe("bulk finalize", () => {
  it("stores the same DTE, snapshot and submission as the one-by-one finalize, apart from the folio", async () => {
    const cafId = await uploadCaf(34, 1, 50);
    const lines = [
      { name: 'Curso <avanzado> "A"', quantity: 2, amount: 15000 },
      { name: "Material", amount: 2500 },
    ];
    const single = await draft("CL34", lines);
    const bulk = [await draft("CL34", lines), await draft("CL34", lines)];
    const at = new Date();
    const ctx = runContext(prisma, settings, () => at, { ...tenantKey(), userEmail: "ops@acme.cl" });
    await prisma.$transaction(async (tx) => {
      await finalizeLockedDocument(tx, { ...ctx, prisma: tx as unknown as PrismaClient }, "invoice", single, "draft");
      await finalizeNewInvoiceDrafts(tx, { ...ctx, prisma: tx as unknown as PrismaClient }, "CL34", bulk);
    });
    const rows = await prisma.invoice.findMany({ where: { id: { in: [single, ...bulk] } } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect([single, ...bulk].map((id) => byId.get(id)!.number)).toEqual([1, 2, 3]);
    expect(await nextFolioOf(cafId)).toBe(4);
    // the folio shows in Folio, the Documento ID and its Reference, the TED's F; the signatures over them differ
    const normalized = (xml: string) =>
      xml
        .replace(/<Folio>\d+<\/Folio>/, "<Folio>N</Folio>")
        .replace(/F\d+T34/g, "FNT34")
        .replace(/<F>\d+<\/F>/, "<F>N</F>")
        .replace(/<FRMT algoritmo="SHA1withRSA">[^<]+</, '<FRMT algoritmo="SHA1withRSA"><')
        .replace(/<DigestValue>[^<]+</, "<DigestValue><")
        .replace(/<SignatureValue>[^<]+</, "<SignatureValue><");
    const reference = await checkedXml(byId.get(single)!.localFile!);
    expect(reference).toContain('<NmbItem>Curso &lt;avanzado&gt; "A"</NmbItem>');
    for (const id of bulk) {
      const row = byId.get(id)!;
      expect(normalized(await checkedXml(row.localFile!))).toBe(normalized(reference));
      expect(row.customerSnapshot).toEqual(byId.get(single)!.customerSnapshot);
      expect(row.issuerSnapshot).toEqual(byId.get(single)!.issuerSnapshot);
      expect(row.finalizedAt).toEqual(at);
      const { folio, document_id, ...agency } = row.taxAgency as Record<string, unknown>;
      const { folio: f0, document_id: d0, ...reference0 } = byId.get(single)!.taxAgency as Record<string, unknown>;
      expect([folio, document_id, f0, d0]).toEqual([row.number, `F${row.number}T34`, 1, "F1T34"]);
      expect(agency).toEqual(reference0);
    }
    const submissions = await prisma.siiSubmission.findMany({ where: { documentId: { in: [single, ...bulk] } } });
    expect(
      submissions
        .map((r) => [r.documentId, r.folio, r.dteFile, r.status, r.attempts, r.nextAttemptAt.getTime()])
        .sort(),
    ).toEqual(
      [single, ...bulk]
        .map((id) => [id, byId.get(id)!.number, byId.get(id)!.localFile, "pending", 0, at.getTime()])
        .sort(),
    );
  });

  it(
    "a batch that fails in a worker thread (a 61-line 33) rolls back: its folios, files and drafts are " + "as before",
    async () => {
      const caf33 = (
        await prisma.caf.findMany({ where: { ...tenantKey(), documentTypeId: "CL33" }, orderBy: { rangeFrom: "asc" } })
      ).map((c) => [c.id, c.nextFolio]);
      const good = await draft("CL33", [{ name: "Plan", amount: 1000 }]);
      const tooLong = await draft(
        "CL33",
        Array.from({ length: 61 }, (_, i) => ({ name: `Línea ${i}`, amount: 100 })),
      );
      const ctx = runContext(prisma, settings, () => new Date(), { ...tenantKey(), userEmail: "ops@acme.cl" });
      const files = await prisma.storedFile.count();
      const error = await prisma
        .$transaction((tx) =>
          finalizeNewInvoiceDrafts(tx, { ...ctx, prisma: tx as unknown as PrismaClient }, "CL33", [good, tooLong]),
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).fields).toEqual({ lines: ["must have 1 to 60 lines"] });
      expect(
        (
          await prisma.caf.findMany({
            where: { ...tenantKey(), documentTypeId: "CL33" },
            orderBy: { rangeFrom: "asc" },
          })
        ).map((c) => [c.id, c.nextFolio]),
      ).toEqual(caf33);
      expect(await prisma.storedFile.count()).toBe(files);
      expect(
        (await prisma.invoice.findMany({ where: { id: { in: [good, tooLong] } } })).map((i) => [
          i.status,
          i.number,
          i.localFile,
        ]),
      ).toEqual([
        ["draft", null, null],
        ["draft", null, null],
      ]);
      // the good one alone goes through, on the next folio
      await prisma.$transaction((tx) =>
        finalizeNewInvoiceDrafts(tx, { ...ctx, prisma: tx as unknown as PrismaClient }, "CL33", [good]),
      );
      expect((await prisma.invoice.findUniqueOrThrow({ where: { id: good } })).number).toBe(caf33[1][1]);
    },
  );
});

describe("SII sending off (test mode)", () => {
  it("the bulk finalize issues each DTE not_sent and queues none; back on, the next is queued", async () => {
    const lines = [{ name: "Soporte", amount: 1000 }];
    const off = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: "off" } });
    expect([off.status, off.body.sii_sending]).toEqual([200, "off"]);
    const ids = [await draft("CL33", lines), await draft("CL33", lines)];
    const ctx = runContext(prisma, settings, () => new Date(), { ...tenantKey(), userEmail: "ops@acme.cl" });
    try {
      await prisma.$transaction((tx) =>
        finalizeNewInvoiceDrafts(tx, { ...ctx, prisma: tx as unknown as PrismaClient }, "CL33", ids),
      );
    } finally {
      const on = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: "automatic" } });
      expect(on.status).toBe(200);
    }
    const rows = await prisma.invoice.findMany({ where: { id: { in: ids } }, orderBy: { number: "asc" } });
    const first = rows[0].number!;
    expect(rows.map((r) => [r.status, r.number, (r.taxAgency as Record<string, unknown>).status])).toEqual([
      ["finalized", first, "not_sent"],
      ["finalized", first + 1, "not_sent"],
    ]);
    for (const row of rows) await checkedXml(row.localFile!); // signed and stored all the same
    expect(await prisma.siiSubmission.count({ where: { documentId: { in: ids } } })).toBe(0);

    const after = await draft("CL33", lines);
    await prisma.$transaction((tx) =>
      finalizeNewInvoiceDrafts(tx, { ...ctx, prisma: tx as unknown as PrismaClient }, "CL33", [after]),
    );
    const queued = await prisma.invoice.findUniqueOrThrow({ where: { id: after } });
    expect([queued.number, (queued.taxAgency as Record<string, unknown>).status]).toEqual([first + 2, "pending"]);
    expect(await prisma.siiSubmission.count({ where: { documentId: after, status: "pending" } })).toBe(1);
  });
});

describe("takeFolios", () => {
  it(
    "takes a range across CAFs in one statement; fewer folios left than asked is a 409 that " + "takes nothing",
    async () => {
      const a = await uploadCaf(61, 10, 12);
      const b = await uploadCaf(61, 20, 24);
      const taken = await prisma.$transaction((tx) =>
        takeFolios(
          tx,
          tenantKey(),
          { documentTypeId: "CL61", latestIssueDate: authorizedOn, count: 5 },
          certificateEncryptionKey,
        ),
      );
      expect(taken.folios).toEqual([
        { folio: 10, cafId: a },
        { folio: 11, cafId: a },
        { folio: 12, cafId: a },
        { folio: 20, cafId: b },
        { folio: 21, cafId: b },
      ]);
      expect([...taken.cafFiles.keys()].sort()).toEqual([a, b].sort());
      expect(taken.cafFiles.get(a)!.toString("latin1")).toMatch(/<D>10<\/D>\s*<H>12<\/H>/);
      const error = await prisma
        .$transaction((tx) =>
          takeFolios(
            tx,
            tenantKey(),
            { documentTypeId: "CL61", latestIssueDate: authorizedOn, count: 4 },
            certificateEncryptionKey,
          ),
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidStateError);
      expect((error as Error).message).toContain("fewer than 4 authorized folio(s) are left for CL61");
      expect([await nextFolioOf(a), await nextFolioOf(b)]).toEqual([13, 22]);
      // the rest, then nothing
      const rest = await prisma.$transaction((tx) =>
        takeFolios(
          tx,
          tenantKey(),
          { documentTypeId: "CL61", latestIssueDate: authorizedOn, count: 3 },
          certificateEncryptionKey,
        ),
      );
      expect(rest.folios.map((f) => f.folio)).toEqual([22, 23, 24]);
    },
  );

  it("concurrent claims, in bulk and one by one, never take a folio twice and leave no gap", async () => {
    const first = await uploadCaf(52, 1, 25);
    await uploadCaf(52, 26, 200);
    const claims = await Promise.all([
      ...[7, 9, 11, 13].map((count) =>
        prisma.$transaction(
          (tx) =>
            takeFolios(
              tx,
              tenantKey(),
              { documentTypeId: "CL52", latestIssueDate: authorizedOn, count },
              certificateEncryptionKey,
            ),
          { maxWait: 30_000, timeout: 60_000 },
        ),
      ),
      ...[1, 2, 3].map(() =>
        prisma.$transaction(
          async (tx) => ({
            folios: [await takeFolio(tx, tenantKey(), "CL52", authorizedOn, certificateEncryptionKey)],
          }),
          { maxWait: 30_000, timeout: 60_000 },
        ),
      ),
    ]);
    for (const claim of claims.slice(0, 4)) {
      // a bulk claim is one run of consecutive folios (the two CAFs are adjacent: 25 is followed by 26)
      const folios = claim.folios.map((f) => f.folio);
      expect(folios.every((f, i) => i === 0 || f === folios[i - 1] + 1)).toBe(true);
    }
    const all = claims.flatMap((c) => c.folios.map((f) => f.folio)).sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 7 + 9 + 11 + 13 + 3 }, (_, i) => i + 1));
    expect(await nextFolioOf(first)).toBe(26);
  });
});
