/**
 * The dashboard in headless Chromium (docs/dashboard.md), on both databases: an admin invited through the service
 * sets a password on the invitation page and is signed in; the overview lists the overdue invoice and the failed
 * payment (a declining test card); a customer is found by name, RUT and e-mail; an invoice's page shows its lines,
 * totals to the peso and its PDF in the page; a draft is finalized (and its row in the database); the test/live
 * toggle switches the data; sign-out; a viewer signs in, sees no finalize button nor the admins' pages, and the
 * mutation with the viewer's cookie is permission_denied. The page's CSP header is checked and the browser reports no
 * violation. Pages are photographed at desktop and phone widths into test-artifacts/dashboard/ (gitignored); with
 * UPDATE_DOC_IMAGES=1 on PGlite, also into docs/images/dashboard/.
 */
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { launchChromium } from "../helpers/chromium.js";
import { dashboardBrowser, PASSWORD, prepareScreenshots } from "../helpers/dashboard-browser.js";
import { finalizedInvoice } from "../helpers/portal.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { sweepOverdueInvoices } from "../../src/services/overdue-invoices.js";
import { DASHBOARD_CSP } from "../../src/infra/http-security.js";

const SLOW = 180_000;

let s: TestServer;
let browser: Browser | undefined;
const { invite, member, signedIn, context, shots } = dashboardBrowser(() => ({ s, browser }));
/** the fixture's ids: customers and invoices of acme's test mode, a customer of its live mode */
const f = { robles: "", austral: "", overdue: "", draft: "", otherDraft: "", live: "" };

async function created(path: string, body: unknown, key?: string) {
  const res = await s.rest("POST", path, { body, key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A draft of `customer` whose total is CLP 2.916 (docs/invoice-totals.md's example: 2,450 net, 466 IVA). */
async function draft(customer: string): Promise<string> {
  return (
    await created("/v1/invoices/", {
      customer,
      lines: [
        { name: "Consultoría", quantity: 2, amount: 1000 },
        { name: "Soporte", amount: 500, discount: 10 },
      ],
    })
  ).id;
}

beforeAll(async () => {
  prepareScreenshots();
  [s, browser] = await Promise.all([startTestServer(), launchChromium()]);
  f.robles = (await created("/v1/customers/", chileanCustomer({ name: "Viña Los Robles SpA" }))).id;
  f.austral = (
    await created(
      "/v1/customers/",
      chileanCustomer({ name: "Ferretería Austral Ltda", tax_id: "77.123.456-9", email: "pagos@austral.cl" }),
    )
  ).id;
  // due a month ago, never paid: the overdue sweep announces it (invoice_payment_overdue)
  f.overdue = (
    await created("/v1/invoices/", {
      customer: f.robles,
      date: "2026-10-01",
      due_date: "2026-10-31",
      lines: [{ name: "Arriendo de equipos", quantity: 3, amount: 10000 }],
    })
  ).id;
  expect((await s.rest("GET", `/v1/invoices/${f.overdue}/finalize/`)).status).toBe(200);
  // paid with a declining test card: a failed payment (requires_payment_method, with its reason)
  const declined = await finalizedInvoice(s, f.robles);
  const card = await s.graphql(`mutation($input: SourceInput!) { createSource(input: $input) { id } }`, {
    input: { gateway: "test", customer: f.robles, data: { token: "tok_chargeDeclined" } },
  });
  const paid = await s.graphql(
    `mutation($invoice: ID!, $source: ID!) { payInvoice(invoice: $invoice, source: $source) { payment { status } } }`,
    { invoice: declined, source: card.body.data.createSource.id },
  );
  expect(paid.body.data?.payInvoice.payment.status, JSON.stringify(paid.body)).toBe("requires_payment_method");
  f.draft = await draft(f.austral);
  f.otherDraft = await draft(f.robles);
  f.live = (await created("/v1/customers/", chileanCustomer({ name: "Cliente Real SpA" }), s.keys.acmeLive)).id;
  const swept = await sweepOverdueInvoices({
    prisma: s.database.prisma,
    settings: DEFAULT_SETTINGS,
    now: () => new Date(),
  });
  expect(swept.overdue).toBe(1);
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

const row = (page: Page, id: string) => page.locator(`tr[data-id="${id}"]`);

describe("the dashboard's build", () => {
  it("loads at most 300 KB of JavaScript, gzip-compressed, on its first page", async () => {
    const html = await (await fetch(`${s.url}/dashboard`)).text();
    const scripts = [...html.matchAll(/<(?:script|link rel="modulepreload")[^>]* (?:src|href)="([^"]+\.js)"/g)].map(
      (m) => m[1],
    );
    expect(scripts.length).toBeGreaterThan(0);
    let gzipped = 0;
    for (const src of scripts) {
      const res = await fetch(`${s.url}${src}`);
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      gzipped += gzipSync(Buffer.from(await res.arrayBuffer()), { level: 9 }).length;
    }
    console.log(`dashboard: initial JavaScript ${scripts.length} file(s), ${(gzipped / 1024).toFixed(1)} KB gzip`);
    expect(gzipped).toBeLessThanOrEqual(300 * 1024);
  });
});

describe("the dashboard in a browser", () => {
  it(
    "an invited admin signs in, finds, opens, finalizes, switches data and signs out",
    async () => {
      const { ctx, violations } = await context();
      const page = await ctx.newPage();
      const link = await invite("ana@acme.cl", "Ana Rojas", "admin");
      const response = await page.goto(link);
      expect(response?.status()).toBe(200);
      expect(response?.headers()["content-security-policy"]).toBe(DASHBOARD_CSP);
      expect(DASHBOARD_CSP).toContain("script-src 'self';");
      expect(DASHBOARD_CSP).not.toContain("unsafe-inline");

      // the invitation page: choose a password, signed in
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Acepta la invitación");
      await shots(page, "invite");
      await page.getByLabel("Contraseña", { exact: true }).fill(PASSWORD);
      await page.getByLabel("Repite la contraseña").fill(PASSWORD);
      await page.getByRole("button", { name: "Guardar contraseña y entrar" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Requiere atención");
      expect(new URL(page.url()).pathname).toBe("/dashboard/");
      expect(await page.locator(".member").textContent()).toBe("Ana Rojas · Administración");
      expect(await page.locator(".test-marker").textContent()).toBe(
        "DATOS DE PRUEBA Estás viendo datos de prueba: nada de esto es real.",
      );

      // the overview: the overdue invoice, CLP 30.000 + 19 % IVA, due 31-10-2026
      const overdue = page.locator(`#overdue-title ~ ul li[data-id="${f.overdue}"]`);
      await expect.poll(() => overdue.textContent()).toMatch(/Viña Los Robles SpA · Vencimiento 31-10-2026 · /);
      expect(await overdue.textContent()).toMatch(/Por pagar CLP 35\.700$/);
      expect(await page.locator("#failed-title ~ ul li").allTextContents()).toEqual([
        `Viña Los Robles SpA · ${today()} · CLP 2.916 · card_declined: The card was declined.`,
      ]);
      expect(await page.locator("#rejected-title ~ p").textContent()).toBe("Nada por ahora.");
      await shots(page, "overview");

      // customers: found by name, RUT and e-mail
      await page.getByRole("link", { name: "Clientes", exact: true }).click();
      await expect.poll(() => page.locator("table.customers tbody tr").count()).toBe(2);
      for (const q of ["austral", "77.123.456", "pagos@austral"]) {
        await page.getByLabel("Buscar por nombre, RUT o correo").fill(q);
        await page.getByRole("button", { name: "Buscar" }).click();
        await expect.poll(() => page.locator("table.customers tbody tr").count(), { message: q }).toBe(1);
        expect(await row(page, f.austral).textContent()).toBe("Ferretería Austral Ltda77123456-9pagos@austral.cl");
      }
      await shots(page, "customers");
      await row(page, f.austral).getByRole("link").click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Ferretería Austral Ltda");
      await expect.poll(() => row(page, f.draft).textContent()).toBe(`Borrador ${f.draft}${today()}BorradorCLP 2.916`);
      // a portal link for the customer (createCustomerSession)
      await page.getByLabel("Dirección de vuelta").fill("https://acme.example/cuenta");
      await page.getByRole("button", { name: "Crear enlace al portal" }).click();
      await expect
        .poll(() => page.locator("output.link-url").textContent())
        .toMatch(new RegExp(`^${s.url}/portal/\\w+$`));
      await shots(page, "customer");
      // its invoices in the list, filtered by the customer
      await page.getByRole("link", { name: "Todas sus facturas, con filtros" }).click();
      await expect.poll(() => page.locator("table.invoices tbody tr").count()).toBe(1);
      expect(await row(page, f.draft).count()).toBe(1);
      expect(await page.getByLabel("Cliente (id cus_)").inputValue()).toBe(f.austral);

      // the overdue invoice's page: lines, totals to the peso, SII status, the PDF shown in the page
      await page.goto(`${s.url}/dashboard/#/invoices/${f.overdue}`);
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Emitida");
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Documento no tributario N° interno 1");
      expect(await page.locator("dd.payment-status").textContent()).toBe("Impaga");
      expect(await page.locator("dd.sii").textContent()).toBe("No es un DTE");
      expect(await page.locator("#lines-title ~ div tbody tr").allTextContents()).toEqual([
        "Arriendo de equipos3CLP 10.0000 %CLP 30.000",
      ]);
      expect(await page.locator("dl.totals").textContent()).toBe(
        "NetoCLP 30.000ExentoCLP 0IVACLP 5.700TotalCLP 35.700PagadoCLP 0Por pagarCLP 35.700",
      );
      const frame = page.locator("iframe.pdf");
      await expect.poll(() => frame.getAttribute("src")).toMatch(/^blob:http:\/\/127\.0\.0\.1:\d+\/[\w-]+$/);
      expect(await frame.getAttribute("title")).toBe("PDF de Documento no tributario N° interno 1");
      // Chromium opened the frame's bytes as a PDF (its viewer), and they are the invoice's
      await expect.poll(() => page.frames().some((fr) => fr.url().startsWith("blob:"))).toBe(true);
      const pdfFrame = page.frames().find((fr) => fr.url().startsWith("blob:"));
      await expect.poll(() => pdfFrame!.evaluate(() => document.contentType)).toBe("application/pdf");
      const pdf = await s.graphql(`{ node(id: "${f.overdue}") { ... on Invoice { pdf } } }`);
      const parser = new PDFParse({ data: new Uint8Array(Buffer.from(pdf.body.data.node.pdf, "base64")) });
      const text = (await parser.getText()).text;
      await parser.destroy();
      expect(text).toContain("Viña Los Robles SpA");
      expect(text).toContain("35.700");
      await shots(page, "invoice");

      // invoices: drafts only, then finalize one
      await page.getByRole("link", { name: "Facturas", exact: true }).click();
      await page.getByLabel("Estado").selectOption("draft");
      await page.getByRole("button", { name: "Filtrar" }).click();
      await expect.poll(() => page.locator("table.invoices tbody tr").count()).toBe(2);
      expect(await page.locator("table.invoices td.status").allTextContents()).toEqual(["Borrador", "Borrador"]);
      await shots(page, "invoices");
      await row(page, f.draft).getByRole("link").click();
      await page.getByRole("button", { name: "Emitir (finalizar)" }).click();
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Emitida");
      expect(await page.getByRole("status").first().textContent()).toBe("Factura emitida.");
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Documento no tributario N° interno 3");
      expect(await page.locator("dd.due").textContent()).toBe("CLP 2.916");
      expect(await page.getByRole("button", { name: "Emitir (finalizar)" }).count()).toBe(0);
      const finalized = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: f.draft } });
      // numbered next in the internal series, its total unchanged; finalized now
      expect([finalized.status, finalized.number, finalized.total.toString()]).toEqual(["finalized", 3, "2916"]);
      expect(Date.now() - finalized.finalizedAt!.getTime()).toBeLessThan(60_000);

      // the toggle: live data has its own customer, and no test marker
      await page.getByRole("link", { name: "Clientes", exact: true }).click();
      await expect.poll(() => page.locator("table.customers tbody tr").count()).toBe(2);
      await page.getByRole("button", { name: "Cambiar a datos Reales" }).click();
      await expect
        .poll(() => page.locator("table.customers tbody tr").allTextContents())
        .toEqual(["Cliente Real SpA76042235-5pagos@cliente.cl"]);
      expect(await page.locator(".test-marker").count()).toBe(0);
      await shots(page, "live");
      await page.getByRole("button", { name: "Cambiar a datos Prueba" }).click();
      await expect.poll(() => page.locator("table.customers tbody tr").count()).toBe(2);
      expect(await page.locator(".test-marker").count()).toBe(1);

      // English
      await page.getByRole("button", { name: "English" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Customers");
      expect(await page.locator(".member").textContent()).toBe("Ana Rojas · Admin");
      await page.getByRole("button", { name: "Español" }).click();

      // sign-out: back to the sign-in page
      await page.getByRole("button", { name: "Cerrar sesión" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Entrar al panel");
      await shots(page, "sign-in");
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );

  it(
    "follows an address changed while the page starts, before its router listens",
    async () => {
      await member("rita@acme.cl", "Rita Paz", "finance");
      const { page, ctx } = await signedIn("rita@acme.cl", "Rita Paz · Finanzas");
      // from the reload on, every hashchange listener is added 300 ms late and the first one's addition changes the
      // address: its event fires while nobody listens, as when a link is followed while the page is still starting
      await ctx.addInitScript((target: string) => {
        const add = window.addEventListener.bind(window);
        let moved = false;
        window.addEventListener = ((type: string, listener: EventListener, options?: boolean) => {
          if (type !== "hashchange") return add(type, listener, options);
          if (!moved) location.hash = target;
          moved = true;
          setTimeout(() => add(type, listener, options), 300);
        }) as typeof window.addEventListener;
      }, `#/customers/${f.robles}`);
      await page.reload();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Viña Los Robles SpA");
      expect(page.url()).toBe(`${s.url}/dashboard/#/customers/${f.robles}`);
      await ctx.close();
    },
    SLOW,
  );

  it(
    "a viewer gets no finalize button, and GraphQL refuses it the mutation",
    async () => {
      const link = await invite("vera@acme.cl", "Vera Soto", "viewer");
      const accepted = await fetch(`${s.url}/dashboard/api/invites/${link.split("/").at(-1)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ password: PASSWORD }),
      });
      expect(accepted.status).toBe(200);

      const { ctx, violations } = await context();
      const page = await ctx.newPage();
      await page.goto(`${s.url}/dashboard`);
      await page.getByLabel("Correo").fill("vera@acme.cl");
      await page.getByLabel("Contraseña").fill(PASSWORD);
      await page.getByRole("button", { name: "Entrar" }).click();
      await expect.poll(() => page.locator(".member").textContent()).toBe("Vera Soto · Solo lectura");
      // the admins' pages are not in a viewer's navigation, and refused when opened
      expect(await page.getByRole("link", { name: "Desarrolladores" }).count()).toBe(0);
      expect(await page.getByRole("link", { name: "Miembros" }).count()).toBe(0);
      await page.goto(`${s.url}/dashboard/#/members`);
      await expect
        .poll(() => page.getByRole("alert").textContent())
        .toBe("Solo quienes administran la organización ven esta página.");
      await page.goto(`${s.url}/dashboard/#/invoices/${f.otherDraft}`);
      await expect.poll(() => page.locator("dd.status").textContent()).toBe("Borrador");
      expect(await page.getByRole("button", { name: "Emitir (finalizar)" }).count()).toBe(0);
      await page.goto(`${s.url}/dashboard/#/customers/${f.robles}`);
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Viña Los Robles SpA");
      expect(await page.getByRole("button", { name: "Crear enlace al portal" }).count()).toBe(0);

      // the same mutation with the viewer's cookie and CSRF header, as the page would send it
      const cookies = await ctx.cookies(s.url);
      const value = (name: string) => cookies.find((c) => c.name === name)?.value ?? "";
      const res = await fetch(`${s.url}/graphql`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          cookie: `dashboard_session=${value("dashboard_session")}; dashboard_csrf=${value("dashboard_csrf")}`,
          "x-dashboard-csrf": value("dashboard_csrf"),
        },
        body: JSON.stringify({ query: `mutation { finalizeInvoice(id: "${f.otherDraft}") { id status } }` }),
      });
      const body = await res.json();
      expect(body.errors[0].extensions.code).toBe("permission_denied");
      expect(body.errors[0].message).toBe("Mutation.finalizeInvoice is not allowed to the viewer role (queries only)");
      const row = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: f.otherDraft } });
      expect(row.status).toBe("draft");
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );
});

/** Today as the Spanish pages print it (dd-mm-yyyy), in the organization's time zone (America/Santiago). */
function today(): string {
  const [y, m, d] = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Santiago" }).format(new Date()).split("-");
  return `${d}-${m}-${y}`;
}
