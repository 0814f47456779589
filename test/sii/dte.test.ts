/**
 * DTE XML, TED, signature and encoding (src/infra/taxagency/sii/; chile-dte.md section 2).
 * Every produced file is checked with the two independent tools:
 *   xmllint --noout --schema schema/sii/DTE_v10.xsd dte.xml
 *   xmlsec1 --verify --enabled-key-data x509 --id-attr:ID http://www.sii.cl/SiiDte:Documento --trusted-pem cert.pem dte.xml
 * and its TED's FRMT with the CAF public key (node:crypto). Amounts are the worked examples of
 * docs/invoice-totals.md, so the XML totals are exactly computeDocumentTotals'.
 */
import { describe, it, expect, beforeAll } from "vitest";
import { readFileSync } from "node:fs";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { computeDocumentTotals } from "../../src/domain/totals.js";
import {
  buildDte,
  decodeIso88591,
  encodeIso88591,
  extractTed,
  issueDte,
  parseCaf,
  verifyTed,
  type Caf,
  type DteInput,
  type SignedDte,
} from "../../src/infra/taxagency/sii/index.js";
import {
  generateCaf,
  generateCertificate,
  xmllintValidate,
  xmlsecVerify,
  type FakeCertificate,
} from "../helpers/sii-fixtures.js";

const EMITTER_RUT = "76042235-5";
const CLP = { id: "CLP", rounded: true, decimals: 0 };

const emitter: DteInput["emitter"] = {
  rut: "76.042.235-5",
  businessName: "Compañía de Servicios Ñandú SpA",
  activity: "Desarrollo de software y asesorías informáticas",
  activityCodes: [620200, "620900"],
  address: "Teatinos 120, Piso 4",
  commune: "Santiago",
  city: "Santiago",
};
const receiver: DteInput["receiver"] = {
  rut: "77777777-7",
  name: "EMPRESA  LTDA",
  activity: "COMPUTACION",
  address: "SAN DIEGO 2222",
  commune: "LA FLORIDA",
  city: "SANTIAGO",
};

let cert: FakeCertificate;
const cafs = new Map<number, Caf>();
function cafFor(type: number): Caf {
  if (!cafs.has(type))
    cafs.set(
      type,
      parseCaf(generateCaf({ rut: EMITTER_RUT, type, from: 1, to: 500, authorizedOn: "2026-11-01" }).file),
    );
  return cafs.get(type)!;
}

beforeAll(() => {
  cert = generateCertificate();
});

function base(
  type: DteInput["type"],
  folio: number,
  lines: DteInput["lines"],
  extra: Partial<DteInput> = {},
): DteInput {
  return { type, folio, issueDate: "2026-11-20", emitter, receiver, lines, timestamp: "2026-11-20T09:33:20", ...extra };
}

/** Text of every `name` element (no attributes on the ones we read). */
function all(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, "g"))].map((m) => m[1]);
}
function one(xml: string, name: string): string | undefined {
  return all(xml, name)[0];
}

/** Issues the DTE and runs the three checks; returns it for element assertions. */
function issueAndCheck(input: DteInput): SignedDte {
  const caf = cafFor(input.type);
  const dte = issueDte(input, caf, cert);
  const schema = xmllintValidate(dte.file);
  expect(schema.output).toContain("validates");
  expect(schema.ok).toBe(true);
  const signature = xmlsecVerify(dte.file, cert.certificatePem);
  expect(signature.output).toMatch(/^OK/);
  expect(signature.ok).toBe(true);
  expect(verifyTed(decodeIso88591(dte.file), caf.publicKey)).toBe(true);
  // totals in the XML are computeDocumentTotals'
  expect(one(dte.xml, "MntTotal")).toBe(dte.totals.total.toFixed());
  // credit lines are printed as DscRcgGlobal, not Detalle
  expect(all(dte.xml, "MontoItem")).toEqual(
    dte.totals.lines.filter((l) => !l.total.isNegative()).map((l) => l.total.toFixed()),
  );
  return dte;
}

function totalsOf(xml: string) {
  return {
    MntNeto: one(xml, "MntNeto"),
    MntExe: one(xml, "MntExe"),
    TasaIVA: one(xml, "TasaIVA"),
    IVA: one(xml, "IVA"),
    MntTotal: one(xml, "MntTotal"),
  };
}

describe("factura 33", () => {
  it("reproduces SII's F60T33 example: lines, totals and TED fields", () => {
    const sample = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII.xml", import.meta.url), "latin1");
    const dte = issueAndCheck(
      base(33, 60, [
        { name: "Parlantes Multimedia 180W.", code: { type: "INT1", value: "011" }, quantity: 20, unitPrice: 4500 },
        { name: "Mouse Inalambrico PS/2", code: { type: "INT1", value: "0231" }, quantity: 1, unitPrice: 5000 },
        { name: "Caja de Diskettes 10 Unidades", code: { type: "INT1", value: "1515" }, quantity: 5, unitPrice: 1000 },
      ]),
    );
    expect(dte.id).toBe("F60T33");
    expect(dte.xml).toContain('<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="F60T33">');
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "100000",
      MntExe: undefined,
      TasaIVA: "19",
      IVA: "19000",
      MntTotal: "119000",
    });
    for (const name of [
      "MntNeto",
      "TasaIVA",
      "IVA",
      "MntTotal",
      "NmbItem",
      "QtyItem",
      "PrcItem",
      "MontoItem",
      "VlrCodigo",
      "RSR",
      "MNT",
      "IT1",
    ]) {
      expect(all(dte.xml, name), name).toEqual(all(sample, name));
    }
    const { dd } = extractTed(dte.xml);
    expect(dd).toMatch(
      new RegExp(
        String.raw`^<DD><RE>76042235-5<\/RE><TD>33<\/TD><F>60<\/F><FE>2026-11-20<\/FE><RR>77777777-7<\/RR>` +
          String.raw`<RSR>EMPRESA  LTDA<\/RSR><MNT>119000<\/MNT><IT1>Parlantes Multimedia 180W.<\/IT1>` +
          String.raw`<CAF version="1.0"><DA>`,
      ),
    );
    expect(dd).toMatch(/<\/CAF><TSTED>2026-11-20T09:33:20<\/TSTED><\/DD>$/);
    expect(dte.xml).toMatch(
      new RegExp(
        String.raw`<\/TED><TmstFirma>2026-11-20T09:33:20<\/TmstFirma><\/Documento>` +
          String.raw`<Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#">`,
      ),
    );
    expect(dte.xml.endsWith("</Signature></DTE>")).toBe(true);
  });

  it("line % discount (totals example 1): DescuentoPct, DescuentoMonto, IVA 465.5 -> 466", () => {
    const dte = issueAndCheck(
      base(33, 1, [
        { name: "Plan mensual", quantity: 2, unitPrice: 1000 },
        { name: "Soporte", quantity: 1, unitPrice: 500, discount: 10 },
      ]),
    );
    expect(all(dte.xml, "DescuentoPct")).toEqual(["10"]);
    expect(all(dte.xml, "DescuentoMonto")).toEqual(["50"]);
    expect(all(dte.xml, "MontoItem")).toEqual(["2000", "450"]);
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "2450",
      MntExe: undefined,
      TasaIVA: "19",
      IVA: "466",
      MntTotal: "2916",
    });
  });

  it("half case (example 3): IVA 446.5 -> 447", () => {
    const dte = issueAndCheck(base(33, 2, [{ name: "Servicio", quantity: 1, unitPrice: 2350 }]));
    expect(totalsOf(dte.xml)).toMatchObject({ MntNeto: "2350", IVA: "447", MntTotal: "2797" });
  });

  it("decimals (example 4): QtyItem 2.5, PrcItem 1234.5, 12.5 % off", () => {
    const dte = issueAndCheck(
      base(33, 3, [{ name: "Horas", quantity: "2.5", unitPrice: "1234.5", discount: "12.5", unit: "HORA" }]),
    );
    expect(one(dte.xml, "QtyItem")).toBe("2.5");
    expect(one(dte.xml, "UnmdItem")).toBe("HORA");
    expect(one(dte.xml, "PrcItem")).toBe("1234.5");
    expect(one(dte.xml, "DescuentoPct")).toBe("12.5");
    expect(one(dte.xml, "DescuentoMonto")).toBe("386");
    expect(totalsOf(dte.xml)).toMatchObject({ MntNeto: "2700", IVA: "513", MntTotal: "3213" });
  });

  it("document % discount (DscRcgGlobal) and an exempt line (example 7)", () => {
    const input = base(
      33,
      4,
      [
        { name: "Servicio afecto", quantity: 1, unitPrice: 10000 },
        { name: "Servicio exento", quantity: 1, unitPrice: 5000, exempt: true },
      ],
      { discount: { value: 10, scheme: "%", description: "Descuento cliente frecuente" } },
    );
    const dte = issueAndCheck(input);
    expect(dte.xml).toContain("<NroLinDet>2</NroLinDet><IndExe>1</IndExe><NmbItem>Servicio exento</NmbItem>");
    expect(dte.xml).toContain(
      "<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>D</TpoMov><GlosaDR>Descuento cliente frecuente</GlosaDR>" +
        "<TpoValor>%</TpoValor><ValorDR>10</ValorDR></DscRcgGlobal>",
    );
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "9000",
      MntExe: "5000",
      TasaIVA: "19",
      IVA: "1710",
      MntTotal: "15710",
    });
    const expected = computeDocumentTotals({
      lines: [
        { quantity: 1, amount: 10000 },
        { quantity: 1, amount: 5000, exempt: true },
      ],
      discount: 10,
      discountScheme: "%",
      taxPercent: 19,
      hasTaxes: true,
      pricesIncludeTax: false,
      currency: CLP,
    });
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: expected.amount.toFixed(),
      MntExe: expected.exempt.toFixed(),
      TasaIVA: "19",
      IVA: expected.tax.toFixed(),
      MntTotal: expected.total.toFixed(),
    });
  });

  it("$ discounts (example 8): DescuentoMonto without a percent, DscRcgGlobal TpoValor $", () => {
    const dte = issueAndCheck(
      base(33, 5, [{ name: "Licencias", quantity: 3, unitPrice: 1000, discount: 100, discountScheme: "$" }], {
        discount: { value: 400, scheme: "$" },
      }),
    );
    expect(dte.xml).toContain("<PrcItem>1000</PrcItem><DescuentoMonto>100</DescuentoMonto><MontoItem>2900</MontoItem>");
    expect(dte.xml).toContain("<TpoValor>$</TpoValor><ValorDR>400</ValorDR>");
    expect(totalsOf(dte.xml)).toMatchObject({ MntNeto: "2500", IVA: "475", MntTotal: "2975" });
  });

  it("keeps ñ and á through ISO-8859-1 and cuts long names (NmbItem 80, RSR and IT1 40)", () => {
    const longName = "Implementación de facturación electrónica año 2026 — módulo de guías, notas y acuses de recibo";
    const dte = issueAndCheck(
      base(33, 6, [{ name: longName, quantity: 1, unitPrice: 990 }], {
        receiver: { ...receiver, name: "Sociedad Comercializadora de Artículos de Montaña Ñuñoa Limitada" },
      }),
    );
    expect(dte.file.toString("latin1").startsWith('<?xml version="1.0" encoding="ISO-8859-1"?><DTE ')).toBe(true);
    expect(dte.file.includes(Buffer.from("Compañía", "latin1"))).toBe(true);
    expect(dte.file.includes(Buffer.from("Compañía", "utf8"))).toBe(false);
    const text = decodeIso88591(dte.file);
    expect(text).toContain("<RznSoc>Compañía de Servicios Ñandú SpA</RznSoc>");
    expect(one(text, "NmbItem")).toBe(
      "Implementación de facturación electrónica año 2026 - módulo de guías, notas y ac",
    );
    expect(one(text, "NmbItem")).toHaveLength(80);
    expect(one(text, "RznSocRecep")).toBe("Sociedad Comercializadora de Artículos de Montaña Ñuñoa Limitada");
    expect(one(text, "RSR")).toBe("Sociedad Comercializadora de Artículos d");
    expect(one(text, "IT1")).toBe("Implementación de facturación electrónic");
    expect(one(text, "RSR")).toHaveLength(40);
    expect(one(text, "IT1")).toHaveLength(40);
  });

  it("a changed amount breaks the signature; another CAF key does not verify the TED", () => {
    const dte = issueAndCheck(base(33, 7, [{ name: "Servicio", quantity: 1, unitPrice: 1000 }]));
    const tampered = Buffer.from(
      dte.file.toString("latin1").replace("<MntTotal>1190</MntTotal>", "<MntTotal>1191</MntTotal>"),
      "latin1",
    );
    expect(tampered.equals(dte.file)).toBe(false);
    expect(xmlsecVerify(tampered, cert.certificatePem).ok).toBe(false);
    expect(xmlsecVerify(dte.file, generateCertificate("Otro").certificatePem).ok).toBe(false);
    expect(verifyTed(dte.xml, generateKeyPairSync("rsa", { modulusLength: 512 }).publicKey)).toBe(false);
  });
});

describe("credit lines (proration credits) as DscRcgGlobal", () => {
  // docs/proration.md: 2 -> 3 seats of 15 000 on Nov 21 of a Nov 1 - Dec 1 period
  const lines: DteInput["lines"] = [
    { name: "Pro", quantity: 2, unitPrice: 15000 },
    { name: "Remaining time on 3 x Pro (Nov 21 - Dec 1)", quantity: 1, unitPrice: 10000 },
    { name: "Unused time on 2 x Pro (Nov 21 - Dec 1)", quantity: 1, unitPrice: -6667 },
  ];

  it("prints the credit as a discount amount and keeps the totals: 40 000 - 6 667 = 33 333 net, IVA 6 333", () => {
    const dte = issueAndCheck(base(33, 40, lines));
    expect(all(dte.xml, "NmbItem")).toEqual(["Pro", "Remaining time on 3 x Pro (Nov 21 - Dec 1)"]);
    expect(all(dte.xml, "NroLinDet")).toEqual(["1", "2"]);
    expect(dte.xml).toContain(
      "<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>D</TpoMov><GlosaDR>Unused time on 2 x Pro (Nov 21 - Dec " +
        "1)</GlosaDR><TpoValor>$</TpoValor><ValorDR>6667</ValorDR></DscRcgGlobal>",
    );
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "33333",
      MntExe: undefined,
      TasaIVA: "19",
      IVA: "6333",
      MntTotal: "39666",
    });
  });

  it("follows a credit with the document discount as an amount (10 % of 33 333 = 3 333)", () => {
    const dte = issueAndCheck(base(33, 41, lines, { discount: { value: 10, scheme: "%" } }));
    expect(all(dte.xml, "ValorDR")).toEqual(["6667", "3333"]);
    expect(all(dte.xml, "TpoValor")).toEqual(["$", "$"]);
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "30000",
      MntExe: undefined,
      TasaIVA: "19",
      IVA: "5700",
      MntTotal: "35700",
    });
  });

  it("marks an exempt credit IndExeDR and takes it from MntExe", () => {
    const dte = issueAndCheck(
      base(33, 42, [
        { name: "Pro", quantity: 1, unitPrice: 10000 },
        { name: "Curso", quantity: 1, unitPrice: 5000, exempt: true },
        { name: "Unused time on Curso", quantity: 1, unitPrice: -2000, exempt: true },
      ]),
    );
    expect(dte.xml).toContain("<ValorDR>2000</ValorDR><IndExeDR>1</IndExeDR></DscRcgGlobal>");
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "10000",
      MntExe: "3000",
      TasaIVA: "19",
      IVA: "1900",
      MntTotal: "14900",
    });
  });

  it("refuses a document of credits only", () => {
    expect(() => buildDte(base(33, 43, [{ name: "Unused time", quantity: 1, unitPrice: -100 }]), cafFor(33))).toThrow(
      /not a credit/,
    );
  });
});

describe("factura exenta 34", () => {
  it("every line exempt (example 12): MntExe only, IndExe 1 on each line", () => {
    const dte = issueAndCheck(
      base(34, 1, [
        { name: "Curso de capacitación", quantity: 2, unitPrice: 1500 },
        { name: "Material", quantity: 1, unitPrice: 1000, exempt: false },
      ]),
    );
    expect(all(dte.xml, "IndExe")).toEqual(["1", "1"]);
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: undefined,
      MntExe: "4000",
      TasaIVA: undefined,
      IVA: undefined,
      MntTotal: "4000",
    });
  });
});

describe("guía de despacho 52", () => {
  it("IndTraslado, TipoDespacho and Transporte", () => {
    const dte = issueAndCheck(
      base(52, 1, [{ name: "Notebook 14 pulgadas", quantity: 3, unitPrice: 450000 }], {
        shippingType: "1",
        dispatchType: 2,
        transport: {
          plate: "ABCD12-3X",
          carrierRut: "77879240-0",
          address: "Av. Providencia 1234, oficina 56",
          commune: "Providencia",
          city: "Santiago",
        },
      }),
    );
    expect(dte.xml).toContain(
      "<IdDoc><TipoDTE>52</TipoDTE><Folio>1</Folio><FchEmis>2026-11-20</FchEmis><TipoDespacho>2</TipoDespacho>" +
        "<IndTraslado>1</IndTraslado></IdDoc>",
    );
    expect(dte.xml).toContain(
      "<Transporte><Patente>ABCD12-3</Patente><RUTTrans>77879240-0</RUTTrans><DirDest>Av. Providencia 1234, oficina " +
        "56</DirDest><CmnaDest>Providencia</CmnaDest><CiudadDest>Santiago</CiudadDest></Transporte><Totales>",
    );
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: "1350000",
      MntExe: undefined,
      TasaIVA: "19",
      IVA: "256500",
      MntTotal: "1606500",
    });
  });

  it("an internal transfer (IndTraslado 5) without prices has zero totals", () => {
    const dte = issueAndCheck(
      base(52, 2, [{ name: "Repuestos a bodega sur", quantity: 10, unitPrice: 0 }], { shippingType: "5" }),
    );
    expect(dte.xml).not.toContain("<PrcItem>");
    expect(totalsOf(dte.xml)).toEqual({ MntNeto: "0", MntExe: undefined, TasaIVA: "19", IVA: "0", MntTotal: "0" });
  });

  it("requires IndTraslado; Transporte and IndTraslado are for 52 only", () => {
    const caf = cafFor(52);
    expect(() => buildDte(base(52, 3, [{ name: "x", quantity: 1, unitPrice: 1 }]), caf)).toThrow(
      /shippingType: is required on a 52/,
    );
    expect(() =>
      buildDte(base(33, 3, [{ name: "x", quantity: 1, unitPrice: 1 }], { shippingType: "1" }), cafFor(33)),
    ).toThrow(/only for type 52/);
  });
});

describe("notas 56 and 61", () => {
  it("debit note 56 with Referencia correcting amounts (CodRef 3)", () => {
    const dte = issueAndCheck(
      base(56, 1, [{ name: "Diferencia de precio factura 60", quantity: 1, unitPrice: 2000 }], {
        references: [{ type: 33, folio: 60, date: "2026-11-10", code: 3, reason: "Corrige monto del servicio" }],
      }),
    );
    expect(dte.xml).toContain(
      "<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>33</TpoDocRef><FolioRef>60</FolioRef>" +
        "<FchRef>2026-11-10</FchRef><CodRef>3</CodRef><RazonRef>Corrige monto del servicio</RazonRef></Referencia><TED",
    );
    expect(totalsOf(dte.xml)).toMatchObject({ MntNeto: "2000", IVA: "380", MntTotal: "2380" });
  });

  it("credit note 61 cancelling an invoice (CodRef 1), with a purchase-order reference too", () => {
    const dte = issueAndCheck(
      base(
        61,
        1,
        [
          { name: "Plan mensual", quantity: 2, unitPrice: 1000 },
          { name: "Soporte", quantity: 1, unitPrice: 500, discount: 10 },
        ],
        {
          references: [
            { type: 801, folio: "OC-2026-118", date: "2026-11-01" },
            { type: 33, folio: 60, date: "2026-11-10", code: 1, reason: "Anula factura" },
          ],
        },
      ),
    );
    expect(all(dte.xml, "TpoDocRef")).toEqual(["801", "33"]);
    expect(all(dte.xml, "NroLinRef")).toEqual(["1", "2"]);
    expect(all(dte.xml, "CodRef")).toEqual(["1"]);
    expect(totalsOf(dte.xml)).toMatchObject({ MntNeto: "2450", IVA: "466", MntTotal: "2916" });
  });

  it("a credit note of an exempt invoice is exempt", () => {
    const dte = issueAndCheck(
      base(61, 2, [{ name: "Curso", quantity: 1, unitPrice: 3000 }], {
        exemptDocument: true,
        references: [{ type: 34, folio: 1, date: "2026-11-10", code: 3, reason: "Corrige monto" }],
      }),
    );
    expect(totalsOf(dte.xml)).toEqual({
      MntNeto: undefined,
      MntExe: "3000",
      TasaIVA: undefined,
      IVA: undefined,
      MntTotal: "3000",
    });
  });

  it("requires a reference with CodRef", () => {
    expect(() => buildDte(base(61, 3, [{ name: "x", quantity: 1, unitPrice: 1 }]), cafFor(61))).toThrow(
      /needs a reference with a code/,
    );
  });
});

describe("input checks", () => {
  it("rejects a folio outside the CAF, a bad RUT and too many decimals", () => {
    expect(() => buildDte(base(33, 501, [{ name: "x", quantity: 1, unitPrice: 1 }]), cafFor(33))).toThrow(
      /outside the CAF range 1..500/,
    );
    expect(() => buildDte(base(33, 1, [{ name: "x", quantity: 1, unitPrice: 1 }]), cafFor(34))).toThrow(
      /for type 34, not 33/,
    );
    expect(() =>
      buildDte(
        base(33, 1, [{ name: "x", quantity: 1, unitPrice: 1 }], { receiver: { ...receiver, rut: "77777777-6" } }),
        cafFor(33),
      ),
    ).toThrow(/receiver.rut: is not a valid RUT/);
    expect(() => buildDte(base(33, 1, [{ name: "x", quantity: "0.0000001", unitPrice: 1 }]), cafFor(33))).toThrow(
      /lines.0.quantity: must have at most 6 decimals/,
    );
    expect(() => buildDte(base(33, 1, []), cafFor(33))).toThrow(/1 to 60 lines/);
  });
});

describe("SII's official example", () => {
  const sample = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII.xml", import.meta.url));

  it("its TED verifies the way ours are signed (flattened DD, ISO-8859-1, CAF RSAPK)", () => {
    const text = decodeIso88591(sample);
    const b64url = (s: string) => Buffer.from(s, "base64").toString("base64url");
    const key = createPublicKey({
      key: { kty: "RSA", n: b64url(one(text, "M")!), e: b64url(one(text, "E")!) },
      format: "jwk",
    });
    expect(verifyTed(text, key)).toBe(true);
  });

  it("validates against the copied EnvioDTE_v10.xsd (the schema set in schema/sii is complete)", () => {
    const r = xmllintValidate(sample, new URL("../../schema/sii/EnvioDTE_v10.xsd", import.meta.url).pathname);
    expect(r.ok).toBe(true);
  });
});

describe("encodeIso88591", () => {
  it("declares ISO-8859-1 and writes one byte per Latin-1 character", () => {
    expect(encodeIso88591("<a>ñ</a>").toString("latin1")).toBe('<?xml version="1.0" encoding="ISO-8859-1"?>\n<a>ñ</a>');
    expect(encodeIso88591('<?xml version="1.0" encoding="UTF-8"?><a>á</a>')).toEqual(
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>á</a>', "latin1"),
    );
    expect(encodeIso88591('<?xml version="1.0"?><a/>').toString("latin1")).toBe(
      '<?xml version="1.0" encoding="ISO-8859-1"?><a/>',
    );
  });

  it("writes characters outside Latin-1 as character references", () => {
    expect(encodeIso88591("<a>10 €</a>").toString("latin1")).toContain("<a>10 &#8364;</a>");
  });
});
