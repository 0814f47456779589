/**
 * The DTE exchange with receivers (services/sii-exchange.ts, docs/sii-exchange.md), both
 * directions, over real HTTP with the fake SII (test/helpers/fake-sii.ts) and a real SMTP server
 * (test/helpers/smtp.ts):
 * - outbound: a finalized factura, uploaded and accepted by the fake SII, is e-mailed to the
 *   receiver's exchange address with an EnvioDTE addressed to the receiver (checked with xmllint
 *   against EnvioDTE_v10.xsd and xmlsec1) and its PDF; retried while the SMTP server refuses.
 * - inbound: the receiver's answers (RecepcionDTE, ResultadoDTE, EnvioRecibos), built and signed
 *   here with the project's builders (infra/taxagency/sii/responses.ts) and a certificate of the
 *   receiver, recorded through REST and GraphQL as the documents' receiver status; an unknown
 *   folio, a forged signature, another RutRecibe/RUTEmisor/RUTRecep, a malformed or schema-invalid
 *   file: 400 naming the document or the reason, nothing written.
 * Rounds (SII worker, outbox) are run by calling them with explicit times.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { PDFParse } from "pdf-parse";
import { createLogger } from "../../src/infra/logger.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { createSmtpMailer } from "../../src/infra/mail.js";
import { sendDueSubmissions, type SiiSendingDeps } from "../../src/services/sii-sending.js";
import { deliverDueMessages, type OutboxDeps } from "../../src/services/outbox.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import {
  SCHEMA_DIR,
  generateCaf,
  generatePkcs12,
  xmllintValidate,
  type FakeCertificate,
} from "../helpers/sii-fixtures.js";
import { ENVIO_DTE_XSD } from "../helpers/sii-exchange.js";
import { FakeSii, countsOf, startFakeSii } from "../helpers/fake-sii.js";
import { dteSignature, ENVELOPE_SIGNATURE, xmlsecVerifyNode } from "../helpers/sii-envelope.js";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.js";
import { generateCertificate } from "../helpers/sii-fixtures.js";
import {
  buildEnvioRecibos,
  buildRecepcionDte,
  buildResultadoDte,
  type AnsweredDocument,
} from "../../src/infra/taxagency/sii/index.js";

const RUT = "76042235-5";
const HOLDER_RUT = "11111111-1";
const RECEIVER_RUT = "77777777-7";
const KEY = randomBytes(32);
const MAIL_FROM = "dte@acme.cl";
let s: TestServer;
let sii: FakeSii;
let smtp: TestSmtpServer;
let cert: FakeCertificate;
let withExchange: string;
let withoutExchange: string;
let deps: SiiSendingDeps;
let outbox: OutboxDeps;
/** the clock of the rounds: every step is later than the previous one */
let clock = Date.now() + 1000;
const later = (ms: number) => new Date((clock = Math.max(clock, Date.now()) + ms));

beforeAll(async () => {
  const p12 = generatePkcs12({ rut: HOLDER_RUT });
  cert = p12;
  sii = await startFakeSii({
    trustedCertificatePem: cert.certificatePem,
    schema: join(SCHEMA_DIR, "EnvioDTE_v10.xsd"),
    boletaSchema: join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd"),
  });
  smtp = await startSmtpServer();
  const settings = { sii: sii.hosts, certificateEncryptionKey: KEY, smtpUrl: smtp.url, mailFrom: MAIL_FROM };
  s = await startTestServer({ settings, outboxIntervalMs: 0 });
  expect(
    (
      await s.rest("POST", "/v1/billers/built_in/certificates/", {
        body: { file: p12.file.toString("base64"), password: p12.password },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 80, resolution_date: "2014-08-22" },
      })
    ).status,
  ).toBe(200);
  for (const type of [33, 61]) {
    const caf = generateCaf({
      rut: RUT,
      type,
      from: 1,
      to: 1000,
      authorizedOn: new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10),
    });
    expect(
      (await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } })).status,
    ).toBe(201);
  }
  const a = await s.rest("POST", "/v1/customers/", {
    body: chileanCustomer({
      tax_id: "77.777.777-7",
      email: "pagos@cliente.cl",
      tax_settings: { exchange_email: "dte@cliente.cl" },
    }),
  });
  expect(a.status, JSON.stringify(a.body)).toBe(201);
  withExchange = a.body.id;
  withoutExchange = (
    await s.rest("POST", "/v1/customers/", {
      body: chileanCustomer({ tax_id: "77.777.777-7", email: "contabilidad@cliente.cl" }),
    })
  ).body.id;
  deps = { prisma: s.database.prisma, logger: createLogger("silent"), settings: { ...DEFAULT_SETTINGS, ...settings } };
  outbox = {
    prisma: s.database.prisma,
    mailer: createSmtpMailer(smtp.url),
    logger: createLogger("silent"),
    settings: { ...DEFAULT_SETTINGS, ...settings },
  };
  sii.statusFor = (u) => ({ estado: "EPR", glosa: "Envio Procesado", counts: countsOf(u.file, "all-accepted") });
});
afterAll(async () => {
  await s?.close();
  await sii?.stop();
  await smtp?.close();
});

/** A finalized factura of `customer` uploaded to and accepted by the fake SII. */
async function acceptedInvoice(customer: string): Promise<{ id: string; folio: number }> {
  const inv = (
    await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 2, amount: 50000 }] },
    })
  ).body;
  const fin = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`);
  expect(fin.status, JSON.stringify(fin.body)).toBe(200);
  const up = await sendDueSubmissions(deps, later(1000));
  expect(up.uploaded, JSON.stringify([up, await taxAgency(inv.id)])).toBe(1);
  expect((await sendDueSubmissions(deps, later(10 * 60_000))).decided).toBe(1);
  return { id: inv.id, folio: fin.body.number as number };
}

async function taxAgency(id: string): Promise<Record<string, any>> {
  return (await s.database.prisma.invoice.findUniqueOrThrow({ where: { id }, select: { taxAgency: true } }))
    .taxAgency as Record<string, any>;
}

function one(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}

let sentInvoice: { id: string; folio: number };

describe("outbound: an accepted DTE goes to the receiver's exchange address", () => {
  it(
    "queued when SII accepts; delivered with the EnvioDTE addressed to the receiver (XSD-valid, signed) " +
      "and the PDF",
    async () => {
      sentInvoice = await acceptedInvoice(withExchange);
      const queued = await taxAgency(sentInvoice.id);
      expect(queued).toMatchObject({
        status: "accepted",
        exchange_to: "dte@cliente.cl",
        exchange_file: expect.stringMatching(/^\/v1\/files\/sii-intercambio-.+\.xml$/),
      });
      expect(queued).not.toHaveProperty("exchange_sent_at");
      const message = await s.database.prisma.outboxMessage.findUniqueOrThrow({
        where: { id: queued.exchange_message },
      });
      expect([
        message.kind,
        message.status,
        message.testMode,
        message.recipients,
        message.attachmentKind,
        message.attachmentId,
      ]).toEqual(["dte_exchange", "pending", true, ["dte@cliente.cl"], "invoice", sentInvoice.id]);

      const before = smtp.received.length;
      const t = later(1000);
      expect(await deliverDueMessages(outbox, t)).toEqual({ claimed: 1, sent: 1, retrying: 0, failed: 0 });
      expect(smtp.received).toHaveLength(before + 1);
      const mail = smtp.received.at(-1)!;
      expect(mail.envelope).toEqual({ from: MAIL_FROM, to: ["dte@cliente.cl"] });
      expect(mail.parsed.subject).toMatch(
        new RegExp(`^Factura electrónica N° ${sentInvoice.folio} de .+ \\(RUT ${RUT}\\)$`),
      );
      expect(mail.parsed.attachments.map((a) => a.contentType).sort()).toEqual(["application/pdf", "application/xml"]);

      const xmlFile = mail.parsed.attachments.find((a) => a.contentType === "application/xml")!;
      expect(xmlFile.filename).toBe(String(queued.exchange_file).replace("/v1/files/", ""));
      const xml = xmlFile.content.toString("latin1");
      expect(one(xml, "RutEmisor")).toBe(RUT);
      expect(one(xml, "RutReceptor")).toBe(RECEIVER_RUT);
      expect(one(xml, "RUTRecep")).toBe(RECEIVER_RUT);
      expect(one(xml, "Folio")).toBe(String(sentInvoice.folio));
      const schema = xmllintValidate(xmlFile.content, ENVIO_DTE_XSD);
      expect(schema.output).toContain("validates");
      expect(xmlsecVerifyNode(xmlFile.content, cert.certificatePem, ENVELOPE_SIGNATURE).output).toMatch(/^OK/);
      expect(xmlsecVerifyNode(xmlFile.content, cert.certificatePem, dteSignature(1)).output).toMatch(/^OK/);
      // the same file is served to the organization
      const served = await fetch(`${s.url}${queued.exchange_file}`, {
        headers: { authorization: `Bearer ${s.keys.acme}` },
      });
      expect(Buffer.from(await served.arrayBuffer()).equals(xmlFile.content)).toBe(true);

      const pdf = mail.parsed.attachments.find((a) => a.contentType === "application/pdf")!;
      expect(pdf.filename).toBe(`invoice-CL33-${sentInvoice.folio}.pdf`);
      const text = (await new PDFParse({ data: new Uint8Array(pdf.content) }).getText()).text;
      expect(text).toContain(`N° ${sentInvoice.folio}`);

      expect(await taxAgency(sentInvoice.id)).toMatchObject({ exchange_sent_at: t.toISOString() });
    },
  );

  it(
    "without tax_settings.exchange_email the DTE's CorreoRecep (the customer's e-mail) is used; a refusing server " +
      "is retried",
    async () => {
      const inv = await acceptedInvoice(withoutExchange);
      const queued = await taxAgency(inv.id);
      expect(queued.exchange_to).toBe("contabilidad@cliente.cl");
      smtp.rejecting = true;
      const before = smtp.received.length;
      expect(await deliverDueMessages(outbox, later(1000))).toEqual({ claimed: 1, sent: 0, retrying: 1, failed: 0 });
      const waiting = await s.database.prisma.outboxMessage.findUniqueOrThrow({
        where: { id: queued.exchange_message },
      });
      expect([waiting.status, waiting.attempts]).toEqual(["pending", 1]);
      expect(waiting.lastError).toMatch(/451/);
      smtp.rejecting = false;
      expect(await deliverDueMessages(outbox, later(60 * 60_000))).toEqual({
        claimed: 1,
        sent: 1,
        retrying: 0,
        failed: 0,
      });
      expect(smtp.received).toHaveLength(before + 1);
      expect(smtp.received.at(-1)!.envelope.to).toEqual(["contabilidad@cliente.cl"]);
      expect(await taxAgency(inv.id)).toHaveProperty("exchange_sent_at");
    },
  );
});

let receiverCert: FakeCertificate;
let receiptInvoice: { id: string; folio: number };

/** The fields every answer repeats, read from the DTE we issued for `invoiceId` (its stored file). */
async function answered(invoiceId: string, overrides: Partial<AnsweredDocument> = {}): Promise<AnsweredDocument> {
  const sub = await s.database.prisma.siiSubmission.findFirstOrThrow({ where: { documentId: invoiceId } });
  const file = await s.database.prisma.storedFile.findUniqueOrThrow({ where: { name: sub.dteFile } });
  const xml = Buffer.from(file.content).toString("latin1");
  return {
    type: 33,
    folio: sub.folio,
    issueDate: one(xml, "FchEmis")!,
    issuerRut: RUT,
    receiverRut: RECEIVER_RUT,
    total: one(xml, "MntTotal")!,
    ...overrides,
  };
}

const header = (overrides: Record<string, unknown> = {}) => ({
  responderRut: RECEIVER_RUT,
  recipientRut: RUT,
  contactEmail: "dte@cliente.cl",
  signedAt: new Date(),
  ...overrides,
});

function reception(doc: AnsweredDocument, status: 0 | 1 = 0, headerOverrides = {}) {
  return buildRecepcionDte(
    {
      header: header(headerOverrides),
      responseId: 7,
      fileName: "intercambio.xml",
      receivedAt: new Date(),
      envelopeCode: 7,
      envelopeId: "SetDoc",
      envelopeIssuerRut: RUT,
      envelopeReceiverRut: RECEIVER_RUT,
      status: 0,
      statusText: "Envio recibido conforme",
      documents: [{ ...doc, status, statusText: status === 0 ? "DTE recibido" : "Error de firma" }],
    },
    receiverCert,
  ).file;
}

function result(doc: AnsweredDocument, status: 0 | 1 | 2, headerOverrides = {}) {
  return buildResultadoDte(
    {
      header: header(headerOverrides),
      responseId: 8,
      envelopeCode: 7,
      documents: [
        {
          ...doc,
          status,
          statusText: status === 2 ? "RCD: Reclamo al contenido del documento" : "ACD",
          reasonCode: status === 2 ? -1 : null,
        },
      ],
    },
    receiverCert,
  ).file;
}

async function answer(file: Buffer) {
  return s.rest("POST", "/v1/billers/built_in/receiver_answers/", { body: { file: file.toString("base64") } });
}

async function state() {
  const p = s.database.prisma;
  const docs = await p.invoice.findMany({
    where: { id: { in: [sentInvoice.id, receiptInvoice.id] } },
    select: { id: true, taxAgency: true },
    orderBy: { id: "asc" },
  });
  return { files: await p.storedFile.count(), docs: JSON.stringify(docs) };
}

const invoiceStatus = async (id: string) =>
  (await s.graphql(`{ node(id: "${id}") { ... on Invoice { receiverStatus } } }`)).body.data.node.receiverStatus;

describe("inbound: the receiver's answers", () => {
  beforeAll(async () => {
    receiverCert = generateCertificate("Receptor de Prueba");
    receiptInvoice = await acceptedInvoice(withExchange);
  });

  it("RecepcionDTE (EstadoRecepDTE 0) through REST: received, with the file stored", async () => {
    expect(await invoiceStatus(sentInvoice.id)).toBeNull();
    const res = await answer(reception(await answered(sentInvoice.id)));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      kind: "reception",
      file: expect.stringMatching(new RegExp(`^${s.url}/v1/files/sii-respuesta-.+\\.xml$`)),
      documents: [
        {
          kind: "invoice",
          document: sentInvoice.id,
          document_type: 33,
          folio: sentInvoice.folio,
          receiver_status: "received",
        },
      ],
    });
    const ta = await taxAgency(sentInvoice.id);
    expect(ta).toMatchObject({
      status: "accepted",
      receiver_status: "received",
      receiver_code: 0,
      receiver_message: "DTE recibido",
      receiver_files: [res.body.file.replace(s.url, "")],
    });
    expect(await invoiceStatus(sentInvoice.id)).toBe("received");
    const stored = await fetch(res.body.file, { headers: { authorization: `Bearer ${s.keys.acme}` } });
    expect(stored.status).toBe(200);
  });

  it(
    "ResultadoDTE with a claim (EstadoDTE 2) through GraphQL: claimed; a reception arriving later keeps " + "the claim",
    async () => {
      const file = result(await answered(sentInvoice.id), 2);
      const g = await s.graphql(
        `mutation($input: ReceiverAnswerInput!) { recordReceiverAnswer(input: $input) { kind documents { kind ` +
          `document issuedDocument { __typename id ... on Invoice { number total } } ` +
          `documentType folio receiverStatus } } }`,
        {
          input: { file: file.toString("base64") },
        },
      );
      expect(g.body.errors).toBeUndefined();
      expect(g.body.data.recordReceiverAnswer).toEqual({
        kind: "result",
        documents: [
          {
            kind: "invoice",
            document: sentInvoice.id,
            issuedDocument: { __typename: "Invoice", id: sentInvoice.id, number: sentInvoice.folio, total: "119000" },
            documentType: 33,
            folio: sentInvoice.folio,
            receiverStatus: "claimed",
          },
        ],
      });
      expect(await taxAgency(sentInvoice.id)).toMatchObject({
        receiver_status: "claimed",
        receiver_code: 2,
        receiver_message: "RCD: Reclamo al contenido del documento; CodRchDsc -1",
      });
      const late = await answer(reception(await answered(sentInvoice.id)));
      expect(late.status).toBe(201);
      expect(late.body.documents[0].receiver_status).toBe("claimed");
      const ta = await taxAgency(sentInvoice.id);
      expect([ta.receiver_status, ta.receiver_files.length]).toEqual(["claimed", 3]);
    },
  );

  it("EnvioRecibos (Ley 19.983 receipt, each Recibo and the set signed): goods_received", async () => {
    const doc = await answered(receiptInvoice.id);
    const file = buildEnvioRecibos(
      { header: header(), place: "SAN DIEGO 2222, LA FLORIDA", signerRut: "7880442-4", documents: [doc] },
      receiverCert,
    ).file;
    const res = await answer(file);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.kind).toBe("receipt");
    expect(res.body.documents).toEqual([
      {
        kind: "invoice",
        document: receiptInvoice.id,
        document_type: 33,
        folio: receiptInvoice.folio,
        receiver_status: "goods_received",
      },
    ]);
    expect(await taxAgency(receiptInvoice.id)).toMatchObject({
      receiver_status: "goods_received",
      receiver_message: "Recinto: SAN DIEGO 2222, LA FLORIDA; RutFirma: 7880442-4",
    });
    expect(await invoiceStatus(receiptInvoice.id)).toBe("goods_received");
  });

  it(
    "a credit note (61): its ResultadoDTE shows in REST tax_agency.receiver_status and GraphQL " + "receiverStatus",
    async () => {
      const draft = await s.rest("POST", "/v1/creditnotes/", {
        body: {
          invoice: receiptInvoice.id,
          note: "Devolución parcial",
          lines: [{ name: "Consultoría", amount: 5000 }],
        },
      });
      expect(draft.status, JSON.stringify(draft.body)).toBe(201);
      const fin = await s.rest("GET", `/v1/creditnotes/${draft.body.id}/finalize/`);
      expect(fin.status, JSON.stringify(fin.body)).toBe(200);
      expect((await sendDueSubmissions(deps, later(1000))).uploaded).toBe(1);
      expect((await sendDueSubmissions(deps, later(10 * 60_000))).decided).toBe(1);
      const sub = await s.database.prisma.siiSubmission.findFirstOrThrow({ where: { documentId: draft.body.id } });
      const dte = Buffer.from(
        (await s.database.prisma.storedFile.findUniqueOrThrow({ where: { name: sub.dteFile } })).content,
      ).toString("latin1");
      const doc = {
        type: 61,
        folio: sub.folio,
        issueDate: one(dte, "FchEmis")!,
        issuerRut: RUT,
        receiverRut: RECEIVER_RUT,
        total: one(dte, "MntTotal")!,
      };
      const res = await answer(result(doc, 0));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.documents).toEqual([
        {
          kind: "credit_note",
          document: draft.body.id,
          document_type: 61,
          folio: sub.folio,
          receiver_status: "accepted",
        },
      ]);
      const rest = await s.rest("GET", `/v1/creditnotes/${draft.body.id}/`);
      expect(rest.body.tax_agency).toMatchObject({
        status: "accepted",
        receiver_status: "accepted",
        receiver_code: 0,
        receiver_message: "ACD",
      });
      const g = await s.graphql(`{ node(id: "${draft.body.id}") { ... on CreditNote { receiverStatus } } }`);
      expect(g.body.data.node).toEqual({ receiverStatus: "accepted" });
    },
  );

  it(
    "400 naming the document or the reason, nothing written: unknown folio, forged signature, another RutRecibe, " +
      "RUTEmisor, RUTRecep or total, malformed, schema-invalid",
    async () => {
      const before = await state();
      const doc = await answered(receiptInvoice.id);

      const unknown = await answer(result({ ...doc, folio: 999_999 }, 0));
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.fields.xml).toEqual([
        "DTE type 33 folio 999999: no such DTE issued by this organization in test mode",
      ]);

      // EstadoDTE changed from 0 (accepted) to 2 after the receiver signed: the digest no longer matches
      const forged = Buffer.from(
        result(doc, 0).toString("latin1").replace("<EstadoDTE>0</EstadoDTE>", "<EstadoDTE>2</EstadoDTE>"),
        "latin1",
      );
      const f = await answer(forged);
      expect(f.status).toBe(400);
      expect(f.body.error.fields.xml).toEqual([
        "the signature of the RespuestaDTE (Resultado ResultadoDTE) does not verify: the signature does not verify",
      ]);

      // signed by a key that is not the one of the certificate it shows
      const other = generateCertificate("Otro");
      const swapped = Buffer.from(
        result(doc, 0)
          .toString("latin1")
          .replace(
            /<X509Certificate>[^<]+<\/X509Certificate>/,
            `<X509Certificate>${other.certificatePem.replace(/-----[^-]+-----|\s/g, "")}</X509Certificate>`,
          ),
        "latin1",
      );
      const sw = await answer(swapped);
      expect(sw.status).toBe(400);
      expect(sw.body.error.fields.xml[0]).toMatch(
        /^the signature of the RespuestaDTE \(Resultado ResultadoDTE\) does not verify/,
      );

      const elsewhere = await answer(result(doc, 0, { recipientRut: "96790240-3" }));
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.body.error.fields.xml).toEqual([
        `the answer is addressed to RUT 96790240-3 (RutRecibe), not to this organization (${RUT})`,
      ]);

      const notOurs = await answer(result({ ...doc, issuerRut: "96790240-3" }, 0));
      expect(notOurs.status).toBe(400);
      expect(notOurs.body.error.fields.xml).toEqual([
        `DTE type 33 folio ${receiptInvoice.folio} was issued by RUT 96790240-3 (RUTEmisor), not by this ` +
          `organization ` +
          `(${RUT})`,
      ]);

      const otherReceiver = await answer(
        result({ ...doc, receiverRut: "96790240-3" }, 0, { responderRut: "96790240-3" }),
      );
      expect(otherReceiver.status).toBe(400);
      expect(otherReceiver.body.error.fields.xml).toEqual([
        `DTE type 33 folio ${receiptInvoice.folio} does not match the document issued (${receiptInvoice.id}): ` +
          `RUTRecep ` +
          `96790240-3 (issued to ${RECEIVER_RUT}), RutResponde 96790240-3 (issued to ${RECEIVER_RUT})`,
      ]);

      const otherTotal = await answer(result({ ...doc, total: "1" }, 0));
      expect(otherTotal.status).toBe(400);
      expect(otherTotal.body.error.fields.xml[0]).toContain(`MntTotal 1 (issued ${doc.total})`);

      const malformed = await s.rest("POST", "/v1/billers/built_in/receiver_answers/", {
        body: { xml: '<RespuestaDTE xmlns="http://www.sii.cl/SiiDte"><Resultado>' },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.fields.xml[0]).toMatch(/^is not well-formed XML/);

      const invalid = Buffer.from(
        result(doc, 0)
          .toString("latin1")
          .replace(/<Folio>\d+<\/Folio>/, "<Folio>uno</Folio>"),
        "latin1",
      );
      const inv = await answer(invalid);
      expect(inv.status).toBe(400);
      expect(inv.body.error.fields.xml[0]).toMatch(
        /^does not match SII's RespuestaDTE schema \(RespuestaEnvioDTE_v10.xsd\)/,
      );

      const notAnswer = await s.rest("POST", "/v1/billers/built_in/receiver_answers/", {
        body: { xml: "<EnvioDTE/>" },
      });
      expect(notAnswer.status).toBe(400);
      expect(notAnswer.body.error.fields.xml[0]).toMatch(/^must be a RespuestaDTE/);
      expect(
        (await s.rest("POST", "/v1/billers/built_in/receiver_answers/", { body: {} })).body.error.fields.xml[0],
      ).toMatch(/exactly one of xml/);
      expect(
        (await s.rest("POST", "/v1/billers/built_in/receiver_answers/", { body: { file: "no base64!" } })).body.error
          .fields.file,
      ).toEqual(["must be Base64"]);
      expect(
        (await s.rest("POST", "/v1/billers/built_in/receiver_answers/", { body: { xml: "<x/>", colour: "red" } }))
          .status,
      ).toBe(400);

      // another organization: the documents are not its own
      const foreign = await s.rest("POST", "/v1/billers/built_in/receiver_answers/", {
        key: s.keys.other,
        body: { file: result(doc, 0).toString("base64") },
      });
      expect(foreign.status).toBeGreaterThanOrEqual(400);
      expect(foreign.status).toBeLessThan(500);

      expect(await state()).toEqual(before);
    },
  );
});
