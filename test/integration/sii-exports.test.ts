/**
 * Export documents through the API for an organization enrolled with SII (docs/sii-dte.md "Export
 * documents"): a CL110 invoice in USD to a US customer with `fiscal_settings.export` is issued at
 * finalize as DTE 110 with the 110 CAF's folio; its stored XML validates against DTE_v10.xsd
 * (xmllint), its signature verifies (xmlsec1) and its TED verifies with that CAF's key; a CL112
 * credit note and a CL111 debit note reference the 110. Bad export settings are a 400 naming the key.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import {
  generateCaf,
  generatePkcs12,
  xmllintValidate,
  xmlsecVerify,
  type FakePkcs12,
} from "../helpers/sii-fixtures.js";
import { parseCaf, verifyTed } from "../../src/infra/taxagency/sii/index.js";

const RUT = "76042235-5";
let s: TestServer;
let certificate: FakePkcs12;
let customer: string;
const cafKeys = new Map<number, ReturnType<typeof parseCaf>>();
const certificateEncryptionKey = randomBytes(32);
const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);

async function checkedXml(localFile: string, type: number): Promise<string> {
  const res = await fetch(localFile, { headers: { authorization: `Bearer ${s.keys.acme}` } });
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  const schema = xmllintValidate(bytes);
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerify(bytes, certificate.certificatePem);
  expect(signature.ok, signature.output).toBe(true);
  const xml = bytes.toString("latin1");
  expect(xml).toContain('<TED version="1.0">');
  expect(verifyTed(xml, cafKeys.get(type)!.publicKey)).toBe(true);
  return xml;
}

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey } });
  const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
    body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 0, resolution_date: "2026-01-15" },
  });
  expect(profile.status).toBe(200);
  certificate = generatePkcs12({ rut: "12345678-5" });
  const cert = await s.rest("POST", "/v1/billers/built_in/certificates/", {
    body: { file: certificate.file.toString("base64"), password: certificate.password },
  });
  expect(cert.status).toBe(201);
  for (const type of [110, 111, 112]) {
    const caf = generateCaf({ rut: RUT, type, from: 1, to: 20, authorizedOn });
    cafKeys.set(type, parseCaf(caf.file));
    const res = await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const created = await s.rest("POST", "/v1/customers/", {
    body: { name: "Acme Corp.", country: "US", tax_id: "12-3456789", address: "1 Main St, Austin TX" },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  customer = created.body.id;
});
afterAll(async () => {
  await s?.close();
});

describe("export documents", () => {
  let invoice: { id: string; date: string; number: number };

  it("CL110 in USD: DTE 110 with Exportaciones, Aduana codes and OtraMoneda", async () => {
    const draft = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        document: "CL110",
        fiscal_settings: {
          export: {
            sale_clause: "FOB",
            transport: "sea",
            loading_port: "San Antonio",
            unloading_port: "Long Beach",
            exchange_rate: "950.25",
          },
        },
        lines: [{ name: "Software license", quantity: 3, amount: "250.50" }],
      },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(201);
    const fin = await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`);
    expect(fin.status, JSON.stringify(fin.body)).toBe(200);
    expect(fin.body).toMatchObject({ number: 1, numbering: "sii_folio", total: 751.5 });
    expect(fin.body.local_file).toBe(`${s.url}/v1/files/${draft.body.id}_110_1.xml`);
    invoice = fin.body;
    const xml = await checkedXml(fin.body.local_file, 110);
    expect(xml).toContain('<Exportaciones ID="F1T110">');
    expect(xml).toContain("<FmaPagExp>1</FmaPagExp>");
    expect(xml).toContain("<RUTRecep>55555555-5</RUTRecep>");
    expect(xml).toContain("<Extranjero><NumId>12-3456789</NumId><Nacionalidad>225</Nacionalidad></Extranjero>");
    expect(xml).toContain(
      "<Aduana><CodModVenta>1</CodModVenta><CodClauVenta>5</CodClauVenta><TotClauVenta>751.5</TotClauVenta>" +
        "<CodViaTransp>1</CodViaTransp><CodPtoEmbarque>906</CodPtoEmbarque><CodPtoDesemb>175</CodPtoDesemb>" +
        "<CodPaisRecep>225</CodPaisRecep><CodPaisDestin>225</CodPaisDestin></Aduana>",
    );
    expect(xml).toContain(
      "<Totales><TpoMoneda>DOLAR USA</TpoMoneda><MntExe>751.5</MntExe><MntTotal>751.5</MntTotal></Totales>",
    );
    const pdf = await s.rest("GET", `/v1/invoices/${draft.body.id}/pdf/`);
    expect(pdf.status).toBe(200);
    // 751.50 x 950.25 = 714112.875 -> 714113
    expect(xml).toContain(
      "<OtraMoneda><TpoMoneda>PESO CL</TpoMoneda><TpoCambio>950.25</TpoCambio>" +
        "<MntExeOtrMnda>714113</MntExeOtrMnda><MntTotOtrMnda>714113</MntTotOtrMnda></OtraMoneda>",
    );
  });

  it("CL112 and CL111 reference the 110", async () => {
    for (const [document, type] of [
      ["CL112", 112],
      ["CL111", 111],
    ] as const) {
      const note = await s.rest("POST", "/v1/creditnotes/", {
        body: {
          invoice: invoice.id,
          document,
          note: "Ajuste de precio",
          lines: [{ name: "Ajuste", amount: "100.25" }],
        },
      });
      expect(note.status, JSON.stringify(note.body)).toBe(201);
      const fin = await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
      expect(fin.status, JSON.stringify(fin.body)).toBe(200);
      const xml = await checkedXml(fin.body.local_file, type);
      expect(xml).toContain(`<Exportaciones ID="F1T${type}">`);
      expect(xml).toContain(
        "<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>110</TpoDocRef><FolioRef>1</FolioRef>" +
          `<FchRef>${invoice.date}</FchRef><CodRef>3</CodRef><RazonRef>Ajuste de precio</RazonRef></Referencia>`,
      );
      expect(xml).toContain("<MntExe>100.25</MntExe><MntTotal>100.25</MntTotal>");
      // 100.25 x 950.25 = 95262.5625 -> 95263
      expect(xml).toContain("<MntTotOtrMnda>95263</MntTotOtrMnda>");
    }
  });

  it("bad export settings are a 400 naming the key", async () => {
    const res = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        document: "CL110",
        fiscal_settings: { export: { sale_clause: "XYZ", exchange_rate: "-1", colour: "red" } },
        lines: [{ name: "x", amount: 1 }],
      },
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error.fields).sort()).toEqual([
      "fiscal_settings.export.colour",
      "fiscal_settings.export.exchange_rate",
      "fiscal_settings.export.sale_clause",
    ]);
    expect(res.body.error.fields["fiscal_settings.export.exchange_rate"]).toEqual(["must be greater than 0"]);
  });

  it("packages and weights over GraphQL: the DTE's Aduana carries them; bad ones are a validation_error", async () => {
    const mutation = "mutation($input: InvoiceInput!) { createInvoice(input: $input) { id fiscalSettings } }";
    const exportSettings = {
      sale_clause: "CIF",
      gross_weight: "80.25",
      gross_weight_unit: "KN",
      net_weight: 75,
      net_weight_unit: "KN",
      total_packages: "2",
      packages: [{ type: "SACO", quantity: 2, marks: "AC-01" }],
      freight: "12.5",
      insurance: "1.75",
    };
    const created = await s.graphql(mutation, {
      input: {
        customer,
        document: "CL110",
        fiscalSettings: { export: exportSettings },
        lines: [{ name: "Seeds", quantity: "2", amount: "40.10" }],
      },
    });
    expect(created.body.errors).toBeUndefined();
    const id = created.body.data.createInvoice.id;
    expect(created.body.data.createInvoice.fiscalSettings).toEqual({ export: exportSettings });
    const fin = await s.rest("GET", `/v1/invoices/${id}/finalize/`);
    expect(fin.status, JSON.stringify(fin.body)).toBe(200);
    const xml = await checkedXml(fin.body.local_file, 110);
    expect(xml).toContain(
      "<Aduana><CodModVenta>1</CodModVenta><CodClauVenta>1</CodClauVenta><TotClauVenta>80.2</TotClauVenta>" +
        "<PesoBruto>80.25</PesoBruto><CodUnidPesoBruto>6</CodUnidPesoBruto>" +
        "<PesoNeto>75</PesoNeto><CodUnidPesoNeto>6</CodUnidPesoNeto><TotBultos>2</TotBultos>" +
        "<TipoBultos><CodTpoBultos>62</CodTpoBultos><CantBultos>2</CantBultos><Marcas>AC-01</Marcas></TipoBultos>" +
        "<MntFlete>12.5</MntFlete><MntSeguro>1.75</MntSeguro>" +
        "<CodPaisRecep>225</CodPaisRecep><CodPaisDestin>225</CodPaisDestin></Aduana>",
    );

    const bad = await s.graphql(mutation, {
      input: {
        customer,
        document: "CL110",
        fiscalSettings: {
          export: { gross_weight: "1.234", packages: [{ type: "BOX", quantity: 0 }], freight: "x" },
        },
        lines: [{ name: "x", amount: "1" }],
      },
    });
    expect(bad.body.errors[0].extensions.code).toBe("validation_error");
    expect(bad.body.errors[0].extensions.fields).toEqual({
      "fiscal_settings.export.gross_weight": ["must have at most 2 decimals"],
      "fiscal_settings.export.gross_weight_unit": ["is required with gross_weight"],
      "fiscal_settings.export.packages.0.type": [expect.stringMatching(/^unknown package type BOX; one of POLVO/)],
      "fiscal_settings.export.packages.0.quantity": ["must be a whole number greater than 0"],
      "fiscal_settings.export.freight": ["must be a decimal number"],
    });
  });
});
