/**
 * The customer portal in headless Chromium (docs/customer-portal.md), on PGlite (vitest.config.ts): a session
 * link opened as the customer would, three invoices listed, a PDF downloaded and read, an invoice
 * paid with a saved card (and its payment row in the database), another declined with a declining
 * test card, a subscription cancelled at period end, the language switched, the return link
 * followed; another customer's invoice typed into the address refused; an expired link. With TEST_SCREENSHOTS=1 each
 * page is photographed at desktop and phone widths into test-artifacts/portal/ (gitignored). No request
 * leaves the machine (the return URL's site is answered by the test) and the page's CSP refuses
 * nothing.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { PDFParse } from "pdf-parse";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { launchChromium, MISSING_CHROMIUM } from "../helpers/chromium.js";
import { portalFixture, sessionKey, type PortalFixture } from "../helpers/portal.js";

const ARTIFACTS = path.join(process.cwd(), "test-artifacts", "portal");
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const RETURN_URL = "https://acme.example/account";
const SLOW = 120_000;

let s: TestServer;
let f: PortalFixture;
let browser: Browser | undefined;
const db = process.env.TEST_DB ?? "pglite";
beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  [s, browser] = await Promise.all([startTestServer(), launchChromium()]);
  f = await portalFixture(s);
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

/**
 * A browser context at `viewport` whose only outside site, the return URL's, is answered here; CSP reports collected.
 */
async function context(viewport: { width: number; height: number }) {
  if (!browser) expect.fail(MISSING_CHROMIUM);
  const ctx: BrowserContext = await browser.newContext({ viewport, acceptDownloads: true, locale: "es-CL" });
  await ctx.route(
    (url) => !url.href.startsWith(s.url),
    (route) =>
      route.request().url().startsWith(RETURN_URL)
        ? route.fulfill({ contentType: "text/html", body: "<title>Acme account</title><h1>Acme account</h1>" })
        : route.abort(),
  );
  const violations: string[] = [];
  ctx.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  return { ctx, violations };
}

async function shot(page: Page, name: string, width: "desktop" | "phone") {
  await page.screenshot({ path: path.join(ARTIFACTS, `${db}-${name}-${width}.png`), fullPage: true });
}

/**
 * The page as it stands, photographed at desktop width and at phone width (the viewport is left at desktop), with
 * TEST_SCREENSHOTS=1 (nothing checks the pictures; they are for looking at).
 */
async function shots(page: Page, name: string) {
  if (process.env.TEST_SCREENSHOTS !== "1") return;
  await shot(page, name, "desktop");
  await page.setViewportSize(PHONE);
  await shot(page, name, "phone");
  await page.setViewportSize(DESKTOP);
}

const invoiceRow = (page: Page, id: string) => page.locator(`#invoice-title ~ div tr[data-id="${id}"]`);

describe("the customer portal in a browser", () => {
  it(
    "lists, downloads, pays, declines, cancels, switches language and returns",
    async () => {
      const { ctx, violations } = await context(DESKTOP);
      const page = await ctx.newPage();
      const { key } = await sessionKey(s, f.customerId, RETURN_URL);
      await page.goto(`${s.url}/portal/${key}`);
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Acme Hosting");
      // the key is gone from the address at once
      expect(new URL(page.url()).pathname).toBe("/portal/");
      await expect.poll(() => page.locator("#invoice-title ~ div tbody tr").count()).toBe(3);
      for (const id of f.invoiceIds) expect(await invoiceRow(page, id).count()).toBe(1);
      // Spanish for a Chilean customer, amounts in pesos without decimals
      expect(await page.locator("html").getAttribute("lang")).toBe("es");
      expect(await invoiceRow(page, f.invoiceIds[0]).locator("td.num").first().textContent()).toBe("CLP 2.916");
      // numbered before any SII set-up: named as its PDF prints it, a non-tax document of the internal series
      expect(await invoiceRow(page, f.invoiceIds[0]).locator("th").textContent()).toBe(
        "Documento no tributario N° interno 1",
      );
      await shot(page, "overview", "desktop");

      // the PDF of an invoice, read back
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        invoiceRow(page, f.invoiceIds[0])
          .getByRole("button", { name: /Descargar PDF/ })
          .click(),
      ]);
      expect(download.suggestedFilename()).toBe(`${f.invoiceIds[0]}.pdf`);
      const parser = new PDFParse({ data: new Uint8Array(fs.readFileSync(await download.path())) });
      const text = (await parser.getText()).text;
      await parser.destroy();
      expect(text).toContain("Cliente Portal SpA");
      expect(text).toContain("Consultoría");

      // pay the first invoice with the saved card
      await invoiceRow(page, f.invoiceIds[0])
        .getByRole("link", { name: /^Pagar / })
        .click();
      await expect.poll(() => page.locator("dd.due").textContent()).toBe("CLP 2.916");
      expect(await page.getByRole("radio", { name: /Mastercard terminada en 4444/ }).isChecked()).toBe(true);
      await shot(page, "pay", "desktop");
      await page.getByRole("button", { name: "Pagar CLP 2.916" }).click();
      await expect.poll(() => page.getByRole("status").textContent()).toBe("Pago recibido. ¡Gracias!");
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Pagada");
      await shots(page, "paid");
      const payments = await s.database.prisma.payment.findMany({ where: { invoiceId: f.invoiceIds[0] } });
      expect(payments.map((p) => [p.status, p.amount.toString(), p.sourceId])).toEqual([
        ["succeeded", "2916", f.cardId],
      ]);

      // a declining card on the second invoice
      await page.getByRole("link", { name: "Volver al listado" }).click();
      await invoiceRow(page, f.invoiceIds[1])
        .getByRole("link", { name: /^Pagar / })
        .click();
      await page.getByRole("radio", { name: "Tarjeta nueva" }).check();
      await page.getByLabel("Token de la tarjeta de prueba").fill("tok_chargeDeclined");
      await page.getByRole("button", { name: /^Pagar CLP/ }).click();
      await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^El pago fue rechazado: card_declined: /);
      await shots(page, "declined");
      const declined = await s.database.prisma.payment.findMany({ where: { invoiceId: f.invoiceIds[1] } });
      expect(declined.map((p) => p.status)).toEqual(["requires_payment_method"]);
      // the declined new card is not kept: the choices are still the saved card, a new card and the checkout
      expect(await page.locator("fieldset label").allTextContents()).toEqual([
        "Mastercard terminada en 4444",
        "Tarjeta nueva",
        "Pagar en la página de pago",
      ]);
      expect(await s.database.prisma.source.count({ where: { customerId: f.customerId } })).toBe(1);

      // another customer's invoice typed into the address
      await page.goto(`${s.url}/portal/#/invoice/${f.other.invoiceId}`);
      await expect.poll(() => page.getByRole("alert").textContent()).toBe("No encontramos este documento.");
      await shots(page, "not-found");

      // cancel the subscription at period end
      await page.getByRole("link", { name: "Volver al listado" }).click();
      await page.getByRole("button", { name: "Cancelar al final del período" }).click();
      await expect
        .poll(() => page.locator(".subscriptions .notice").textContent())
        .toMatch(/^Termina el \d\d-\d\d-\d{4}$/);
      const sub = await s.database.prisma.subscription.findUniqueOrThrow({ where: { id: f.subscriptionId } });
      expect(sub.cancelAtPeriodEnd).toBe(true);

      // English
      await page.getByRole("button", { name: /English/ }).click();
      await expect.poll(() => page.getByRole("heading", { name: "Invoices" }).count()).toBe(1);
      expect(await page.locator("html").getAttribute("lang")).toBe("en");
      expect(await invoiceRow(page, f.invoiceIds[0]).locator("td.status").textContent()).toBe("Paid");
      await shots(page, "overview-en");

      // back to the business
      await page.getByRole("link", { name: "← Return to Acme Hosting" }).click();
      await page.waitForURL(RETURN_URL);
      expect(await page.title()).toBe("Acme account");
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );

  it(
    "fits a phone, and shows an expired link's page",
    async () => {
      const { ctx, violations } = await context(PHONE);
      const page = await ctx.newPage();
      const { key } = await sessionKey(s, f.customerId, RETURN_URL);
      await page.goto(`${s.url}/portal/${key}`);
      await expect.poll(() => page.locator("#invoice-title ~ div tbody tr").count()).toBe(3);
      // nothing wider than the screen but the tables' own scrolling box
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      await shot(page, "overview", "phone");
      await invoiceRow(page, f.invoiceIds[2])
        .getByRole("link", { name: /^Pagar / })
        .click();
      await expect.poll(() => page.locator("dd.due").count()).toBe(1);
      await shot(page, "pay", "phone");

      const expired = await sessionKey(s, f.customerId, RETURN_URL);
      await s.database.prisma.customerSession.update({
        where: { id: expired.id },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      const response = await page.goto(`${s.url}/portal/${expired.key}`);
      expect(response?.status()).toBe(404);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Este enlace ha vencido");
      expect(await page.getByRole("link", { name: "Volver / Go back" }).getAttribute("href")).toBe(RETURN_URL);
      await shot(page, "expired", "phone");
      await page.setViewportSize(DESKTOP);
      await shot(page, "expired", "desktop");
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );
});

describe("the redirect checkout and signing out in a browser", () => {
  it(
    "pays an invoice at the hosted checkout (after a reject), comes back to it paid, and signs out",
    async () => {
      const { ctx, violations } = await context(DESKTOP);
      const page = await ctx.newPage();
      const { key } = await sessionKey(s, f.customerId, RETURN_URL);
      await page.goto(`${s.url}/portal/${key}`);
      await expect.poll(() => page.locator("#invoice-title ~ div tbody tr").count()).toBe(3);
      const invoice = f.invoiceIds[2];
      await invoiceRow(page, invoice)
        .getByRole("link", { name: /^Pagar / })
        .click();
      await expect.poll(() => page.locator("dd.due").textContent()).toBe("CLP 7.676");
      // first the customer rejects at the checkout: back at the invoice, still open, told so
      await page.getByRole("radio", { name: "Pagar en la página de pago" }).check();
      await page.getByRole("button", { name: "Pagar CLP 7.676" }).click();
      await page.waitForURL(/\/checkout\/chk_\w+$/);
      await page.getByRole("button", { name: "Reject" }).click();
      await page.waitForURL((url) => url.pathname === "/portal/" && url.hash === `#/invoice/${invoice}`);
      await expect
        .poll(() => page.getByRole("alert").textContent())
        .toBe("El pago no se completó en la página de pago.");
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Pendiente");
      // then pays again through a new checkout, keyboard only: the checkout choice and the pay button
      await page.getByRole("radio", { name: "Pagar en la página de pago" }).focus();
      await page.keyboard.press("Space");
      expect(await page.getByRole("radio", { name: "Pagar en la página de pago" }).isChecked()).toBe(true);
      await page.getByRole("button", { name: "Pagar CLP 7.676" }).focus();
      await page.keyboard.press("Enter");
      // the hosted checkout, outside the portal
      await page.waitForURL(/\/checkout\/chk_\w+$/);
      expect(await page.locator("#amount").textContent()).toBe("CLP 7.676");
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Acme Hosting");
      await shots(page, "checkout");
      await page.getByRole("button", { name: "Approve" }).click();
      // back at the invoice, paid
      await page.waitForURL((url) => url.pathname === "/portal/" && url.hash === `#/invoice/${invoice}`);
      await expect.poll(() => page.getByRole("status").textContent()).toBe("Pago recibido. ¡Gracias!");
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Pagada");
      expect(await page.locator("dd.due").textContent()).toBe("CLP 0");
      // the checkout's answer left the address
      expect(new URL(page.url()).search).toBe("");
      await shots(page, "checkout-paid");
      const payments = await s.database.prisma.payment.findMany({
        where: { invoiceId: invoice },
        include: { source: true },
      });
      // one payment, retried after the reject with a second checkout source
      expect(payments.map((p) => [p.status, p.amount.toString(), p.source?.gateway, p.source?.status])).toEqual([
        ["succeeded", "7676", "redirect", "consumed"],
      ]);
      const charges = await s.database.prisma.paymentCharge.findMany({
        where: { paymentId: payments[0].id },
        orderBy: { attempt: "asc" },
      });
      expect(charges.map((c) => [c.attempt, c.status, c.failureCode])).toEqual([
        [1, "declined", "rejected_by_customer"],
        [2, "succeeded", null],
      ]);

      // sign out: the credential is deleted, the cookies cleared, the signed-out page links back
      await page.getByRole("link", { name: "Volver al listado" }).click();
      await expect.poll(() => invoiceRow(page, invoice).locator("td.status").textContent()).toBe("Pagada");
      const before = await s.database.prisma.portalCredential.count({ where: { customerId: f.customerId } });
      await page.getByRole("button", { name: "Cerrar sesión" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Sesión cerrada");
      // the heading has the focus, so a screen reader starts there
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1");
      expect(await page.title()).toBe("Sesión cerrada");
      expect(await page.getByRole("link", { name: "Volver" }).getAttribute("href")).toBe(RETURN_URL);
      expect((await ctx.cookies()).map((c) => c.name)).toEqual([]);
      expect(await s.database.prisma.portalCredential.count({ where: { customerId: f.customerId } })).toBe(before - 1);
      await shots(page, "signed-out");
      // the return link, by keyboard: the next stop after the heading
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Volver");
      await page.keyboard.press("Enter");
      await page.waitForURL(RETURN_URL);
      // the portal's address holds no credential any more: the expired page
      await page.goto(`${s.url}/portal/`);
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Este enlace ha vencido");
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );

  it(
    "signs out in English",
    async () => {
      const { ctx, violations } = await context(PHONE);
      const page = await ctx.newPage();
      const { key } = await sessionKey(s, f.customerId, RETURN_URL);
      await page.goto(`${s.url}/portal/${key}`);
      await page.getByRole("button", { name: /English/ }).click();
      await expect.poll(() => page.getByRole("heading", { name: "Invoices" }).count()).toBe(1);
      await page.getByRole("button", { name: "Sign out" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Signed out");
      expect(await page.locator("html").getAttribute("lang")).toBe("en");
      expect(await page.getByRole("link", { name: "Go back" }).getAttribute("href")).toBe(RETURN_URL);
      await shot(page, "signed-out-en", "phone");
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );
});
