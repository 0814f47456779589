/**
 * The dashboard's subscriptions, payments, orders and credit notes (docs/dashboard.md) in headless Chromium, on both
 * databases: a subscription created through the API is listed, its page shows the upcoming invoice's total to the peso,
 * it is paused, resumed and set to cancel at the end of its period in the page (each asked first; the database row
 * follows); a viewer sees none of those buttons. A payment with a declining test card is listed on the payments page
 * with its decline reason. An order and a credit note are listed with their totals, filtered by status and date, and
 * open on their pages with lines, totals and the PDF. Pages are photographed at desktop and phone widths
 * (test-artifacts/dashboard/).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { launchChromium } from "../helpers/chromium.js";
import { dashboardBrowser, PASSWORD, prepareScreenshots } from "../helpers/dashboard-browser.js";
import { finalizedInvoice } from "../helpers/portal.js";

const SLOW = 180_000;

let s: TestServer;
let browser: Browser | undefined;
const { member, context, shots } = dashboardBrowser(() => ({ s, browser }));
/** the fixture's ids in acme's test mode */
const f = { customer: "", subscription: "", declined: "", order: "", creditNote: "" };

async function created(path: string, body: unknown) {
  const res = await s.rest("POST", path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

beforeAll(async () => {
  prepareScreenshots();
  [s, browser] = await Promise.all([startTestServer(), launchChromium()]);
  f.customer = (await created("/v1/customers/", chileanCustomer({ name: "Viña Los Robles SpA" }))).id;
  const product = await created("/v1/products/", {
    name: "Nube",
    plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }],
  });
  f.subscription = (
    await created("/v1/subscriptions/", { customer: f.customer, lines: [{ plan: product.plans[0].id, quantity: 2 }] })
  ).id;
  // paid with a declining test card: a failed payment (requires_payment_method, with its reason)
  f.declined = await finalizedInvoice(s, f.customer);
  const card = await s.graphql(`mutation($input: SourceInput!) { createSource(input: $input) { id } }`, {
    input: { gateway: "test", customer: f.customer, data: { token: "tok_chargeDeclined" } },
  });
  const paid = await s.graphql(
    `mutation($invoice: ID!, $source: ID!) { payInvoice(invoice: $invoice, source: $source) { payment { status } } }`,
    { invoice: f.declined, source: card.body.data.createSource.id },
  );
  expect(paid.body.data?.payInvoice.payment.status, JSON.stringify(paid.body)).toBe("requires_payment_method");
  // an order (a draft) and a finalized credit note of the declined invoice: CLP 2.000 + 380 IVA, CLP 1.000 + 190 IVA
  f.order = (
    await created("/v1/orders/", {
      customer: f.customer,
      shipping_type: "1",
      lines: [{ name: "Cajas", quantity: 2, amount: 1000 }],
    })
  ).id;
  f.creditNote = (
    await created("/v1/creditnotes/", {
      invoice: f.declined,
      lines: [{ name: "Devolución", quantity: 1, amount: 1000 }],
    })
  ).id;
  expect((await s.rest("GET", `/v1/creditnotes/${f.creditNote}/finalize/`)).status).toBe(200);
  await member("ana@acme.cl", "Ana Rojas", "finance");
  await member("vera@acme.cl", "Vera Soto", "viewer");
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

/** A page of a member signed in with PASSWORD, and the CSP violations its browser reports. */
async function signedIn(email: string, memberText: string): Promise<{ page: Page; violations: string[] }> {
  const { ctx, violations } = await context();
  const page = await ctx.newPage();
  await page.goto(`${s.url}/dashboard`);
  await page.getByLabel("Correo").fill(email);
  await page.getByLabel("Contraseña").fill(PASSWORD);
  await page.getByRole("button", { name: "Entrar" }).click();
  await expect.poll(() => page.locator(".member").textContent()).toBe(memberText);
  return { page, violations };
}

const row = (page: Page, id: string) => page.locator(`tr[data-id="${id}"]`);
const subscriptionRow = () => s.database.prisma.subscription.findUniqueOrThrow({ where: { id: f.subscription } });

describe("the dashboard's subscriptions", () => {
  it(
    "lists a subscription, previews its next invoice, pauses, resumes and cancels it at period end",
    async () => {
      const { page, violations } = await signedIn("ana@acme.cl", "Ana Rojas · Finanzas");
      await page.getByRole("link", { name: "Suscripciones", exact: true }).click();
      await expect
        .poll(() => row(page, f.subscription).textContent())
        .toMatch(/^Viña Los Robles SpAPro × 2Activa\d\d-\d\d-\d{4}$/);
      // the status filter: none paused
      await page.getByLabel("Estado").selectOption("paused");
      await expect.poll(() => page.locator("main p").last().textContent()).toBe("No hay suscripciones que coincidan.");
      await page.getByLabel("Estado").selectOption("active");
      await expect.poll(() => row(page, f.subscription).count()).toBe(1);
      await shots(page, "subscriptions");

      // its page: the upcoming invoice, 2 × CLP 10.000 + 19 % IVA, to the peso (as the API previews it)
      await row(page, f.subscription).getByRole("link").click();
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Activa");
      const preview = await s.graphql(`{ upcomingInvoice(subscription: "${f.subscription}") { total } }`);
      expect(preview.body.data.upcomingInvoice.total).toBe("23800");
      await expect
        .poll(() => page.locator("#upcoming-title ~ dl.totals").textContent())
        .toBe("NetoCLP 20.000ExentoCLP 0IVACLP 3.800TotalCLP 23.800");
      expect(await page.locator("#upcoming-title ~ div tbody tr").allTextContents()).toEqual([
        "Nube - Pro2CLP 10.000CLP 20.000",
      ]);
      await shots(page, "subscription");

      // pause (asked first; "Cancelar" answers no), then resume
      await page.getByRole("button", { name: "Pausar" }).click();
      await page.getByRole("group").getByRole("button", { name: "Cancelar", exact: true }).click();
      expect((await subscriptionRow()).status).toBe("active");
      await page.getByRole("button", { name: "Pausar" }).click();
      await page.getByRole("group").getByRole("button", { name: "Pausar" }).click();
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Pausada");
      expect((await subscriptionRow()).status).toBe("paused");
      expect(await page.getByRole("button", { name: "Pausar" }).count()).toBe(0);
      expect(await page.locator("#upcoming-title ~ p").textContent()).toBe(
        "No se facturará otro ciclo (pausada, cancelada o terminando).",
      );
      await page.getByRole("button", { name: "Reanudar" }).click();
      await page.getByRole("group").getByRole("button", { name: "Reanudar" }).click();
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Activa");
      expect((await subscriptionRow()).status).toBe("active");

      // cancel at the end of the period: still active, marked, and that button is gone
      await page.getByRole("button", { name: "Cancelar al fin del periodo" }).click();
      await page.getByRole("group").getByRole("button", { name: "Cancelar al fin del periodo" }).click();
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Activa · se cancela al fin del periodo");
      const sub = await subscriptionRow();
      expect([sub.status, sub.cancelAtPeriodEnd, sub.cancelled]).toEqual(["active", true, null]);
      expect(await page.getByRole("button", { name: "Cancelar al fin del periodo" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Cancelar ahora" }).count()).toBe(1);
      await shots(page, "subscription-cancelling");

      // the customer's page links the subscription
      await page.getByRole("link", { name: "Viña Los Robles SpA" }).click();
      await expect
        .poll(() => page.locator(`li[data-id="${f.subscription}"] a`).getAttribute("href"))
        .toBe(`#/subscriptions/${f.subscription}`);
      expect(violations).toEqual([]);
    },
    SLOW,
  );

  it(
    "shows a viewer the subscription without its actions",
    async () => {
      const { page, violations } = await signedIn("vera@acme.cl", "Vera Soto · Solo lectura");
      await page.goto(`${s.url}/dashboard/#/subscriptions/${f.subscription}`);
      await expect.poll(() => page.locator("#upcoming-title").count()).toBe(1);
      expect(await page.locator(".actions-bar").count()).toBe(0);
      expect(await page.getByRole("button", { name: /Pausar|Reanudar|Cancelar/ }).count()).toBe(0);
      expect(violations).toEqual([]);
    },
    SLOW,
  );
});

describe("the dashboard's payments", () => {
  it(
    "lists a declined card payment with its decline reason and its invoice",
    async () => {
      const { page, violations } = await signedIn("ana@acme.cl", "Ana Rojas · Finanzas");
      await page.getByRole("link", { name: "Pagos", exact: true }).click();
      await page.getByLabel("Estado").selectOption("requires_payment_method");
      const declined = page.locator("table.payments tbody tr");
      await expect.poll(() => declined.count()).toBe(1);
      expect(await declined.locator("td.reason").textContent()).toBe("card_declined: The card was declined.");
      expect(await declined.locator("td.status").textContent()).toBe("Requiere medio de pago");
      expect(await declined.locator("td.num").textContent()).toBe("CLP 2.916");
      expect(await declined.getByRole("link", { name: "Viña Los Robles SpA" }).count()).toBe(1);
      await shots(page, "payments");
      await page.getByLabel("Estado").selectOption("succeeded");
      await expect.poll(() => page.locator("main p").last().textContent()).toBe("No hay pagos que coincidan.");
      await page.getByLabel("Estado").selectOption("requires_payment_method");
      await declined.locator("td").nth(1).getByRole("link").click();
      await expect.poll(() => new URL(page.url()).hash).toBe(`#/invoices/${f.declined}`);
      expect(violations).toEqual([]);
    },
    SLOW,
  );
});

describe("the dashboard's orders and credit notes", () => {
  it(
    "lists an order and a credit note with their totals, and opens their pages",
    async () => {
      const { page, violations } = await signedIn("ana@acme.cl", "Ana Rojas · Finanzas");
      await page.getByRole("link", { name: "Guías y pedidos", exact: true }).click();
      await expect
        .poll(() => row(page, f.order).textContent())
        .toBe(`Borrador ${f.order}Viña Los Robles SpA${today()}BorradorCLP 2.380`);
      await page.getByLabel("Estado").selectOption("finalized");
      await page.getByRole("button", { name: "Filtrar" }).click();
      await expect.poll(() => page.locator("main p").last().textContent()).toBe("Nada aquí todavía.");
      await page.goto(`${s.url}/dashboard/#/orders?status=draft&from=2020-01-01`);
      await expect.poll(() => row(page, f.order).count()).toBe(1);
      await shots(page, "orders");
      await row(page, f.order).getByRole("link").click();
      await expect
        .poll(() => page.locator("dl.totals").textContent())
        .toBe("NetoCLP 2.000ExentoCLP 0IVACLP 380TotalCLP 2.380");
      expect(await page.locator("#lines-title ~ div tbody tr").allTextContents()).toEqual(["Cajas2CLP 1.000CLP 2.000"]);
      await expect.poll(() => page.locator("iframe.pdf").getAttribute("src")).toMatch(/^blob:/);

      await page.getByRole("link", { name: "Notas de crédito", exact: true }).click();
      await expect.poll(() => row(page, f.creditNote).locator("td.num").textContent()).toBe("CLP 1.190");
      expect(await row(page, f.creditNote).locator("td.status").textContent()).toBe("Emitida");
      await shots(page, "creditnotes");
      await row(page, f.creditNote).getByRole("link").click();
      await expect
        .poll(() => page.locator("dl.totals").textContent())
        .toBe("NetoCLP 1.000ExentoCLP 0IVACLP 190TotalCLP 1.190");
      await expect.poll(() => page.locator("iframe.pdf").getAttribute("src")).toMatch(/^blob:/);
      await shots(page, "creditnote");
      expect(violations).toEqual([]);
    },
    SLOW,
  );
});

function today(): string {
  const [y, m, d] = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Santiago" }).format(new Date()).split("-");
  return `${d}-${m}-${y}`;
}
