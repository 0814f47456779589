/**
 * Issuing DTEs at finalize (docs/sii-setup.md) end to end through the API, for an enrolled
 * organization: invoices 33 and 34, a guía 52, a credit note 61 and a debit note 56. Each stored XML is read back
 * through its `local_file` URL and checked with two external tools (xmllint against SII's
 * DTE_v10.xsd, xmlsec1 against the uploaded certificate). Folios: gapless under 20 concurrent
 * finalizes, 409 when the CAF is used up (nothing changes). Organizations without a certificate
 * finalize as before. Boletas 39/41 are checked inside an EnvioBOLETA (their schema); the PDF of a
 * DTE carries its timbre, decoded back from the barcode.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { join } from "node:path";
import { buildEnvioBoleta, SII_RUT } from "../../src/infra/taxagency/sii/envelope.js";
import { compactTed } from "../../src/infra/taxagency/sii/index.js";
import {
  SCHEMA_DIR,
  generateCaf,
  generatePkcs12,
  xmllintValidate,
  xmlsecVerify,
  type FakePkcs12,
} from "../helpers/sii-fixtures.js";
import { dteSignature, xmlsecVerifyNode } from "../helpers/sii-envelope.js";
import { pdfTimbres } from "../helpers/pdf417.js";
import { PDFParse } from "pdf-parse";
import { runBilling } from "../../src/services/billing-run.js";

const RUT = "76042235-5";
let s: TestServer;
let certificate: FakePkcs12;
let customer: string;
const certificateEncryptionKey = randomBytes(32);

const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);

async function uploadCaf(type: number, from: number, to: number) {
  const caf = generateCaf({ rut: RUT, type, from, to, authorizedOn });
  const res = await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** GET a local_file URL with a key: status, content type, bytes. */
async function readFile(url: string, key: string = s.keys.acme) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

/** The file behind `local_file`: fetched, XSD-valid and signature-verified; its text (ISO-8859-1). */
async function checkedXml(localFile: string): Promise<string> {
  expect(localFile.startsWith(`${s.url}/v1/files/`)).toBe(true);
  const file = await readFile(localFile);
  expect(file.status).toBe(200);
  expect(file.contentType).toBe("application/xml; charset=ISO-8859-1");
  const schema = xmllintValidate(file.bytes);
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerify(file.bytes, certificate.certificatePem);
  expect(signature.ok, signature.output).toBe(true);
  return file.bytes.toString("latin1");
}

async function finalize(path: string) {
  return s.rest("GET", `${path}/finalize/`);
}

/**
 * A finalize as a well-behaved client sends it under load: a 503 (the pool or a transaction could
 * not start in time on a busy machine; nothing was changed, docs/input-limits.md) is retried.
 */
async function finalizeRetrying(path: string) {
  for (let attempt = 1; ; attempt++) {
    const res = await finalize(path);
    if (res.status !== 503 || attempt === 5) return res;
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey } });
  expect(
    (
      await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 0, resolution_date: "2026-01-15" },
      })
    ).status,
  ).toBe(200);
  certificate = generatePkcs12({ rut: "12345678-5" });
  const cert = await s.rest("POST", "/v1/billers/built_in/certificates/", {
    body: { file: certificate.file.toString("base64"), password: certificate.password },
  });
  expect(cert.status).toBe(201);
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Cliente Ñandú SpA" }) })).body.id;
});
afterAll(async () => {
  await s?.close();
});

describe("finalize issues a DTE", () => {
  let invoice: any;

  it("33: the folio is the number, the signed XML is stored and served, tax_agency is pending", async () => {
    await uploadCaf(33, 1, 21);
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        body: {
          customer,
          document: "CL33",
          lines: [
            { name: "Consultoría", quantity: 2, amount: 1000 },
            { name: "Soporte", amount: 500 },
          ],
          discount: 10,
        },
      })
    ).body;
    const res = await finalize(`/v1/invoices/${draft.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    invoice = res.body;
    expect(invoice).toMatchObject({ number: 1, status: "finalized", amount: 2250, tax: 428, total: 2678 });
    expect(invoice.local_file).toBe(`${s.url}/v1/files/${draft.id}_33_1.xml`);
    const stored = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: draft.id } });
    expect(stored.taxAgency).toMatchObject({
      agency: "sii",
      status: "pending",
      track_id: null,
      document_id: "F1T33",
      folio: 1,
    });
    // README: finalizing queues it for SII, and the REST invoice says so (tax_agency, beyond the spec's fields)
    expect(invoice.tax_agency).toEqual(stored.taxAgency);
    expect(invoice.tax_agency).toMatchObject({ agency: "sii", status: "pending" });
    expect((await s.rest("GET", `/v1/invoices/${draft.id}/`)).body.tax_agency).toEqual(stored.taxAgency);
    const xml = await checkedXml(invoice.local_file);
    expect(xml).toContain("<TipoDTE>33</TipoDTE><Folio>1</Folio>");
    expect(xml).toContain(`<RUTEmisor>${RUT}</RUTEmisor><RznSoc>Acme SpA</RznSoc>`);
    expect(xml).toContain("<Acteco>620200</Acteco>");
    expect(xml).toContain("<RUTRecep>76042235-5</RUTRecep><RznSocRecep>Cliente Ñandú SpA</RznSocRecep>");
    expect(xml).toContain("<MntNeto>2250</MntNeto><TasaIVA>19</TasaIVA><IVA>428</IVA><MntTotal>2678</MntTotal>");
    expect(xml).toContain("<TpoMov>D</TpoMov><TpoValor>%</TpoValor><ValorDR>10</ValorDR>");
  });

  it("serves a file only to its organization and mode", async () => {
    expect((await readFile(invoice.local_file, s.keys.other)).status).toBe(404);
    expect((await readFile(invoice.local_file, s.keys.acmeLive)).status).toBe(404);
    expect((await fetch(invoice.local_file)).status).toBe(401);
    expect((await readFile(`${s.url}/v1/files/nothing.xml`)).status).toBe(404);
  });

  it("34: every line exempt (MntExe, no IVA)", async () => {
    await uploadCaf(34, 1, 10);
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL34", lines: [{ name: "Curso", amount: 50000 }] },
      })
    ).body;
    const res = await finalize(`/v1/invoices/${draft.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ number: 1, exempt: 50000, total: 50000 });
    const xml = await checkedXml(res.body.local_file);
    expect(xml).toContain("<TipoDTE>34</TipoDTE><Folio>1</Folio>");
    expect(xml).toContain("<MntExe>50000</MntExe><MntTotal>50000</MntTotal>");
    expect(xml).not.toContain("<IVA>");
  });

  it("52: a guía with IndTraslado and Transporte", async () => {
    await uploadCaf(52, 5, 10);
    const draft = (
      await s.rest("POST", "/v1/orders/", {
        body: {
          customer,
          shipping_type: "1",
          address: "Av. Matta 100",
          licence_plate: "ABCD12",
          lines: [{ name: "Router", quantity: 3, amount: 20000 }],
        },
      })
    ).body;
    const res = await finalize(`/v1/orders/${draft.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.number).toBe(5);
    expect(res.body.tax_agency).toMatchObject({ agency: "sii", status: "pending", document_id: "F5T52" });
    const xml = await checkedXml(res.body.local_file);
    expect(xml).toContain("<TipoDTE>52</TipoDTE><Folio>5</Folio>");
    expect(xml).toContain("<IndTraslado>1</IndTraslado>");
    expect(xml).toContain("<Patente>ABCD12</Patente>");
    expect(xml).toContain("<MntNeto>60000</MntNeto><TasaIVA>19</TasaIVA><IVA>11400</IVA><MntTotal>71400</MntTotal>");
  });

  it("61: a credit note references the invoice's type, folio and date", async () => {
    await uploadCaf(61, 1, 10);
    const draft = (
      await s.rest("POST", "/v1/creditnotes/", {
        body: { invoice: invoice.id, note: "Devolución parcial", lines: [{ name: "Soporte", amount: 500 }] },
      })
    ).body;
    const res = await finalize(`/v1/creditnotes/${draft.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.number).toBe(1);
    const xml = await checkedXml(res.body.local_file);
    expect(xml).toContain("<TipoDTE>61</TipoDTE><Folio>1</Folio>");
    expect(xml).toContain(
      `<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>33</TpoDocRef><FolioRef>1</FolioRef><FchRef>${invoice.date}` +
        `</FchRef><CodRef>3</CodRef><RazonRef>Devolución parcial</RazonRef></Referencia>`,
    );
    expect(xml).toContain("<MntTotal>595</MntTotal>");
  });

  it(
    "56: a debit note (document CL56 on the credit note resource) references the invoice and adds to " + "what is due",
    async () => {
      await uploadCaf(56, 1, 10);
      const draft = await s.rest("POST", "/v1/creditnotes/", {
        body: {
          invoice: invoice.id,
          document: "CL56",
          note: "Intereses por mora",
          lines: [{ name: "Intereses", amount: 1000 }],
        },
      });
      expect(draft.status, JSON.stringify(draft.body)).toBe(201);
      const res = await finalize(`/v1/creditnotes/${draft.body.id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ document: "CL56", number: 1, amount: 1000, tax: 190, total: 1190 });
      expect(res.body.local_file).toBe(`${s.url}/v1/files/${draft.body.id}_56_1.xml`);
      expect(res.body.tax_agency).toMatchObject({ agency: "sii", status: "pending", document_id: "F1T56", folio: 1 });
      const xml = await checkedXml(res.body.local_file);
      expect(xml).toContain("<TipoDTE>56</TipoDTE><Folio>1</Folio>");
      expect(xml).toContain("<MntNeto>1000</MntNeto><TasaIVA>19</TasaIVA><IVA>190</IVA><MntTotal>1190</MntTotal>");
      expect(xml).toContain(
        `<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>33</TpoDocRef><FolioRef>1</FolioRef><FchRef>${invoice.date}` +
          `</FchRef><CodRef>3</CodRef><RazonRef>Intereses por mora</RazonRef></Referencia>`,
      );
      // invoice 2678, credit note 61 of 595, debit note 56 of 1190: 3273 due
      const due = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Invoice { amountDue } } }`, {
        id: invoice.id,
      });
      expect(due.body.data.node.amountDue).toBe("3273");
    },
  );

  it("61 with CodRef 1 (GraphQL referenceCode): cancels a whole exempt invoice (34), exempt itself", async () => {
    const exempt = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL34", lines: [{ name: "Taller", amount: 30000 }] },
      })
    ).body;
    const fin = await finalize(`/v1/invoices/${exempt.id}`);
    expect(fin.body.number).toBe(2);
    const created = await s.graphql(
      `mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id referenceCode } }`,
      {
        input: {
          invoice: exempt.id,
          referenceCode: 1,
          note: "Anula factura exenta",
          lines: [{ name: "Taller", amount: "30000" }],
        },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const res = await finalize(`/v1/creditnotes/${created.body.data.createCreditNote.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const xml = await checkedXml(res.body.local_file);
    expect(xml).toContain("<TipoDTE>61</TipoDTE><Folio>2</Folio>");
    expect(xml).toContain("<MntExe>30000</MntExe><MntTotal>30000</MntTotal>");
    expect(xml).toContain(
      `<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>34</TpoDocRef><FolioRef>2</FolioRef><FchRef>${fin.body.date}` +
        `</FchRef><CodRef>1</CodRef><RazonRef>Anula factura exenta</RazonRef></Referencia>`,
    );
  });
});

describe("folios", () => {
  it("20 concurrent finalizes take folios 2..21 exactly once, then 409 with nothing changed", async () => {
    const drafts = await Promise.all(
      Array.from(
        { length: 21 },
        async (_, i) =>
          (
            await s.rest("POST", "/v1/invoices/", {
              body: { customer, document: "CL33", lines: [{ name: `Item ${i}`, amount: 1000 + i }] },
            })
          ).body.id as string,
      ),
    );
    const results = await Promise.all(drafts.slice(0, 20).map((id) => finalizeRetrying(`/v1/invoices/${id}`)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.map((r) => r.body.number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 2),
    );
    for (const r of results) expect(r.body.local_file).toBe(`${s.url}/v1/files/${r.body.id}_33_${r.body.number}.xml`);
    expect(
      await s.database.prisma.storedFile.count({ where: { name: { endsWith: ".xml" }, organizationId: s.orgs.acme } }),
    ).toBe(27);

    const exhausted = await finalize(`/v1/invoices/${drafts[20]}`);
    expect(exhausted.status).toBe(409);
    expect(exhausted.body.error).toMatchObject({
      code: "invalid_state",
      message: expect.stringContaining("no authorized folio is left for CL33"),
    });
    expect((await s.rest("GET", `/v1/invoices/${drafts[20]}/`)).body).toMatchObject({
      status: "draft",
      number: null,
      local_file: null,
    });
    const caf = await s.database.prisma.caf.findFirstOrThrow({
      where: { organizationId: s.orgs.acme, documentTypeId: "CL33" },
    });
    expect(caf.nextFolio).toBe(22);

    // a new CAF continues where the authorization says
    await uploadCaf(33, 22, 30);
    const next = await finalize(`/v1/invoices/${drafts[20]}`);
    expect(next.status).toBe(200);
    expect(next.body.number).toBe(22);
  });

  it("a type without a CAF is a 409 naming it", async () => {
    // live mode is enrolled with its own profile and certificate (settings are per mode), and has no CAF
    expect(
      (
        await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
          key: s.keys.acmeLive,
          body: { activity_codes: ["620200"], resolution_number: 80, resolution_date: "2014-08-22" },
        })
      ).status,
    ).toBe(200);
    const live = await s.rest("POST", "/v1/billers/built_in/certificates/", {
      key: s.keys.acmeLive,
      body: { file: certificate.file.toString("base64"), password: certificate.password },
    });
    expect(live.status).toBe(201);
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        key: s.keys.acmeLive,
        body: {
          customer: (await s.rest("POST", "/v1/customers/", { key: s.keys.acmeLive, body: chileanCustomer() })).body.id,
          document: "CL33",
          lines: [{ name: "x", amount: 1 }],
        },
      })
    ).body;
    const res = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`, { key: s.keys.acmeLive });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("no CAF for CL33 in live mode");
  });

  it("an organization without a certificate finalizes as before (counter numbers, no file)", async () => {
    const other = (await s.rest("POST", "/v1/customers/", { key: s.keys.other, body: chileanCustomer() })).body.id;
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        key: s.keys.other,
        body: { customer: other, document: "CL33", lines: [{ name: "x", amount: 1000 }] },
      })
    ).body;
    const res = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`, { key: s.keys.other });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ number: 1, local_file: null });
  });
});

describe("boletas and the printed timbre", () => {
  /** A boleta's file: fetched, enveloped in an EnvioBOLETA that validates, its signature verified in place. */
  async function checkedBoleta(localFile: string): Promise<string> {
    const file = await readFile(localFile);
    expect(file.status).toBe(200);
    const xml = file.bytes.toString("latin1");
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

  it("39: gross line prices, net derived from the total; a customer without RUT is SII's final consumer", async () => {
    await uploadCaf(39, 1, 10);
    const walkIn = await s.rest("POST", "/v1/customers/", {
      body: { name: "Juana Pérez", country: "CL", email: "juana@example.cl" },
    });
    expect(walkIn.status, JSON.stringify(walkIn.body)).toBe(201);
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        body: {
          customer: walkIn.body.id,
          document: "CL39",
          lines: [
            { name: "Café cortado", quantity: 2, amount: 1990 },
            { name: "Sándwich", amount: 3500 },
          ],
        },
      })
    ).body;
    const res = await finalize(`/v1/invoices/${draft.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ number: 1, amount: 6286, tax: 1194, total: 7480 });
    const xml = await checkedBoleta(res.body.local_file);
    expect(xml).toContain("<TipoDTE>39</TipoDTE><Folio>1</Folio>");
    expect(xml).toContain("<RUTRecep>66666666-6</RUTRecep><RznSocRecep>Juana Pérez</RznSocRecep>");
    expect(xml).toContain("<MntNeto>6286</MntNeto><IVA>1194</IVA><MntTotal>7480</MntTotal>");
    expect(xml).toContain("<PrcItem>1990</PrcItem><MontoItem>3980</MontoItem>");
  });

  it("41: an exempt boleta", async () => {
    await uploadCaf(41, 1, 10);
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL41", lines: [{ name: "Curso de barismo", quantity: 3, amount: 15000 }] },
      })
    ).body;
    const res = await finalize(`/v1/invoices/${draft.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ number: 1, exempt: 45000, total: 45000 });
    const xml = await checkedBoleta(res.body.local_file);
    expect(xml).toContain("<MntExe>45000</MntExe><MntTotal>45000</MntTotal>");
  });

  it(
    "the PDF prints the timbre (decoded back to the stored TED), the resolution, and a CEDIBLE copy " + "for a 33",
    async () => {
      // folio 23 of the CAF 22..30 the folio tests uploaded
      const draft = (
        await s.rest("POST", "/v1/invoices/", {
          body: { customer, document: "CL33", lines: [{ name: "Diseño", amount: 125000 }] },
        })
      ).body;
      const done = await finalize(`/v1/invoices/${draft.id}`);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      const ted = compactTed((await readFile(done.body.local_file)).bytes.toString("latin1"));
      const res = await s.rest("GET", `/v1/invoices/${draft.id}/pdf/`);
      expect(res.status).toBe(200);
      const pdf = Buffer.from(res.body.file, "base64");
      expect(await pdfTimbres(pdf)).toEqual([ted, ted]);
      const parser = new PDFParse({ data: new Uint8Array(pdf) });
      const text = await parser.getText();
      await parser.destroy();
      expect(text.pages).toHaveLength(2);
      expect(text.pages[0].text).toContain("Timbre Electrónico SII");
      expect(text.pages[0].text).toContain("Res. 0 de 2026");
      expect(text.pages[0].text).not.toContain("CEDIBLE");
      expect(text.pages[1].text).toContain("CEDIBLE");
      // a draft has no timbre
      const other = (
        await s.rest("POST", "/v1/invoices/", {
          body: { customer, document: "CL33", lines: [{ name: "x", amount: 1 }] },
        })
      ).body;
      expect(
        await pdfTimbres(Buffer.from((await s.rest("GET", `/v1/invoices/${other.id}/pdf/`)).body.file, "base64")),
      ).toEqual([]);
    },
  );
});

describe("the billing run", () => {
  it(
    "issues the cycle invoices of an enrolled organization as DTEs: CAF folios in cycle order, signed XML, queued " +
      "for sending",
    async () => {
      const product = await s.rest("POST", "/v1/products/", {
        body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
      });
      expect(product.status, JSON.stringify(product.body)).toBe(201);
      const subs: string[] = [];
      for (const quantity of [2, 3]) {
        const res = await s.rest("POST", "/v1/subscriptions/", {
          body: {
            customer,
            date_start: authorizedOn,
            expiration_days: 30,
            lines: [{ plan: product.body.plans[0].id, quantity }],
          },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        subs.push(res.body.id);
      }
      const caf = await s.database.prisma.caf.findFirstOrThrow({
        where: { organizationId: s.orgs.acme, testMode: true, documentTypeId: "CL33" },
        orderBy: { nextFolio: "desc" },
      });
      const first = caf.nextFolio;
      const summary = await runBilling({
        prisma: s.database.prisma,
        settings: { certificateEncryptionKey },
        until: authorizedOn,
        collect: false,
      });
      expect(summary.failed, summary.errors.join("; ")).toBe(0);
      expect(summary.invoices).toBe(2);
      const invoices = await s.database.prisma.invoice.findMany({ where: { subscriptionId: { in: subs } } });
      // 2 and 3 seats of 10 000 + 19% IVA; the two folios that follow the CAF's next one, once each
      const bySubscription = new Map(invoices.map((i) => [i.subscriptionId, i]));
      expect(
        subs.map((id) => [
          bySubscription.get(id)?.documentTypeId,
          bySubscription.get(id)?.status,
          bySubscription.get(id)?.billingCycle,
          Number(bySubscription.get(id)?.total),
        ]),
      ).toEqual([
        ["CL33", "finalized", 1, 23800],
        ["CL33", "finalized", 1, 35700],
      ]);
      expect(invoices.map((i) => i.number).sort((x, y) => x! - y!)).toEqual([first, first + 1]);
      for (const invoice of invoices) {
        expect(invoice.taxAgency).toMatchObject({
          agency: "sii",
          status: "pending",
          document_id: `F${invoice.number}T33`,
          folio: invoice.number,
        });
        const api = (await s.rest("GET", `/v1/invoices/${invoice.id}/`)).body;
        // the row keeps the file name; the URL is built with the request's base, as for an API finalize
        expect(invoice.localFile).toBe(`${invoice.id}_33_${invoice.number}.xml`);
        expect(api.local_file).toBe(`${s.url}/v1/files/${invoice.id}_33_${invoice.number}.xml`);
        const xml = await checkedXml(api.local_file);
        expect(xml).toContain(`<TipoDTE>33</TipoDTE><Folio>${invoice.number}</Folio>`);
        expect(xml).toContain(`<MntTotal>${Number(invoice.total)}</MntTotal>`);
      }
      expect((await s.database.prisma.caf.findUniqueOrThrow({ where: { id: caf.id } })).nextFolio).toBe(first + 2);
    },
  );
});
