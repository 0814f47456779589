/**
 * The dunning e-mail (docs/dunning.md "The e-mail"), on both databases: a declined renewal driven through a campaign
 * with a test clock; each attempt's e-mail reaches a real SMTP server (smtp-server) with the campaign's blind copy,
 * the invoice's PDF and a portal pay link made at sending; the link, opened in headless Chromium, shows the invoice
 * ready to pay and pays it with a new card; the subscription is active again and the run ends `paid` with no further
 * e-mail. A customer without an e-mail address gets none (`no_address`), a campaign with `send_email` false neither
 * (`off`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from "../helpers/smtp.js";
import { launchChromium, MISSING_CHROMIUM } from "../helpers/chromium.js";
import { finalizedInvoice } from "../helpers/portal.js";

/** PUBLIC_URL of the service under test: the links are made on it (the test opens them on the test server). */
const PUBLIC_URL = "https://billing.acme.example";
const SLOW = 120_000;

let s: TestServer;
let smtp: TestSmtpServer;
let browser: Browser | undefined;
let plan: string;
beforeAll(async () => {
  smtp = await startSmtpServer();
  [s, browser] = await Promise.all([
    startTestServer({
      settings: { smtpUrl: smtp.url, mailFrom: "cobranza@acme.cl", publicUrl: PUBLIC_URL },
      outboxIntervalMs: 200,
    }),
    launchChromium(),
  ]);
  const product = await s.rest("POST", "/v1/products/", {
    body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
  });
  expect(product.status, product.text).toBe(201);
  plan = product.body.plans[0].id;
  const campaign = await s.rest("POST", "/v1/dunning_campaigns/", {
    body: {
      name: "Estándar",
      code: "standard",
      thresholds: [{ currency: "CLP", amount: 0 }],
      days_between_attempts: 3,
      max_attempts: 3,
      bcc_emails: ["tesoreria@acme.cl"],
      final_action: "cancel_subscriptions",
      applied_to_organization: true,
    },
  });
  expect(campaign.status, campaign.text).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
  await smtp?.close();
});

/** A clock at `time`, a customer on it with a card of `token` and a subscription to the plan. */
async function subscribed(time: string, token: string, customerFields: Record<string, unknown> = {}) {
  const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: time } })).body.id as string;
  const created = await s.rest("POST", "/v1/customers/", {
    body: chileanCustomer({ test_clock: clock, ...customerFields }),
  });
  expect(created.status, created.text).toBe(201);
  const customer = created.body.id as string;
  const card = await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token } } });
  expect(card.status, card.text).toBe(201);
  const sub = await s.rest("POST", "/v1/subscriptions/", { body: { customer, lines: [{ plan }] } });
  expect(sub.status, sub.text).toBe(201);
  return { clock, customer, subscription: sub.body.id as string };
}

async function advance(clock: string, time: string) {
  const res = await s.rest("POST", `/v1/test_clocks/${clock}/advance/`, { body: { frozen_time: time } });
  expect(res.body.status, res.text).toBe("ready");
}

/** The customer's attempts through REST, oldest first: [number, email]. */
async function attemptEmails(customer: string): Promise<[number, string][]> {
  const res = await s.rest("GET", `/v1/dunning_attempts/?customer=${customer}&page_size=50`);
  expect(res.status, res.text).toBe(200);
  return [...res.body.results].reverse().map((a: any) => [a.number, a.email]);
}

/** The mails received for `address` so far. */
const mailsTo = (address: string) => smtp.received.filter((m) => m.envelope.to.includes(address));

/** Waits until `address` has received `count` mails; returns the last. */
async function waitForMail(address: string, count: number): Promise<ReceivedMail> {
  await expect.poll(() => mailsTo(address).length, { timeout: 20_000 }).toBe(count);
  return mailsTo(address)[count - 1];
}

/** The pay link of a received mail's text. */
function linkOf(mail: ReceivedMail): URL {
  const match = /https:\/\/billing\.acme\.example\/portal\/cs_[0-9A-Za-z]+#\/\S+/.exec(mail.parsed.text ?? "");
  expect(match, mail.parsed.text).not.toBeNull();
  return new URL(match![0]);
}

describe("the dunning e-mail", () => {
  it(
    "e-mails each attempt with the PDF and a pay link that pays the invoice in Chromium; paid, the run ends",
    async () => {
      const email = "pagos@nube-cliente.cl";
      const { clock, customer, subscription } = await subscribed(
        "2026-03-01T12:00:00Z",
        "tok_chargeDeclinedInsufficientFunds",
        { email },
      );
      await advance(clock, "2026-03-01T13:00:00Z"); // the renewal: billed, its charge declined
      const invoice = await s.database.prisma.invoice.findFirstOrThrow({
        where: { subscriptionId: subscription },
        include: { documentType: true },
      });
      // the day after the due date: the customer enters the campaign, the first attempt is made and e-mailed
      await advance(clock, "2026-03-02T12:00:00Z");
      const first = await waitForMail(email, 1);
      expect(first.envelope.to.sort()).toEqual([email, "tesoreria@acme.cl"]);
      expect(first.parsed.to && "text" in first.parsed.to ? first.parsed.to.text : "").toBe(email);
      expect(first.parsed.subject).toBe("Acme SpA: tienes 1 factura vencida por CLP 11.900");
      const text = first.parsed.text ?? "";
      expect(text).toContain(
        `- Documento no tributario N° interno ${invoice.number}, vencida el 01-03-2026: CLP 11.900`,
      );
      expect(text).toContain("Total por pagar: CLP 11.900");
      expect(text).toMatch(
        new RegExp(
          "El cobro a tu tarjeta Visa terminada en (\\d{4}) fue rechazado \\(insufficient_funds\\)\\. " +
            "Intentaremos cobrar de nuevo tu tarjeta Visa terminada en \\1 el 05-03-2026\\.",
        ),
      );
      expect(text).toContain("Puedes pagarlas en línea (el enlace funciona 7 días):");
      expect(first.parsed.html).toContain(`href="${linkOf(first).href.replace(/&/g, "&amp;")}"`);
      // the invoice's PDF, rendered at sending
      expect(first.parsed.attachments.map((a) => a.filename)).toEqual([
        `invoice-${invoice.documentTypeId}-${invoice.number}.pdf`,
      ]);
      const parser = new PDFParse({ data: new Uint8Array(first.parsed.attachments[0].content) });
      expect((await parser.getText()).text).toContain("11.900");
      await parser.destroy();
      // one invoice: the link opens its payment page; the session behind it works 7 days from the sending
      const link = linkOf(first);
      expect(link.hash).toBe(`#/invoice/${invoice.id}`);
      const session = await s.database.prisma.customerSession.findFirstOrThrow({
        where: { customerId: customer },
        orderBy: { createdAt: "desc" },
      });
      expect(session.expiresAt.getTime() - session.createdAt.getTime()).toBe(7 * 86_400_000);
      expect(session.returnUrl).toBe(`${PUBLIC_URL}/portal/`);

      // three days later the card is tried again and a second e-mail goes out with a new link
      await advance(clock, "2026-03-05T12:00:00Z");
      const second = await waitForMail(email, 2);
      expect(linkOf(second).href).not.toBe(link.href);
      expect(await attemptEmails(customer)).toEqual([
        [1, "queued"],
        [2, "queued"],
      ]);
      const declined = await s.database.prisma.payment.count({
        where: { customerId: customer, description: { startsWith: "Dunning attempt" } },
      });
      expect(declined).toBe(2);

      // the customer opens the second link (on the test server: PUBLIC_URL is the service's public name) and pays
      if (!browser) expect.fail(MISSING_CHROMIUM);
      const ctx = await browser.newContext({ locale: "es-CL" });
      await ctx.route(
        (url) => !url.href.startsWith(s.url),
        (route) => route.abort(),
      );
      const page = await ctx.newPage();
      const opened = linkOf(second);
      await page.goto(`${s.url}${opened.pathname}${opened.hash}`);
      await expect.poll(() => page.locator("dd.due").textContent(), { timeout: 20_000 }).toBe("CLP 11.900");
      await page.getByRole("radio", { name: "Tarjeta nueva" }).check();
      await page.getByLabel("Token de la tarjeta de prueba").fill("tok_visa");
      await page.getByRole("button", { name: "Pagar CLP 11.900" }).click();
      await expect.poll(() => page.getByRole("status").textContent()).toBe("Pago recibido. ¡Gracias!");
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Pagada");
      await ctx.close();

      const paid = await s.rest("GET", `/v1/invoices/${invoice.id}/`);
      expect([paid.body.payment_status, paid.body.amount_due]).toEqual(["paid", 0]);
      expect((await s.rest("GET", `/v1/subscriptions/${subscription}/`)).body.status).toBe("active");
      // the next round closes the run as paid: no attempt, no e-mail
      await advance(clock, "2026-03-08T12:00:00Z");
      expect(await attemptEmails(customer)).toEqual([
        [1, "queued"],
        [2, "queued"],
        [3, "not_needed"],
      ]);
      const run = await s.database.prisma.dunningRun.findFirstOrThrow({ where: { customerId: customer } });
      expect(run.status).toBe("paid");
      await new Promise((r) => setTimeout(r, 600)); // two outbox rounds
      expect(mailsTo(email)).toHaveLength(2);
      expect(await s.database.prisma.outboxMessage.count({ where: { customerId: customer, kind: "dunning" } })).toBe(2);
    },
    SLOW,
  );

  it(
    "a link for several invoices (#/pay/<id>,<id>) lists those still due, each with its pay button",
    async () => {
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Varias SpA" }) })).body
        .id as string;
      const [a, b, c] = [
        await finalizedInvoice(s, customer, 1),
        await finalizedInvoice(s, customer, 2),
        await finalizedInvoice(s, customer, 3),
      ];
      const session = await s.rest("POST", "/v1/customer_base/sessions/", {
        body: { customer, return_url: "https://acme.example/account" },
      });
      expect(session.status, session.text).toBe(201);
      if (!browser) expect.fail(MISSING_CHROMIUM);
      const ctx = await browser.newContext({ locale: "en-US" });
      await ctx.route(
        (url) => !url.href.startsWith(s.url),
        (route) => route.abort(),
      );
      const page = await ctx.newPage();
      // the link names a and b (c is due too, but not named)
      await page.goto(`${s.url}/portal/${session.body.key}#/pay/${a},${b}`);
      await expect
        .poll(() => page.locator("#invoice-title").textContent(), { timeout: 20_000 })
        .toBe("Facturas por pagar");
      const rows = page.locator("#invoice-title ~ div tbody tr");
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")))).toEqual([a, b]);
      expect(await page.locator(`tr[data-id="${c}"]`).count()).toBe(0);
      await page
        .locator(`tr[data-id="${b}"]`)
        .getByRole("link", { name: /^Pagar / })
        .click();
      await expect.poll(() => page.locator("dd.due").textContent()).toBe("CLP 5.296");
      await ctx.close();
    },
    SLOW,
  );

  it("a customer without an e-mail address gets none (no_address)", async () => {
    const { clock, customer } = await subscribed("2026-05-01T12:00:00Z", "tok_chargeDeclinedInsufficientFunds", {
      email: null,
    });
    await advance(clock, "2026-05-01T13:00:00Z");
    await advance(clock, "2026-05-02T12:00:00Z");
    expect(await attemptEmails(customer)).toEqual([[1, "no_address"]]);
    expect(await s.database.prisma.outboxMessage.count({ where: { customerId: customer } })).toBe(0);
  });

  it("a campaign that sends no e-mails queues none (off)", async () => {
    const quiet = await s.rest("POST", "/v1/dunning_campaigns/", {
      body: {
        name: "Solo tarjeta",
        code: "card-only",
        thresholds: [{ currency: "CLP", amount: 0 }],
        days_between_attempts: 3,
        max_attempts: 3,
        send_email: false,
      },
    });
    expect(quiet.status, quiet.text).toBe(201);
    const { clock, customer } = await subscribed("2026-06-01T12:00:00Z", "tok_chargeDeclinedInsufficientFunds", {
      email: "quiet@cliente.cl",
      dunning_campaign: quiet.body.id,
    });
    await advance(clock, "2026-06-01T13:00:00Z");
    await advance(clock, "2026-06-02T12:00:00Z");
    expect(await attemptEmails(customer)).toEqual([[1, "off"]]);
    expect(await s.database.prisma.outboxMessage.count({ where: { customerId: customer } })).toBe(0);
  });
});
