/**
 * The DTE exchange with receivers (services/sii-exchange.ts, docs/sii-exchange.md), both
 * directions, over real HTTP with the fake SII (test/helpers/fake-sii.ts) and a real SMTP server
 * (test/helpers/smtp.ts):
 * - outbound: a finalized factura, uploaded and accepted by the fake SII, is e-mailed to the
 *   receiver's exchange address with an EnvioDTE addressed to the receiver (checked with xmllint
 *   against EnvioDTE_v10.xsd and xmlsec1) and its PDF; retried while the SMTP server refuses.
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
import { SCHEMA_DIR, generateCaf, generatePkcs12, xmllintValidate, type FakeCertificate } from "../helpers/sii-fixtures.js";
import { ENVIO_DTE_XSD } from "../helpers/sii-exchange.js";
import { FakeSii, countsOf, startFakeSii } from "../helpers/fake-sii.js";
import { dteSignature, ENVELOPE_SIGNATURE, xmlsecVerifyNode } from "../helpers/sii-envelope.js";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.js";

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
  sii = await startFakeSii({ trustedCertificatePem: cert.certificatePem, schema: join(SCHEMA_DIR, "EnvioDTE_v10.xsd"), boletaSchema: join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd") });
  smtp = await startSmtpServer();
  const settings = { sii: sii.hosts, certificateEncryptionKey: KEY, smtpUrl: smtp.url, mailFrom: MAIL_FROM };
  s = await startTestServer({ settings, outboxIntervalMs: 0 });
  expect((await s.rest("POST", "/v1/billers/built_in/certificates/", { body: { file: p12.file.toString("base64"), password: p12.password } })).status).toBe(201);
  expect((await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 80, resolution_date: "2014-08-22" } })).status).toBe(200);
  const caf = generateCaf({ rut: RUT, type: 33, from: 1, to: 1000, authorizedOn: new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10) });
  expect((await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } })).status).toBe(201);
  const a = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ tax_id: "77.777.777-7", email: "pagos@cliente.cl", tax_settings: { exchange_email: "dte@cliente.cl" } }) });
  expect(a.status, JSON.stringify(a.body)).toBe(201);
  withExchange = a.body.id;
  withoutExchange = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ tax_id: "77.777.777-7", email: "contabilidad@cliente.cl" }) })).body.id;
  deps = { prisma: s.database.prisma, logger: createLogger("silent"), settings: { ...DEFAULT_SETTINGS, ...settings } };
  outbox = { prisma: s.database.prisma, mailer: createSmtpMailer(smtp.url), logger: createLogger("silent"), settings: { ...DEFAULT_SETTINGS, ...settings } };
  sii.statusFor = (u) => ({ estado: "EPR", glosa: "Envio Procesado", counts: countsOf(u.file, "all-accepted") });
});
afterAll(async () => {
  await s?.close();
  await sii?.stop();
  await smtp?.close();
});

/** A finalized factura of `customer` uploaded to and accepted by the fake SII. */
async function acceptedInvoice(customer: string): Promise<{ id: string; folio: number }> {
  const inv = (await s.rest("POST", "/v1/invoices/", { body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 2, amount: 50000 }] } })).body;
  const fin = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`);
  expect(fin.status, JSON.stringify(fin.body)).toBe(200);
  const up = await sendDueSubmissions(deps, later(1000));
  expect(up.uploaded, JSON.stringify([up, await taxAgency(inv.id)])).toBe(1);
  expect((await sendDueSubmissions(deps, later(10 * 60_000))).decided).toBe(1);
  return { id: inv.id, folio: fin.body.number as number };
}

async function taxAgency(id: string): Promise<Record<string, any>> {
  return (await s.database.prisma.invoice.findUniqueOrThrow({ where: { id }, select: { taxAgency: true } })).taxAgency as Record<string, any>;
}

function one(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}

let sentInvoice: { id: string; folio: number };

describe("outbound: an accepted DTE goes to the receiver's exchange address", () => {
  it("queued when SII accepts; delivered with the EnvioDTE addressed to the receiver (XSD-valid, signed) and the PDF", async () => {
    sentInvoice = await acceptedInvoice(withExchange);
    const queued = await taxAgency(sentInvoice.id);
    expect(queued).toMatchObject({ status: "accepted", exchange_to: "dte@cliente.cl", exchange_file: expect.stringMatching(/^\/v1\/files\/sii-intercambio-.+\.xml$/) });
    expect(queued).not.toHaveProperty("exchange_sent_at");
    const message = await s.database.prisma.outboxMessage.findUniqueOrThrow({ where: { id: queued.exchange_message } });
    expect([message.kind, message.status, message.testMode, message.recipients, message.attachmentKind, message.attachmentId]).toEqual(["dte_exchange", "pending", true, ["dte@cliente.cl"], "invoice", sentInvoice.id]);

    const before = smtp.received.length;
    const t = later(1000);
    expect(await deliverDueMessages(outbox, t)).toEqual({ claimed: 1, sent: 1, retrying: 0, failed: 0 });
    expect(smtp.received).toHaveLength(before + 1);
    const mail = smtp.received.at(-1)!;
    expect(mail.envelope).toEqual({ from: MAIL_FROM, to: ["dte@cliente.cl"] });
    expect(mail.parsed.subject).toMatch(new RegExp(`^Factura electrónica N° ${sentInvoice.folio} de .+ \\(RUT ${RUT}\\)$`));
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
    const served = await fetch(`${s.url}${queued.exchange_file}`, { headers: { authorization: `Bearer ${s.keys.acme}` } });
    expect(Buffer.from(await served.arrayBuffer()).equals(xmlFile.content)).toBe(true);

    const pdf = mail.parsed.attachments.find((a) => a.contentType === "application/pdf")!;
    expect(pdf.filename).toBe(`invoice-CL33-${sentInvoice.folio}.pdf`);
    const text = (await new PDFParse({ data: new Uint8Array(pdf.content) }).getText()).text;
    expect(text).toContain(`N° ${sentInvoice.folio}`);

    expect(await taxAgency(sentInvoice.id)).toMatchObject({ exchange_sent_at: t.toISOString() });
  });

  it("without tax_settings.exchange_email the DTE's CorreoRecep (the customer's e-mail) is used; a refusing server is retried", async () => {
    const inv = await acceptedInvoice(withoutExchange);
    const queued = await taxAgency(inv.id);
    expect(queued.exchange_to).toBe("contabilidad@cliente.cl");
    smtp.rejecting = true;
    const before = smtp.received.length;
    expect(await deliverDueMessages(outbox, later(1000))).toEqual({ claimed: 1, sent: 0, retrying: 1, failed: 0 });
    const waiting = await s.database.prisma.outboxMessage.findUniqueOrThrow({ where: { id: queued.exchange_message } });
    expect([waiting.status, waiting.attempts]).toEqual(["pending", 1]);
    expect(waiting.lastError).toMatch(/451/);
    smtp.rejecting = false;
    expect(await deliverDueMessages(outbox, later(60 * 60_000))).toEqual({ claimed: 1, sent: 1, retrying: 0, failed: 0 });
    expect(smtp.received).toHaveLength(before + 1);
    expect(smtp.received.at(-1)!.envelope.to).toEqual(["contabilidad@cliente.cl"]);
    expect(await taxAgency(inv.id)).toHaveProperty("exchange_sent_at");
  });
});
