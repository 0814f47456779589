/**
 * Receiving (src/infra/taxagency/sii/envelope.ts and responses.ts; docs/sii-receiving.md): SII's
 * example EnvioDTE is read and checked against EnvioDTE_v10.xsd (xmllint-wasm, in process), and
 * every answer we produce is checked with the two independent tools:
 *   xmllint --noout --schema schema/sii/RespuestaEnvioDTE_v10.xsd | EnvioRecibos_v10.xsd
 *   xmlsec1 --verify --enabled-key-data x509 --id-attr:ID ... --trusted-pem cert.pem [--node-xpath ...]
 */
import { describe, it, expect, beforeAll } from "vitest";
import { readFileSync } from "node:fs";
import {
  RECIBO_DECLARATION,
  buildEnvioRecibos,
  buildRecepcionDte,
  buildResultadoDte,
  parseEnvioDte,
  readEnvioDte,
  validateEnvioDte,
  type ReceivedEnvelope,
} from "../../src/infra/taxagency/sii/index.js";
import { generateCertificate, xmllintValidate, type FakeCertificate } from "../helpers/sii-fixtures.js";
import { ENVIO_DTE_XSD, ENVIO_RECIBOS_XSD, RESPUESTA_XSD, xmlsecVerifySignature } from "../helpers/sii-exchange.js";

const SAMPLE = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII.xml", import.meta.url));

let cert: FakeCertificate;
let other: FakeCertificate;
beforeAll(() => {
  cert = generateCertificate();
  other = generateCertificate("Otro Firmante");
});

function one(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}

const header = {
  responderRut: "77777777-7",
  recipientRut: "97975000-5",
  contactName: "Compras Ñuñoa",
  contactEmail: "dte@empresa.cl",
  signedAt: "2026-11-23T10:00:00",
};

describe("reading an EnvioDTE", () => {
  it("reads SII's example: one 33, folio 60, 97975000-5 to 77777777-7, 100000 + 19000 = 119000", async () => {
    expect(xmllintValidate(SAMPLE, ENVIO_DTE_XSD).ok).toBe(true);
    const envelope = await readEnvioDte(SAMPLE);
    expect(envelope).toMatchObject({
      setId: "SetDoc",
      issuerRut: "97975000-5",
      senderRut: "7880442-4",
      receiverRut: "60803000-K",
      signedAt: "2003-10-13T09:33:22",
    });
    expect(envelope.digest).toMatch(/^[A-Za-z0-9+/=]{28}$/);
    expect(envelope.documents).toHaveLength(1);
    const { xml, ...dte } = envelope.documents[0];
    expect(dte).toEqual({
      id: "F60T33",
      type: 33,
      folio: 60,
      issueDate: "2003-10-13",
      issuerRut: "97975000-5",
      issuerName: "RUT DE PRUEBA",
      receiverRut: "77777777-7",
      receiverName: "EMPRESA  LTDA",
      netAmount: "100000",
      exemptAmount: "0",
      tax: "19000",
      total: "119000",
    });
    expect(xml).toMatch(/^<DTE[^>]*version="1.0"/);
    expect(xml).toContain("<Folio>60</Folio>");
    expect(xml).toContain("<SignatureValue>");
  });

  it("accepts the example as a UTF-8 string too", async () => {
    const envelope = await readEnvioDte(SAMPLE.toString("latin1"));
    expect(envelope.documents[0].total).toBe("119000");
  });

  it("names the reason: malformed XML, not an EnvioDTE, schema error", async () => {
    await expect(readEnvioDte("<EnvioDTE><SetDTE>")).rejects.toMatchObject({
      code: "validation_error",
      fields: { xml: [expect.stringMatching(/^is not well-formed XML/)] },
    });
    await expect(readEnvioDte("<a><b></a>")).rejects.toMatchObject({
      fields: { xml: [expect.stringMatching(/^is not well-formed XML.*mismatch/)] },
    });
    await expect(readEnvioDte('<?xml version="1.0"?><Foo/>')).rejects.toMatchObject({
      fields: { xml: [expect.stringMatching(/EnvioDTE schema.*Foo/)] },
    });
    expect(() => parseEnvioDte('<?xml version="1.0"?><Foo/>')).toThrow(/must be an EnvioDTE/);
    const badFolio = Buffer.from(
      SAMPLE.toString("latin1").replace("<Folio>60</Folio>", "<Folio>sesenta</Folio>"),
      "latin1",
    );
    await expect(validateEnvioDte(badFolio)).rejects.toMatchObject({
      fields: { xml: [expect.stringMatching(/EnvioDTE schema.*Folio.*sesenta/)] },
    });
  });
});

describe("answers", () => {
  let envelope: ReceivedEnvelope;
  beforeAll(async () => {
    envelope = await readEnvioDte(SAMPLE);
  });
  const doc = () => ({ ...envelope.documents[0] });

  it("RecepcionDTE: schema-valid, signed over Resultado, the envelope and the DTE acknowledged", () => {
    const r = buildRecepcionDte(
      {
        header,
        responseId: 7,
        fileName: "F60T33-ejemplo-oficial-SII.xml",
        receivedAt: new Date("2026-11-23T13:00:00Z"),
        envelopeCode: 7,
        envelopeId: envelope.setId,
        digest: envelope.digest,
        envelopeIssuerRut: envelope.issuerRut,
        envelopeReceiverRut: envelope.receiverRut,
        status: 0,
        statusText: "Envío recibido conforme",
        documents: [{ ...doc(), status: 0, statusText: "DTE recibido" }],
      },
      cert,
    );
    const schema = xmllintValidate(r.file, RESPUESTA_XSD);
    expect(schema.output).toContain("validates");
    const sig = xmlsecVerifySignature(r.file, cert.certificatePem, ["Resultado"]);
    expect(sig.output).toMatch(/^OK/);
    expect(xmlsecVerifySignature(r.file, other.certificatePem, ["Resultado"]).ok).toBe(false);
    expect(r.file.subarray(0, 43).toString("latin1")).toBe('<?xml version="1.0" encoding="ISO-8859-1"?>');
    expect(r.file.includes(Buffer.from("Envío", "latin1"))).toBe(true);
    expect(one(r.xml, "FchRecep")).toBe("2026-11-23T10:00:00"); // Santiago summer time, UTC-3
    expect(one(r.xml, "EnvioDTEID")).toBe("SetDoc");
    expect(one(r.xml, "RutResponde")).toBe("77777777-7");
    expect(one(r.xml, "RutRecibe")).toBe("97975000-5");
    expect(one(r.xml, "MntTotal")).toBe("119000");
    expect(one(r.xml, "EstadoRecepEnv")).toBe("0");
    expect(one(r.xml, "NroDTE")).toBe("1");
    // a changed amount breaks the signature
    const tampered = Buffer.from(r.file.toString("latin1").replace("<MntTotal>119000<", "<MntTotal>119001<"), "latin1");
    expect(xmlsecVerifySignature(tampered, cert.certificatePem, ["Resultado"]).ok).toBe(false);
  });

  it("ResultadoDTE: accepted and rejected documents, schema-valid and signed", () => {
    const r = buildResultadoDte(
      {
        header,
        responseId: 8,
        envelopeCode: 7,
        documents: [
          { ...doc(), status: 0, statusText: "ACD: acepta contenido del documento" },
          { ...doc(), folio: 61, status: 2, statusText: "RCD: reclamo al contenido", reasonCode: -1 },
        ],
      },
      cert,
    );
    expect(xmllintValidate(r.file, RESPUESTA_XSD).output).toContain("validates");
    expect(xmlsecVerifySignature(r.file, cert.certificatePem, ["Resultado"]).output).toMatch(/^OK/);
    expect(one(r.xml, "NroDetalles")).toBe("2");
    expect([...r.xml.matchAll(/<EstadoDTE>(\d)<\/EstadoDTE>/g)].map((m) => m[1])).toEqual(["0", "2"]);
    expect(one(r.xml, "CodRchDsc")).toBe("-1");
    expect(one(r.xml, "CodEnvio")).toBe("7");
  });

  it("EnvioRecibos: each Recibo and the SetRecibos signed, schema-valid, the fixed Declaracion", () => {
    const r = buildEnvioRecibos(
      {
        header,
        place: "Bodega San Diego 2222, La Florida",
        signerRut: "7880442-4",
        documents: [doc(), { ...doc(), folio: 61 }],
      },
      cert,
    );
    expect(xmllintValidate(r.file, ENVIO_RECIBOS_XSD).output).toContain("validates");
    // the set's signature (last child of EnvioRecibos) and each receipt's
    const ids = ["SetRecibos", "DocumentoRecibo"];
    expect(xmlsecVerifySignature(r.file, cert.certificatePem, ids, "/*/*[local-name()='Signature']").output).toMatch(
      /^OK/,
    );
    for (const i of [1, 2]) {
      const res = xmlsecVerifySignature(
        r.file,
        cert.certificatePem,
        ids,
        `/*/*[local-name()='SetRecibos']/*[local-name()='Recibo'][${i}]/*[local-name()='Signature']`,
      );
      expect(res.output).toMatch(/^OK/);
    }
    expect(r.xml).toContain('<DocumentoRecibo ID="R33F60">');
    expect(r.xml).toContain('<DocumentoRecibo ID="R33F61">');
    expect(one(r.xml, "Declaracion")).toBe(RECIBO_DECLARATION);
    expect(one(r.xml, "TipoDoc")).toBe("33");
    expect(one(r.xml, "RutFirma")).toBe("7880442-4");
    expect(xmlsecVerifySignature(r.file, other.certificatePem, ids, "/*/*[local-name()='Signature']").ok).toBe(false);
    const tampered = Buffer.from(r.file.toString("latin1").replace("<Folio>61<", "<Folio>62<"), "latin1");
    expect(xmlsecVerifySignature(tampered, cert.certificatePem, ids, "/*/*[local-name()='Signature']").ok).toBe(false);
  });
});
