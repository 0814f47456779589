/**
 * Export DTEs 110, 111 and 112 (docs/sii-dte.md "Export documents"; src/infra/taxagency/sii/dte.ts,
 * codes from src/domain/sii-exports.ts): written as `Exportaciones`, exempt, in the document's
 * currency with SII's currency name, the customs codes in `Transporte/Aduana`, the peso equivalent
 * in `OtraMoneda`. Each file is checked like test/sii/dte.test.ts: xmllint against DTE_v10.xsd,
 * xmlsec1 with the certificate, and the TED's FRMT with the CAF of its type.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  decodeIso88591,
  dteExport,
  issueDte,
  parseCaf,
  verifyTed,
  type Caf,
  type DteInput,
} from "../../src/infra/taxagency/sii/index.js";
import {
  generateCaf,
  generateCertificate,
  xmllintValidate,
  xmlsecVerify,
  type FakeCertificate,
} from "../helpers/sii-fixtures.js";

const RUT = "76042235-5";
const USD = { id: "USD", rounded: false, decimals: 2 };
let cert: FakeCertificate;
const cafs = new Map<number, Caf>();
const cafFor = (type: number) => {
  if (!cafs.has(type))
    cafs.set(type, parseCaf(generateCaf({ rut: RUT, type, from: 1, to: 50, authorizedOn: "2026-11-01" }).file));
  return cafs.get(type)!;
};

beforeAll(() => {
  cert = generateCertificate();
});

const exportData: NonNullable<DteInput["export"]> = {
  currency: USD,
  currencyName: "DOLAR USA",
  exchangeRate: "950.25",
  paymentForm: 1,
  saleModality: 1,
  saleClause: 5,
  transportWay: 1,
  loadingPort: 906,
  unloadingPort: 174,
  receiverCountry: 225,
  destinationCountry: 225,
  foreignId: "12-3456789",
  nationality: 225,
};

function input(type: DteInput["type"], extra: Partial<DteInput> = {}): DteInput {
  return {
    type,
    folio: 7,
    issueDate: "2026-11-20",
    emitter: {
      rut: RUT,
      businessName: "Compañía de Servicios Ñandú SpA",
      activity: "Desarrollo de software",
      activityCodes: [620200],
      commune: "Santiago",
    },
    receiver: { rut: "55555555-5", name: "Acme Corp.", address: "1 Main St, Austin TX", city: "Austin" },
    lines: [
      { name: "Software license", quantity: 3, unitPrice: "250.50" },
      { name: "Support hours", quantity: "10.5", unitPrice: "45.2" },
    ],
    export: exportData,
    timestamp: "2026-11-20T09:33:20",
    ...extra,
  };
}

function issueAndCheck(dte: DteInput) {
  const caf = cafFor(dte.type);
  const signed = issueDte(dte, caf, cert);
  const schema = xmllintValidate(signed.file);
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerify(signed.file, cert.certificatePem);
  expect(signature.ok, signature.output).toBe(true);
  expect(verifyTed(decodeIso88591(signed.file), caf.publicKey)).toBe(true);
  // another type's CAF does not verify this TED
  expect(verifyTed(decodeIso88591(signed.file), cafFor(33).publicKey)).toBe(false);
  return signed;
}

describe("export documents", () => {
  it("110: Exportaciones in DOLAR USA, exempt lines, Aduana codes and OtraMoneda in PESO CL", () => {
    const dte = issueAndCheck(input(110));
    expect(dte.id).toBe("F7T110");
    const xml = dte.xml;
    expect(xml).toContain('<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Exportaciones ID="F7T110">');
    expect(xml).toContain(
      "<IdDoc><TipoDTE>110</TipoDTE><Folio>7</Folio><FchEmis>2026-11-20</FchEmis><FmaPagExp>1</FmaPagExp></IdDoc>",
    );
    expect(xml).toContain(
      "<RznSocRecep>Acme " +
        "Corp.</RznSocRecep><Extranjero><NumId>12-3456789</NumId><Nacionalidad>225</Nacionalidad></Extranjero>",
    );
    // 3 x 250.50 = 751.50; 10.5 x 45.2 = 474.60; total 1226.10
    expect(xml).toContain(
      "<Transporte><Aduana><CodModVenta>1</CodModVenta><CodClauVenta>5</CodClauVenta>" +
        "<TotClauVenta>1226.1</TotClauVenta>" +
        "<CodViaTransp>1</CodViaTransp><CodPtoEmbarque>906</CodPtoEmbarque><CodPtoDesemb>174</CodPtoDesemb>" +
        "<CodPaisRecep>225</CodPaisRecep><CodPaisDestin>225</CodPaisDestin></Aduana></Transporte>",
    );
    expect(xml).toContain(
      "<Totales><TpoMoneda>DOLAR USA</TpoMoneda><MntExe>1226.1</MntExe><MntTotal>1226.1</MntTotal></Totales>",
    );
    // 1226.10 x 950.25 = 1165101.525 -> 1165102 pesos
    expect(xml).toContain(
      "<OtraMoneda><TpoMoneda>PESO CL</TpoMoneda><TpoCambio>950.25</TpoCambio>" +
        "<MntExeOtrMnda>1165102</MntExeOtrMnda><MntTotOtrMnda>1165102</MntTotOtrMnda></OtraMoneda>",
    );
    expect(xml).toContain(
      "<Detalle><NroLinDet>1</NroLinDet><IndExe>1</IndExe><NmbItem>Software " +
        "license</NmbItem><QtyItem>3</QtyItem><PrcItem>250.5</PrcItem><MontoItem>751.5</MontoItem></Detalle>",
    );
    expect(xml).toContain('<TED version="1.0"><DD><RE>76042235-5</RE><TD>110</TD><F>7</F>');
    expect(xml).toContain("<MNT>1226.1</MNT>");
    expect(xml).not.toContain("<IVA>");
    expect(dte.totals.total.toFixed()).toBe("1226.1");
  });

  it("110 with packages and weights: Aduana's elements in DTE_v10.xsd's order", () => {
    const dte = issueAndCheck(
      input(110, {
        folio: 9,
        export: {
          ...exportData,
          tare: "150",
          tareUnit: 6,
          grossWeight: "1250.5",
          grossWeightUnit: 6,
          netWeight: "1100",
          netWeightUnit: 6,
          totalItems: "2",
          totalPackages: "3",
          packages: [
            {
              type: 22,
              quantity: "2",
              marks: "ACME-1/2",
              containerId: "MSCU1234567",
              seal: "SL-998",
              sealIssuer: "Aduana",
            },
            { type: 80, quantity: "1" },
          ],
          freight: "120.5",
          insurance: "15.1234",
        },
      }),
    );
    expect(dte.xml).toContain(
      "<Transporte><Aduana><CodModVenta>1</CodModVenta><CodClauVenta>5</CodClauVenta>" +
        "<TotClauVenta>1226.1</TotClauVenta><CodViaTransp>1</CodViaTransp>" +
        "<CodPtoEmbarque>906</CodPtoEmbarque><CodPtoDesemb>174</CodPtoDesemb>" +
        "<Tara>150</Tara><CodUnidMedTara>6</CodUnidMedTara>" +
        "<PesoBruto>1250.5</PesoBruto><CodUnidPesoBruto>6</CodUnidPesoBruto>" +
        "<PesoNeto>1100</PesoNeto><CodUnidPesoNeto>6</CodUnidPesoNeto>" +
        "<TotItems>2</TotItems><TotBultos>3</TotBultos>" +
        "<TipoBultos><CodTpoBultos>22</CodTpoBultos><CantBultos>2</CantBultos><Marcas>ACME-1/2</Marcas>" +
        "<IdContainer>MSCU1234567</IdContainer><Sello>SL-998</Sello><EmisorSello>Aduana</EmisorSello></TipoBultos>" +
        "<TipoBultos><CodTpoBultos>80</CodTpoBultos><CantBultos>1</CantBultos></TipoBultos>" +
        "<MntFlete>120.5</MntFlete><MntSeguro>15.1234</MntSeguro>" +
        "<CodPaisRecep>225</CodPaisRecep><CodPaisDestin>225</CodPaisDestin></Aduana></Transporte>",
    );
    // what the printed representation reads back from the DTE
    expect(dteExport(dte.xml)).toMatchObject({
      currencyName: "DOLAR USA",
      exchangeRate: "950.25",
      pesoTotal: "1165102",
      paymentForm: 1,
      saleModality: 1,
      saleClause: 5,
      saleClauseTotal: "1226.1",
      loadingPort: 906,
      grossWeight: "1250.5",
      grossWeightUnit: 6,
      totalPackages: "3",
      packages: [
        {
          type: 22,
          quantity: "2",
          marks: "ACME-1/2",
          containerId: "MSCU1234567",
          seal: "SL-998",
          sealIssuer: "Aduana",
        },
        { type: 80, quantity: "1" },
      ],
      freight: "120.5",
      insurance: "15.1234",
      receiverCountry: 225,
      foreignId: "12-3456789",
      nationality: 225,
    });
    // a DTE that is no export has none
    expect(dteExport(issueDte(input(33, { folio: 10, export: undefined }), cafFor(33), cert).xml)).toBeNull();
  });

  it("refuses weights and counts the schema cannot hold", () => {
    const bad = (extra: Partial<NonNullable<DteInput["export"]>>) =>
      issueDte(input(110, { export: { ...exportData, ...extra } }), cafFor(110), cert);
    expect(() => bad({ grossWeight: "1.234" })).toThrow(/export.grossWeight/);
    expect(() => bad({ netWeight: "123456789" })).toThrow(/export.netWeight/);
    expect(() => bad({ tare: "1.5" })).toThrow(/export.tare/);
    expect(() => bad({ freight: "0" })).toThrow(/export.freight/);
    expect(() => bad({ packages: Array.from({ length: 11 }, () => ({ type: 22 })) })).toThrow(/export.packages/);
  });

  it("110 without optional data: no Aduana, no OtraMoneda, no Extranjero", () => {
    const dte = issueAndCheck(input(110, { folio: 8, export: { currency: USD, currencyName: "DOLAR USA" } }));
    expect(dte.xml).not.toContain("<Transporte>");
    expect(dte.xml).not.toContain("<OtraMoneda>");
    expect(dte.xml).not.toContain("<Extranjero>");
  });

  it("111 and 112 reference a 110 (TpoDocRef 110, CodRef)", () => {
    const reference = { type: 110, folio: 7, date: "2026-11-20", code: 3 as const, reason: "Ajuste de precio" };
    for (const type of [111, 112] as const) {
      const dte = issueAndCheck(
        input(type, {
          lines: [{ name: "Price adjustment", quantity: 1, unitPrice: "100.25" }],
          references: [reference],
        }),
      );
      expect(dte.xml).toContain(`<Exportaciones ID="F7T${type}">`);
      expect(dte.xml).toContain(
        "<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>110</TpoDocRef><FolioRef>7</FolioRef>" +
          "<FchRef>2026-11-20</FchRef><CodRef>3</CodRef><RazonRef>Ajuste de precio</RazonRef></Referencia>",
      );
      expect(dte.xml).toContain("<MntExe>100.25</MntExe><MntTotal>100.25</MntTotal>");
    }
  });

  it("refuses an export without its data, and export data on another type", () => {
    expect(() => issueDte(input(110, { export: undefined }), cafFor(110), cert)).toThrow(/export/);
    expect(() => issueDte({ ...input(33), export: exportData }, cafFor(33), cert)).toThrow(/export/);
  });
});
