/**
 * EnvioDTE and EnvioBOLETA (src/infra/taxagency/sii/envelope.ts; chile-dte.md 5.1). Every envelope
 * is checked with the two independent tools, in place (nothing cut out):
 *   xmllint --noout --schema schema/sii/EnvioDTE_v10.xsd|EnvioBOLETA_v11.xsd envio.xml
 *   xmlsec1 --verify … --node-xpath <the envelope Signature | the n-th DTE's Signature> envio.xml
 */
import { describe, it, expect, beforeAll } from "vitest";
import { join } from "node:path";
import { ValidationError } from "../../src/domain/errors.js";
import { buildEnvioBoleta, buildEnvioDte, SII_RUT, type Caratula } from "../../src/infra/taxagency/sii/envelope.js";
import {
  decodeIso88591,
  issueDte,
  parseCaf,
  verifyTed,
  type Caf,
  type DteInput,
  type SignedDte,
} from "../../src/infra/taxagency/sii/index.js";
import {
  SCHEMA_DIR,
  generateCaf,
  generateCertificate,
  xmllintValidate,
  type FakeCertificate,
} from "../helpers/sii-fixtures.js";
import { ENVELOPE_SIGNATURE, boletaDte, dteSignature, xmlsecVerifyNode } from "../helpers/sii-envelope.js";

const RUT = "76042235-5";
const ENVIO_DTE_XSD = join(SCHEMA_DIR, "EnvioDTE_v10.xsd");
const ENVIO_BOLETA_XSD = join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd");

const emitter: DteInput["emitter"] = {
  rut: RUT,
  businessName: "Compañía de Servicios Ñandú SpA",
  activity: "Desarrollo de software",
  activityCodes: [620200],
  address: "Teatinos 120",
  commune: "Santiago",
  city: "Santiago",
};
const receiver: DteInput["receiver"] = {
  rut: "77777777-7",
  name: "EMPRESA LTDA",
  activity: "COMPUTACION",
  address: "SAN DIEGO 2222",
  commune: "LA FLORIDA",
  city: "SANTIAGO",
};
const caratula: Caratula = {
  rutEmisor: "76.042.235-5",
  rutEnvia: "11.111.111-1",
  rutReceptor: SII_RUT,
  fchResol: "2014-08-22",
  nroResol: 0,
};

let cert: FakeCertificate;
const cafs = new Map<number, Caf>();
function cafFor(type: number): Caf {
  if (!cafs.has(type))
    cafs.set(type, parseCaf(generateCaf({ rut: RUT, type, from: 1, to: 100, authorizedOn: "2026-11-01" }).file));
  return cafs.get(type)!;
}
function dte(type: 33 | 34 | 61, folio: number, extra: Partial<DteInput> = {}): SignedDte {
  const input: DteInput = {
    type,
    folio,
    issueDate: "2026-11-20",
    emitter,
    receiver,
    lines: [{ name: "Plan mensual ñandú", quantity: 2, unitPrice: 50000 }],
    timestamp: "2026-11-20T09:33:20",
    ...extra,
  };
  return issueDte(input, cafFor(type), cert);
}

beforeAll(() => {
  cert = generateCertificate();
});

function count(xml: string, re: RegExp): number {
  return [...xml.matchAll(re)].length;
}

describe("buildEnvioDte", () => {
  it(
    "envelopes 33, 33, 34 and 61: Caratula with SubTotDTE per type, XSD-valid, envelope and every DTE signature " +
      "verify in place",
    () => {
      const docs = [
        dte(33, 1),
        dte(34, 1),
        dte(33, 2),
        dte(61, 1, { references: [{ type: 33, folio: 1, date: "2026-11-20", code: 1, reason: "Anula factura" }] }),
      ];
      const envio = buildEnvioDte({
        dtes: [docs[0].xml, docs[1].file, docs[2].xml, docs[3].xml],
        caratula,
        credentials: cert,
        timestamp: "2026-11-20T10:15:00",
      });

      expect(envio.subtotals).toEqual([
        { type: 33, count: 2 },
        { type: 34, count: 1 },
        { type: 61, count: 1 },
      ]);
      expect(envio.xml).toContain(
        '<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><SetDTE ID="SetDoc"><Caratula version="1.0"><RutEmisor>76042235-5</RutEmisor>' +
          "<RutEnvia>11111111-1</RutEnvia><RutReceptor>60803000-K</RutReceptor><FchResol>2014-08-22</FchResol>" +
          "<NroResol>0</NroResol>" +
          "<TmstFirmaEnv>2026-11-20T10:15:00</TmstFirmaEnv><SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>2</NroDTE>" +
          "</SubTotDTE>" +
          "<SubTotDTE><TpoDTE>34</TpoDTE><NroDTE>1</NroDTE></SubTotDTE><SubTotDTE><TpoDTE>61</TpoDTE>" +
          "<NroDTE>1</NroDTE>" +
          "</SubTotDTE></Caratula><DTE ",
      );
      expect(envio.xml).toMatch(
        new RegExp(
          String.raw`<\/SetDTE><Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#">[\s\S]*` +
            String.raw`<Reference URI="#SetDoc">[\s\S]*<\/Signature><\/EnvioDTE>$`,
        ),
      );
      expect(count(envio.xml, /<Signature /g)).toBe(5);

      // each DTE is embedded byte for byte (declaration removed), in the given order
      for (const d of docs) expect(envio.xml).toContain(d.xml.replace(/^<\?xml[^?]*\?>\s*/, ""));
      expect(envio.xml.indexOf('ID="F1T33"')).toBeLessThan(envio.xml.indexOf('ID="F1T34"'));
      // one byte per Latin-1 character (ñ = 0xF1)
      expect(envio.file.subarray(0, 44).toString("latin1")).toBe('<?xml version="1.0" encoding="ISO-8859-1"?>\n');
      expect(envio.file.includes(Buffer.from([0xf1]))).toBe(true);
      expect(envio.file.includes(Buffer.from("ñ", "utf8"))).toBe(false);

      const schema = xmllintValidate(envio.file, ENVIO_DTE_XSD);
      expect(schema.output).toContain("validates");
      expect(schema.ok).toBe(true);
      const outer = xmlsecVerifyNode(envio.file, cert.certificatePem, ENVELOPE_SIGNATURE);
      expect(outer.output).toMatch(/^OK/);
      for (let n = 1; n <= 4; n++) {
        const inner = xmlsecVerifyNode(envio.file, cert.certificatePem, dteSignature(n));
        expect(inner.output, `DTE ${n}`).toMatch(/^OK/);
        expect(inner.ok).toBe(true);
      }
      // the TEDs still verify inside the envelope
      const text = decodeIso88591(envio.file);
      const dtes = text.split("<DTE ").slice(1);
      expect(verifyTed(dtes[0], cafFor(33).publicKey)).toBe(true);
      expect(verifyTed(dtes[3], cafFor(61).publicKey)).toBe(true);
    },
  );

  it(
    "a changed amount inside breaks that DTE's and the envelope's signature but not the others'; another " +
      "certificate is not trusted",
    () => {
      const envio = buildEnvioDte({ dtes: [dte(33, 3).xml, dte(33, 4).xml], caratula, credentials: cert });
      expect(xmlsecVerifyNode(envio.file, cert.certificatePem, ENVELOPE_SIGNATURE).ok).toBe(true);
      const text = decodeIso88591(envio.file);
      const second = text.indexOf('<Documento ID="F4T33"');
      const tampered = Buffer.from(
        text.slice(0, second) +
          text.slice(second).replace("<MntTotal>119000</MntTotal>", "<MntTotal>119001</MntTotal>"),
        "latin1",
      );
      expect(tampered.equals(envio.file)).toBe(false);
      expect(xmlsecVerifyNode(tampered, cert.certificatePem, dteSignature(1)).ok).toBe(true);
      expect(xmlsecVerifyNode(tampered, cert.certificatePem, dteSignature(2)).ok).toBe(false);
      expect(xmlsecVerifyNode(tampered, cert.certificatePem, ENVELOPE_SIGNATURE).ok).toBe(false);
      expect(xmlsecVerifyNode(envio.file, generateCertificate("Otro").certificatePem, ENVELOPE_SIGNATURE).ok).toBe(
        false,
      );
    },
  );

  it(
    "refuses boletas, another issuer's DTE, unsigned DTEs, a DTE without the SiiDte namespace and a bad Caratula, " +
      "naming the field",
    () => {
      const signed = dte(33, 5).xml;
      const attempt = (input: Partial<Parameters<typeof buildEnvioDte>[0]>) => {
        try {
          buildEnvioDte({ dtes: [signed], caratula, credentials: cert, ...input });
        } catch (e) {
          expect(e).toBeInstanceOf(ValidationError);
          return { message: (e as ValidationError).message };
        }
        throw new Error("accepted");
      };
      const boleta = boletaDte({
        type: 39,
        folio: 1,
        rut: RUT,
        total: 11900,
        item: "Café",
        caf: parseCaf(generateCaf({ rut: RUT, type: 39, authorizedOn: "2026-11-01" }).file),
        credentials: cert,
      });
      expect(JSON.stringify(attempt({ dtes: [signed, boleta] }))).toContain("dtes.1");
      expect(JSON.stringify(attempt({ caratula: { ...caratula, rutEmisor: "77777777-7" } }))).toContain(
        "not by the envelope's RutEmisor 77777777-7",
      );
      expect(JSON.stringify(attempt({ dtes: [signed.replace(/<Signature [\s\S]*<\/Signature>/, "")] }))).toContain(
        "not signed",
      );
      expect(JSON.stringify(attempt({ dtes: [signed.replace(' xmlns="http://www.sii.cl/SiiDte"', "")] }))).toContain(
        "must declare xmlns",
      );
      expect(JSON.stringify(attempt({ caratula: { ...caratula, rutEnvia: "11111111-2" } }))).toContain(
        "caratula.rutEnvia",
      );
      expect(JSON.stringify(attempt({ caratula: { ...caratula, fchResol: "2014-02-30" } }))).toContain(
        "caratula.fchResol",
      );
      expect(JSON.stringify(attempt({ dtes: [] }))).toContain("1 to 2000");
    },
  );
});

describe("buildEnvioBoleta", () => {
  it("envelopes boletas 39 and 41: XSD-valid (EnvioBOLETA_v11), envelope and DTE signatures verify", () => {
    const caf39 = parseCaf(generateCaf({ rut: RUT, type: 39, authorizedOn: "2026-11-01" }).file);
    const caf41 = parseCaf(generateCaf({ rut: RUT, type: 41, authorizedOn: "2026-11-01" }).file);
    const boletas = [
      boletaDte({ type: 39, folio: 1, rut: RUT, total: 11900, item: "Café", caf: caf39, credentials: cert }),
      boletaDte({ type: 41, folio: 1, rut: RUT, total: 5000, item: "Curso", caf: caf41, credentials: cert }),
      boletaDte({ type: 39, folio: 2, rut: RUT, total: 2380, item: "Té", caf: caf39, credentials: cert }),
    ];
    const envio = buildEnvioBoleta({ dtes: boletas, caratula, credentials: cert, timestamp: "2026-11-20T10:15:00" });
    expect(envio.subtotals).toEqual([
      { type: 39, count: 2 },
      { type: 41, count: 1 },
    ]);
    expect(envio.xml).toContain('<EnvioBOLETA xmlns="http://www.sii.cl/SiiDte" version="1.0"><SetDTE ID="SetDoc">');
    expect(envio.xml).toContain(
      "<SubTotDTE><TpoDTE>39</TpoDTE><NroDTE>2</NroDTE></SubTotDTE><SubTotDTE><TpoDTE>41</TpoDTE><NroDTE>1</NroDTE>" +
        "</SubTotDTE>",
    );
    const schema = xmllintValidate(envio.file, ENVIO_BOLETA_XSD);
    expect(schema.output).toContain("validates");
    expect(schema.ok).toBe(true);
    expect(xmlsecVerifyNode(envio.file, cert.certificatePem, ENVELOPE_SIGNATURE).output).toMatch(/^OK/);
    for (let n = 1; n <= 3; n++)
      expect(xmlsecVerifyNode(envio.file, cert.certificatePem, dteSignature(n)).output, `boleta ${n}`).toMatch(/^OK/);
    // an invoice does not go in an EnvioBOLETA
    expect(() => buildEnvioBoleta({ dtes: [dte(33, 6).xml], caratula, credentials: cert })).toThrow(ValidationError);
  });
});
