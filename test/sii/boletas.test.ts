/**
 * Boletas 39 and 41 (chile-dte.md section 1; EnvioBOLETA_v11.xsd `BOLETADefType`): line prices
 * include IVA and the net is derived from the total; exempt lines carry IndExe. Each boleta is
 * enveloped in an EnvioBOLETA (envelope.ts) and checked in place with the two independent tools:
 *   xmllint --noout --schema schema/sii/EnvioBOLETA_v11.xsd envio.xml
 *   xmlsec1 --verify ... --node-xpath <the boleta's Signature> envio.xml
 * and its TED with the CAF public key.
 */
import { describe, it, expect, beforeAll } from "vitest";
import { join } from "node:path";
import { buildEnvioBoleta, SII_RUT } from "../../src/infra/taxagency/sii/envelope.js";
import { FINAL_CONSUMER_RUT } from "../../src/infra/taxagency/sii/dte.js";
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
import { dteSignature, xmlsecVerifyNode } from "../helpers/sii-envelope.js";

const RUT = "76042235-5";
const emitter: DteInput["emitter"] = {
  rut: RUT,
  businessName: "Cafetería Ñandú SpA",
  activity: "Venta de café y capacitación",
  activityCodes: [561000],
  address: "Teatinos 120",
  commune: "Santiago",
  city: "Santiago",
};
const consumer: DteInput["receiver"] = { rut: FINAL_CONSUMER_RUT, name: "Consumidor final" };

let cert: FakeCertificate;
const cafs = new Map<number, Caf>();
function cafFor(type: number): Caf {
  if (!cafs.has(type))
    cafs.set(type, parseCaf(generateCaf({ rut: RUT, type, from: 1, to: 100, authorizedOn: "2026-11-01" }).file));
  return cafs.get(type)!;
}
beforeAll(() => {
  cert = generateCertificate();
});

const all = (xml: string, name: string) =>
  [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, "g"))].map((m) => m[1]);
const one = (xml: string, name: string) => all(xml, name)[0];

/** Issues the boleta, envelopes it, validates the envelope and verifies the boleta's signature and TED. */
function issueAndCheck(
  type: 39 | 41,
  folio: number,
  lines: DteInput["lines"],
  extra: Partial<DteInput> = {},
): SignedDte {
  const boleta = issueDte(
    {
      type,
      folio,
      issueDate: "2026-11-20",
      emitter,
      receiver: consumer,
      lines,
      timestamp: "2026-11-20T10:15:00",
      ...extra,
    },
    cafFor(type),
    cert,
  );
  const envio = buildEnvioBoleta({
    dtes: [boleta.xml],
    caratula: { rutEmisor: RUT, rutEnvia: "11111111-1", rutReceptor: SII_RUT, fchResol: "2014-08-22", nroResol: 80 },
    credentials: cert,
    timestamp: "2026-11-20T10:16:00",
  });
  const schema = xmllintValidate(envio.file, join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd"));
  expect(schema.output).toContain("validates");
  expect(schema.ok).toBe(true);
  const signature = xmlsecVerifyNode(envio.file, cert.certificatePem, dteSignature(1));
  expect(signature.output).toMatch(/^OK/);
  expect(verifyTed(decodeIso88591(boleta.file), cafFor(type).publicKey)).toBe(true);
  expect(all(boleta.xml, "MontoItem")).toEqual(boleta.totals.lines.map((l) => l.total.toFixed()));
  return boleta;
}

describe("boleta 39 (prices include IVA)", () => {
  it("derives net and IVA from the gross total: 2 x 1 990 + 1 x 3 500 = 7 480 -> net 6 286, IVA 1 194", () => {
    const b = issueAndCheck(39, 1, [
      { name: "Café cortado", quantity: 2, unitPrice: 1990 },
      { name: "Sándwich de palta", quantity: 1, unitPrice: 3500 },
    ]);
    // 7480 / 1.19 = 6285.71 -> 6286 (half away from zero); IVA = 7480 - 6286 = 1194
    expect([one(b.xml, "MntNeto"), one(b.xml, "IVA"), one(b.xml, "MntTotal"), one(b.xml, "TasaIVA")]).toEqual([
      "6286",
      "1194",
      "7480",
      undefined,
    ]);
    expect(all(b.xml, "PrcItem")).toEqual(["1990", "3500"]);
    expect(all(b.xml, "MontoItem")).toEqual(["3980", "3500"]);
    expect(b.xml).toContain(
      "<IdDoc><TipoDTE>39</TipoDTE><Folio>1</Folio><FchEmis>2026-11-20</FchEmis><IndServicio>3</IndServicio></IdDoc>",
    );
    expect(b.xml).toContain(
      "<Emisor><RUTEmisor>76042235-5</RUTEmisor><RznSocEmisor>Cafetería Ñandú SpA</RznSocEmisor><GiroEmisor>",
    );
    expect(b.xml).not.toContain("<Acteco>");
    expect(b.xml).toContain(
      "<Receptor><RUTRecep>66666666-6</RUTRecep><RznSocRecep>Consumidor final</RznSocRecep></Receptor>",
    );
    expect(b.xml).toMatch(
      new RegExp(
        String.raw`<DD><RE>76042235-5<\/RE><TD>39<\/TD><F>1<\/F><FE>2026-11-20<\/FE><RR>66666666-6<\/RR>` +
          String.raw`<RSR>Consumidor final<\/RSR><MNT>7480<\/MNT><IT1>Café cortado<\/IT1>`,
      ),
    );
  });

  it("mixes an exempt line (IndExe): the exempt part stays out of the net, 11 900 taxable + 5 000 exempt", () => {
    const b = issueAndCheck(39, 2, [
      { name: "Taza de cerámica", quantity: 1, unitPrice: 11900 },
      { name: "Entrada a charla", quantity: 1, unitPrice: 5000, exempt: true },
    ]);
    expect([one(b.xml, "MntNeto"), one(b.xml, "MntExe"), one(b.xml, "IVA"), one(b.xml, "MntTotal")]).toEqual([
      "10000",
      "5000",
      "1900",
      "16900",
    ]);
    expect(b.xml).toContain("<Detalle><NroLinDet>2</NroLinDet><IndExe>1</IndExe><NmbItem>Entrada a charla</NmbItem>");
  });

  it("a global % discount on the gross taxable amount: 10 000 - 10 % = 9 000 -> net 7 563, IVA 1 437", () => {
    const b = issueAndCheck(39, 3, [{ name: "Granos de café 1 kg", quantity: 1, unitPrice: 10000 }], {
      discount: { value: 10, scheme: "%" },
    });
    expect([one(b.xml, "MntNeto"), one(b.xml, "IVA"), one(b.xml, "MntTotal")]).toEqual(["7563", "1437", "9000"]);
    expect(b.xml).toContain(
      "<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>D</TpoMov><TpoValor>%</TpoValor><ValorDR>10</ValorDR>" +
        "</DscRcgGlobal>",
    );
  });

  it("takes IndServicio 1 (periodic services) and refuses it on a factura", () => {
    const b = issueAndCheck(39, 4, [{ name: "Suscripción mensual", quantity: 1, unitPrice: 5990 }], {
      serviceIndicator: 1,
    });
    expect(one(b.xml, "IndServicio")).toBe("1");
    expect(() =>
      issueDte(
        {
          type: 33,
          folio: 1,
          issueDate: "2026-11-20",
          emitter,
          receiver: { rut: "77777777-7", name: "Empresa" },
          lines: [{ name: "x", quantity: 1, unitPrice: 1 }],
          timestamp: "2026-11-20T10:00:00",
          serviceIndicator: 1,
        },
        parseCaf(generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" }).file),
        cert,
      ),
    ).toThrow(/serviceIndicator/);
  });
});

describe("boleta 41 (exempt)", () => {
  it("puts every line in MntExe with no IVA: 3 x 15 000 = 45 000", () => {
    const b = issueAndCheck(41, 1, [{ name: "Curso de barismo", quantity: 3, unitPrice: 15000 }]);
    expect([one(b.xml, "MntNeto"), one(b.xml, "MntExe"), one(b.xml, "IVA"), one(b.xml, "MntTotal")]).toEqual([
      undefined,
      "45000",
      undefined,
      "45000",
    ]);
    expect(all(b.xml, "IndExe")).toEqual(["1"]);
  });
});
