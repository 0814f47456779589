/**
 * Mode isolation of organization settings (docs/decisions.md "Mode isolation of settings"): each
 * settings endpoint and mutation (REST `PATCH .../tax_profile/`, `POST .../certificates/`,
 * `POST .../cafs/`; GraphQL updateTaxProfile, uploadCertificate, uploadCaf,
 * updateOrganizationBranding) called with a test key leaves everything a live key reads unchanged,
 * and a live invoice finalized afterwards is issued with live's tax profile, signed with live's
 * certificate (checked with xmlsec1), numbered from live's CAF and printed with live's issuer and
 * resolution; a live customer session copies live's branding. A test invoice, session and hosted
 * checkout get test mode's settings. The migration that made settings per mode copies existing organization-wide values
 * into both modes.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { generateCaf, generatePkcs12, xmlsecVerify, type FakePkcs12 } from "../helpers/sii-fixtures.js";
import { emptyTarget } from "../helpers/databases.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { applyMigrations, localMigrations } from "../../src/infra/migrate.js";
import { readTaxProfile } from "../../src/services/tax-profile.js";
import { loadSigningCredentials } from "../../src/services/certificates.js";

const LIVE_RUT = "76042235-5";
const certificateEncryptionKey = randomBytes(32);
const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);
const b64 = (b: Buffer) => b.toString("base64");

let s: TestServer;
let liveCertificate: FakePkcs12;
let liveCaf: string;
let liveCustomer: string;
let testCustomer: string;
/** certificates uploaded with the test key, in order (the newest signs test documents) */
const testCertificates: FakePkcs12[] = [];

const LIVE_PROFILE = {
  tax_id: "76.042.235-5",
  business_name: "Acme Producción SpA",
  activity: "Servicios informáticos",
  activity_codes: ["620200"],
  address: "Av. Providencia 1234",
  commune: "Providencia",
  city: "Santiago",
  resolution_number: 80,
  resolution_date: "2014-08-22",
};

const BRANDING =
  `mutation($input: OrganizationBrandingInput!) { updateOrganizationBranding(input: $input) { ` +
  `testMode businessName colorBackground } }`;

/** Everything a live key reads about its settings, through REST and GraphQL. */
async function liveReads() {
  const key = s.keys.acmeLive;
  const profile = await s.rest("GET", "/v1/billers/built_in/tax_profile/", { key });
  const certificates = await s.rest("GET", "/v1/billers/built_in/certificates/", { key });
  const cafs = await s.rest("GET", "/v1/billers/built_in/cafs/?page_size=100", { key });
  const graphql = await s.graphql(
    `{
      taxProfile { organization testMode taxId businessName activity activityCodes address commune city
      resolutionNumber resolutionDate missing updated }
      certificates { id subjectRut validFrom validTo testMode created }
      cafs(first: 100) { totalCount edges { node { id documentType rangeFrom rangeTo nextFolio available testMode
      created } } }
      organizationBranding { organization testMode name businessName colorBackground colorAsset displayInvoices
      termsOfServiceUrl privacyPolicyUrl updated }
    }`,
    {},
    key,
  );
  expect([profile.status, certificates.status, cafs.status, graphql.body.errors]).toEqual([200, 200, 200, undefined]);
  return { profile: profile.body, certificates: certificates.body, cafs: cafs.body, graphql: graphql.body.data };
}

async function pdfText(kind: string, id: string, key: string): Promise<string> {
  const res = await s.rest("GET", `/v1/${kind}/${id}/pdf/`, { key });
  expect(res.status).toBe(200);
  const parser = new PDFParse({ data: new Uint8Array(Buffer.from(res.body.file, "base64")) });
  const text = await parser.getText();
  await parser.destroy();
  return text.text;
}

/**
 * Finalizes a new CL33 invoice with `key`; returns the finalized body, its DTE text and bytes, and the stored
 * tax_agency.
 */
async function issue(key: string, customer: string) {
  const draft = await s.rest("POST", "/v1/invoices/", {
    key,
    body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 2, amount: 1000 }] },
  });
  expect(draft.status, JSON.stringify(draft.body)).toBe(201);
  const res = await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const file = await fetch(res.body.local_file, { headers: { authorization: `Bearer ${key}` } });
  expect(file.status).toBe(200);
  const bytes = Buffer.from(await file.arrayBuffer());
  const stored = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: draft.body.id } });
  return {
    invoice: res.body,
    bytes,
    xml: bytes.toString("latin1"),
    taxAgency: stored.taxAgency as Record<string, unknown>,
  };
}

/**
 * A live invoice is issued with live's profile, certificate and CAF, printed with live's issuer; a live session gets
 * live's branding.
 */
async function expectLiveIssuedWithLiveSettings() {
  const { invoice, bytes, xml, taxAgency } = await issue(s.keys.acmeLive, liveCustomer);
  expect(xml).toContain(
    `<RUTEmisor>${LIVE_RUT}</RUTEmisor><RznSoc>Acme Producción SpA</RznSoc><GiroEmis>Servicios informáticos</GiroEmis>`,
  );
  expect(xml).toContain(
    "<DirOrigen>Av. Providencia 1234</DirOrigen><CmnaOrigen>Providencia</CmnaOrigen>" +
      "<CiudadOrigen>Santiago</CiudadOrigen>",
  );
  expect(taxAgency.caf).toBe(liveCaf);
  const signed = xmlsecVerify(bytes, liveCertificate.certificatePem);
  expect(signed.ok, signed.output).toBe(true);
  for (const other of testCertificates) expect(xmlsecVerify(bytes, other.certificatePem).ok).toBe(false);

  const text = await pdfText("invoices", invoice.id, s.keys.acmeLive);
  expect(text).toContain("Acme Producción SpA");
  expect(text).toContain("R.U.T.: 76.042.235-5"); // LIVE_RUT as printed
  expect(text).toContain("Res. 80 de 2014");
  expect(text).not.toMatch(/Prueba/);

  const session = await s.rest("POST", "/v1/customer_base/sessions/", {
    key: s.keys.acmeLive,
    body: { customer: liveCustomer, return_url: "https://acme.cl" },
  });
  expect(session.status).toBe(201);
  expect(session.body.settings).toMatchObject({ business_name: "Acme Live", color_background: "#112233" });
}

/**
 * The heading of the hosted checkout of a new redirect source created with `key` (it names the organization as that
 * mode's branding does; the redirect gateway is test-only).
 */
async function checkoutHeading(key: string): Promise<string | undefined> {
  const source = await s.rest("POST", "/v1/sources/", {
    key,
    body: { gateway: "redirect", return_url: "https://shop.example/return" },
  });
  expect(source.status).toBe(201);
  const page = await fetch(source.body.data.redirect_url);
  return /<h1>[^<]*<\/h1>/.exec(await page.text())?.[0];
}

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey } });
  const live = s.keys.acmeLive;
  expect((await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { key: live, body: LIVE_PROFILE })).status).toBe(
    200,
  );
  liveCertificate = generatePkcs12({ rut: "12345678-5", commonName: "Firmante Live" });
  expect(
    (
      await s.rest("POST", "/v1/billers/built_in/certificates/", {
        key: live,
        body: { file: b64(liveCertificate.file), password: liveCertificate.password },
      })
    ).status,
  ).toBe(201);
  const caf = await s.rest("POST", "/v1/billers/built_in/cafs/", {
    key: live,
    body: { file: b64(generateCaf({ rut: LIVE_RUT, type: 33, from: 1, to: 100, authorizedOn, idk: 300 }).file) },
  });
  expect(caf.status, JSON.stringify(caf.body)).toBe(201);
  liveCaf = caf.body.id;
  expect(
    (await s.graphql(BRANDING, { input: { businessName: "Acme Live", colorBackground: "#112233" } }, live)).body.data
      .updateOrganizationBranding,
  ).toEqual({ testMode: false, businessName: "Acme Live", colorBackground: "#112233" });
  liveCustomer = (await s.rest("POST", "/v1/customers/", { key: live, body: chileanCustomer() })).body.id;
  testCustomer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  // test mode starts from the helper's profile (the same RUT as live); it completes it for SII
  expect(
    (
      await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { activity_codes: ["620200"], resolution_number: 0, resolution_date: "2026-01-15" },
      })
    ).status,
  ).toBe(200);
});
afterAll(async () => {
  await s?.close();
});

/** The test profile's RUT now (CAFs uploaded with the test key must carry it). */
async function testRut(): Promise<string> {
  return (await s.rest("GET", "/v1/billers/built_in/tax_profile/")).body.tax_id;
}

const changes: [string, () => Promise<void>][] = [
  [
    "REST PATCH /v1/billers/built_in/tax_profile/",
    async () => {
      const res = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: {
          tax_id: "60.803.000-K",
          business_name: "Prueba REST Ltda",
          activity: "Pruebas",
          address: "Calle Falsa 123",
          commune: "Ñuñoa",
          city: "Valparaíso",
          resolution_number: 0,
          resolution_date: "2026-02-01",
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ test_mode: true, tax_id: "60803000-K", business_name: "Prueba REST Ltda" });
    },
  ],
  [
    "GraphQL updateTaxProfile",
    async () => {
      const g = await s.graphql(
        `mutation { updateTaxProfile(input: { taxId: "77.777.777-7", businessName: "Prueba GraphQL Ltda", ` +
          `activityCodes: ["631200"] }) { testMode taxId businessName } }`,
      );
      expect(g.body.data.updateTaxProfile).toEqual({
        testMode: true,
        taxId: "77777777-7",
        businessName: "Prueba GraphQL Ltda",
      });
    },
  ],
  [
    "REST POST /v1/billers/built_in/certificates/",
    async () => {
      const p12 = generatePkcs12({ rut: "11111111-1", commonName: "Firmante Prueba REST" });
      const res = await s.rest("POST", "/v1/billers/built_in/certificates/", {
        body: { file: b64(p12.file), password: p12.password },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ subject_rut: "11111111-1", test_mode: true });
      testCertificates.push(p12);
    },
  ],
  [
    "GraphQL uploadCertificate",
    async () => {
      const p12 = generatePkcs12({ rut: "22222222-2", commonName: "Firmante Prueba GraphQL" });
      const g = await s.graphql(
        `mutation($input: CertificateInput!) { uploadCertificate(input: $input) { subjectRut testMode } }`,
        { input: { file: b64(p12.file), password: p12.password } },
      );
      expect(g.body.data.uploadCertificate).toEqual({ subjectRut: "22222222-2", testMode: true });
      testCertificates.push(p12);
    },
  ],
  [
    "REST POST /v1/billers/built_in/cafs/",
    async () => {
      // folios 1..50 of CL33 in test mode: the same numbers as live's CAF, which is not affected
      const res = await s.rest("POST", "/v1/billers/built_in/cafs/", {
        body: { file: b64(generateCaf({ rut: await testRut(), type: 33, from: 1, to: 50, authorizedOn }).file) },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ test_mode: true, range_from: 1 });
      // a production CAF (live's, IDK 300) cannot be uploaded with a test key
      const production = await s.rest("POST", "/v1/billers/built_in/cafs/", {
        body: { file: b64(generateCaf({ rut: LIVE_RUT, type: 33, from: 101, to: 150, authorizedOn, idk: 300 }).file) },
      });
      expect(production.status).toBe(400);
      expect(production.body.error.fields.file[0]).toContain("live key");
    },
  ],
  [
    "GraphQL uploadCaf",
    async () => {
      const caf = generateCaf({ rut: await testRut(), type: 33, from: 51, to: 60, authorizedOn });
      const g = await s.graphql(
        `mutation($file: String) { uploadCaf(input: { file: $file }) { rangeFrom testMode } }`,
        { file: b64(caf.file) },
      );
      expect(g.body.data.uploadCaf).toEqual({ rangeFrom: 51, testMode: true });
    },
  ],
  [
    "GraphQL updateOrganizationBranding",
    async () => {
      const g = await s.graphql(BRANDING, { input: { businessName: "Prueba Branding", colorBackground: "#ff0000" } });
      expect(g.body.data.updateOrganizationBranding).toEqual({
        testMode: true,
        businessName: "Prueba Branding",
        colorBackground: "#ff0000",
      });
    },
  ],
];

describe("a test key's settings changes never reach live mode", () => {
  it("live mode is set up and issues with its own settings", async () => {
    await expectLiveIssuedWithLiveSettings();
  });

  it.each(changes)(
    "%s with a test key: live reads the same, and a live invoice is issued with live's settings",
    async (_name, change) => {
      const before = await liveReads();
      await change();
      expect(await liveReads()).toEqual(before);
      await expectLiveIssuedWithLiveSettings();
    },
  );

  it(
    "a test invoice is issued with test mode's settings: its profile, its newest certificate, its CAF, its " +
      "branding",
    async () => {
      const rut = await testRut();
      const { invoice, bytes, xml, taxAgency } = await issue(s.keys.acme, testCustomer);
      expect(xml).toContain(
        `<RUTEmisor>${rut}</RUTEmisor><RznSoc>Prueba GraphQL Ltda</RznSoc><GiroEmis>Pruebas</GiroEmis>`,
      );
      expect(xml).toContain("<Acteco>631200</Acteco>");
      expect(xml).toContain("<DirOrigen>Calle Falsa 123</DirOrigen>");
      expect(invoice.number).toBe(1);
      const cafs = (await s.rest("GET", "/v1/billers/built_in/cafs/?page_size=100")).body.results;
      expect(cafs.map((c: { test_mode: boolean }) => c.test_mode)).toEqual([true, true]);
      expect(cafs.map((c: { id: string }) => c.id)).toContain(taxAgency.caf);
      expect(xmlsecVerify(bytes, testCertificates.at(-1)!.certificatePem).ok).toBe(true);
      expect(xmlsecVerify(bytes, liveCertificate.certificatePem).ok).toBe(false);
      const text = await pdfText("invoices", invoice.id, s.keys.acme);
      expect(text).toContain("Prueba GraphQL Ltda");
      expect(text).toContain("Res. 0 de 2026");
      const session = await s.rest("POST", "/v1/customer_base/sessions/", {
        body: { customer: testCustomer, return_url: "https://acme.cl" },
      });
      expect(session.body.settings).toMatchObject({ business_name: "Prueba Branding", color_background: "#ff0000" });
      expect(await checkoutHeading(s.keys.acme)).toBe("<h1>Prueba Branding</h1>");
      // the signing credentials of each mode are that mode's newest certificate
      const credentials = (testMode: boolean) =>
        loadSigningCredentials(s.database.prisma, { organizationId: s.orgs.acme, testMode }, certificateEncryptionKey);
      expect((await credentials(true)).subjectRut).toBe("22222222-2");
      expect((await credentials(false)).subjectRut).toBe("12345678-5");
    },
  );

  it("a live key's changes stay in live mode too", async () => {
    const before = (await s.rest("GET", "/v1/billers/built_in/tax_profile/")).body;
    const res = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
      key: s.keys.acmeLive,
      body: { city: "Concepción" },
    });
    expect(res.body).toMatchObject({ test_mode: false, city: "Concepción" });
    expect((await s.rest("GET", "/v1/billers/built_in/tax_profile/")).body).toEqual(before);
    await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { key: s.keys.acmeLive, body: { city: "Santiago" } });
  });
});

describe("the migration to per-mode settings", () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  /**
   * An empty database of this run's kind (test/helpers/databases.ts emptyTarget), closed and removed after the file.
   */
  async function emptyDatabase(): Promise<Database> {
    const { target, drop } = await emptyTarget("settings");
    cleanup.push(drop);
    const database = await createDatabase(target);
    cleanup.push(() => database.close());
    return database;
  }

  it(
    "copies each organization's tax profile and branding into both modes, and each certificate into test mode (live " +
      "keeps the id)",
    async () => {
      const MIGRATION = "20261124020000_settings_per_mode";
      const db = await emptyDatabase();
      const local = await localMigrations();
      expect(local.map((m) => m.name)).toContain(MIGRATION);
      await db.session((session) =>
        applyMigrations(
          session,
          local.filter((m) => m.name < MIGRATION),
        ),
      );
      // an organization as the previous schema kept it: settings on the organization row, a certificate without mode
      await db.session(async (session) => {
        await session.query(
          `INSERT INTO "Organization" ("id", "name", "businessName", "colorBackground", "displayInvoices", "taxId",
          "taxBusinessName", "taxActivity", "taxActivityCode", "taxResolutionNumber", "taxResolutionDate",
          "createdAt", "updatedAt")
         VALUES ('org_000000000000000000000001', 'Vieja SpA', 'Vieja', '#010203', false, '76042235-5', 'Vieja SpA',
         'Software', '620200,631200', 80, '2014-08-22', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'),
                ('org_000000000000000000000002', 'Vacía SpA', NULL, NULL, true, NULL, NULL, NULL, NULL, NULL, NULL,
                '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
        );
        await session.query(
          `INSERT INTO "Certificate" ("id", "organizationId", "subjectRut", "encrypted", "validTo", "createdAt")
         VALUES ('cer_000000000000000000000001', 'org_000000000000000000000001', '12345678-5', '\\x0102ff'::bytea,
         '2027-01-01T00:00:00Z', '2026-01-05T00:00:00Z')`,
        );
      });
      expect(
        (
          await db.session((session) =>
            applyMigrations(
              session,
              local.filter((m) => m.name <= MIGRATION),
            ),
          )
        ).applied,
      ).toEqual([MIGRATION]);
      // the later migrations (columns the client reads, such as "locale") leave these rows' values as they are
      await db.session((session) => applyMigrations(session, local));

      const settings = await db.prisma.organizationSettings.findMany({
        orderBy: [{ organizationId: "asc" }, { testMode: "asc" }],
      });
      expect(settings).toHaveLength(4);
      const old = {
        organizationId: "org_000000000000000000000001",
        businessName: "Vieja",
        colorBackground: "#010203",
        displayInvoices: false,
        taxId: "76042235-5",
        taxBusinessName: "Vieja SpA",
        taxActivity: "Software",
        taxActivityCode: "620200,631200",
        taxResolutionNumber: 80,
      };
      expect(settings[0]).toMatchObject({ ...old, testMode: false });
      expect(settings[1]).toMatchObject({ ...old, testMode: true });
      expect(settings[0].updatedAt.toISOString()).toBe("2026-02-01T00:00:00.000Z");
      expect(settings[2]).toMatchObject({
        organizationId: "org_000000000000000000000002",
        testMode: false,
        businessName: null,
        taxId: null,
        displayInvoices: true,
      });
      expect(settings[3]).toMatchObject({
        organizationId: "org_000000000000000000000002",
        testMode: true,
        businessName: null,
        taxId: null,
        displayInvoices: true,
      });
      const live = await readTaxProfile(db.prisma, { organizationId: "org_000000000000000000000001", testMode: false });
      const test = await readTaxProfile(db.prisma, { organizationId: "org_000000000000000000000001", testMode: true });
      expect(live).toMatchObject({
        testMode: false,
        taxId: "76042235-5",
        activityCodes: ["620200", "631200"],
        resolutionNumber: 80,
        resolutionDate: "2014-08-22",
        missing: [],
      });
      expect({ ...test, testMode: false }).toEqual(live);

      const certificates = await db.prisma.certificate.findMany({ orderBy: { testMode: "asc" } });
      expect(certificates).toHaveLength(2);
      expect(certificates[0]).toMatchObject({
        id: "cer_000000000000000000000001",
        testMode: false,
        subjectRut: "12345678-5",
      });
      expect(certificates[1]).toMatchObject({
        organizationId: "org_000000000000000000000001",
        testMode: true,
        subjectRut: "12345678-5",
      });
      expect(certificates[1].id).toMatch(/^cer_[0-9a-f]{24}$/);
      expect(Buffer.from(certificates[1].encrypted)).toEqual(Buffer.from([1, 2, 255]));
      expect([certificates[1].createdAt, certificates[1].validTo]).toEqual([
        certificates[0].createdAt,
        certificates[0].validTo,
      ]);

      const columns = await db.session((session) =>
        session.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns WHERE table_name = 'Organization' ORDER BY 1`,
        ),
      );
      expect(columns.map((c) => c.column_name)).toEqual(["createdAt", "id", "name", "timeZone", "updatedAt"]);
    },
  );
});
