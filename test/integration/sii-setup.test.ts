/**
 * SII set-up (docs/sii-setup.md) over REST and GraphQL: the tax profile (RUT check digit, lengths,
 * activity codes), certificate upload (PKCS#12 read with node-forge, holder RUT, validity, sealed
 * at rest and read back by loadSigningCredentials), CAF upload (RUT, type, mode from IDK, expiry,
 * overlaps; sealed at rest), tenancy and modes.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";
import { loadSigningCredentials } from "../../src/services/certificates.js";
import { openCafXml } from "../../src/services/cafs.js";

const KEY = randomBytes(32);
const RUT = "76042235-5";
let s: TestServer;

const today = () => new Date().toISOString().slice(0, 10);
const b64 = (b: Buffer) => b.toString("base64");

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: KEY } });
});
afterAll(async () => {
  await s?.close();
});

describe("tax profile", () => {
  it("reads the profile and reports what SII still needs", async () => {
    const res = await s.rest("GET", "/v1/billers/built_in/tax_profile/");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      organization: s.orgs.acme,
      tax_id: RUT,
      business_name: "Acme SpA",
      activity: "Servicios informáticos",
      activity_codes: [],
      missing: ["activity_codes"],
    });
  });

  it(
    "rejects a wrong check digit, a long name and bad activity codes with field errors, and " + "changes nothing",
    async () => {
      const res = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: {
          tax_id: "76042235-4",
          business_name: "x".repeat(101),
          activity_codes: ["62A", "1234567"],
          resolution_date: "2026-13-01",
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields).sort()).toEqual([
        "activity_codes.0",
        "activity_codes.1",
        "business_name",
        "resolution_date",
        "tax_id",
      ]);
      const org = await s.database.prisma.organizationSettings.findUniqueOrThrow({
        where: { organizationId_testMode: { organizationId: s.orgs.acme, testMode: true } },
      });
      expect(org.taxId).toBe(RUT);
      expect(org.taxBusinessName).toBe("Acme SpA");
    },
  );

  it("normalizes the RUT and stores every field (REST), readable through GraphQL", async () => {
    const res = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
      body: {
        tax_id: "76.042.235-5",
        business_name: "Acme SpA",
        activity: "Desarrollo de software",
        activity_codes: ["620200", "631200"],
        address: "Av. Providencia 1234",
        commune: "Providencia",
        city: "Santiago",
        resolution_number: 0,
        resolution_date: "2026-01-15",
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tax_id: RUT,
      activity_codes: ["620200", "631200"],
      city: "Santiago",
      resolution_number: 0,
      resolution_date: "2026-01-15",
      missing: [],
    });
    const org = await s.database.prisma.organizationSettings.findUniqueOrThrow({
      where: { organizationId_testMode: { organizationId: s.orgs.acme, testMode: true } },
    });
    expect(org.taxActivityCode).toBe("620200,631200");
    const g = await s.graphql(`{ taxProfile { taxId activityCodes resolutionDate missing } }`);
    expect(g.body.data.taxProfile).toEqual({
      taxId: RUT,
      activityCodes: ["620200", "631200"],
      resolutionDate: "2026-01-15",
      missing: [],
    });
  });

  it("sii_sending: automatic by default, off in test mode only, another value a field error", async () => {
    expect((await s.rest("GET", "/v1/billers/built_in/tax_profile/")).body.sii_sending).toBe("automatic");
    const bad = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: "never" } });
    expect([bad.status, bad.body.error.code, bad.body.error.fields]).toEqual([
      400,
      "validation_error",
      { sii_sending: ["must be one of automatic, off"] },
    ]);
    const live = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
      key: s.keys.acmeLive,
      body: { sii_sending: "off" },
    });
    expect([live.status, live.body.error.fields]).toEqual([
      400,
      { sii_sending: ["can be off in test mode only: a live DTE is a tax document and must reach SII"] },
    ]);
    expect((await s.rest("GET", "/v1/billers/built_in/tax_profile/", { key: s.keys.acmeLive })).body.sii_sending).toBe(
      "automatic",
    );
    const off = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: "off" } });
    expect([off.status, off.body.sii_sending]).toEqual([200, "off"]);
    expect((await s.graphql(`{ taxProfile { siiSending } }`)).body.data.taxProfile).toEqual({ siiSending: "off" });
    const row = await s.database.prisma.organizationSettings.findUniqueOrThrow({
      where: { organizationId_testMode: { organizationId: s.orgs.acme, testMode: true } },
    });
    expect(row.siiSending).toBe("off");
    // null is the default again
    const reset = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: null } });
    expect([reset.status, reset.body.sii_sending]).toEqual([200, "automatic"]);
  });

  it("GraphQL updateTaxProfile gives the same field errors", async () => {
    const g = await s.graphql(`mutation { updateTaxProfile(input: { taxId: "1-1" }) { taxId } }`);
    expect(g.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { tax_id: [expect.stringContaining("check digit")] },
    });
  });

  it(
    "is the mode's: the live key sees live's profile (untouched by the test key's changes), another " +
      "organization its own",
    async () => {
      expect((await s.rest("GET", "/v1/billers/built_in/tax_profile/", { key: s.keys.acmeLive })).body).toMatchObject({
        test_mode: false,
        tax_id: RUT,
        activity_codes: [],
        city: null,
        resolution_date: null,
      });
      expect((await s.rest("GET", "/v1/billers/built_in/tax_profile/")).body).toMatchObject({
        test_mode: true,
        activity_codes: ["620200", "631200"],
        city: "Santiago",
      });
      expect((await s.rest("GET", "/v1/billers/built_in/tax_profile/", { key: s.keys.other })).body).toMatchObject({
        organization: s.orgs.other,
        tax_id: null,
      });
      expect((await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { unknown: 1 } })).status).toBe(400);
    },
  );
});

describe("certificates", () => {
  it("reads the holder's RUT and validity from the PKCS#12, keeps it sealed, and signs with it", async () => {
    const p12 = generatePkcs12({ rut: "12.345.678-5", password: "clave ñandú" });
    const res = await s.rest("POST", "/v1/billers/built_in/certificates/", {
      body: { file: b64(p12.file), password: "clave ñandú" },
    });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^cer_[0-9A-Za-z]{24}$/);
    expect(res.body.subject_rut).toBe("12345678-5");
    const validTo = new Date(res.body.valid_to).getTime();
    expect(validTo - Date.now()).toBeGreaterThan(47 * 3600_000);
    expect(validTo - Date.now()).toBeLessThan(49 * 3600_000);

    const row = await s.database.prisma.certificate.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(Buffer.from(row.encrypted).includes("PRIVATE KEY")).toBe(false);
    expect(Buffer.from(row.encrypted).includes(p12.certificatePem.split("\n")[1])).toBe(false);
    const credentials = await loadSigningCredentials(
      s.database.prisma,
      { organizationId: s.orgs.acme, testMode: true },
      KEY,
    );
    expect(credentials.subjectRut).toBe("12345678-5");
    expect(credentials.certificatePem.replace(/\r/g, "").trim()).toBe(p12.certificatePem.trim());
    expect(credentials.privateKeyPem).toContain("PRIVATE KEY");
    await expect(
      loadSigningCredentials(s.database.prisma, { organizationId: s.orgs.acme, testMode: true }, randomBytes(32)),
    ).rejects.toThrow(/wrong CERTIFICATE_ENCRYPTION_KEY/);
    // the test key's certificate signs test documents only
    await expect(
      loadSigningCredentials(s.database.prisma, { organizationId: s.orgs.acme, testMode: false }, KEY),
    ).rejects.toThrow(/no signing certificate in live mode/);

    const list = await s.rest("GET", "/v1/billers/built_in/certificates/");
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([res.body.id]);
    expect(list.body[0].test_mode).toBe(true);
    expect((await s.rest("GET", "/v1/billers/built_in/certificates/", { key: s.keys.acmeLive })).body).toEqual([]);
    expect((await s.rest("GET", "/v1/billers/built_in/certificates/", { key: s.keys.other })).body).toEqual([]);
  });

  it(
    "rejects a wrong password, a non-PKCS#12 file, bad base64 and a certificate without RUT; " + "nothing stored",
    async () => {
      const p12 = generatePkcs12();
      const cases: [unknown, string][] = [
        [{ file: b64(p12.file), password: "otra" }, "password"],
        [{ file: b64(Buffer.from("not a certificate")), password: "x" }, "file"],
        [{ file: "***", password: "x" }, "file"],
        [{ password: "x" }, "file"],
        [{ file: b64(generatePkcs12({ rut: null }).file), password: "secreto" }, "file"],
      ];
      const before = await s.database.prisma.certificate.count();
      for (const [body, field] of cases) {
        const res = await s.rest("POST", "/v1/billers/built_in/certificates/", { body });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(Object.keys(res.body.error.fields)).toEqual([field]);
      }
      expect(await s.database.prisma.certificate.count()).toBe(before);
    },
  );

  it("loadSigningCredentials says clearly when an organization has no certificate", async () => {
    await expect(
      loadSigningCredentials(s.database.prisma, { organizationId: s.orgs.other, testMode: true }, KEY),
    ).rejects.toThrow(/no signing certificate in test mode/);
  });
});

describe("CAFs", () => {
  const upload = (file: Buffer, key?: string) =>
    s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: b64(file) }, key });

  it("stores a certification CAF in test mode, sealed, and lists and retrieves it", async () => {
    const caf = generateCaf({ rut: RUT, type: 33, from: 1, to: 50, authorizedOn: today() });
    const res = await upload(caf.file);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      document: "CL33",
      range_from: 1,
      range_to: 50,
      next_folio: 1,
      available: 50,
      authorized: today(),
      test_mode: true,
    });
    expect(res.body.expires).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const row = await s.database.prisma.caf.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.xml.startsWith("sealed:")).toBe(true);
    expect(row.xml).not.toContain("PRIVATE KEY");
    expect(openCafXml(row.xml, KEY).equals(caf.file)).toBe(true);

    expect((await s.rest("GET", `/v1/billers/built_in/cafs/${res.body.id}/`)).body).toEqual(res.body);
    const list = await s.rest("GET", "/v1/billers/built_in/cafs/?document=CL33");
    expect(list.body).toMatchObject({ count: 1, results: [{ id: res.body.id }] });
    expect((await s.rest("GET", "/v1/billers/built_in/cafs/?document=CL52")).body.count).toBe(0);
    expect((await s.rest("GET", "/v1/billers/built_in/cafs/?folio=1")).status).toBe(400);
    // another organization or mode: 404 / empty
    expect((await s.rest("GET", `/v1/billers/built_in/cafs/${res.body.id}/`, { key: s.keys.other })).status).toBe(404);
    expect((await s.rest("GET", `/v1/billers/built_in/cafs/${res.body.id}/`, { key: s.keys.acmeLive })).status).toBe(
      404,
    );
    expect((await s.rest("GET", "/v1/billers/built_in/cafs/", { key: s.keys.acmeLive })).body.count).toBe(0);
  });

  it("a production CAF (IDK 300) belongs to live mode", async () => {
    const caf = generateCaf({ rut: RUT, type: 33, from: 1, to: 50, authorizedOn: today(), idk: 300 });
    const asTest = await upload(caf.file);
    expect(asTest.status).toBe(400);
    expect(asTest.body.error.fields.file[0]).toContain("live key");
    const asLive = await upload(caf.file, s.keys.acmeLive);
    expect(asLive.status).toBe(201);
    expect(asLive.body).toMatchObject({ test_mode: false, range_from: 1 });
  });

  it("rejects overlaps, another RUT, types not issued, expired and broken files; nothing stored", async () => {
    const before = await s.database.prisma.caf.count();
    const cases: [Buffer, RegExp][] = [
      [
        generateCaf({ rut: RUT, type: 33, from: 40, to: 60, authorizedOn: today() }).file,
        /overlap CAF caf_\w+ \(folios 1\.\.50\)/,
      ],
      [
        generateCaf({ rut: "60803000-K", type: 33, from: 100, to: 110, authorizedOn: today() }).file,
        /RUT 60803000-K.*76042235-5/,
      ],
      [generateCaf({ rut: RUT, type: 46, from: 1, to: 10, authorizedOn: today() }).file, /document type 46/],
      [generateCaf({ rut: RUT, type: 61, from: 1, to: 10, authorizedOn: "2025-01-10" }).file, /expired/],
      [Buffer.from("<AUTORIZACION><CAF/></AUTORIZACION>"), /invalid CAF|CAF/],
    ];
    for (const [file, reason] of cases) {
      const res = await upload(file);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.fields.file.join(" ")).toMatch(reason);
    }
    expect((await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: "%%%" } })).status).toBe(400);
    expect(await s.database.prisma.caf.count()).toBe(before);
  });

  it("needs the tax profile's RUT first (GraphQL uploadCaf)", async () => {
    const caf = generateCaf({ rut: RUT, type: 33, authorizedOn: today() });
    const g = await s.graphql(
      `mutation($file: String) { uploadCaf(input: { file: $file }) { id } }`,
      { file: b64(caf.file) },
      s.keys.other,
    );
    expect(g.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { tax_id: [expect.stringContaining("tax profile")] },
    });
  });

  it("GraphQL lists CAFs as a connection", async () => {
    const g = await s.graphql(
      `{ cafs(first: 10) { totalCount edges { node { id documentType nextFolio available testMode } } } }`,
    );
    expect(g.body.data.cafs.totalCount).toBe(1);
    expect(g.body.data.cafs.edges[0].node).toMatchObject({
      documentType: "CL33",
      nextFolio: 1,
      available: 50,
      testMode: true,
    });
  });
});
