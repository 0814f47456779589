/**
 * The printed representation of every DTE type the service issues (33, 34, 39, 41, 52, 56, 61),
 * read back as text (docs/sii-dte.md "The printed representation"): SII's Spanish labels, the
 * header box (R.U.T. with thousands dots, document name, N° folio, S.I.I. - office of the issuer's
 * comuna), the receiver's giro, address, comuna and city, dates dd-mm-yyyy, amounts with "."
 * thousands, the guía's transport, the notes' references; English when the organization's locale
 * says so. The receiver data (customers' activity, commune, city) go into the DTE (XSD-valid,
 * signature verified) from the issued snapshot; bad receiver data is a 400 that writes nothing.
 *
 * With PRINTED_PDF_DIR set, each PDF is also written there (for looking at the layout).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { buildEnvioBoleta, SII_RUT } from "../../src/infra/taxagency/sii/envelope.js";
import {
  SCHEMA_DIR,
  generateCaf,
  generatePkcs12,
  xmllintValidate,
  xmlsecVerify,
  type FakePkcs12,
} from "../helpers/sii-fixtures.js";
import { dteSignature, xmlsecVerifyNode } from "../helpers/sii-envelope.js";
import { runBilling } from "../../src/services/billing-run.js";

const RUT = "76042235-5";
let s: TestServer;
let certificate: FakePkcs12;
let customer: string;
const certificateEncryptionKey = randomBytes(32);
const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);
/** the issue date of the documents dated explicitly, and a due date 15 days later */
const issued = authorizedOn;
const due = new Date(Date.parse(`${issued}T00:00:00Z`) + 15 * 86400_000).toISOString().slice(0, 10);

/** `yyyy-mm-dd` as SII prints it, `dd-mm-yyyy` (written out here, not with the code under test). */
function dmy(iso: string): string {
  const [y, m, d] = iso.split("-");
  return `${d}-${m}-${y}`;
}

/** The customer as created below, and how its rows print. */
const RECEIVER = {
  name: "Cliente Ñandú SpA",
  address: "Los Aromos 55, depto. 3",
  activity: "Venta al por menor de artículos de ofic",
  commune: "nunoa",
  city: "Santiago",
  email: "pagos@cliente.cl",
};
const RECEIVER_ROWS = [
  `Señor(es): ${RECEIVER.name}`,
  "RUT: 76.042.235-5",
  `Giro: ${RECEIVER.activity}`,
  `Dirección: ${RECEIVER.address}`,
  "Comuna: Ñuñoa",
  "Ciudad: Santiago",
  `Correo: ${RECEIVER.email}`,
];
/** The header box of every issued document of the seeded issuer (Acme SpA, Providencia). */
const HEADER = ["R.U.T.: 76.042.235-5", "S.I.I. - PROVIDENCIA"];
const COLUMNS = ["Código", "Descripción", "Cantidad", "Precio unitario", "Descuento", "Valor"];

async function uploadCaf(type: number, from: number, to: number) {
  const caf = generateCaf({ rut: RUT, type, from, to, authorizedOn });
  const res = await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function fileOf(localFile: string): Promise<Buffer> {
  const res = await fetch(localFile, { headers: { authorization: `Bearer ${s.keys.acme}` } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** A DTE's file: XSD-valid (DTE_v10.xsd), its signature verified with xmlsec1; its text. */
async function checkedDte(localFile: string): Promise<string> {
  const bytes = await fileOf(localFile);
  const schema = xmllintValidate(bytes);
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerify(bytes, certificate.certificatePem);
  expect(signature.ok, signature.output).toBe(true);
  return bytes.toString("latin1");
}

/** A boleta's file: enveloped in an EnvioBOLETA that validates (its schema), its signature verified; its text. */
async function checkedBoleta(localFile: string): Promise<string> {
  const bytes = await fileOf(localFile);
  const xml = bytes.toString("latin1");
  const envio = buildEnvioBoleta({
    dtes: [xml],
    caratula: { rutEmisor: RUT, rutEnvia: "12345678-5", rutReceptor: SII_RUT, fchResol: "2026-01-15", nroResol: 0 },
    credentials: certificate,
    timestamp: "2026-11-20T10:00:00",
  });
  const schema = xmllintValidate(envio.file, join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd"));
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerifyNode(envio.file, certificate.certificatePem, dteSignature(1));
  expect(signature.ok, signature.output).toBe(true);
  return xml;
}

/** The text of a document's PDF, lines trimmed; the PDF is written to PRINTED_PDF_DIR when set. */
async function pdfLines(kind: "invoices" | "orders" | "creditnotes", id: string, name: string): Promise<string[]> {
  const res = await s.rest("GET", `/v1/${kind}/${id}/pdf/`);
  expect(res.status).toBe(200);
  const pdf = Buffer.from(res.body.file, "base64");
  const dir = process.env.PRINTED_PDF_DIR;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.pdf`), pdf);
  }
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  const text = await parser.getText();
  await parser.destroy();
  return text.pages[0].text.split("\n").map((l) => l.trim());
}

/** Every expected line is a line of the first page (exactly, after trimming). */
function expectLines(lines: string[], expected: string[]) {
  for (const line of expected) expect(lines, `${line}\n--- in ---\n${lines.join("\n")}`).toContain(line);
}

/** The text of element `name` in `xml` (first occurrence), or null. */
function element(xml: string, name: string): string | null {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? null;
}

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey } });
  const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
    body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 0, resolution_date: "2026-01-15" },
  });
  expect(profile.status, profile.text).toBe(200);
  certificate = generatePkcs12({ rut: "12345678-5" });
  expect(
    (
      await s.rest("POST", "/v1/billers/built_in/certificates/", {
        body: { file: certificate.file.toString("base64"), password: certificate.password },
      })
    ).status,
  ).toBe(201);
  for (const type of [33, 34, 39, 41, 52, 56, 61, 110, 112]) await uploadCaf(type, 1, 20);
  const created = await s.rest("POST", "/v1/customers/", { body: chileanCustomer(RECEIVER) });
  expect(created.status, created.text).toBe(201);
  customer = created.body.id;
});
afterAll(async () => {
  await s?.close();
});

describe("customers' receiver data", () => {
  it("activity, commune (a Chilean comuna, stored by its official name) and city over REST and GraphQL", async () => {
    const rest = await s.rest("GET", `/v1/customers/${customer}/`);
    expect(rest.body).toMatchObject({ activity: RECEIVER.activity, commune: "Ñuñoa", city: "Santiago" });
    const patched = await s.rest("POST", "/v1/customers/", {
      body: chileanCustomer({ commune: "LAS CONDES", city: null, activity: "" }),
    });
    expect(patched.status, patched.text).toBe(201);
    expect(patched.body).toMatchObject({ activity: null, commune: "Las Condes", city: null });
    const gql = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Customer { activity commune city } } }`, {
      id: customer,
    });
    expect(gql.body.data.node).toEqual({ activity: RECEIVER.activity, commune: "Ñuñoa", city: "Santiago" });
    // a customer abroad: the commune is free text
    const abroad = await s.rest("POST", "/v1/customers/", {
      body: { name: "Acme Inc.", country: "US", commune: "Brooklyn", city: "New York" },
    });
    expect(abroad.status, abroad.text).toBe(201);
    expect(abroad.body).toMatchObject({ commune: "Brooklyn", city: "New York" });
  });

  const count = () => s.database.prisma.customer.count();

  it.each([
    ["an unknown comuna", { commune: "Gotham" }, "commune"],
    ["an activity over 40 characters (SII's GiroRecep)", { activity: "x".repeat(41) }, "activity"],
    [
      "a city over 20 characters for a Chilean customer (SII's CiudadRecep)",
      { city: "Ciudad de más de veinte letras" },
      "city",
    ],
  ])("rejects %s with a 400 naming the field, writing nothing (REST and GraphQL)", async (_what, fields, field) => {
    const before = await count();
    const res = await s.rest("POST", "/v1/customers/", { body: chileanCustomer(fields) });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(Object.keys(res.body.error.fields)).toEqual([field]);
    const gql = await s.graphql(`mutation($input: CustomerInput!) { createCustomer(input: $input) { id } }`, {
      input: { name: "Cliente SpA", country: "CL", taxId: "76042235-5", ...fields },
    });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe("validation_error");
    expect(Object.keys(gql.body.errors[0].extensions.fields)).toEqual([field]);
    expect(await count()).toBe(before);
  });

  it(
    "an update to an unknown comuna, or a move to Chile with a commune that is none of Chile's, is a 400 and " +
      "changes nothing",
    async () => {
      const bad = await s.rest("PATCH", `/v1/customers/${customer}/`, { body: { commune: "Narnia" } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBeTruthy();
      expect(JSON.stringify(bad.body.error.fields.commune)).toContain("Narnia");
      expect((await s.database.prisma.customer.findUniqueOrThrow({ where: { id: customer } })).commune).toBe("Ñuñoa");
      const abroad = (
        await s.rest("POST", "/v1/customers/", { body: { name: "Acme Inc.", country: "US", commune: "Brooklyn" } })
      ).body.id;
      const moved = await s.rest("PATCH", `/v1/customers/${abroad}/`, { body: { country: "CL" } });
      expect(moved.status).toBe(400);
      expect(Object.keys(moved.body.error.fields)).toEqual(["commune"]);
      expect((await s.database.prisma.customer.findUniqueOrThrow({ where: { id: abroad } })).countryId).toBe("US");
    },
  );
});

describe("every DTE type prints as a Chilean document", () => {
  let invoice33: { id: string; number: number };

  it(
    "33 factura: SII's header and labels, the receiver's giro and comuna, dates dd-mm-yyyy, crédito; the DTE " +
      "carries the receiver from the snapshot",
    async () => {
      const draft = await s.rest("POST", "/v1/invoices/", {
        body: {
          customer,
          document: "CL33",
          date: issued,
          due_date: due,
          lines: [
            { name: "Consultoría", quantity: 2, amount: 1000 },
            { name: "Soporte", amount: 500, discount: 10 },
          ],
        },
      });
      expect(draft.status, draft.text).toBe(201);
      const done = await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`);
      expect(done.status, done.text).toBe(200);
      invoice33 = done.body;
      const xml = await checkedDte(done.body.local_file);
      expect(
        Object.fromEntries(
          ["GiroRecep", "CorreoRecep", "DirRecep", "CmnaRecep", "CiudadRecep"].map((n) => [n, element(xml, n)]),
        ),
      ).toEqual({
        GiroRecep: RECEIVER.activity,
        CorreoRecep: RECEIVER.email,
        DirRecep: RECEIVER.address,
        CmnaRecep: "Ñuñoa",
        CiudadRecep: "Santiago",
      });
      const snapshot = (await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: draft.body.id } }))
        .customerSnapshot;
      expect(snapshot).toMatchObject({ activity: RECEIVER.activity, commune: "Ñuñoa", city: "Santiago" });

      const lines = await pdfLines("invoices", draft.body.id, "33");
      expectLines(lines, [
        ...HEADER,
        "FACTURA ELECTRÓNICA",
        `N° ${done.body.number}`,
        ...RECEIVER_ROWS,
        `Fecha de emisión: ${dmy(issued)}`,
        `Fecha de vencimiento: ${dmy(due)}`,
        "Condición de venta: Crédito",
        "Moneda: CLP (Peso chileno)",
        "Acme SpA",
        "Servicios informáticos",
        "Av. Providencia 1234, Providencia, Santiago",
        "Timbre Electrónico SII",
        "Res. 0 de 2026",
      ]);
      const text = lines.join("\n");
      for (const label of COLUMNS) expect(text).toContain(label);
      for (const value of ["Consultoría", "Soporte", "1.000", "2.000", "10 %", "450"]) expect(text).toContain(value);
      expectLines(lines, ["Monto neto CLP 2.450", "IVA 19 % CLP 466", "Total CLP 2.916"]);
      expect(text).not.toMatch(/Customer|Due date|Unit price|Tax \(/);

      // the customer changes: the issued document prints what it was issued with
      expect(
        (await s.rest("PATCH", `/v1/customers/${customer}/`, { body: { activity: "Otro giro", commune: "Vitacura" } }))
          .status,
      ).toBe(200);
      expect(await pdfLines("invoices", draft.body.id, "33-again")).toEqual(lines);
      const gql = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on Invoice { issuedCustomer { activity commune city } ` +
          `customer { activity commune } } } }`,
        { id: draft.body.id },
      );
      expect(gql.body.data.node).toEqual({
        issuedCustomer: { activity: RECEIVER.activity, commune: "Ñuñoa", city: "Santiago" },
        customer: { activity: "Otro giro", commune: "Vitacura" }, // the Customer, live
      });
      expect(
        (
          await s.rest("PATCH", `/v1/customers/${customer}/`, {
            body: { activity: RECEIVER.activity, commune: "Ñuñoa" },
          })
        ).status,
      ).toBe(200);
    },
  );

  it("34 factura exenta: Monto exento, no IVA, contado when due on issue", async () => {
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL34", date: issued, due_date: issued, lines: [{ name: "Curso", amount: 50000 }] },
      })
    ).body;
    const done = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`);
    expect(done.status, done.text).toBe(200);
    expect(element(await checkedDte(done.body.local_file), "CmnaRecep")).toBe("Ñuñoa");
    const lines = await pdfLines("invoices", draft.id, "34");
    expectLines(lines, [
      ...HEADER,
      `N° ${done.body.number}`,
      ...RECEIVER_ROWS,
      `Fecha de emisión: ${dmy(issued)}`,
      "Condición de venta: Contado",
      "Monto exento CLP 50.000",
      "Total CLP 50.000",
    ]);
    expect(lines.join("\n")).toContain("FACTURA NO AFECTA O EXENTA");
    expect(lines.join("\n")).not.toMatch(/IVA|Monto neto/);

    // the office is the one kept at finalize (issuerSnapshot.siiOffice), not the office table's of today
    const stored = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: draft.id } });
    expect(stored.issuerSnapshot).toMatchObject({ commune: "Providencia", siiOffice: "Providencia" });
    await s.database.prisma.invoice.update({
      where: { id: draft.id },
      data: { issuerSnapshot: { ...(stored.issuerSnapshot as object), siiOffice: "Santiago Oriente" } },
    });
    expectLines(await pdfLines("invoices", draft.id, "34-office"), ["S.I.I. - SANTIAGO ORIENTE"]);
  });

  it("39 boleta and 41 boleta exenta: header, receiver (a boleta carries no giro or e-mail), totals", async () => {
    for (const [type, line, totals] of [
      [
        "39",
        { name: "Café cortado", quantity: 2, amount: 1990 },
        ["Monto neto CLP 3.345", "IVA 19 % CLP 635", "Total CLP 3.980"],
      ],
      ["41", { name: "Curso de barismo", quantity: 3, amount: 15000 }, ["Monto exento CLP 45.000", "Total CLP 45.000"]],
    ] as const) {
      const draft = (
        await s.rest("POST", "/v1/invoices/", {
          body: { customer, document: `CL${type}`, date: issued, lines: [line] },
        })
      ).body;
      const done = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`);
      expect(done.status, done.text).toBe(200);
      const xml = await checkedBoleta(done.body.local_file);
      expect([element(xml, "DirRecep"), element(xml, "CmnaRecep"), element(xml, "CiudadRecep")]).toEqual([
        RECEIVER.address,
        "Ñuñoa",
        "Santiago",
      ]);
      const lines = await pdfLines("invoices", draft.id, type);
      expectLines(lines, [
        ...HEADER,
        `N° ${done.body.number}`,
        `Señor(es): ${RECEIVER.name}`,
        "RUT: 76.042.235-5",
        `Dirección: ${RECEIVER.address}`,
        "Comuna: Ñuñoa",
        "Ciudad: Santiago",
        `Fecha de emisión: ${dmy(issued)}`,
        ...totals,
      ]);
      expect(lines.join("\n")).toContain(type === "39" ? "BOLETA ELECTRÓNICA" : "BOLETA NO AFECTA O EXENTA");
    }
  });

  it("52 guía de despacho: the transport (tipo de traslado, destination, carrier, patente)", async () => {
    const draft = await s.rest("POST", "/v1/orders/", {
      body: {
        customer,
        date: issued,
        shipping_type: "1",
        address: "Camino Lo Boza 120",
        state: "RM",
        carrier_name: "Transportes Sur",
        carrier_id: "77879240-0",
        licence_plate: "GHJK12",
        lines: [{ name: "Cajas", quantity: 2, amount: 1000 }],
      },
    });
    expect(draft.status, draft.text).toBe(201);
    const done = await s.rest("GET", `/v1/orders/${draft.body.id}/finalize/`);
    expect(done.status, done.text).toBe(200);
    const xml = await checkedDte(done.body.local_file);
    expect([element(xml, "GiroRecep"), element(xml, "CmnaRecep"), element(xml, "Patente")]).toEqual([
      RECEIVER.activity,
      "Ñuñoa",
      "GHJK12",
    ]);
    const lines = await pdfLines("orders", draft.body.id, "52");
    expectLines(lines, [
      ...HEADER,
      `N° ${done.body.number}`,
      ...RECEIVER_ROWS,
      `Fecha de emisión: ${dmy(issued)}`,
      "Transporte",
      "Tipo de traslado: 1 (Operación constituye venta)",
      "Dirección de destino: Camino Lo Boza 120, RM",
      "Transportista: Transportes Sur, RUT 77.879.240-0",
      "Patente: GHJK12",
      "Monto neto CLP 2.000",
      "IVA 19 % CLP 380",
      "Total CLP 2.380",
    ]);
    expect(lines.join("\n")).toContain("GUÍA DE DESPACHO");
  });

  it("61 nota de crédito and 56 nota de débito: Referencias with type, folio, date and reason", async () => {
    for (const [type, body, name, reason, totals] of [
      [
        "61",
        { lines: [{ name: "Devolución", amount: 1000 }], note: "Producto dañado" },
        "NOTA DE CRÉDITO ELECTRÓNICA",
        "Corrige montos: Producto dañado",
        ["Monto neto CLP 1.000", "IVA 19 % CLP 190", "Total CLP 1.190"],
      ],
      [
        "56",
        { document: "CL56", lines: [{ name: "Flete", amount: 2000 }], note: "Flete no facturado" },
        "NOTA DE DÉBITO ELECTRÓNICA",
        "Corrige montos: Flete no facturado",
        ["Monto neto CLP 2.000", "IVA 19 % CLP 380", "Total CLP 2.380"],
      ],
    ] as const) {
      const draft = await s.rest("POST", "/v1/creditnotes/", { body: { invoice: invoice33.id, ...body } });
      expect(draft.status, draft.text).toBe(201);
      const done = await s.rest("GET", `/v1/creditnotes/${draft.body.id}/finalize/`);
      expect(done.status, done.text).toBe(200);
      const xml = await checkedDte(done.body.local_file);
      expect([element(xml, "GiroRecep"), element(xml, "CiudadRecep"), element(xml, "FolioRef")]).toEqual([
        RECEIVER.activity,
        "Santiago",
        String(invoice33.number),
      ]);
      const lines = await pdfLines("creditnotes", draft.body.id, type);
      expectLines(lines, [
        ...HEADER,
        name,
        `N° ${done.body.number}`,
        ...RECEIVER_ROWS,
        `Fecha de emisión: ${dmy(done.body.date)}`,
      ]);
      // the references table stands beside the totals, so a text line may hold both: checked as text
      const text = lines.join("\n");
      for (const value of ["Referencias", "Tipo de documento", "Folio", "Fecha", "Razón", ...totals])
        expect(text).toContain(value);
      expect(text).toMatch(
        new RegExp(`Factura electrónica \\(33\\) ${invoice33.number} ${dmy(issued)} ${reason.split(" ")[0]}`),
      );
      expect(text.replace(/\s+/g, " ")).toContain(reason.split(": ")[1]);
    }
  });

  it("a plan's line prints its SKU as Código (a cycle invoice of the billing run)", async () => {
    const product = await s.rest("POST", "/v1/products/", {
      body: {
        name: "Nube",
        plans: [{ name: "Pro", sku: "NUBE-PRO", amount: 10000, currency: "CLP", frequency: "monthly" }],
      },
    });
    expect(product.status, product.text).toBe(201);
    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: {
        customer,
        date_start: authorizedOn,
        expiration_days: 30,
        lines: [{ plan: product.body.plans[0].id, quantity: 2 }],
      },
    });
    expect(sub.status, sub.text).toBe(201);
    const summary = await runBilling({
      prisma: s.database.prisma,
      settings: { certificateEncryptionKey },
      until: authorizedOn,
      collect: false,
    });
    expect(summary.failed, summary.errors.join("; ")).toBe(0);
    const invoice = await s.database.prisma.invoice.findFirstOrThrow({ where: { subscriptionId: sub.body.id } });
    const lines = await pdfLines("invoices", invoice.id, "33-plan");
    expect(lines.join("\n")).toContain("NUBE-PRO");
    expectLines(lines, [
      ...HEADER,
      `N° ${invoice.number}`,
      "Monto neto CLP 20.000",
      "IVA 19 % CLP 3.800",
      "Total CLP 23.800",
    ]);
  });
});

describe("export documents print their customs data", () => {
  it("110 factura de exportación and a 112 on it: Datos de exportación, packages, weights, ID extranjero", async () => {
    const foreign = await s.rest("POST", "/v1/customers/", {
      body: { name: "Acme Corp.", country: "US", tax_id: "12-3456789", address: "1 Main St, Austin TX" },
    });
    expect(foreign.status, foreign.text).toBe(201);
    const settings = {
      export: {
        sale_modality: "firm",
        sale_clause: "FOB",
        transport: "sea",
        loading_port: "San Antonio",
        unloading_port: "Long Beach",
        destination_country: "MX",
        exchange_rate: "950.25",
        tare: 150,
        tare_unit: "KN",
        gross_weight: "1250.50",
        gross_weight_unit: "KN",
        net_weight: "1100",
        net_weight_unit: "KN",
        total_items: 2,
        total_packages: 3,
        packages: [
          { type: "CAJA DE CARTON", quantity: 2, marks: "ACME-1/2", container_id: "MSCU1234567", seal: "SL-998" },
          { type: "PALLETS", quantity: 1 },
        ],
        freight: "120.50",
        insurance: "15.25",
      },
    };
    const draft = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer: foreign.body.id,
        document: "CL110",
        date: issued,
        fiscal_settings: settings,
        lines: [{ name: "Software license", quantity: 3, amount: "250.50" }],
      },
    });
    expect(draft.status, draft.text).toBe(201);
    // 751.50 x 950.25 = 714112.875 -> 714113 pesos
    const expected = [
      "Datos de exportación",
      "Modalidad de venta: A firme (1)",
      "Cláusula de venta: FOB (5)",
      "Total cláusula de venta: USD 751,50",
      "Vía de transporte: Marítima, fluvial y lacustre (1)",
      "Puerto de embarque: San Antonio (906)",
      "Puerto de desembarque: Long Beach (175)",
      "Tara: 150 KN (6)",
      "Peso bruto: 1.250,5 KN (6)",
      "Peso neto: 1.100 KN (6)",
      "Total ítems: 2",
      "Total bultos: 3",
      "Bultos: 1 × PALLETS (80)",
      "Flete: USD 120,50",
      "Seguro: USD 15,25",
      "País receptor: Estados Unidos (225)",
      "País de destino: México (216)",
      "Forma de pago exportación: COB1 (1)",
      "Tipo de moneda: DOLAR USA",
      "Tipo de cambio: 950,25",
      "Total en pesos: CLP 714.113",
      "ID extranjero: 12-3456789",
      "Nacionalidad: Estados Unidos (225)",
    ];
    /** the lines, and the first package's row, which wraps in its column: checked as text */
    const expectExport = (lines: string[]) => {
      expectLines(lines, expected);
      expect(lines.join(" ")).toContain(
        "Bultos: 2 × CAJA DE CARTON (22), marcas ACME-1/2, contenedor MSCU1234567, sello SL-998",
      );
    };
    // the draft prints the data from its settings, the issued 110 from its DTE: the same text
    expectExport(await pdfLines("invoices", draft.body.id, "110-draft"));
    const done = await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`);
    expect(done.status, done.text).toBe(200);
    const xml = await checkedDte(done.body.local_file);
    expect(element(xml, "PesoBruto")).toBe("1250.5");
    expect(element(xml, "CodTpoBultos")).toBe("22");
    const lines = await pdfLines("invoices", draft.body.id, "110");
    expectExport(lines);
    expectLines(lines, [`N° ${done.body.number}`, "Señor(es): Acme Corp.", "RUT: 55.555.555-5"]);
    expect(lines.join(" ")).toContain("FACTURA DE EXPORTACIÓN ELECTRÓNICA");
    // a 112 on it prints its invoice's export data as its own DTE carries it
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: draft.body.id, lines: [{ name: "Descuento", amount: "100.25" }] },
    });
    expect(note.status, note.text).toBe(201);
    const noteDone = await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
    expect(noteDone.status, noteDone.text).toBe(200);
    await checkedDte(noteDone.body.local_file);
    expectLines(await pdfLines("creditnotes", note.body.id, "112"), [
      "Cláusula de venta: FOB (5)",
      "Total cláusula de venta: USD 100,25",
      "Bultos: 1 × PALLETS (80)",
      "ID extranjero: 12-3456789",
      "Total en pesos: CLP 95.263",
    ]);
  });
});

describe("the organization's locale", () => {
  it(
    "en prints documents finalized under it in English (labels, ISO dates), and they stay English when it changes; " +
      "null goes back to the country's; another value is a 400",
    async () => {
      const draft = (
        await s.rest("POST", "/v1/invoices/", {
          body: {
            customer,
            document: "CL33",
            date: issued,
            due_date: due,
            lines: [{ name: "Consultoría", amount: 1000 }],
          },
        })
      ).body;
      const english = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { locale: "en" } });
      expect((await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`)).status).toBe(200);
      expect(english.status, english.text).toBe(200);
      expect(english.body.locale).toBe("en");
      const gql = await s.graphql(`{ taxProfile { locale } }`);
      expect(gql.body.data.taxProfile.locale).toBe("en");
      const lines = await pdfLines("invoices", draft.id, "33-en");
      expectLines(lines, [
        "Tax id: 76.042.235-5",
        "FACTURA ELECTRÓNICA",
        `Customer: ${RECEIVER.name}`,
        "Tax id: 76.042.235-5",
        `Activity: ${RECEIVER.activity}`,
        "Commune: Ñuñoa",
        `Date: ${issued}`,
        `Due date: ${due}`,
        "Terms: Credit",
        "Currency: CLP (Chilean peso)",
        "Net CLP 1.000",
        "Tax (19 %) CLP 190",
        "Total CLP 1.190",
      ]);
      expect(lines.join("\n")).toContain("Unit price");
      expect(lines.join("\n")).not.toMatch(/Señor\(es\)|Fecha de emisión/);

      const bad = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { locale: "fr" } });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.error.fields)).toEqual(["locale"]);
      expect(
        (await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { locale: null } })).body.locale,
      ).toBeNull();
      // an issued document never changes: still English; a draft follows the setting (Spanish again)
      expect((await pdfLines("invoices", draft.id, "33-en-after")).join("\n")).toContain("Unit price");
      const spanish = (
        await s.rest("POST", "/v1/invoices/", {
          body: {
            customer,
            document: "CL33",
            date: issued,
            due_date: due,
            lines: [{ name: "Consultoría", amount: 1000 }],
          },
        })
      ).body;
      const spanishLines = await pdfLines("invoices", spanish.id, "33-es-draft");
      expect(spanishLines.join("\n")).toContain("Precio unitario");
      expectLines(spanishLines, [`Señor(es): ${RECEIVER.name}`, `Fecha de emisión: ${dmy(issued)}`]);
      // a test key's locale is test mode's only
      expect(
        (await s.rest("GET", "/v1/billers/built_in/tax_profile/", { key: s.keys.acmeLive })).body.locale,
      ).toBeNull();
    },
  );
});
