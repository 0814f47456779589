/**
 * The dashboard's invoice actions and history (docs/dashboard.md "Invoices") in headless Chromium, on both databases:
 * a finance member records a payment on an invoice (charged to the customer's test card) and sees its balance
 * change to the peso, is shown the API's error for an amount above what is due, credits the invoice with a credit
 * note, sends a reminder, voids another invoice with a credit note of its whole total, and marks a third
 * uncollectible; the database rows follow, and the invoice's history lists its events. A viewer sees the history
 * but none of the actions, and GraphQL refuses it those mutations. A payment's page lists its charge attempts with
 * the decline's code and message (`Payment.charges`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { launchChromium } from "../helpers/chromium.js";
import { dashboardBrowser, prepareScreenshots } from "../helpers/dashboard-browser.js";
import { finalizedInvoice } from "../helpers/portal.js";

const SLOW = 180_000;

let s: TestServer;
let browser: Browser | undefined;
const { member, shots, signedIn, graphqlAs } = dashboardBrowser(() => ({ s, browser }));
/** the fixture's ids in acme's test mode */
const f = { customer: "", card: "", paid: "", voided: "", uncollectible: "", retried: "" };

beforeAll(async () => {
  prepareScreenshots();
  [s, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Aceites del Sur SpA" }) });
  expect(customer.status).toBe(201);
  f.customer = customer.body.id;
  const card = await s.graphql(`mutation($input: SourceInput!) { createSource(input: $input) { id } }`, {
    input: { gateway: "test", customer: f.customer, data: { token: "tok_visa" } },
  });
  f.card = card.body.data.createSource.id;
  // each CLP 2.916 (2.450 net + 19 % IVA)
  f.paid = await finalizedInvoice(s, f.customer);
  f.voided = await finalizedInvoice(s, f.customer);
  f.uncollectible = await finalizedInvoice(s, f.customer);
  // a payment declined by one card (attempt 1), then charged to another (attempt 2)
  const invoice = await finalizedInvoice(s, f.customer);
  const payment = await s.graphql(`mutation($i: PaymentInput!) { createPayment(input: $i) { id } }`, {
    i: { invoice, amount: "2916" },
  });
  f.retried = payment.body.data.createPayment.id;
  const declining = await s.graphql(`mutation($input: SourceInput!) { createSource(input: $input) { id } }`, {
    input: { gateway: "test", customer: f.customer, data: { token: "tok_chargeDeclinedInsufficientFunds" } },
  });
  for (const source of [declining.body.data.createSource.id, f.card]) {
    const charged = await s.graphql(
      `mutation($id: ID!, $source: ID!) { authorizePayment(id: $id, source: $source) { status } }`,
      {
        id: f.retried,
        source,
      },
    );
    expect(charged.body.errors).toBeUndefined();
  }
  await member("ana@acme.cl", "Ana Rojas", "finance");
  await member("vera@acme.cl", "Vera Soto", "viewer");
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

const due = (page: Page) => page.locator("dd.due").textContent();
const paymentStatus = (page: Page) => page.locator("dd.payment-status").textContent();

/** Opens an action's form, fills it (`fill`), continues, and answers yes to the confirmation. */
async function act(page: Page, action: string, fill?: () => Promise<void>) {
  await page.locator(".action-buttons").getByRole("button", { name: action, exact: true }).click();
  await fill?.();
  if ((await page.getByRole("group").count()) === 0) await page.getByRole("button", { name: "Continuar" }).click();
  await page.getByRole("group").getByRole("button", { name: action, exact: true }).click();
}

describe("the dashboard's invoice actions", () => {
  it(
    "records a payment, credits the invoice and sends a reminder; the balance and the history follow",
    async () => {
      const { page, violations } = await signedIn("ana@acme.cl", "Ana Rojas · Finanzas");
      await page.goto(`${s.url}/dashboard/#/invoices/${f.paid}`);
      await expect.poll(() => due(page)).toBe("CLP 2.916");
      await expect
        .poll(() => page.locator(".history .event-type").allTextContents())
        .toEqual(["Emitida", "Creada (borrador)"]);

      // more than is due: the API's validation error, naming the amount; nothing charged
      await act(page, "Registrar pago", async () => {
        expect(await page.getByLabel("Monto (CLP)").inputValue()).toBe("2916");
        expect(await page.getByLabel("Medio de pago").locator("option:checked").textContent()).toBe("visa •••• 4242");
        await page.getByLabel("Monto (CLP)").fill("5000");
      });
      await expect.poll(() => page.locator(".invoice-actions [role=alert]").textContent()).toMatch(/amount/);
      expect(await s.database.prisma.payment.count({ where: { invoiceId: f.paid, status: "succeeded" } })).toBe(0);

      // CLP 1.000 charged to the card: due 2.916 -> 1.916, partially paid
      await act(page, "Registrar pago", () => page.getByLabel("Monto (CLP)").fill("1000"));
      await expect
        .poll(() => page.locator(".invoice-actions [role=status]").textContent())
        .toBe("Pago registrado: Exitoso.");
      await expect.poll(() => due(page)).toBe("CLP 1.916");
      expect(await paymentStatus(page)).toBe("Pago parcial");
      const payments = await s.database.prisma.payment.findMany({ where: { invoiceId: f.paid } });
      expect(payments.map((p) => [p.amount.toString(), p.status, p.sourceId, p.userEmail])).toContainEqual([
        "1000",
        "succeeded",
        f.card,
        "ana@acme.cl",
      ]);

      // a credit note of CLP 1.000 net (1.190 with IVA): due 1.916 -> 726
      await act(page, "Nota de crédito", async () => {
        await page.getByLabel("Monto neto (CLP)").fill("1000");
        await page.getByLabel("Motivo (línea de la nota)").fill("Descuento por atraso");
      });
      await expect
        .poll(() => page.locator(".invoice-actions [role=status]").textContent())
        .toBe("Nota de crédito emitida.");
      await expect.poll(() => due(page)).toBe("CLP 726");
      const notes = await s.database.prisma.creditNote.findMany({ where: { invoiceId: f.paid } });
      expect(notes.map((n) => [n.status, n.total.toString(), n.userEmail])).toEqual([
        ["finalized", "1190", "ana@acme.cl"],
      ]);
      // listed on the invoice's page, linking its own
      await expect
        .poll(() => page.locator(`li[data-id="${notes[0].id}"]`).textContent())
        .toBe(`Documento no tributario N° interno ${notes[0].number} · ${today()} · CLP 1.190 · Emitida`);

      // a reminder to the customer's e-mail, with the subject the form proposes
      await act(page, "Enviar recordatorio");
      await expect
        .poll(() => page.locator(".invoice-actions [role=status]").textContent())
        .toBe("Recordatorio enviado a pagos@cliente.cl.");
      const reminders = await s.database.prisma.reminder.findMany({ where: { invoiceId: f.paid } });
      expect(reminders.map((r) => [r.recipients, r.subject.startsWith("Recordatorio de pago: ")])).toEqual([
        [["pagos@cliente.cl"], true],
      ]);
      await shots(page, "invoice-actions");
      expect(violations).toEqual([]);
    },
    SLOW,
  );

  it(
    "voids an invoice with a credit note of its total, and marks another uncollectible",
    async () => {
      const { page, violations } = await signedIn("ana@acme.cl", "Ana Rojas · Finanzas");
      await page.goto(`${s.url}/dashboard/#/invoices/${f.voided}`);
      await expect.poll(() => due(page)).toBe("CLP 2.916");
      // asked first: "Cancelar" answers no and nothing is written
      await page.locator(".action-buttons").getByRole("button", { name: "Anular con nota de crédito" }).click();
      await page.getByRole("group").getByRole("button", { name: "Cancelar", exact: true }).click();
      expect(await s.database.prisma.creditNote.count({ where: { invoiceId: f.voided } })).toBe(0);
      await act(page, "Anular con nota de crédito");
      await expect
        .poll(() => page.locator(".invoice-actions [role=status]").textContent())
        .toBe("Factura anulada con una nota de crédito.");
      await expect.poll(() => due(page)).toBe("CLP 0");
      expect(await paymentStatus(page)).toBe("Pagada");
      const notes = await s.database.prisma.creditNote.findMany({ where: { invoiceId: f.voided } });
      expect(notes.map((n) => [n.status, n.total.toString(), n.referenceCode])).toEqual([["finalized", "2916", 1]]);
      // nothing is due: no action is left; the history says it is paid
      expect(await page.locator(".action-buttons").count()).toBe(0);
      await expect
        .poll(() => page.locator(".history .event-type").allTextContents())
        .toEqual(["Pagada por completo", "Emitida", "Creada (borrador)"]);
      // the same filter through REST (the events list's `object`)
      const listed = await s.rest("GET", `/v1/events/?object=${f.voided}`);
      expect(listed.status).toBe(200);
      expect(listed.body.results.map((e: { type: string }) => e.type)).toEqual([
        "invoice.paid",
        "invoice.finalized",
        "invoice.created",
      ]);

      await page.goto(`${s.url}/dashboard/#/invoices/${f.uncollectible}`);
      await expect.poll(() => due(page)).toBe("CLP 2.916");
      await act(page, "Marcar incobrable");
      await expect.poll(() => paymentStatus(page)).toBe("Incobrable");
      expect(await page.locator(".action-buttons").getByRole("button", { name: "Marcar incobrable" }).count()).toBe(0);
      const row = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: f.uncollectible } });
      expect(row.markedUncollectibleAt).not.toBeNull();
      expect(violations).toEqual([]);
    },
    SLOW,
  );

  it(
    "shows a viewer the history without the actions, and GraphQL refuses it the mutations",
    async () => {
      const { page, ctx, violations } = await signedIn("vera@acme.cl", "Vera Soto · Solo lectura");
      await page.goto(`${s.url}/dashboard/#/invoices/${f.uncollectible}`);
      await expect.poll(() => page.locator(".history .event-type").first().textContent()).toBe("Marcada incobrable");
      expect(await page.locator(".invoice-actions").count()).toBe(0);
      expect(
        await page
          .getByRole("button", { name: /Registrar pago|Nota de crédito|Anular|recordatorio|incobrable/ })
          .count(),
      ).toBe(0);
      const refused = {
        createPayment: [
          `mutation($i: PaymentInput!) { createPayment(input: $i) { id } }`,
          { i: { invoice: f.uncollectible, amount: "1" } },
        ],
        createCreditNote: [
          `mutation($i: CreditNoteInput!) { createCreditNote(input: $i) { id } }`,
          { i: { invoice: f.uncollectible, lines: [{ name: "x", amount: "1" }] } },
        ],
        sendReminder: [
          `mutation($i: ReminderInput!) { sendReminder(input: $i) { id } }`,
          { i: { invoice: f.uncollectible, recipients: ["a@b.cl"], subject: "s", message: "m" } },
        ],
        markInvoiceUncollectible: [`mutation($id: ID!) { markInvoiceUncollectible(id: $id) { id } }`, { id: f.paid }],
      } as const;
      for (const [name, [query, variables]] of Object.entries(refused)) {
        const body = await graphqlAs(ctx, query, variables);
        expect(body.errors?.[0].extensions.code, name).toBe("permission_denied");
        expect(body.errors?.[0].message).toBe(`Mutation.${name} is not allowed to the viewer role (queries only)`);
      }
      expect(await s.database.prisma.payment.count({ where: { invoiceId: f.uncollectible } })).toBe(0);
      expect(await s.database.prisma.creditNote.count({ where: { invoiceId: f.uncollectible } })).toBe(0);
      expect(violations).toEqual([]);
    },
    SLOW,
  );
});

describe("the dashboard's payment page", () => {
  it(
    "lists a payment's charge attempts: the declined one with its code and message, then the one that succeeded",
    async () => {
      // through GraphQL: the attempts in order, with the gateway's words
      const read = await s.graphql(
        `{ node(id: "${f.retried}") { ... on Payment {
          status charges { attempt status amount currency failureCode failureMessage } } } }`,
      );
      expect(read.body.data.node).toEqual({
        status: "succeeded",
        charges: [
          {
            attempt: 1,
            status: "declined",
            amount: "2916",
            currency: "CLP",
            failureCode: "insufficient_funds",
            failureMessage: expect.any(String),
          },
          { attempt: 2, status: "succeeded", amount: "2916", currency: "CLP", failureCode: null, failureMessage: null },
        ],
      });
      const message = read.body.data.node.charges[0].failureMessage as string;

      const { page, violations } = await signedIn("vera@acme.cl", "Vera Soto · Solo lectura");
      await page.getByRole("link", { name: "Pagos", exact: true }).click();
      await page.getByRole("link", { name: `Pago ${f.retried}` }).click();
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Exitoso");
      const rows = page.locator("table.charges tbody tr");
      await expect.poll(() => rows.count()).toBe(2);
      expect(await rows.nth(0).locator("th").textContent()).toBe("1");
      expect(await rows.nth(0).locator("td.status").textContent()).toBe("Rechazado");
      expect(await rows.nth(0).locator("td.code").textContent()).toBe("insufficient_funds");
      expect(await rows.nth(0).locator("td.message").textContent()).toBe(message);
      expect(await rows.nth(0).locator("td.num").textContent()).toBe("CLP 2.916");
      expect(await rows.nth(1).locator("td.status").textContent()).toBe("Exitoso");
      expect(await rows.nth(1).locator("td").nth(3).textContent()).toBe("visa •••• 4242");
      expect(await rows.nth(1).locator("td.code").textContent()).toBe("—");
      await shots(page, "payment");
      expect(violations).toEqual([]);
    },
    SLOW,
  );
});

/** Today as the Spanish pages print it (dd-mm-yyyy), in the organization's time zone (America/Santiago). */
function today(): string {
  const [y, m, d] = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Santiago" }).format(new Date()).split("-");
  return `${d}-${m}-${y}`;
}
