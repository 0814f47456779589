/**
 * The SII transport (src/infra/taxagency/sii/transport.ts) against the fake SII of
 * test/helpers/fake-sii.ts: seed, token (the signed seed is checked with xmlsec1 by the fake),
 * upload (the envelope is checked with xmllint by the fake), envelope status and one DTE's
 * record (QueryEstDte); a refused connection,
 * an HTTP 500 and an expired token.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { join } from "node:path";
import { buildEnvioDte, SII_RUT } from "../../src/infra/taxagency/sii/envelope.js";
import { issueDte, parseCaf, type DteInput } from "../../src/infra/taxagency/sii/index.js";
import { SiiTransport, SiiTransportError, signSeed } from "../../src/infra/taxagency/sii/transport.js";
import { SCHEMA_DIR, generateCaf, generateCertificate, type FakeCertificate } from "../helpers/sii-fixtures.js";
import { FakeSii, countsOf, startFakeSii } from "../helpers/fake-sii.js";
import { xmlsecVerifyNode } from "../helpers/sii-envelope.js";

const RUT = "76042235-5";
let cert: FakeCertificate;
let sii: FakeSii;
let envelope: Buffer;

beforeAll(async () => {
  cert = generateCertificate();
  sii = await startFakeSii({
    trustedCertificatePem: cert.certificatePem,
    schema: join(SCHEMA_DIR, "EnvioDTE_v10.xsd"),
  });
  const caf = parseCaf(generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" }).file);
  const input: DteInput = {
    type: 33,
    folio: 7,
    issueDate: "2026-11-20",
    emitter: {
      rut: RUT,
      businessName: "Ñandú SpA",
      activity: "Software",
      activityCodes: [620200],
      address: "Teatinos 120",
      commune: "Santiago",
    },
    receiver: {
      rut: "77777777-7",
      name: "EMPRESA LTDA",
      activity: "COMPUTACION",
      address: "SAN DIEGO 2222",
      commune: "LA FLORIDA",
    },
    lines: [{ name: "Plan", quantity: 1, unitPrice: 10000 }],
    timestamp: "2026-11-20T09:33:20",
  };
  envelope = buildEnvioDte({
    dtes: [issueDte(input, caf, cert).xml],
    caratula: { rutEmisor: RUT, rutEnvia: "11111111-1", rutReceptor: SII_RUT, fchResol: "2014-08-22", nroResol: 0 },
    credentials: cert,
  }).file;
});

afterAll(async () => {
  await sii.stop();
});

describe("SiiTransport", () => {
  it("signs the seed as an enveloped XMLDSig that xmlsec1 verifies", () => {
    const signed = signSeed("032455872018", cert);
    expect(signed).toMatch(
      new RegExp(
        String.raw`^<getToken><item><Semilla>032455872018<\/Semilla><\/item>` +
          String.raw`<Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#">`,
      ),
    );
    expect(signed).toContain('<Reference URI="">');
    expect(signed).toContain("enveloped-signature");
    expect(xmlsecVerifyNode(Buffer.from(signed), cert.certificatePem, "/*/*[local-name()='Signature']").output).toMatch(
      /^OK/,
    );
  });

  it("seed → token → upload → track id → status EPR with the counts per type", async () => {
    const transport = new SiiTransport({ baseUrl: sii.url });
    const receipt = await transport.upload(cert, {
      rutSender: "11.111.111-1",
      rutCompany: RUT,
      file: envelope,
      fileName: "EnvioDTE-33-7.xml",
    });
    expect(receipt.status).toBe("0");
    expect(receipt.trackId).toMatch(/^4\d{6}$/);
    const upload = sii.uploads.find((u) => u.trackId === receipt.trackId)!;
    expect([upload.rutSender, upload.dvSender, upload.rutCompany, upload.dvCompany, upload.fileName]).toEqual([
      "11111111",
      "1",
      "76042235",
      "5",
      "EnvioDTE-33-7.xml",
    ]);
    expect(upload.file.equals(envelope)).toBe(true);

    const status = await transport.status(cert, { rutCompany: RUT, trackId: receipt.trackId });
    expect(status).toEqual({
      trackId: receipt.trackId,
      estado: "EPR",
      glosa: "Envio Procesado",
      counts: [{ type: 33, reported: 1, accepted: 1, rejected: 0, objections: 0 }],
    });
    // one token for both calls
    expect(sii.calls.filter((c) => c === "token")).toHaveLength(1);
  });

  it("an envelope SII's schema refuses gets STATUS 7; a token SII forgot is renewed once", async () => {
    const transport = new SiiTransport({ baseUrl: sii.url });
    const broken = Buffer.from(envelope.toString("latin1").replace("<NroResol>0</NroResol>", ""), "latin1");
    expect(
      (await transport.upload(cert, { rutSender: "11111111-1", rutCompany: RUT, file: broken, fileName: "x.xml" }))
        .status,
    ).toBe("7");
    sii.expireTokens();
    const tokensBefore = sii.calls.filter((c) => c === "token").length;
    const receipt = await transport.upload(cert, {
      rutSender: "11111111-1",
      rutCompany: RUT,
      file: envelope,
      fileName: "x.xml",
    });
    expect(receipt.status).toBe("0");
    expect(sii.calls.filter((c) => c === "token").length).toBe(tokensBefore + 1);
    sii.expireTokens();
    sii.statusFor = (u) => ({
      estado: "RCH",
      glosa: "Rechazado por Error en Caratula",
      counts: countsOf(u.file, "all-rejected"),
    });
    expect((await transport.status(cert, { rutCompany: RUT, trackId: receipt.trackId })).estado).toBe("RCH");
  });

  it(
    "QueryEstDte: SII's record of one DTE (DOK when uploaded, FAU otherwise); an expired token is " + "renewed once",
    async () => {
      const transport = new SiiTransport({ baseUrl: sii.url });
      await transport.upload(cert, { rutSender: "11111111-1", rutCompany: RUT, file: envelope, fileName: "q.xml" });
      const query = {
        rutQuerier: "11111111-1",
        rutCompany: RUT,
        rutReceiver: "77777777-7",
        type: 33,
        issueDate: "2026-11-20",
        total: "11900",
      };
      expect(await transport.documentStatus(cert, { ...query, folio: 7 })).toEqual({
        estado: "DOK",
        glosa: "Documento Recibido por el SII. Datos Coinciden con los Registrados",
      });
      expect(sii.documentQueries.at(-1)).toMatchObject({
        RutConsultante: "11111111",
        RutCompania: "76042235",
        RutReceptor: "77777777",
        DvReceptor: "7",
        TipoDte: "33",
        FolioDte: "7",
        FechaEmisionDte: "20112026",
        MontoDte: "11900",
      });
      sii.expireTokens();
      const tokensBefore = sii.calls.filter((c) => c === "token").length;
      expect((await transport.documentStatus(cert, { ...query, folio: 8 })).estado).toBe("FAU");
      expect(sii.calls.filter((c) => c === "token").length).toBe(tokensBefore + 1);
    },
  );

  it("a token signed by another certificate is refused (auth error)", async () => {
    const transport = new SiiTransport({ baseUrl: sii.url });
    const other = generateCertificate("Otro");
    const error = await transport.getToken(other).catch((e) => e);
    expect(error).toBeInstanceOf(SiiTransportError);
    expect(error.kind).toBe("auth");
    expect(error.code).toBe("-07");
  });

  it("SII down: a network error naming the host; HTTP 500: a network error with the code", async () => {
    const transport = new SiiTransport({ baseUrl: sii.url, timeoutMs: 2000 });
    await sii.down();
    try {
      const error = await transport.getSeed().catch((e) => e);
      expect(error).toBeInstanceOf(SiiTransportError);
      expect(error.kind).toBe("network");
      // refused, or the pooled keep-alive socket the fake closed
      expect(error.message).toMatch(
        new RegExp(`^cannot reach SII at ${sii.url} \\(seed\\): (ECONNREFUSED|UND_ERR_SOCKET)$`),
      );
    } finally {
      await sii.up();
    }
    sii.failWith500 = true;
    try {
      const error = await transport.getSeed().catch((e) => e);
      expect([error.kind, error.code, error.message]).toEqual(["network", "500", "SII answered HTTP 500 (seed)"]);
    } finally {
      sii.failWith500 = false;
    }
    expect(await transport.getSeed()).toMatch(/^\d{12}$/);
  });
});
