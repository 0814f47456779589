/**
 * Numbering before enrollment (docs/sii-setup.md "Numbering before enrollment"), following the
 * README and docs/tour.md in order: invoices first, in test mode before any SII set-up (the internal series, printed
 * as a non-tax document: no "ELECTRÓNICA", no SII header box, no timbre), then the SII set-up with a
 * CAF from folio 1, as SII hands out a first CAF: accepted whatever internal numbers exist, and the
 * next finalize takes folio 1 with a signed DTE. The two series never collide, the internal
 * documents keep their numbers, and a note on an internal invoice stays internal.
 */
import { randomBytes } from "node:crypto";
import { PDFParse } from "pdf-parse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";

const RUT = "76042235-5";
let s: TestServer;
let customer: string;
const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } });
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => {
  await s?.close();
});

async function finalizedInvoice(): Promise<any> {
  const draft = await s.rest("POST", "/v1/invoices/", {
    body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 1, amount: 10000 }] },
  });
  expect(draft.status, JSON.stringify(draft.body)).toBe(201);
  const res = await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The text of a document's PDF, whitespace collapsed. */
async function pdfText(path: string): Promise<string> {
  const res = await s.rest("GET", `${path}/pdf/`);
  expect(res.status).toBe(200);
  const text = (await new PDFParse({ data: new Uint8Array(Buffer.from(res.body.file, "base64")) }).getText()).text;
  return text.replace(/\s+/g, " ");
}

describe("the tour's order: invoices first, SII set-up later", () => {
  const internal: any[] = [];

  it(
    "before SII set-up, test mode numbers a CL33 in the internal series and prints it as a non-tax " + "document",
    async () => {
      for (let i = 0; i < 3; i++) internal.push(await finalizedInvoice());
      expect(internal.map((i) => [i.number, i.numbering, i.local_file])).toEqual([
        [1, "internal", null],
        [2, "internal", null],
        [3, "internal", null],
      ]);
      const text = await pdfText(`/v1/invoices/${internal[0].id}`);
      expect(text).toContain("DOCUMENTO NO TRIBUTARIO");
      expect(text).toContain("N° interno 1");
      expect(text).toContain("Sin validez tributaria: numerado en la serie interna del emisor");
      expect(text).not.toMatch(/electr[óo]nica/i);
      expect(text).not.toContain("S.I.I.");
      expect(text).not.toContain("Timbre");
      expect(text).not.toMatch(/N° 1\b/);
      // GraphQL says the same
      const gql = await s.graphql(`query($id: ID!) { node(id: $id) { ... on Invoice { number numbering } } }`, {
        id: internal[0].id,
      });
      expect(gql.body.data.node).toEqual({ number: 1, numbering: "internal" });
    },
  );

  it(
    "the first CAF (folios 1 to 50) is accepted whatever internal numbers exist; the next finalize takes folio 1 " +
      "with a DTE",
    async () => {
      expect(
        (
          await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
            body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 0, resolution_date: "2026-01-15" },
          })
        ).status,
      ).toBe(200);
      const certificate = generatePkcs12({ rut: "12345678-5" });
      const cert = await s.rest("POST", "/v1/billers/built_in/certificates/", {
        body: { file: certificate.file.toString("base64"), password: certificate.password },
      });
      expect(cert.status, JSON.stringify(cert.body)).toBe(201);
      const caf = await s.rest("POST", "/v1/billers/built_in/cafs/", {
        body: { file: generateCaf({ rut: RUT, type: 33, from: 1, to: 50, authorizedOn }).file.toString("base64") },
      });
      expect(caf.status, JSON.stringify(caf.body)).toBe(201);

      const first = await finalizedInvoice();
      expect([first.number, first.numbering]).toEqual([1, "sii_folio"]);
      expect(first.local_file).toBe(`${s.url}/v1/files/${first.id}_33_1.xml`);
      const second = await finalizedInvoice();
      expect([second.number, second.numbering]).toEqual([2, "sii_folio"]);
      const text = await pdfText(`/v1/invoices/${first.id}`);
      expect(text).toContain("FACTURA ELECTRÓNICA");
      expect(text).toContain("N° 1");
      expect(text).toContain("S.I.I. - ");
      expect(text).not.toContain("DOCUMENTO NO TRIBUTARIO");

      // the internal documents keep their numbers and series; both series hold a CL33 number 1
      for (const [i, doc] of internal.entries()) {
        const again = (await s.rest("GET", `/v1/invoices/${doc.id}/`)).body;
        expect([again.number, again.numbering, again.local_file]).toEqual([i + 1, "internal", null]);
      }
      const ones = await s.database.prisma.invoice.findMany({
        where: { organizationId: s.orgs.acme, testMode: true, documentTypeId: "CL33", number: 1 },
        select: { numbering: true },
      });
      expect(ones.map((o) => o.numbering).sort()).toEqual(["internal", "sii_folio"]);
      // the old internal PDF still prints as it was issued
      expect(await pdfText(`/v1/invoices/${internal[0].id}`)).toContain("N° interno 1");
    },
  );

  it("a CAF whose folios were already issued as DTEs is still refused", async () => {
    const caf = await s.rest("POST", "/v1/billers/built_in/cafs/", {
      body: { file: generateCaf({ rut: RUT, type: 33, from: 2, to: 60, authorizedOn }).file.toString("base64") },
    });
    expect(caf.status).toBe(400);
    expect(caf.body.error.fields.file[0]).toMatch(/overlap/);
  });

  it(
    "a credit note on an internal invoice is internal too (no DTE can reference it); GraphQL lists " + "the series",
    async () => {
      const note = await s.rest("POST", "/v1/creditnotes/", {
        body: { invoice: internal[1].id, lines: [{ name: "Devolución", amount: 1000 }], note: "Ajuste" },
      });
      expect(note.status, JSON.stringify(note.body)).toBe(201);
      const fin = await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`);
      expect(fin.status, JSON.stringify(fin.body)).toBe(200);
      expect([fin.body.number, fin.body.numbering, fin.body.local_file]).toEqual([1, "internal", null]);
      const text = await pdfText(`/v1/creditnotes/${note.body.id}`);
      expect(text).toContain("DOCUMENTO NO TRIBUTARIO N° interno 1");
      expect(text).toContain("Documento no tributario 2 ");
      expect(text).not.toMatch(/electr[óo]nica/i);

      const list = await s.graphql(
        `{ invoices(first: 10, where: { status: { equals: finalized } }) { edges { node { number numbering } } } }`,
      );
      const series = list.body.data.invoices.edges.map((e: any) => `${e.node.numbering}:${e.node.number}`).sort();
      expect(series).toEqual(["internal:1", "internal:2", "internal:3", "sii_folio:1", "sii_folio:2"]);
    },
  );
});
