/**
 * The boleta API transport (src/infra/taxagency/sii/boleta-transport.ts) against the fake SII of
 * test/helpers/fake-sii.ts: seed and token (the signed seed is checked with xmlsec1 by the fake),
 * an EnvioBOLETA upload (checked with xmllint against EnvioBOLETA_v11.xsd by the fake, which also
 * refuses a chunked body), the envío status with the boletas SII objected to, an expired token
 * (HTTP 401) renewed once, and SII down.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { join } from "node:path";
import { buildEnvioBoleta, SII_RUT } from "../../src/infra/taxagency/sii/envelope.js";
import { issueDte, parseCaf, type DteInput } from "../../src/infra/taxagency/sii/index.js";
import { SiiBoletaTransport } from "../../src/infra/taxagency/sii/boleta-transport.js";
import { SiiTransportError } from "../../src/infra/taxagency/sii/transport.js";
import { SCHEMA_DIR, generateCaf, generateCertificate, type FakeCertificate } from "../helpers/sii-fixtures.js";
import { FakeSii, startFakeSii } from "../helpers/fake-sii.js";
import { loadConfig } from "../../src/infra/config.js";

const RUT = "76042235-5";
let cert: FakeCertificate;
let sii: FakeSii;
let envelope: Buffer;

function transport(timeoutMs?: number) {
  return new SiiBoletaTransport({
    apiUrl: sii.hosts.boletaCertificationUrl,
    uploadUrl: `${sii.hosts.boletaCertificationUploadUrl}/`,
    timeoutMs,
  });
}

beforeAll(async () => {
  cert = generateCertificate();
  sii = await startFakeSii({
    trustedCertificatePem: cert.certificatePem,
    boletaSchema: join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd"),
  });
  const caf = parseCaf(generateCaf({ rut: RUT, type: 39, authorizedOn: "2026-11-01" }).file);
  const boleta = (folio: number): DteInput => ({
    type: 39,
    folio,
    issueDate: "2026-11-20",
    emitter: {
      rut: RUT,
      businessName: "Ñandú SpA",
      activity: "Cafetería",
      activityCodes: [561000],
      address: "Teatinos 120",
      commune: "Santiago",
    },
    receiver: { rut: "66666666-6", name: "Consumidor final" },
    // a long line so the envelope is well above 4 KB (SII's gateway reads one chunk of a chunked body)
    lines: [{ name: "Café cortado", description: "x".repeat(900), quantity: 2, unitPrice: 1990 }],
    timestamp: "2026-11-20T09:33:20",
  });
  envelope = buildEnvioBoleta({
    dtes: [issueDte(boleta(1), caf, cert).xml, issueDte(boleta(2), caf, cert).xml],
    caratula: { rutEmisor: RUT, rutEnvia: "11111111-1", rutReceptor: SII_RUT, fchResol: "2014-08-22", nroResol: 0 },
    credentials: cert,
  }).file;
  expect(envelope.length).toBeGreaterThan(8192);
});

afterAll(async () => {
  await sii.stop();
});

describe("SiiBoletaTransport", () => {
  it(
    "seed → token → upload (whole body, with a Content-Length) → track id → envío status with the " +
      "objected boletas",
    async () => {
      const t = transport();
      const receipt = await t.upload(cert, {
        rutSender: "11.111.111-1",
        rutCompany: RUT,
        file: envelope,
        fileName: "EnvioBOLETA-39.xml",
      });
      expect(receipt).toEqual({
        trackId: expect.stringMatching(/^7\d{6}$/),
        estado: "REC",
        receivedAt: "2026-11-23 10:00:00",
      });
      const upload = sii.uploads.find((u) => u.trackId === receipt.trackId)!;
      expect([
        upload.api,
        upload.rutSender,
        upload.dvSender,
        upload.rutCompany,
        upload.dvCompany,
        upload.fileName,
      ]).toEqual(["boleta", "11111111", "1", "76042235", "5", "EnvioBOLETA-39.xml"]);
      expect(upload.file.equals(envelope)).toBe(true);
      expect(sii.calls.slice(-3)).toEqual(["boleta-seed", "boleta-token", "boleta-upload"]);

      sii.boletaStatusFor = () => ({
        estado: "EPR",
        estadistica: [{ tipo: 39, informados: 2, aceptados: 1, rechazados: 1, reparos: 0 }],
        detalle_rep_rech: [
          {
            tipo: 39,
            folio: 2,
            estado: "RCH",
            descripcion: "Dte Rechazado",
            error: [{ descripcion: "Monto total incorrecto", detalle: "MntTotal 3980 != 3981" }],
          },
        ],
      });
      try {
        const status = await t.status(cert, { rutCompany: RUT, trackId: receipt.trackId });
        expect(status).toEqual({
          trackId: receipt.trackId,
          estado: "EPR",
          counts: [{ type: 39, reported: 2, accepted: 1, rejected: 1, objections: 0 }],
          details: [
            {
              type: 39,
              folio: 2,
              estado: "RCH",
              message: "Dte Rechazado; Monto total incorrecto: MntTotal 3980 != 3981",
            },
          ],
        });
      } finally {
        sii.boletaStatusFor = () => ({ estado: "EPR", detalle_rep_rech: [] });
      }
      // one token for both calls
      expect(sii.calls.filter((c) => c === "boleta-token")).toHaveLength(1);
    },
  );

  it("a token SII forgot (HTTP 401) is renewed once, for the upload and for the status", async () => {
    const t = transport();
    const first = await t.upload(cert, { rutSender: "11111111-1", rutCompany: RUT, file: envelope, fileName: "a.xml" });
    sii.expireTokens();
    const tokensBefore = sii.calls.filter((c) => c === "boleta-token").length;
    const second = await t.upload(cert, {
      rutSender: "11111111-1",
      rutCompany: RUT,
      file: envelope,
      fileName: "b.xml",
    });
    expect(second.trackId).not.toBe(first.trackId);
    expect(sii.calls.filter((c) => c === "boleta-token").length).toBe(tokensBefore + 1);
    sii.expireTokens();
    expect((await t.status(cert, { rutCompany: RUT, trackId: second.trackId })).estado).toBe("EPR");
    expect(sii.calls.filter((c) => c === "boleta-token").length).toBe(tokensBefore + 2);
  });

  it(
    "an envelope SII does not take (HTTP 400) is a network error to retry; a token signed by another certificate is " +
      "an auth error",
    async () => {
      const t = transport();
      const broken = Buffer.from(envelope.toString("latin1").replace("<NroResol>0</NroResol>", ""), "latin1");
      const refused = await t
        .upload(cert, { rutSender: "11111111-1", rutCompany: RUT, file: broken, fileName: "x.xml" })
        .catch((e) => e);
      expect([refused.constructor, refused.kind, refused.code, refused.message]).toEqual([
        SiiTransportError,
        "network",
        "400",
        "SII answered HTTP 400 (boleta upload)",
      ]);
      const error = await transport()
        .getToken(generateCertificate("Otro"))
        .catch((e) => e);
      expect([error.constructor, error.kind, error.code, error.message]).toEqual([
        SiiTransportError,
        "auth",
        "-07",
        "SII refused a token (ESTADO -07: Error Firma)",
      ]);
    },
  );

  it("SII down: a network error naming the host and the step", async () => {
    const t = transport(2000);
    await sii.down();
    try {
      const error = await t.getSeed().catch((e) => e);
      expect(error).toBeInstanceOf(SiiTransportError);
      expect(error.kind).toBe("network");
      expect(error.message).toMatch(
        new RegExp(`^cannot reach SII at ${sii.url} \\(boleta seed\\): (ECONNREFUSED|UND_ERR_SOCKET)$`),
      );
    } finally {
      await sii.up();
    }
    expect(await t.getSeed()).toMatch(/^\d{12}$/);
  });
});

describe("SII hosts from configuration", () => {
  it("default to SII's hosts; each one can be overridden (trailing slash dropped)", () => {
    expect(loadConfig({}).settings.sii).toEqual({
      certificationUrl: "https://maullin.sii.cl",
      productionUrl: "https://palena.sii.cl",
      boletaCertificationUrl: "https://apicert.sii.cl/recursos/v1",
      boletaCertificationUploadUrl: "https://pangal.sii.cl/recursos/v1",
      boletaProductionUrl: "https://api.sii.cl/recursos/v1",
      boletaProductionUploadUrl: "https://rahue.sii.cl/recursos/v1",
    });
    const sii = loadConfig({
      SII_BOLETA_CERTIFICATION_UPLOAD_URL: "http://127.0.0.1:9000/recursos/v1/",
      SII_CERTIFICATION_URL: "http://127.0.0.1:9000",
    }).settings.sii;
    expect([sii.boletaCertificationUploadUrl, sii.certificationUrl, sii.boletaCertificationUrl]).toEqual([
      "http://127.0.0.1:9000/recursos/v1",
      "http://127.0.0.1:9000",
      "https://apicert.sii.cl/recursos/v1",
    ]);
  });
});
