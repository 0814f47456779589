/**
 * A debit note voiding a credit note (docs/orders-and-credit-notes.md "Debit notes that void a
 * credit note"; rules in src/domain/credit-note-voids.ts) end to end, for an organization enrolled
 * with SII: the CL56 issued at finalize references the CL61 with CodRef 1, its stored XML is valid
 * against SII's DTE_v10.xsd (xmllint) and its signature verifies (xmlsec1); the invoice's amount due
 * goes back up; the credit note reads as voided; bad input is a 400 naming the field.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import {
  generateCaf,
  generatePkcs12,
  xmllintValidate,
  xmlsecVerify,
  type FakePkcs12,
} from "../helpers/sii-fixtures.js";

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
}

/** The file behind `local_file`: XSD-valid and signature-verified; its text (ISO-8859-1). */
async function checkedXml(localFile: string): Promise<string> {
  const res = await fetch(localFile, { headers: { authorization: `Bearer ${s.keys.acme}` } });
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  const schema = xmllintValidate(bytes);
  expect(schema.ok, schema.output).toBe(true);
  const signature = xmlsecVerify(bytes, certificate.certificatePem);
  expect(signature.ok, signature.output).toBe(true);
  return bytes.toString("latin1");
}

const amountDue = async (id: string) =>
  (await s.graphql(`query($id: ID!) { node(id: $id) { ... on Invoice { amountDue } } }`, { id })).body.data.node
    .amountDue;

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
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Cliente Ñandú SpA" }) })).body.id;
  for (const type of [33, 56, 61]) await uploadCaf(type, 1, 20);
});
afterAll(async () => {
  await s?.close();
});

describe("a debit note voiding a credit note", () => {
  let invoice: { id: string; date: string };
  let credit: { id: string; date: string; number: number };

  beforeAll(async () => {
    const draft = await s.rest("POST", "/v1/invoices/", {
      body: { customer, lines: [{ name: "Consultoría", amount: 10000 }] },
    });
    invoice = (await s.rest("GET", `/v1/invoices/${draft.body.id}/finalize/`)).body;
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: invoice.id, note: "Descuento", lines: [{ name: "Descuento", amount: 1000 }] },
    });
    credit = (await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`)).body;
    expect(credit.number).toBe(1);
  });

  it(
    "worked example (REST): CL56 with credit_note, no lines, " + "copies 1190 and references the 61 with CodRef 1",
    async () => {
      expect(await amountDue(invoice.id)).toBe("10710");
      const draft = await s.rest("POST", "/v1/creditnotes/", {
        body: { credit_note: credit.id, note: "Anula nota de crédito por descuento mal aplicado" },
      });
      expect(draft.status, JSON.stringify(draft.body)).toBe(201);
      expect(draft.body).toMatchObject({
        document: "CL56",
        invoice: invoice.id,
        credit_note: credit.id,
        voided_by: null,
        amount: 1000,
        tax: 190,
        total: 1190,
        status: "draft",
      });
      expect(draft.body.lines).toMatchObject([{ name: "Descuento", quantity: 1, amount: 1000 }]);
      // a draft reserves the credit note: a second void is refused while it exists
      const second = await s.rest("POST", "/v1/creditnotes/", { body: { credit_note: credit.id } });
      expect(second.status).toBe(400);
      expect(second.body.error.fields).toEqual({
        credit_note: [`${credit.id} (CL61 N° 1) is already voided by ${draft.body.id}`],
      });
      expect((await s.rest("GET", `/v1/creditnotes/${credit.id}/`)).body.voided_by).toBeNull();

      const fin = await s.rest("GET", `/v1/creditnotes/${draft.body.id}/finalize/`);
      expect(fin.status, JSON.stringify(fin.body)).toBe(200);
      expect(fin.body).toMatchObject({ document: "CL56", number: 1, total: 1190 });
      const xml = await checkedXml(fin.body.local_file);
      expect(xml).toContain("<TipoDTE>56</TipoDTE><Folio>1</Folio>");
      expect(xml).toContain("<MntNeto>1000</MntNeto><TasaIVA>19</TasaIVA><IVA>190</IVA><MntTotal>1190</MntTotal>");
      expect(xml).toContain(
        "<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>61</TpoDocRef><FolioRef>1</FolioRef>" +
          `<FchRef>${credit.date}</FchRef><CodRef>1</CodRef>` +
          "<RazonRef>Anula nota de crédito por descuento mal aplicado</RazonRef></Referencia>",
      );
      expect(await amountDue(invoice.id)).toBe("11900");
      // the credit note itself is unchanged, and reads as voided
      const after = await s.rest("GET", `/v1/creditnotes/${credit.id}/`);
      expect(after.body).toMatchObject({ status: "finalized", number: 1, total: 1190, voided_by: fin.body.id });
      const gql = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on CreditNote { voidedBy { id number } voids { id } } } }`,
        { id: credit.id },
      );
      expect(gql.body.data.node).toEqual({ voidedBy: { id: fin.body.id, number: 1 }, voids: null });
      const pdf = await s.rest("GET", `/v1/creditnotes/${fin.body.id}/pdf/`);
      expect(pdf.status).toBe(200);
    },
  );

  it("GraphQL creditNote input: rejects another CodRef, a credit note type, a different total, a draft", async () => {
    const other = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: invoice.id, lines: [{ name: "Ajuste", amount: 500 }] },
    });
    const create = (input: Record<string, unknown>) =>
      s.graphql(`mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id total referenceCode } }`, {
        input,
      });
    const fieldsOf = (res: Awaited<ReturnType<typeof create>>) => res.body.errors?.[0]?.extensions?.fields;
    // a draft credit note cannot be voided
    expect(fieldsOf(await create({ creditNote: other.body.id }))).toEqual({
      credit_note: [`${other.body.id} (CL61) is a draft; only an issued credit note can be voided`],
    });
    const fin = await s.rest("GET", `/v1/creditnotes/${other.body.id}/finalize/`);
    expect(fieldsOf(await create({ creditNote: fin.body.id, referenceCode: 3 }))).toEqual({
      reference_code: ["a debit note referencing a credit note voids it: 1 (anula documento de referencia), not 3"],
    });
    expect(fieldsOf(await create({ creditNote: fin.body.id, document: "CL61" }))).toEqual({
      document: ["a CL61 is voided by a debit note of type CL56, not CL61"],
    });
    expect(fieldsOf(await create({ creditNote: fin.body.id, lines: [{ name: "x", amount: "400" }] }))).toEqual({
      total: [
        `a debit note voiding ${fin.body.id} (CL61 N° 2) must equal the credit note's total 595 CLP, not 476 CLP`,
      ],
    });
    expect(fieldsOf(await create({ creditNote: "cre_unknown" }))).toEqual({
      credit_note: ["unknown credit note cre_unknown"],
    });
    expect(fieldsOf(await create({ creditNote: fin.body.id, invoice: "inv_other" }))).toMatchObject({
      invoice: [`must be the voided credit note's invoice ${invoice.id}, or left out`],
    });
    const ok = await create({ creditNote: fin.body.id, lines: [{ name: "Ajuste", amount: "500" }] });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.createCreditNote).toMatchObject({ total: "595", referenceCode: 1 });
  });

  it("a debit note cannot void a debit note", async () => {
    const debit = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: invoice.id, document: "CL56", lines: [{ name: "Flete", amount: 100 }] },
    });
    const res = await s.rest("POST", "/v1/creditnotes/", { body: { credit_note: debit.body.id } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields.credit_note).toEqual([
      `${debit.body.id} (CL56) is not a credit note; only a credit note can be voided`,
    ]);
  });
});
