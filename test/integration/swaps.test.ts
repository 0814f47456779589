/**
 * Receiving supplier documents over real HTTP (issue 6 "Receiving"; docs/sii-receiving.md):
 * SII's example EnvioDTE imported as a swap with its purchase, the files read back through their
 * URLs and checked with xmllint and xmlsec1, bad envelopes refused with nothing stored, duplicates
 * 409, the swap list filters and pages, replies (ERM with EnvioRecibos, a claim, a claim after the
 * 8-day window, a second reply), the PDF, and the GraphQL counterparts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { PDFParse } from "pdf-parse";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { generatePkcs12, xmllintValidate } from "../helpers/sii-fixtures.js";
import { ENVIO_RECIBOS_XSD, RESPUESTA_XSD, xmlsecVerifySignature } from "../helpers/sii-exchange.js";
import { SUPPLIER_RUT, supplierEnvelope } from "../helpers/supplier-envelope.js";

// SII's own example (docs/sii-dte.md "Sources"), kept in the repository so a clone tests alone
const SAMPLE = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII.xml", import.meta.url));
const SAMPLE_TEXT = SAMPLE.toString("latin1");
/** SII's example with MntTotal 119000 changed to 119001 after signing. */
const TAMPERED = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII-alterado.xml", import.meta.url));
/** SII's example with another folio (a different document of the same supplier). */
const withFolio = (folio: number) =>
  SAMPLE_TEXT.replace("<Folio>60</Folio>", `<Folio>${folio}</Folio>`).replace('ID="F60T33"', `ID="F${folio}T33"`);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

let s: TestServer;
let cert: { certificatePem: string };

function one(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}

/** GET an absolute file URL with a key: status and bytes. */
async function fetchFile(url: string, key = s.keys.acme) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get("content-type") };
}

async function counts() {
  const p = s.database.prisma;
  return { swaps: await p.swap.count(), purchases: await p.purchase.count(), files: await p.storedFile.count() };
}

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } });
  // the test organization is the example's receiver
  await s.database.prisma.organizationSettings.update({
    where: { organizationId_testMode: { organizationId: s.orgs.acme, testMode: true } },
    data: {
      taxId: "77777777-7",
      taxBusinessName: "EMPRESA LTDA",
      taxAddress: "SAN DIEGO 2222",
      taxCommune: "LA FLORIDA",
    },
  });
  // the signer's certificate names its holder's RUT (Recibo RutFirma)
  const p12 = generatePkcs12({ rut: "7880442-4", password: "clave secreta" });
  cert = p12;
  const up = await s.rest("POST", "/v1/billers/built_in/certificates/", {
    body: { file: p12.file.toString("base64"), password: "clave secreta" },
  });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
});
afterAll(async () => s?.close());

let sampleSwap: any;

describe("POST /v1/billers/built_in/purchases/", () => {
  it("imports SII's example: a swap with one purchase, the file and a signed RecepcionDTE", async () => {
    const res = await s.rest("POST", "/v1/billers/built_in/purchases/", {
      body: { file: SAMPLE.toString("base64"), file_name: "F60T33-ejemplo-oficial-SII.xml" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    sampleSwap = res.body;
    expect(res.body).toEqual({
      id: expect.stringMatching(/^swa_[0-9A-Za-z]{24}$/),
      purchases: [expect.stringMatching(/^pur_[0-9A-Za-z]{24}$/)],
      local_file: `${s.url}/v1/files/${res.body.id}-envio.xml`,
      receipt: null,
      reception: `${s.url}/v1/files/${res.body.id}-recepcion.xml`,
      result: null,
      reply_to: null,
      reply_by: null,
      reply_date: null,
      status: null,
      imported: true,
      created: expect.stringMatching(ISO),
      // SII's example: its timbre verifies, its signature does not (test/sii/received-verification.test.ts)
      verification: [
        {
          purchase: res.body.purchases[0],
          document_type: 33,
          folio: 60,
          issuer_tax_id: "97975000-5",
          signature_valid: false,
          ted_valid: true,
          reason: "signature: the signature does not verify",
        },
      ],
      proposed_status: "RCD",
      proposed_reason: "type 33 folio 60 from 97975000-5: signature did not verify; claim the content within 8 days",
    });
    const purchase = await s.database.prisma.purchase.findUniqueOrThrow({ where: { id: res.body.purchases[0] } });
    expect({
      ...purchase,
      amount: purchase.amount.toString(),
      exempt: purchase.exempt.toString(),
      tax: purchase.tax.toString(),
      total: purchase.total.toString(),
      xml: undefined,
      createdAt: undefined,
    }).toEqual({
      id: res.body.purchases[0],
      organizationId: s.orgs.acme,
      testMode: true,
      swapId: res.body.id,
      documentCode: 33,
      folio: 60,
      issuerTaxId: "97975000-5",
      issuerName: "RUT DE PRUEBA",
      date: new Date("2003-10-13T00:00:00Z"),
      amount: "100000",
      exempt: "0",
      tax: "19000",
      total: "119000",
      xml: undefined,
      signatureValid: false,
      tedValid: true,
      verificationError: "signature: the signature does not verify",
      createdAt: undefined,
    });
    expect(purchase.xml).toContain('<Documento ID="F60T33">');
  });

  it(
    "serves the received file byte for byte and the reception valid against SII's schema and signed with the " +
      "organization's certificate",
    async () => {
      const local = await fetchFile(sampleSwap.local_file);
      expect(local.status).toBe(200);
      expect(local.bytes.equals(SAMPLE)).toBe(true);
      const reception = await fetchFile(sampleSwap.reception);
      expect(reception.status).toBe(200);
      expect(xmllintValidate(reception.bytes, RESPUESTA_XSD).output).toContain("validates");
      expect(xmlsecVerifySignature(reception.bytes, cert.certificatePem, ["Resultado"]).output).toMatch(/^OK/);
      const xml = reception.bytes.toString("latin1");
      expect([
        one(xml, "RutResponde"),
        one(xml, "RutRecibe"),
        one(xml, "NmbEnvio"),
        one(xml, "EnvioDTEID"),
        one(xml, "EstadoRecepEnv"),
        one(xml, "Folio"),
        one(xml, "MntTotal"),
        one(xml, "EstadoRecepDTE"),
      ]).toEqual([
        "77777777-7",
        "97975000-5",
        "F60T33-ejemplo-oficial-SII.xml",
        "SetDoc",
        "0",
        "60",
        "119000",
        // 1: signature error (the example's signature does not verify)
        "1",
      ]);
      // another organization cannot read the files
      expect((await fetchFile(sampleSwap.local_file, s.keys.other)).status).toBe(404);
    },
  );

  it("refuses the same document again with 409 naming it, storing nothing", async () => {
    const before = await counts();
    const res = await s.rest("POST", "/v1/billers/built_in/purchases/", { body: { xml: SAMPLE_TEXT } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("invalid_state");
    expect(res.body.error.message).toContain("Already received: type 33 folio 60 from 97975000-5");
    expect(await counts()).toEqual(before);
  });

  it("two concurrent imports of one new document: one 201, the other a clear 409", async () => {
    const before = await counts();
    const results = await Promise.all(
      [1, 2].map(() => s.rest("POST", "/v1/billers/built_in/purchases/", { body: { xml: withFolio(90) } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.status === 409)!.body.error.message).toContain("type 33 folio 90 from 97975000-5");
    const after = await counts();
    expect([after.swaps - before.swaps, after.purchases - before.purchases, after.files - before.files]).toEqual([
      1, 1, 2,
    ]);
    await s.database.prisma.swap.delete({ where: { id: results.find((r) => r.status === 201)!.body.id } });
    await s.database.prisma.storedFile.deleteMany({
      where: { name: { startsWith: results.find((r) => r.status === 201)!.body.id } },
    });
  });

  it(
    "400 naming the reason, nothing stored: malformed, schema-invalid, addressed to another RUT, " + "no input",
    async () => {
      const before = await counts();
      const malformed = await s.rest("POST", "/v1/billers/built_in/purchases/", {
        body: { xml: SAMPLE_TEXT.slice(0, 2000) },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.fields.xml[0]).toMatch(/^is not well-formed XML/);
      const invalid = await s.rest("POST", "/v1/billers/built_in/purchases/", {
        body: { xml: withFolio(70).replace("<MntTotal>119000</MntTotal>", "<MntTotal>mucho</MntTotal>") },
      });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.fields.xml[0]).toMatch(/does not match SII's EnvioDTE schema.*MntTotal/);
      const other = await s.rest("POST", "/v1/billers/built_in/purchases/", {
        body: { xml: withFolio(71).replace("<RUTRecep>77777777-7</RUTRecep>", "<RUTRecep>76042235-5</RUTRecep>") },
      });
      expect(other.status).toBe(400);
      expect(other.body.error.fields.xml).toEqual([
        "DTE type 33 folio 71 is addressed to RUT 76042235-5, not to this organization (77777777-7)",
      ]);
      expect((await s.rest("POST", "/v1/billers/built_in/purchases/", { body: {} })).body.error.fields.xml[0]).toMatch(
        /exactly one of xml/,
      );
      expect(
        (await s.rest("POST", "/v1/billers/built_in/purchases/", { body: { xml: SAMPLE_TEXT, colour: "red" } })).status,
      ).toBe(400);
      expect(await counts()).toEqual(before);
    },
  );
});

/** Removes a swap made by a test (its purchases cascade) and its files, so the list tests below count only theirs. */
async function dropSwap(id: string) {
  await s.database.prisma.swap.delete({ where: { id } });
  await s.database.prisma.storedFile.deleteMany({ where: { name: { startsWith: id } } });
}

describe('verification on import (docs/sii-receiving.md "Verification")', () => {
  const made: string[] = [];
  afterAll(async () => {
    for (const id of made) await dropSwap(id);
  });
  it(
    "a supplier's factura signed by the test helpers: signature and TED valid, ACD proposed, " + "EstadoRecepDTE 0",
    async () => {
      const supplier = supplierEnvelope({ receiverRut: "77777777-7", folio: 12 });
      const res = await s.rest("POST", "/v1/billers/built_in/purchases/", {
        body: { file: supplier.file.toString("base64") },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push(res.body.id);
      expect(res.body.verification).toEqual([
        {
          purchase: res.body.purchases[0],
          document_type: 33,
          folio: 12,
          issuer_tax_id: SUPPLIER_RUT,
          signature_valid: true,
          ted_valid: true,
          reason: null,
        },
      ]);
      expect([res.body.proposed_status, res.body.proposed_reason]).toEqual([
        "ACD",
        "every document's signature and timbre (TED) verified",
      ]);
      const reception = (await fetchFile(res.body.reception)).bytes.toString("latin1");
      expect([one(reception, "EstadoRecepDTE"), one(reception, "RecepDTEGlosa")]).toEqual(["0", "DTE recibido"]);
      const g = await s.graphql(
        `{ node(id: "${res.body.purchases[0]}") { ... on Purchase { signatureValid tedValid verificationReason } } }`,
      );
      expect(g.body.data.node).toEqual({ signatureValid: true, tedValid: true, verificationReason: null });
    },
  );

  it(
    "the tampered copy of SII's example (MntTotal 119001, as folio 63): both flagged with reasons, RCD proposed, " +
      "kept so it can be claimed",
    async () => {
      const tampered = TAMPERED.toString("latin1")
        .replace("<Folio>60</Folio>", "<Folio>63</Folio>")
        .replace('ID="F60T33"', 'ID="F63T33"');
      const res = await s.rest("POST", "/v1/billers/built_in/purchases/", {
        body: { file: Buffer.from(tampered, "latin1").toString("base64") },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push(res.body.id);
      expect(res.body.verification).toEqual([
        {
          purchase: res.body.purchases[0],
          document_type: 33,
          folio: 63,
          issuer_tax_id: "97975000-5",
          signature_valid: false,
          ted_valid: false,
          // the Documento ID changed with the folio: the signature still references the old one
          reason:
            "signature: the signature must reference #F63T33 only, not #F60T33; TED: the timbre's DD does not match " +
            "the document (F, MNT)",
        },
      ]);
      expect(res.body.proposed_status).toBe("RCD");
      expect(res.body.proposed_reason).toBe(
        "type 33 folio 63 from 97975000-5: signature and timbre (TED) did not verify; claim the content within 8 days",
      );
      const reception = (await fetchFile(res.body.reception)).bytes.toString("latin1");
      expect(xmllintValidate(Buffer.from(reception, "latin1"), RESPUESTA_XSD).output).toContain("validates");
      expect(one(reception, "EstadoRecepDTE")).toBe("1");
      expect(one(reception, "RecepDTEGlosa")).toMatch(
        /^Error de firma: signature: the signature must reference #F63T33/,
      );
      const g = await s.graphql(
        `{ node(id: "${res.body.id}") { ... on Swap { proposedStatus proposedReason purchases { signatureValid ` +
          `tedValid } } } }`,
      );
      expect(g.body.data.node).toEqual({
        proposedStatus: "RCD",
        proposedReason: res.body.proposed_reason,
        purchases: [{ signatureValid: false, tedValid: false }],
      });
      // the proposal is what the user can send: the claim is accepted
      const claim = await s.rest("PATCH", `/v1/billers/built_in/swaps/${res.body.id}/`, {
        body: { status: res.body.proposed_status },
      });
      expect(claim.status, JSON.stringify(claim.body)).toBe(200);
      expect(claim.body.status).toBe("RCD");
    },
  );
});

describe("swap endpoints", () => {
  let graphSwap: string;
  let lateSwap: string;

  it("GraphQL receivePurchaseDocuments imports another document; purchases and swap read back", async () => {
    const res = await s.graphql(
      `mutation($input: ReceivePurchaseDocumentsInput!) { receivePurchaseDocuments(input: $input) { id imported ` +
        `status purchases { id folio documentType issuerTaxId total } reception } }`,
      { input: { xml: withFolio(61) } },
    );
    expect(res.body.errors).toBeUndefined();
    const swap = res.body.data.receivePurchaseDocuments;
    graphSwap = swap.id;
    expect(swap).toMatchObject({
      imported: true,
      status: null,
      purchases: [{ folio: 61, documentType: 33, issuerTaxId: "97975000-5", total: "119000" }],
    });
    const purchases = await s.graphql(
      `{ purchases(where: { swap: { equals: "${graphSwap}" } }) { totalCount edges { node { folio swap { id } } } } }`,
    );
    expect(purchases.body.data.purchases).toEqual({
      totalCount: 1,
      edges: [{ node: { folio: 61, swap: { id: graphSwap } } }],
    });
    lateSwap = (await s.rest("POST", "/v1/billers/built_in/purchases/", { body: { xml: withFolio(62) } })).body.id;
  });

  it("retrieve, and 404 for another organization", async () => {
    const res = await s.rest("GET", `/v1/billers/built_in/swaps/${sampleSwap.id}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(sampleSwap);
    expect((await s.rest("GET", `/v1/billers/built_in/swaps/${sampleSwap.id}/`, { key: s.keys.other })).status).toBe(
      404,
    );
  });

  it(
    "PATCH ERM: reply recorded, signed ResultadoDTE and EnvioRecibos valid and readable through " + "their URLs",
    async () => {
      const res = await s.rest("PATCH", `/v1/billers/built_in/swaps/${sampleSwap.id}/`, {
        body: { status: "ERM", reply_to: "dte@proveedor.cl", imported: false },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        status: "ERM",
        reply_to: "dte@proveedor.cl",
        reply_by: "ops@acme.cl",
        reply_date: expect.stringMatching(ISO),
        imported: true,
        result: `${s.url}/v1/files/${sampleSwap.id}-resultado.xml`,
        receipt: `${s.url}/v1/files/${sampleSwap.id}-recibos.xml`,
      });
      const result = await fetchFile(res.body.result);
      expect(result.status).toBe(200);
      expect(xmllintValidate(result.bytes, RESPUESTA_XSD).output).toContain("validates");
      expect(xmlsecVerifySignature(result.bytes, cert.certificatePem, ["Resultado"]).output).toMatch(/^OK/);
      const rxml = result.bytes.toString("latin1");
      expect([one(rxml, "EstadoDTE"), one(rxml, "Folio"), one(rxml, "MntTotal"), one(rxml, "RutResponde")]).toEqual([
        "0",
        "60",
        "119000",
        "77777777-7",
      ]);
      const receipt = await fetchFile(res.body.receipt);
      expect(xmllintValidate(receipt.bytes, ENVIO_RECIBOS_XSD).output).toContain("validates");
      const ids = ["SetRecibos", "DocumentoRecibo"];
      expect(
        xmlsecVerifySignature(receipt.bytes, cert.certificatePem, ids, "/*/*[local-name()='Signature']").output,
      ).toMatch(/^OK/);
      expect(
        xmlsecVerifySignature(
          receipt.bytes,
          cert.certificatePem,
          ids,
          "//*[local-name()='Recibo']/*[local-name()='Signature']",
        ).output,
      ).toMatch(/^OK/);
      const xml = receipt.bytes.toString("latin1");
      expect([one(xml, "RutFirma"), one(xml, "Recinto"), one(xml, "TipoDoc"), one(xml, "Folio")]).toEqual([
        "7880442-4",
        "SAN DIEGO 2222, LA FLORIDA",
        "33",
        "60",
      ]);
    },
  );

  it("a reply is final: 409 on a second PATCH; 400 on an unknown status", async () => {
    const again = await s.rest("PATCH", `/v1/billers/built_in/swaps/${sampleSwap.id}/`, { body: { status: "RCD" } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain("already answered with ERM");
    const bad = await s.rest("PATCH", `/v1/billers/built_in/swaps/${graphSwap}/`, { body: { status: "OK" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.status).toEqual(["must be one of ACD, ERM, RCD, RFP, RFT, not OK"]);
    expect(
      (await s.rest("PATCH", `/v1/billers/built_in/swaps/${graphSwap}/`, { body: { status: "ACD", reply_to: "nope" } }))
        .status,
    ).toBe(400);
  });

  it(
    "a claim after SII's 8-day window is refused (409); within it, GraphQL updateSwap RCD rejects the document " +
      "(EstadoDTE 2, no receipt)",
    async () => {
      await s.database.prisma.swap.update({
        where: { id: lateSwap },
        data: { createdAt: new Date(Date.now() - 10 * 86_400_000) },
      });
      const late = await s.rest("PATCH", `/v1/billers/built_in/swaps/${lateSwap}/`, { body: { status: "RFT" } });
      expect(late.status).toBe(409);
      expect(late.body.error.message).toMatch(
        /Claim RFT refused: SII accepts claims within 8 calendar days of reception/,
      );
      expect((await s.database.prisma.swap.findUniqueOrThrow({ where: { id: lateSwap } })).status).toBeNull();

      const res = await s.graphql(
        `mutation { updateSwap(id: "${graphSwap}", input: { status: RCD }) { status replyBy result receipt } }`,
      );
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.updateSwap).toMatchObject({ status: "RCD", replyBy: "ops@acme.cl", receipt: null });
      const result = await fetchFile(res.body.data.updateSwap.result);
      expect(xmllintValidate(result.bytes, RESPUESTA_XSD).ok).toBe(true);
      expect(one(result.bytes.toString("latin1"), "EstadoDTE")).toBe("2");
    },
  );

  it("lists newest first with status, imported and created filters and pages", async () => {
    const all = await s.rest("GET", "/v1/billers/built_in/swaps/?page_size=2");
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    expect(all.body.results.map((x: any) => x.id)).toEqual([graphSwap, sampleSwap.id]);
    expect(all.body.next).toContain("page=2");
    expect((await s.rest("GET", "/v1/billers/built_in/swaps/?status=ERM")).body.results.map((x: any) => x.id)).toEqual([
      sampleSwap.id,
    ]);
    expect((await s.rest("GET", "/v1/billers/built_in/swaps/?status__in=ERM,RCD")).body.count).toBe(2);
    expect((await s.rest("GET", "/v1/billers/built_in/swaps/?imported=false")).body.count).toBe(0);
    expect((await s.rest("GET", "/v1/billers/built_in/swaps/?imported=true")).body.count).toBe(3);
    const old = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    expect(
      (await s.rest("GET", `/v1/billers/built_in/swaps/?created__lte=${old}`)).body.results.map((x: any) => x.id),
    ).toEqual([lateSwap]);
    expect((await s.rest("GET", "/v1/billers/built_in/swaps/?colour=red")).status).toBe(400);
    expect((await s.rest("GET", "/v1/billers/built_in/swaps/", { key: s.keys.other })).body.count).toBe(0);
    const g = await s.graphql(
      `{ swaps(first: 10, where: { status: { equals: RCD } }) { totalCount edges { node { id purchases { folio ` +
        `} } } } }`,
    );
    expect(g.body.data.swaps).toEqual({
      totalCount: 1,
      edges: [{ node: { id: graphSwap, purchases: [{ folio: 61 }] } }],
    });
  });

  it("pdf: a PDF listing the swap's documents", async () => {
    const res = await s.rest("GET", `/v1/billers/built_in/swaps/${sampleSwap.id}/pdf/`);
    expect(res.status).toBe(200);
    const pdf = Buffer.from(res.body.file, "base64");
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const text = (await new PDFParse({ data: new Uint8Array(pdf) }).getText()).text;
    expect(text).toContain(sampleSwap.id);
    expect(text).toContain("RUT DE PRUEBA (97975000-5)");
    expect(text).toContain("100.000");
    expect(text).toContain("119.000");
    expect(text).toContain("ERM por ops@acme.cl");
    expect((await s.rest("GET", `/v1/billers/built_in/swaps/swa_nope/pdf/`)).status).toBe(404);
  });
});
