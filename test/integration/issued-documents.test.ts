/**
 * Issued documents never change (docs/decisions.md "Issued documents"): an invoice, an order and a
 * credit note are finalized, then the customer is renamed (address, e-mail and tax settings
 * changed too) and the organization's tax profile is edited; each finalized document's REST JSON,
 * GraphQL JSON (its `issuedCustomer` and `issuer`) and PDF text are byte for byte what they were,
 * while its GraphQL `customer` (the Customer, live) and a draft show the new data.
 * For a document issued to SII, the PDF prints the stored DTE's issuer and receiver field for field.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";
import { customerSnapshot, issuerSnapshot } from "../../src/domain/issued-parties.js";
import { renderAttachment } from "../../src/services/outbox.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";

let s: TestServer;
const certificateEncryptionKey = randomBytes(32);

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey } });
});
afterAll(async () => {
  await s?.close();
});

async function pdfText(base64: string): Promise<string> {
  return (await new PDFParse({ data: new Uint8Array(Buffer.from(base64, "base64")) }).getText()).text;
}

const CUSTOMER_FIELDS =
  `name address stateCode state { id code } country { id name } currency email phone ` +
  `website taxId activity commune city contacts { name email phone role } taxSettings metadata created updated`;
const ISSUER_FIELDS =
  `name taxId businessName activity activityCodes address commune city resolutionNumber ` + `resolutionDate`;

/** Every field a client reads of a document as issued, through GraphQL: the issued customer and the issuer included. */
function graphqlDocument(kind: "invoice" | "order" | "creditNote", id: string) {
  const own = {
    invoice: `number status total lines { name total } localFile`,
    order: `number status total shippingType lines { name total } localFile`,
    creditNote:
      `number status total invoice { id number issuedCustomer { ${CUSTOMER_FIELDS} } issuer { ${ISSUER_FIELDS} } ` +
      `} localFile`,
  }[kind];
  const type = { invoice: "Invoice", order: "Order", creditNote: "CreditNote" }[kind];
  return s.graphql(
    `query($id: ID!) { node(id: $id) { ... on ${type} { id ${own} issuedCustomer { ${CUSTOMER_FIELDS} } issuer ` +
      `{ ${ISSUER_FIELDS} } } } }`,
    { id },
  );
}

/** What a reader sees of one document: REST JSON text, GraphQL JSON text, PDF text. */
async function readDocument(kind: "invoice" | "order" | "creditNote", id: string) {
  const path = {
    invoice: `/v1/invoices/${id}/`,
    order: `/v1/orders/${id}/`,
    creditNote: `/v1/creditnotes/${id}/?expand=invoice`,
  }[kind];
  const pdfPath = {
    invoice: `/v1/invoices/${id}/pdf/`,
    order: `/v1/orders/${id}/pdf/`,
    creditNote: `/v1/creditnotes/${id}/pdf/`,
  }[kind];
  const rest = await s.rest("GET", path);
  expect(rest.status, rest.text).toBe(200);
  const graphql = await graphqlDocument(kind, id);
  expect(graphql.body.errors, JSON.stringify(graphql.body.errors)).toBeUndefined();
  const pdf = await s.rest("GET", pdfPath);
  expect(pdf.status).toBe(200);
  return { rest: rest.text, graphql: JSON.stringify(graphql.body), pdf: await pdfText(pdf.body.file) };
}

describe("a finalized document reads what it was issued with", () => {
  let customer: string;
  const ids: Record<"invoice" | "order" | "creditNote" | "draft", string> = {
    invoice: "",
    order: "",
    creditNote: "",
    draft: "",
  };
  const before: Record<string, Awaited<ReturnType<typeof readDocument>>> = {};

  it("finalizes an invoice, an order and a credit note, and stores their parties", async () => {
    const created = await s.rest("POST", "/v1/customers/", {
      body: chileanCustomer({
        name: "Cliente Original SpA",
        phone: "+56 2 2345 6789",
        tax_settings: { activity: "Comercio minorista", commune: "Ñuñoa", city: "Santiago" },
        metadata: { crm: "42" },
      }),
    });
    expect(created.status, created.text).toBe(201);
    customer = created.body.id;
    expect(
      (
        await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
          body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 80, resolution_date: "2014-08-22" },
        })
      ).status,
    ).toBe(200);

    const invoice = await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 2, amount: 1000 }] },
    });
    expect(invoice.status, invoice.text).toBe(201);
    ids.invoice = invoice.body.id;
    expect((await s.rest("GET", `/v1/invoices/${ids.invoice}/finalize/`)).status).toBe(200);
    const order = await s.rest("POST", "/v1/orders/", {
      body: {
        customer,
        shipping_type: "1",
        address: "Camino Lo Boza 120",
        lines: [{ name: "Cajas", quantity: 2, amount: 1000 }],
      },
    });
    expect(order.status, order.text).toBe(201);
    ids.order = order.body.id;
    expect((await s.rest("GET", `/v1/orders/${ids.order}/finalize/`)).status).toBe(200);
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: ids.invoice, lines: [{ name: "Devolución", amount: 500 }], note: "Producto dañado" },
    });
    expect(note.status, note.text).toBe(201);
    ids.creditNote = note.body.id;
    expect((await s.rest("GET", `/v1/creditnotes/${ids.creditNote}/finalize/`)).status).toBe(200);
    const draft = await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "Borrador", amount: 100 }] },
    });
    ids.draft = draft.body.id;

    // the snapshot is the domain function's output for the rows as they were
    const row = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: customer } });
    const { name } = await s.database.prisma.organization.findUniqueOrThrow({ where: { id: s.orgs.acme } });
    // the test key's settings (tax profile and branding are per mode)
    const org = await s.database.prisma.organizationSettings.findUniqueOrThrow({
      where: { organizationId_testMode: { organizationId: s.orgs.acme, testMode: true } },
    });
    const expectedIssuer = issuerSnapshot(
      { name, businessName: org.businessName },
      {
        taxId: org.taxId,
        businessName: org.taxBusinessName,
        activity: org.taxActivity,
        activityCodes: ["620200"],
        address: org.taxAddress,
        commune: org.taxCommune,
        city: org.taxCity,
        resolutionNumber: 80,
        resolutionDate: "2014-08-22",
      },
    );
    for (const stored of [
      await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: ids.invoice } }),
      await s.database.prisma.order.findUniqueOrThrow({ where: { id: ids.order } }),
      await s.database.prisma.creditNote.findUniqueOrThrow({ where: { id: ids.creditNote } }),
    ]) {
      expect(stored.customerSnapshot).toEqual(customerSnapshot(row));
      expect(stored.issuerSnapshot).toEqual(expectedIssuer);
    }
    expect(
      (await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: ids.draft } })).customerSnapshot,
    ).toBeNull();

    for (const kind of ["invoice", "order", "creditNote"] as const) before[kind] = await readDocument(kind, ids[kind]);
    expect(JSON.parse(before.invoice.rest).customer).toMatchObject({
      id: customer,
      name: "Cliente Original SpA",
      address: "Av. Siempre Viva 123",
      email: "pagos@cliente.cl",
    });
    expect(before.invoice.pdf).toContain("Cliente Original SpA");
    expect(before.invoice.pdf).toContain("Acme SpA");
    expect(before.invoice.pdf).toContain("Av. Providencia 1234, Providencia, Santiago");
    expect(JSON.parse(before.creditNote.graphql).data.node.issuedCustomer.name).toBe("Cliente Original SpA");
  });

  it("renaming the customer and editing the tax profile changes none of them; a draft shows the new data", async () => {
    const renamed = await s.rest("PATCH", `/v1/customers/${customer}/`, {
      body: {
        name: "Cliente Renombrado SpA",
        address: "Nueva Dirección 999",
        email: "nuevo@cliente.cl",
        state: "VS",
        tax_settings: { activity: "Otra actividad", commune: "Viña del Mar" },
        metadata: { crm: "43" },
      },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
      body: {
        business_name: "Acme Renombrada SpA",
        address: "Otra Calle 1",
        commune: "Las Condes",
        activity: "Otra actividad",
        activity_codes: ["631200"],
        resolution_number: 99,
        resolution_date: "2020-01-01",
      },
    });
    expect(profile.status, profile.text).toBe(200);

    for (const kind of ["invoice", "order", "creditNote"] as const) {
      const after = await readDocument(kind, ids[kind]);
      expect(after.rest, `${kind} REST`).toBe(before[kind].rest);
      expect(after.graphql, `${kind} GraphQL`).toBe(before[kind].graphql);
      expect(after.pdf, `${kind} PDF`).toBe(before[kind].pdf);
    }

    // each document's `customer` is the Customer, live: the new name under the customer's id (a normalized
    // client cache keys it by that id), beside the issued one
    for (const kind of ["invoice", "order", "creditNote"] as const) {
      const type = { invoice: "Invoice", order: "Order", creditNote: "CreditNote" }[kind];
      const both = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on ${type} { customer { id name address email state { code } } ` +
          `issuedCustomer { name address email state { code } } } } }`,
        { id: ids[kind] },
      );
      expect(both.body.errors, JSON.stringify(both.body.errors)).toBeUndefined();
      expect(both.body.data.node, kind).toEqual({
        customer: {
          id: customer,
          name: "Cliente Renombrado SpA",
          address: "Nueva Dirección 999",
          email: "nuevo@cliente.cl",
          state: { code: "VS" },
        },
        issuedCustomer: {
          name: "Cliente Original SpA",
          address: "Av. Siempre Viva 123",
          email: "pagos@cliente.cl",
          state: { code: "RM" },
        },
      });
    }

    // the customer itself and a draft read live data
    expect((await s.rest("GET", `/v1/customers/${customer}/`)).body.name).toBe("Cliente Renombrado SpA");
    const draft = await s.rest("GET", `/v1/invoices/${ids.draft}/`);
    expect(draft.body.customer).toMatchObject({
      name: "Cliente Renombrado SpA",
      address: "Nueva Dirección 999",
      email: "nuevo@cliente.cl",
      state: "VS",
    });
    const draftGraphql = await graphqlDocument("invoice", ids.draft);
    expect(draftGraphql.body.data.node.issuedCustomer).toMatchObject({
      name: "Cliente Renombrado SpA",
      taxSettings: { activity: "Otra actividad", commune: "Viña del Mar" },
    });
    expect(draftGraphql.body.data.node.issuer).toEqual({
      name: "Acme Renombrada SpA",
      taxId: "76042235-5",
      businessName: "Acme Renombrada SpA",
      activity: "Otra actividad",
      activityCodes: ["631200"],
      address: "Otra Calle 1",
      commune: "Las Condes",
      city: "Santiago",
      resolutionNumber: 99,
      resolutionDate: "2020-01-01",
    });
    const draftPdf = await pdfText((await s.rest("GET", `/v1/invoices/${ids.draft}/pdf/`)).body.file);
    expect(draftPdf).toContain("Cliente Renombrado SpA");
    expect(draftPdf).toContain("Acme Renombrada SpA");
    expect(draftPdf).not.toContain("Cliente Original SpA");

    // a finalized invoice's GraphQL shows the issued customer and issuer
    const issued = JSON.parse(before.invoice.graphql).data.node;
    expect(issued.issuedCustomer).toMatchObject({
      name: "Cliente Original SpA",
      stateCode: "RM",
      state: { code: "RM" },
      taxSettings: { activity: "Comercio minorista", commune: "Ñuñoa", city: "Santiago" },
      metadata: { crm: "42" },
    });
    expect(issued.issuer).toMatchObject({ name: "Acme SpA", address: "Av. Providencia 1234", resolutionNumber: 80 });
  });

  it("a reminder's attachment is the issued document too", async () => {
    const ctx = {
      prisma: s.database.prisma,
      auth: { organizationId: s.orgs.acme, testMode: true, userEmail: "ops@acme.cl", apiKeyId: "" },
      now: () => new Date(),
      settings: { ...DEFAULT_SETTINGS, certificateEncryptionKey },
      baseUrl: s.url,
    } as unknown as Parameters<typeof renderAttachment>[0];
    for (const [kind, id] of [
      ["invoice", ids.invoice],
      ["order", ids.order],
      ["credit_note", ids.creditNote],
    ] as const) {
      const attachment = await renderAttachment(ctx, kind, id);
      const text = await pdfText(attachment!.content.toString("base64"));
      expect(text).toBe(before[kind === "credit_note" ? "creditNote" : kind].pdf);
    }
  });
});

describe("a document issued to SII prints its DTE's parties", () => {
  const RUT = "76042235-5";
  const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);

  /** The text of element `name` in `xml` (first occurrence), or null. */
  function element(xml: string, name: string): string | null {
    return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? null;
  }

  it(
    "PDF receiver and issuer fields equal the stored DTE's, before and after the customer and " + "profile change",
    async () => {
      const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: {
          business_name: "Acme “Emisora” SpA",
          activity: "Servicios informáticos",
          activity_codes: ["620200"],
          address: "Av. Providencia 1234",
          commune: "Providencia",
          city: "Santiago",
          resolution_number: 0,
          resolution_date: "2026-01-15",
        },
      });
      expect(profile.status, profile.text).toBe(200);
      const certificate = generatePkcs12({ rut: "12345678-5" });
      expect(
        (
          await s.rest("POST", "/v1/billers/built_in/certificates/", {
            body: { file: certificate.file.toString("base64"), password: certificate.password },
          })
        ).status,
      ).toBe(201);
      // folios after the numbers the first part used
      const caf = generateCaf({ rut: RUT, type: 33, from: 11, to: 20, authorizedOn });
      const uploaded = await s.rest("POST", "/v1/billers/built_in/cafs/", {
        body: { file: caf.file.toString("base64") },
      });
      expect(uploaded.status, uploaded.text).toBe(201);
      // typographic quotes and a dash: the DTE carries SII's text (straight quotes, "-"), and so must the PDF
      const customer = (
        await s.rest("POST", "/v1/customers/", {
          body: chileanCustomer({
            name: "Cliente “Comillas” — Ñandú SpA",
            address: "Los Aromos 55, depto. 3",
            tax_settings: { activity: "Venta al por menor", commune: "Ñuñoa", city: "Santiago" },
          }),
        })
      ).body.id;
      const draft = (
        await s.rest("POST", "/v1/invoices/", {
          body: { customer, document: "CL33", lines: [{ name: "Consultoría", amount: 1000 }] },
        })
      ).body;
      const finalized = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`);
      expect(finalized.status, finalized.text).toBe(200);
      expect(finalized.body.local_file).toBeTruthy();
      const file = await fetch(finalized.body.local_file, { headers: { authorization: `Bearer ${s.keys.acme}` } });
      const xml = Buffer.from(await file.arrayBuffer()).toString("latin1");

      const dte = Object.fromEntries(
        [
          "RUTEmisor",
          "RznSoc",
          "GiroEmis",
          "DirOrigen",
          "CmnaOrigen",
          "CiudadOrigen",
          "RUTRecep",
          "RznSocRecep",
          "GiroRecep",
          "CorreoRecep",
          "DirRecep",
          "CmnaRecep",
          "CiudadRecep",
        ].map((n) => [n, element(xml, n)]),
      );
      expect(dte).toEqual({
        RUTEmisor: RUT,
        RznSoc: 'Acme "Emisora" SpA',
        GiroEmis: "Servicios informáticos",
        DirOrigen: "Av. Providencia 1234",
        CmnaOrigen: "Providencia",
        CiudadOrigen: "Santiago",
        RUTRecep: "76042235-5",
        RznSocRecep: 'Cliente "Comillas" - Ñandú SpA',
        GiroRecep: "Venta al por menor",
        CorreoRecep: "pagos@cliente.cl",
        DirRecep: "Los Aromos 55, depto. 3",
        CmnaRecep: "Ñuñoa",
        CiudadRecep: "Santiago",
      });
      const pdfOf = async () => pdfText((await s.rest("GET", `/v1/invoices/${draft.id}/pdf/`)).body.file);
      const text = await pdfOf();
      const lines = text.split("\n").map((l) => l.trim());
      // issuer block: name, address (DirOrigen, CmnaOrigen, CiudadOrigen), activity (GiroEmis); its RUT in the header
      // box, with dots
      expect(lines).toContain(dte.RznSoc);
      expect(lines).toContain("R.U.T.: 76.042.235-5");
      expect(lines).toContain(`${dte.DirOrigen}, ${dte.CmnaOrigen}, ${dte.CiudadOrigen}`);
      expect(lines).toContain(dte.GiroEmis);
      // receiver rows: RznSocRecep, RUTRecep, GiroRecep, DirRecep, CmnaRecep, CiudadRecep, CorreoRecep (this customer
      // keeps its activity, commune and city in tax_settings, as customers saved before those fields did)
      expect(lines).toContain(`Señor(es): ${dte.RznSocRecep}`);
      expect(lines).toContain("RUT: 76.042.235-5");
      expect(lines).toContain(`Giro: ${dte.GiroRecep}`);
      expect(lines).toContain(`Dirección: ${dte.DirRecep}`);
      expect(lines).toContain(`Comuna: ${dte.CmnaRecep}`);
      expect(lines).toContain(`Ciudad: ${dte.CiudadRecep}`);
      expect(lines).toContain(`Correo: ${dte.CorreoRecep}`);
      expect(text).not.toContain("“");

      // the snapshot agrees with the DTE it was built from
      const stored = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: draft.id } });
      expect(stored.customerSnapshot).toMatchObject({
        name: "Cliente “Comillas” — Ñandú SpA",
        taxId: "76042235-5",
        address: "Los Aromos 55, depto. 3",
      });
      expect(stored.issuerSnapshot).toMatchObject({
        businessName: "Acme “Emisora” SpA",
        taxId: RUT,
        resolutionNumber: 0,
        resolutionDate: "2026-01-15",
      });

      await s.rest("PATCH", `/v1/customers/${customer}/`, { body: { name: "Otro Nombre SpA", address: "Otra 1" } });
      await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { business_name: "Acme Cambiada SpA", address: "Otra Calle 2" },
      });
      expect(await pdfOf()).toBe(text);
    },
  );
});
