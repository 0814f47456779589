/**
 * Reminders (spec "Reminder", "Reminders"; docs/reminders.md) over REST and GraphQL, delivered to
 * a real SMTP server started here (smtp-server, parsed with mailparser): the message, its
 * recipients and the PDF attachment; the outbox states (sent, retried with backoff, failed for
 * good, kept without SMTP); bad inputs (400, nothing written, nothing sent); lists, filters and
 * tenancy.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { closedPort, startSmtpServer, type TestSmtpServer } from "../helpers/smtp.js";
import { createSmtpMailer } from "../../src/infra/mail.js";
import { createLogger } from "../../src/infra/logger.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { deliverDueMessages, type OutboxDeps } from "../../src/services/outbox.js";
import { MAX_DELIVERY_ATTEMPTS } from "../../src/domain/reminders.js";

const MAIL_FROM = "facturacion@acme.cl";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

let smtp: TestSmtpServer;
let s: TestServer;
let customerId: string;
let invoice: { id: string; number: number };

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ settings: { smtpUrl: smtp.url, mailFrom: MAIL_FROM }, outboxIntervalMs: 200 });
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  invoice = await finalizedInvoice();
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});
beforeEach(() => {
  smtp.rejecting = false;
  smtp.received.length = 0;
});

async function draftInvoice(customer = customerId, key = s.keys.acme) {
  const res = await s.rest("POST", "/v1/invoices/", {
    key,
    body: { customer, lines: [{ name: "Consultoría", quantity: 2, amount: 1000 }] },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function finalizedInvoice() {
  const draft = await draftInvoice();
  const res = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; number: number };
}

async function createPayment(key: "acme" | "other" = "acme") {
  const organizationId = s.orgs[key];
  const id = `pay_test${Math.random().toString(36).slice(2, 14)}`;
  await s.database.prisma.payment.create({
    data: {
      id,
      organizationId,
      testMode: true,
      invoiceId: key === "acme" ? invoice.id : null,
      amount: "2380",
      currencyId: "CLP",
      date: new Date("2026-11-22"),
      userEmail: "ops@acme.cl",
    },
  });
  return id;
}

function remind(body: Record<string, unknown>, key?: string) {
  return s.rest("POST", "/v1/reminders/messages/", {
    key,
    body: {
      subject: "Factura vencida",
      recipient: ["pagos@cliente.cl"],
      message: "Estimado cliente:\nsu factura está vencida.",
      ...body,
    },
  });
}

async function counts() {
  return { reminders: await s.database.prisma.reminder.count(), outbox: await s.database.prisma.outboxMessage.count() };
}

async function pdfText(content: Buffer) {
  return (await new PDFParse({ data: new Uint8Array(content) }).getText()).text;
}

const outboxOf = (reminderId: string) => s.database.prisma.outboxMessage.findFirstOrThrow({ where: { reminderId } });

/** The outbox functions as another process would run them, with their own mailer. */
function outboxDeps(smtpUrl = smtp.url): OutboxDeps {
  return {
    prisma: s.database.prisma,
    mailer: createSmtpMailer(smtpUrl),
    logger: createLogger("silent"),
    settings: { ...DEFAULT_SETTINGS, smtpUrl, mailFrom: MAIL_FROM },
  };
}

describe("POST /v1/reminders/messages/ with SMTP", () => {
  it("records the reminder and delivers it over SMTP with the invoice's PDF attached", async () => {
    const res = await remind({
      invoice: invoice.id,
      recipient: ["pagos@cliente.cl", " ana@cliente.cl", "PAGOS@cliente.cl"],
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^rem_[0-9A-Za-z]{24}$/),
      subject: "Factura vencida",
      recipient: ["pagos@cliente.cl", "ana@cliente.cl"],
      message: "Estimado cliente:\nsu factura está vencida.",
      created: expect.stringMatching(ISO),
      invoice: invoice.id,
      credit_note: null,
      payment: null,
      order: null,
      user: "ops@acme.cl",
      delivery: { status: "sent", attempts: 1, last_error: null, next_attempt: null, sent: expect.stringMatching(ISO) },
    });

    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail.envelope).toEqual({ from: MAIL_FROM, to: ["pagos@cliente.cl", "ana@cliente.cl"] });
    expect(mail.parsed.subject).toBe("Factura vencida");
    expect(mail.parsed.from?.value).toEqual([{ address: MAIL_FROM, name: "" }]);
    expect(
      (Array.isArray(mail.parsed.to) ? mail.parsed.to : [mail.parsed.to]).flatMap((a) =>
        a!.value.map((v) => v.address),
      ),
    ).toEqual(["pagos@cliente.cl", "ana@cliente.cl"]);
    expect(mail.parsed.replyTo?.value.map((v) => v.address)).toEqual(["ops@acme.cl"]);
    expect(mail.parsed.text?.trim()).toBe("Estimado cliente:\nsu factura está vencida.");
    expect(mail.parsed.attachments).toHaveLength(1);
    const [pdf] = mail.parsed.attachments;
    expect(pdf.filename).toBe(`invoice-CL33-${invoice.number}.pdf`);
    expect(pdf.contentType).toBe("application/pdf");
    expect(pdf.content.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    const text = await pdfText(pdf.content);
    // an invoice of a mode not set up with SII: the internal series (docs/sii-setup.md)
    expect(text).toContain(`N° interno ${invoice.number}`);
    expect(text).toContain("Cliente SpA");

    const row = await outboxOf(res.body.id);
    expect(row).toMatchObject({
      status: "sent",
      attempts: 1,
      lastError: null,
      recipients: ["pagos@cliente.cl", "ana@cliente.cl"],
      subject: "Factura vencida",
      attachmentKind: "invoice",
      attachmentId: invoice.id,
    });
    expect(row.sentAt).toBeInstanceOf(Date);
    const reminder = await s.database.prisma.reminder.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(reminder).toMatchObject({
      organizationId: s.orgs.acme,
      testMode: true,
      invoiceId: invoice.id,
      userEmail: "ops@acme.cl",
    });
  });

  it(
    "attaches a draft order's PDF as order-draft.pdf and a credit note's by its number (GraphQL " + "sendReminder)",
    async () => {
      const order = (
        await s.rest("POST", "/v1/orders/", {
          body: { customer: customerId, lines: [{ name: "Cajas", quantity: 2, amount: 1000 }] },
        })
      ).body;
      const note = (
        await s.rest("POST", "/v1/creditnotes/", {
          body: { invoice: invoice.id, lines: [{ name: "Devolución", quantity: 1, amount: 500 }] },
        })
      ).body;
      const finalizedNote = (await s.rest("GET", `/v1/creditnotes/${note.id}/finalize/`)).body;

      const orderRes = await remind({ order: order.id, subject: "Su pedido" });
      expect(orderRes.status, orderRes.text).toBe(201);
      expect(orderRes.body).toMatchObject({ order: order.id, invoice: null, delivery: { status: "sent" } });

      const mutation = `mutation($input: ReminderInput!) { sendReminder(input: $input) {
      id subject recipients message user testMode created creditNote { id number } invoice { id } delivery { status
      attempts sent } } }`;
      const gql = await s.graphql(mutation, {
        input: {
          subject: "Nota de crédito",
          recipients: ["pagos@cliente.cl"],
          message: "Adjuntamos la nota.",
          creditNote: note.id,
        },
      });
      expect(gql.body.errors).toBeUndefined();
      expect(gql.body.data.sendReminder).toMatchObject({
        subject: "Nota de crédito",
        recipients: ["pagos@cliente.cl"],
        user: "ops@acme.cl",
        testMode: true,
        creditNote: { id: note.id, number: finalizedNote.number },
        invoice: null,
        delivery: { status: "sent", attempts: 1 },
      });

      expect(smtp.received.map((m) => m.parsed.subject)).toEqual(["Su pedido", "Nota de crédito"]);
      const [orderPdf] = smtp.received[0].parsed.attachments;
      expect(orderPdf.filename).toBe("order-draft.pdf");
      expect(orderPdf.contentType).toBe("application/pdf");
      expect(await pdfText(orderPdf.content)).toContain("Cajas");
      const [notePdf] = smtp.received[1].parsed.attachments;
      expect(notePdf.filename).toBe(`credit-note-CL61-${finalizedNote.number}.pdf`);
      expect(await pdfText(notePdf.content)).toContain(`N° interno ${finalizedNote.number}`);
    },
  );

  it("sends a payment reminder with no attachment (payments have no PDF)", async () => {
    const paymentId = await createPayment();
    const res = await remind({ payment: paymentId, subject: "Pago recibido" });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ payment: paymentId, invoice: null, delivery: { status: "sent" } });
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].parsed.attachments).toEqual([]);
    expect(await outboxOf(res.body.id)).toMatchObject({ attachmentKind: null, attachmentId: null, status: "sent" });
  });
});

describe("failed deliveries", () => {
  it(
    "records a refused delivery, backs off, and delivers on a later retry (also after a server that " + "is down)",
    async () => {
      smtp.rejecting = true;
      const before = Date.now();
      const res = await remind({ invoice: invoice.id, subject: "Reintento" });
      // the reminder is recorded: delivery is the outbox's business, not the request's
      expect(res.status, res.text).toBe(201);
      expect(res.body.delivery).toMatchObject({
        status: "pending",
        attempts: 1,
        last_error: expect.stringContaining("451"),
        sent: null,
      });
      expect(smtp.received).toHaveLength(0);
      let row = await outboxOf(res.body.id);
      expect(row).toMatchObject({ status: "pending", attempts: 1, sentAt: null });
      expect(row.lastError).toContain("Mailbox temporarily unavailable");
      // first backoff: one minute after the attempt
      expect(row.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before + 60_000);
      expect(row.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);

      // not due yet: a round now leaves it alone
      const deps = outboxDeps();
      expect(await deliverDueMessages(deps, new Date())).toMatchObject({ claimed: 0 });

      // second attempt, two minutes later, against a server that is down: recorded, backs off 2 minutes
      const down = outboxDeps(`smtp://127.0.0.1:${await closedPort()}`);
      const second = new Date(row.nextAttemptAt.getTime() + 1_000);
      expect(await deliverDueMessages(down, second)).toMatchObject({ claimed: 1, sent: 0, retrying: 1 });
      row = await outboxOf(res.body.id);
      expect(row).toMatchObject({ status: "pending", attempts: 2, sentAt: null });
      expect(row.lastError).toMatch(/ECONNREFUSED/);
      expect(row.nextAttemptAt.getTime()).toBe(second.getTime() + 2 * 60_000);
      const listed = (await s.rest("GET", `/v1/reminders/messages/?invoice=${invoice.id}`)).body.find(
        (r: any) => r.id === res.body.id,
      );
      expect(listed.delivery).toMatchObject({
        status: "pending",
        attempts: 2,
        next_attempt: row.nextAttemptAt.toISOString().replace("Z", "+00:00"),
      });

      // third attempt, once the server accepts again: delivered with its attachment, rendered now
      smtp.rejecting = false;
      const third = new Date(row.nextAttemptAt.getTime() + 1_000);
      expect(await deliverDueMessages(deps, third)).toMatchObject({ claimed: 1, sent: 1 });
      row = await outboxOf(res.body.id);
      expect(row).toMatchObject({ status: "sent", attempts: 3, sentAt: third });
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0].parsed.subject).toBe("Reintento");
      expect(smtp.received[0].parsed.attachments.map((a) => a.filename)).toEqual([
        `invoice-CL33-${invoice.number}.pdf`,
      ]);

      // sent is final: a later round sends nothing again
      expect(await deliverDueMessages(deps, new Date(third.getTime() + 86_400_000))).toMatchObject({ claimed: 0 });
      expect(smtp.received).toHaveLength(1);
    },
  );

  it(`gives up after ${MAX_DELIVERY_ATTEMPTS} attempts: status failed, kept, never retried`, async () => {
    smtp.rejecting = true;
    const res = await remind({ invoice: invoice.id, subject: "Sin suerte" });
    expect(res.body.delivery.status).toBe("pending");
    // as if six more attempts had failed: the next one is the last
    const later = new Date(Date.now() + 3_600_000);
    await s.database.prisma.outboxMessage.updateMany({
      where: { reminderId: res.body.id },
      data: { attempts: MAX_DELIVERY_ATTEMPTS - 1, nextAttemptAt: later },
    });
    expect(await deliverDueMessages(outboxDeps(), later)).toMatchObject({ claimed: 1, failed: 1 });
    const row = await outboxOf(res.body.id);
    expect(row).toMatchObject({ status: "failed", attempts: MAX_DELIVERY_ATTEMPTS, sentAt: null });
    expect(row.lastError).toContain("451");
    smtp.rejecting = false;
    expect(await deliverDueMessages(outboxDeps(), new Date(later.getTime() + 86_400_000))).toMatchObject({
      claimed: 0,
    });
    expect(smtp.received).toHaveLength(0);
    const listed = (
      await s.rest("GET", `/v1/reminders/messages/?created__gte=${encodeURIComponent(res.body.created)}`)
    ).body.find((r: any) => r.id === res.body.id);
    expect(listed.delivery).toEqual({
      status: "failed",
      attempts: MAX_DELIVERY_ATTEMPTS,
      last_error: expect.stringContaining("451"),
      next_attempt: null,
      sent: null,
    });
  });

  it(
    "renders the attachment at delivery: a draft deleted before the retry leaves the message to go " + "without it",
    async () => {
      const draft = await draftInvoice();
      smtp.rejecting = true;
      const res = await remind({ invoice: draft.id, subject: "Borrador" });
      expect(res.body.delivery.status).toBe("pending");
      expect((await s.rest("DELETE", `/v1/invoices/${draft.id}/`)).status).toBe(204);
      smtp.rejecting = false;
      const row = await outboxOf(res.body.id);
      expect(await deliverDueMessages(outboxDeps(), new Date(row.nextAttemptAt.getTime() + 1_000))).toMatchObject({
        sent: 1,
      });
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0].parsed.attachments).toEqual([]);
      expect(await outboxOf(res.body.id)).toMatchObject({
        status: "sent",
        attachmentKind: "invoice",
        attachmentId: draft.id,
      });
    },
  );

  it("two workers at once send each due message once (claims skip locked rows)", async () => {
    smtp.rejecting = true;
    const subjects = ["Uno", "Dos", "Tres", "Cuatro", "Cinco"];
    for (const subject of subjects)
      expect((await remind({ invoice: invoice.id, subject })).body.delivery.status).toBe("pending");
    smtp.rejecting = false;
    const later = new Date(Date.now() + 3_600_000);
    const reports = await Promise.all([
      deliverDueMessages(outboxDeps(), later, { batchSize: 2 }),
      deliverDueMessages(outboxDeps(), later, { batchSize: 2 }),
    ]);
    expect(reports[0].sent + reports[1].sent).toBe(subjects.length);
    expect(reports[0].claimed + reports[1].claimed).toBe(subjects.length);
    expect(smtp.received.map((m) => m.parsed.subject).sort()).toEqual([...subjects].sort());
  });

  it("the server's worker retries due messages by itself", async () => {
    smtp.rejecting = true;
    const res = await remind({ invoice: invoice.id, subject: "Trabajador" });
    expect(res.body.delivery.status).toBe("pending");
    smtp.rejecting = false;
    // make it due now; the server's interval (200 ms in this file) picks it up
    await s.database.prisma.outboxMessage.updateMany({
      where: { reminderId: res.body.id },
      data: { nextAttemptAt: new Date(Date.now() - 1_000) },
    });
    const deadline = Date.now() + 10_000;
    while ((await outboxOf(res.body.id)).status !== "sent" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await outboxOf(res.body.id)).toMatchObject({ status: "sent", attempts: 2 });
    expect(smtp.received.map((m) => m.parsed.subject)).toEqual(["Trabajador"]);
  });
});

describe("bad input: 400, nothing written, nothing sent", () => {
  const none = "one of invoice, credit_note, payment or order is required";
  const cases: [string, () => Promise<Record<string, unknown>>, string[], string?][] = [
    ["no related document", async () => ({}), ["invoice", "credit_note", "payment", "order"], none],
    [
      "two related documents",
      async () => ({ invoice: invoice.id, order: "ord_x" }),
      ["invoice", "order"],
      "only one related document is allowed; got invoice, order",
    ],
    [
      "a recipient that is not an e-mail address",
      async () => ({ invoice: invoice.id, recipient: ["pagos@cliente.cl", "pagos"] }),
      ["recipient.1"],
      "must be an e-mail address",
    ],
    [
      "no recipients",
      async () => ({ invoice: invoice.id, recipient: [] }),
      ["recipient"],
      "at least one e-mail address is required",
    ],
    [
      "51 recipients",
      async () => ({ invoice: invoice.id, recipient: Array.from({ length: 51 }, (_, i) => `c${i}@cliente.cl`) }),
      ["recipient"],
      "must have at most 50 addresses; got 51",
    ],
    ["a missing subject", async () => ({ invoice: invoice.id, subject: undefined }), ["subject"], "is required"],
    ["a blank message", async () => ({ invoice: invoice.id, message: "  " }), ["message"], "is required"],
    [
      "a subject with a line break",
      async () => ({ invoice: invoice.id, subject: "Hola\r\nBcc: x@y.cl" }),
      ["subject"],
      "must be a single line",
    ],
    [
      "an unknown invoice",
      async () => ({ invoice: "inv_doesnotexist" }),
      ["invoice"],
      "unknown invoice inv_doesnotexist",
    ],
    [
      "an order id given as the invoice",
      async () => ({
        invoice: (
          await s.rest("POST", "/v1/orders/", { body: { customer: customerId, lines: [{ name: "x", amount: 1 }] } })
        ).body.id,
      }),
      ["invoice"],
    ],
    [
      "another organization's invoice",
      async () => ({ invoice: (await draftInvoice(await customerOf(s.keys.other), s.keys.other)).id }),
      ["invoice"],
    ],
    ["another organization's payment", async () => ({ payment: await createPayment("other") }), ["payment"]],
    [
      "a live-mode invoice with a test key",
      async () => ({ invoice: (await draftInvoice(await customerOf(s.keys.acmeLive), s.keys.acmeLive)).id }),
      ["invoice"],
    ],
    ["an unknown field", async () => ({ invoice: invoice.id, cc: ["x@y.cl"] }), ["cc"], "unknown field"],
    [
      "recipients under the wrong name",
      async () => ({ invoice: invoice.id, recipients: ["x@y.cl"] }),
      ["recipients"],
      "unknown field",
    ],
    [
      "a recipient that is not a string",
      async () => ({ invoice: invoice.id, recipient: ["pagos@cliente.cl", 7] }),
      ["recipient"],
    ],
  ];

  /** a customer of the key's organization and mode */
  async function customerOf(key: string) {
    const res = await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer() });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  }

  for (const [name, body, fields, message] of cases) {
    it(name, async () => {
      const built = await body();
      const before = await counts();
      const res = await remind(built);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields).sort()).toEqual([...fields].sort());
      if (message) for (const f of fields) expect(res.body.error.fields[f]).toContain(message);
      expect(await counts()).toEqual(before);
      expect(smtp.received).toHaveLength(0);
    });
  }

  it("names every bad field at once, and GraphQL answers the same", async () => {
    const before = await counts();
    const res = await s.rest("POST", "/v1/reminders/messages/", { body: { recipient: ["nope"] } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error.fields).sort()).toEqual([
      "credit_note",
      "invoice",
      "message",
      "order",
      "payment",
      "recipient.0",
      "subject",
    ]);
    const gql = await s.graphql(`mutation($input: ReminderInput!) { sendReminder(input: $input) { id } }`, {
      input: {
        subject: "Hola",
        recipients: Array.from({ length: 51 }, (_, i) => `c${i}@cliente.cl`),
        message: "x",
        invoice: invoice.id,
        order: "ord_x",
      },
    });
    expect(gql.body.errors[0].extensions).toEqual({
      code: "validation_error",
      fields: {
        recipient: ["must have at most 50 addresses; got 51"],
        invoice: [expect.stringContaining("only one")],
        order: [expect.stringContaining("only one")],
      },
    });
    expect(await counts()).toEqual(before);
    expect(smtp.received).toHaveLength(0);
  });

  it("needs a key", async () => {
    const res = await remind({ invoice: invoice.id }, null as unknown as string);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("authentication_required");
  });
});

describe("GET /v1/reminders/messages/", () => {
  let ids: { invoice: string; order: string; payment: string; credit: string };
  let docs: { order: string; payment: string; credit: string; invoice2: string };

  beforeAll(async () => {
    const order = (
      await s.rest("POST", "/v1/orders/", { body: { customer: customerId, lines: [{ name: "Cajas", amount: 1000 }] } })
    ).body.id;
    const payment = await createPayment();
    const second = await finalizedInvoice();
    const note = (
      await s.rest("POST", "/v1/creditnotes/", { body: { invoice: second.id, lines: [{ name: "Dev", amount: 100 }] } })
    ).body.id;
    docs = { order, payment, credit: note, invoice2: second.id };
    const make = async (body: Record<string, unknown>) =>
      (await remind({ ...body, subject: "Lista" })).body.id as string;
    ids = {
      invoice: await make({ invoice: second.id }),
      order: await make({ order }),
      payment: await make({ payment }),
      credit: await make({ credit_note: note }),
    };
  });

  const list = async (query: string, key?: string) => {
    const res = await s.rest("GET", `/v1/reminders/messages/${query}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.body as any[];
  };

  it("returns a bare array, newest first (the spec's 'array of reminders'), with the page in headers", async () => {
    const all = await list("?page_size=100");
    expect(Array.isArray(all)).toBe(true);
    expect(all.slice(0, 4).map((r) => r.id)).toEqual([ids.credit, ids.payment, ids.order, ids.invoice]);
    expect(all[0]).toMatchObject({
      subject: "Lista",
      credit_note: docs.credit,
      invoice: null,
      recipient: ["pagos@cliente.cl"],
      user: "ops@acme.cl",
      delivery: { status: "sent" },
    });

    const res = await fetch(`${s.url}/v1/reminders/messages/?page_size=2&payment__in=${docs.payment},${docs.order}`, {
      headers: { authorization: `Bearer ${s.keys.acme}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toHaveLength(1);
    expect(res.headers.get("x-total-count")).toBe("1");
    expect(res.headers.get("link")).toBeNull();

    const total = all.length;
    const page2 = await fetch(`${s.url}/v1/reminders/messages/?page_size=2&page=2`, {
      headers: { authorization: `Bearer ${s.keys.acme}` },
    });
    expect((await page2.json()).map((r: any) => r.id)).toEqual(all.slice(2, 4).map((r) => r.id));
    expect(page2.headers.get("x-total-count")).toBe(String(total));
    expect(total).toBeGreaterThan(4);
    expect(page2.headers.get("link")).toBe(
      `<${s.url}/v1/reminders/messages/?page_size=2&page=3>; rel="next", <${s.url}` +
        `/v1/reminders/messages/?page_size=2&page=1>; rel="prev"`,
    );
  });

  it("filters by invoice, credit_note, payment, order (exact and __in) and created", async () => {
    const idsOf = async (q: string) => (await list(q)).map((r) => r.id);
    expect(await idsOf(`?invoice=${docs.invoice2}`)).toEqual([ids.invoice]);
    expect(await idsOf(`?invoice__exact=${docs.invoice2}`)).toEqual([ids.invoice]);
    expect(await idsOf(`?credit_note=${docs.credit}`)).toEqual([ids.credit]);
    expect(await idsOf(`?payment=${docs.payment}`)).toEqual([ids.payment]);
    expect(await idsOf(`?order__in=${docs.order},ord_nothing`)).toEqual([ids.order]);
    expect(await idsOf(`?order=${docs.order}&invoice=${docs.invoice2}`)).toEqual([]);

    const created = (await list(`?order=${docs.order}`))[0].created as string;
    expect(
      await idsOf(
        `?order=${docs.order}&created__gte=${encodeURIComponent(created)}&created__lte=${encodeURIComponent(created)}`,
      ),
    ).toEqual([ids.order]);
    expect(await idsOf(`?order=${docs.order}&created__gte=2099-01-01`)).toEqual([]);
    expect(await idsOf(`?order=${docs.order}&created__lte=2000-01-01`)).toEqual([]);
    expect(await idsOf(`?order=${docs.order}&created=${created.slice(0, 10)}`)).toEqual([ids.order]);
  });

  it("rejects unknown filters and operators (400 naming them)", async () => {
    for (const q of ["subject=Lista", "invoice__startswith=inv", "created__gte=yesterday", "page_size=101"]) {
      const res = await s.rest("GET", `/v1/reminders/messages/?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields)).toEqual([q.split("=")[0]]);
    }
  });

  it("shows another organization or mode none of them", async () => {
    expect(await list("", s.keys.other)).toEqual([]);
    expect(await list(`?invoice=${docs.invoice2}`, s.keys.other)).toEqual([]);
    expect(await list("", s.keys.acmeLive)).toEqual([]);
    const node = `query($id: ID!) { node(id: $id) { __typename ... on Reminder { id subject } } }`;
    expect((await s.graphql(node, { id: ids.invoice })).body.data.node).toEqual({
      __typename: "Reminder",
      id: ids.invoice,
      subject: "Lista",
    });
    expect((await s.graphql(node, { id: ids.invoice }, s.keys.other)).body.data.node).toBeNull();
  });

  it("GraphQL reminders: a connection with the same filters", async () => {
    const q =
      `query($where: ReminderWhere) { reminders(first: 10, where: $where) { totalCount edges { node { id ` +
      `order { id } delivery { status } } } } }`;
    const res = await s.graphql(q, { where: { order: { in: [docs.order] } } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.reminders).toEqual({
      totalCount: 1,
      edges: [{ node: { id: ids.order, order: { id: docs.order }, delivery: { status: "sent" } } }],
    });
    const byNote = await s.graphql(q, { where: { creditNote: { equals: docs.credit } } });
    expect(byNote.body.data.reminders.edges.map((e: any) => e.node.id)).toEqual([ids.credit]);
  });
});

describe("without SMTP_URL", () => {
  let plain: TestServer;
  beforeAll(async () => {
    plain = await startTestServer();
  });
  afterAll(async () => plain?.close());

  it("keeps the message in the outbox (status kept) and sends nothing", async () => {
    const customer = (await plain.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const inv = (
      await plain.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "x", amount: 1000 }] } })
    ).body;
    const res = await plain.rest("POST", "/v1/reminders/messages/", {
      body: { subject: "Sin SMTP", recipient: ["pagos@cliente.cl"], message: "Hola", invoice: inv.id },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.delivery).toEqual({
      status: "kept",
      attempts: 0,
      last_error: null,
      next_attempt: null,
      sent: null,
    });
    const row = await plain.database.prisma.outboxMessage.findFirstOrThrow({ where: { reminderId: res.body.id } });
    expect(row).toMatchObject({
      status: "kept",
      attempts: 0,
      subject: "Sin SMTP",
      body: "Hola",
      recipients: ["pagos@cliente.cl"],
      attachmentKind: "invoice",
      attachmentId: inv.id,
    });
    // a worker round with a mailer does not send kept messages
    const deps: OutboxDeps = {
      prisma: plain.database.prisma,
      mailer: createSmtpMailer(smtp.url),
      logger: createLogger("silent"),
      settings: DEFAULT_SETTINGS,
    };
    expect(await deliverDueMessages(deps, new Date(Date.now() + 86_400_000))).toMatchObject({ claimed: 0 });
    expect(smtp.received).toHaveLength(0);
  });
});
