/**
 * The dashboard's revenue charts, Developers page and members page in headless Chromium (docs/dashboard.md), on both
 * databases: docs/analytics.md's worked example built on a test clock and read on the overview (the table to the
 * peso, four charts drawn on their canvases); an admin creates an API key in the page and uses it, revokes it and sees
 * it answer 401; invites a member in the page, who opens the link in a fresh browser, sets a password and signs in; a
 * finance member and a viewer see neither page and GraphQL refuses them the mutations; a webhook delivery listed on
 * the Developers page is sent again with its button. Screenshots as
 * dashboard-browser.test.ts takes them (UPDATE_DOC_IMAGES=1 on PGlite writes docs/images/dashboard/).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { launchChromium } from "../helpers/chromium.js";
import { dashboardBrowser, PASSWORD, prepareScreenshots } from "../helpers/dashboard-browser.js";
import { buildWorkedExample, WORKED_EXAMPLE } from "../helpers/revenue-example.js";

const SLOW = 240_000;

let s: TestServer;
let browser: Browser | undefined;
const { member, context, shots } = dashboardBrowser(() => ({ s, browser }));
let receiver: WebhookReceiver;

beforeAll(async () => {
  prepareScreenshots();
  [s, browser, receiver] = await Promise.all([
    startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) }, webhookWorker: true }),
    launchChromium(),
    startWebhookReceiver(),
  ]);
  await buildWorkedExample(s);
  await member("ana@acme.cl", "Ana Rojas", "admin");
}, SLOW);
afterAll(async () => {
  await browser?.close();
  await s?.close();
  await receiver?.close();
});

/** Signs `email` in on the sign-in page of a new context. */
async function signIn(email: string): Promise<{ ctx: BrowserContext; page: Page; violations: string[] }> {
  const { ctx, violations } = await context();
  const page = await ctx.newPage();
  await page.goto(`${s.url}/dashboard`);
  await page.getByLabel("Correo").fill(email);
  await page.getByLabel("Contraseña").fill(PASSWORD);
  await page.getByRole("button", { name: "Entrar" }).click();
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Requiere atención");
  return { ctx, page, violations };
}

/** A GraphQL request with a browser context's member cookie and CSRF header, as the page sends it. */
async function asMember(ctx: BrowserContext, query: string) {
  const cookies = await ctx.cookies(s.url);
  const value = (name: string) => cookies.find((c) => c.name === name)?.value ?? "";
  const res = await fetch(`${s.url}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      cookie: `dashboard_session=${value("dashboard_session")}; dashboard_csrf=${value("dashboard_csrf")}`,
      "x-dashboard-csrf": value("dashboard_csrf"),
    },
    body: JSON.stringify({ query }),
  });
  return res.json();
}

/** A REST request with `key`: its status. */
async function statusWith(key: string): Promise<number> {
  return (await fetch(`${s.url}/v1/customers/`, { headers: { authorization: `Bearer ${key}` } })).status;
}

const clp = (n: number) => `CLP ${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ".")}`;

describe("the dashboard's admin pages in a browser", () => {
  it(
    "the overview draws docs/analytics.md's worked example, and its table has the figures to the peso",
    async () => {
      const { ctx, page, violations } = await signIn("ana@acme.cl");
      await page.goto(`${s.url}/dashboard/#/?to=2026-04`);
      const row = (month: string) => page.locator(`table.revenue tr[data-month="${month}"] td`);
      const months = () =>
        page.locator("table.revenue tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.month));
      await expect
        .poll(months)
        .toEqual(Array.from({ length: 12 }, (_, i) => new Date(Date.UTC(2025, 4 + i, 1)).toISOString().slice(0, 10)));
      expect(await row("2025-12-01").allTextContents()).toEqual(Array(10).fill("CLP 0"));
      // the table's columns: mrr, new, expansion, contraction, churned, invoiced, collected, outstanding, overdue, iva
      const columns = [0, 1, 2, 3, 4, 7, 11, 12, 13, 10];
      for (const [i, month] of ["2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01"].entries()) {
        expect(await row(month).allTextContents(), month).toEqual(columns.map((c) => clp(WORKED_EXAMPLE[i][c])));
      }
      expect(await page.locator("table.revenue thead th").allTextContents()).toEqual([
        "Mes",
        "MRR",
        "Nuevo",
        "Expansión",
        "Contracción",
        "Perdido",
        "Facturado",
        "Cobrado",
        "Por cobrar",
        "Vencido",
        "IVA",
      ]);
      // four charts, each a canvas with its series drawn in their colours (the first series' colour is on it)
      await expect.poll(() => page.locator(".chart canvas").count()).toBe(4);
      expect(await page.locator(".chart .u-title").allTextContents()).toEqual([
        "MRR y sus movimientos",
        "Facturado y cobrado",
        "Por cobrar y vencido (a fin de mes)",
        "IVA débito fiscal",
      ]);
      const drawn = await page.locator(".chart canvas").evaluateAll((canvases) =>
        canvases.map((c) => {
          const canvas = c as HTMLCanvasElement;
          const pixels = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
          let blue = 0; // #1d4ed8, the first series of every chart
          for (let p = 0; p < pixels.length; p += 4) {
            const [r, g, b, a] = [pixels[p], pixels[p + 1], pixels[p + 2], pixels[p + 3]];
            if (a > 200 && Math.abs(r - 29) < 24 && Math.abs(g - 78) < 24 && Math.abs(b - 216) < 24) blue++;
          }
          return blue;
        }),
      );
      for (const count of drawn) expect(count).toBeGreaterThan(50);
      expect(await page.locator(".chart .u-legend .u-series").count()).toBeGreaterThanOrEqual(4 + 5 + 2 + 2 + 1);
      await shots(page, "revenue");
      // English labels, same numbers
      await page.getByRole("button", { name: "English" }).click();
      await expect.poll(() => page.locator(".chart .u-title").first().textContent()).toBe("MRR and its movements");
      expect(await row("2026-01-01").first().textContent()).toBe("CLP 45,000");
      await page.getByRole("button", { name: "Español" }).click();
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );

  it(
    "an admin creates an API key in the Developers page, which works, then revokes it, which answers 401",
    async () => {
      const { ctx, page, violations } = await signIn("ana@acme.cl");
      await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: s.url });
      await page.getByRole("link", { name: "Desarrolladores" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Desarrolladores");
      // the test server's keys: acme's test and live ones
      await expect.poll(() => page.locator("table.api-keys tbody tr").count()).toBe(2);
      await page.getByLabel("Modo").selectOption("test");
      await page.getByRole("button", { name: "Crear clave" }).click();
      const output = page.locator("output.api-key");
      await expect.poll(() => output.textContent()).toMatch(/^sk_test_\w+$/);
      const key = (await output.textContent())!;
      expect(await page.locator(".created-key .warning").textContent()).toBe(
        "Guarda esta clave ahora: no se volverá a mostrar. Quien la tenga actúa en tu nombre.",
      );
      await page.getByRole("button", { name: "Copiar" }).click();
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      expect(await page.getByRole("button", { name: "Copiada" }).count()).toBe(1);
      await expect.poll(() => page.locator("table.api-keys tbody tr").count()).toBe(3);
      expect(await statusWith(key)).toBe(200);
      const listed = await s.graphql("{ apiKeys { id prefix mode email revokedAt } }");
      const made = listed.body.data.apiKeys.find((k: { prefix: string }) => key.startsWith(k.prefix));
      expect(made).toMatchObject({ mode: "test", email: "ana@acme.cl", revokedAt: null });
      const keyRow = page.locator(`table.api-keys tr[data-id="${made.id}"]`);
      expect(await keyRow.locator("th").textContent()).toBe(`${made.prefix}…`);
      expect(await keyRow.locator("td").first().textContent()).toBe("Prueba");
      await shots(page, "developers");

      // revoke: asked first, cancelled, asked again and confirmed
      await keyRow.getByRole("button", { name: "Revocar" }).click();
      await keyRow.getByRole("button", { name: "Cancelar" }).click();
      expect(await statusWith(key)).toBe(200);
      await keyRow.getByRole("button", { name: "Revocar" }).click();
      expect(await keyRow.getByRole("group").getAttribute("aria-label")).toBe(
        `¿Revocar ${made.prefix}…? Dejará de funcionar de inmediato.`,
      );
      await keyRow.getByRole("button", { name: "Sí, revocar" }).click();
      await expect.poll(() => keyRow.locator("td.revoked").textContent()).toBe(today());
      expect(await keyRow.getByRole("button", { name: "Revocar" }).count()).toBe(0);
      expect(await statusWith(key)).toBe(401);
      expect(violations).toEqual([]);
      await ctx.close();
    },
    SLOW,
  );

  it(
    "an admin invites a member in the page, who sets a password with the link and signs in; roles are kept apart",
    async () => {
      const { ctx, page, violations } = await signIn("ana@acme.cl");
      await page.getByRole("link", { name: "Miembros" }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Miembros");
      await page.getByLabel("Correo").fill("luis@acme.cl");
      await page.getByLabel("Nombre").fill("Luis Pérez");
      await page.getByLabel("Rol", { exact: true }).selectOption("finance");
      await page.getByRole("button", { name: "Invitar" }).click();
      const output = page.locator("output.invite-url");
      await expect.poll(() => output.textContent()).toMatch(new RegExp(`^${s.url}/dashboard/invite/\\w+$`));
      const link = (await output.textContent())!;
      const luis = await s.database.prisma.member.findFirstOrThrow({ where: { email: "luis@acme.cl" } });
      const luisRow = page.locator(`table.members tr[data-id="${luis.id}"]`);
      await expect.poll(() => luisRow.locator("td.pending").textContent()).toBe("Pendiente");
      await shots(page, "members");

      // the link in a fresh browser: a password, signed in as finance; no Developers nor Members
      const fresh = await context();
      const other = await fresh.ctx.newPage();
      await other.goto(link);
      await other.getByLabel("Contraseña", { exact: true }).fill(PASSWORD);
      await other.getByLabel("Repite la contraseña").fill(PASSWORD);
      await other.getByRole("button", { name: "Guardar contraseña y entrar" }).click();
      await expect.poll(() => other.locator(".member").textContent()).toBe("Luis Pérez · Finanzas");
      expect(await other.getByRole("link", { name: "Desarrolladores" }).count()).toBe(0);
      expect(await other.getByRole("link", { name: "Miembros" }).count()).toBe(0);
      await other.goto(`${s.url}/dashboard/#/developers`);
      await expect
        .poll(() => other.getByRole("alert").textContent())
        .toBe("Solo quienes administran la organización ven esta página.");
      for (const mutation of [
        `createApiKey(mode: test) { key }`,
        `inviteMember(email: "eva@acme.cl", role: admin) { inviteUrl }`,
        `updateMemberRole(id: "${luis.id}", role: admin) { id }`,
      ]) {
        const refused = await asMember(fresh.ctx, `mutation { ${mutation} }`);
        expect(refused.errors?.[0]?.extensions?.code, mutation).toBe("permission_denied");
      }
      expect((await asMember(fresh.ctx, "{ apiKeys { id } }")).errors[0].extensions.code).toBe("permission_denied");

      // the admin makes Luis a viewer, then removes him: his session stops working
      await page.reload();
      await expect.poll(() => luisRow.locator("td.pending").textContent()).toBe("Aceptada");
      await page.getByLabel("Rol de luis@acme.cl").selectOption("viewer");
      await expect
        .poll(async () => (await s.database.prisma.member.findUniqueOrThrow({ where: { id: luis.id } })).role)
        .toBe("viewer");
      const asViewer = await asMember(fresh.ctx, `mutation { revokeApiKey(id: "key_x") { id } }`);
      expect(asViewer.errors[0].extensions.code).toBe("permission_denied");
      expect(asViewer.errors[0].message).toBe("Mutation.revokeApiKey is not allowed to the viewer role (queries only)");
      await luisRow.getByRole("button", { name: "Quitar" }).click();
      await luisRow.getByRole("button", { name: "Sí, quitar" }).click();
      await expect.poll(() => luisRow.count()).toBe(0);
      const gone = await asMember(fresh.ctx, "{ me { id } }");
      expect(gone.errors[0].extensions.code).toBe("authentication_required");
      expect(violations).toEqual([]);
      expect(fresh.violations).toEqual([]);
      await fresh.ctx.close();
      await ctx.close();
    },
    SLOW,
  );

  it(
    "the Developers page lists webhook endpoints, deliveries and events, and sends a delivery's event again",
    async () => {
      const endpoint = await s.rest("POST", "/v1/webhook_endpoints/", {
        body: { url: receiver.url, enabled_events: ["customer.created"], description: "CRM" },
      });
      expect(endpoint.status, endpoint.text).toBe(201);
      const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Hooks SpA" }) });
      expect(customer.status).toBe(201);
      const [first] = await receiver.waitFor(1);
      const { ctx, page, violations } = await signIn("ana@acme.cl");
      await page.goto(`${s.url}/dashboard/#/developers`);
      await expect
        .poll(() => page.locator(`#webhook-endpoints-title ~ ul li[data-id="${endpoint.body.id}"]`).textContent())
        .toBe(`${receiver.url} · enabled`);
      const delivery = page.locator("table.deliveries tbody tr").first();
      expect(await delivery.locator("td").allTextContents()).toEqual([
        today(),
        "customer_created",
        receiver.url,
        "1",
        "Entregado (HTTP 204)",
        "Reenviar",
      ]);
      // the customer's event: the newest customer_created (the worked example's customers came before)
      const newest = await s.graphql(
        "{ events(first: 1, where: { type: { equals: customer_created } }) { edges { node { id } } } }",
      );
      const event = newest.body.data.events.edges[0].node as { id: string };
      expect(await page.locator(`#events-title ~ ul li[data-id="${event.id}"]`).textContent()).toBe(
        `${today()} · customer_created · ${event.id}`,
      );
      await delivery.getByRole("button", { name: "Reenviar" }).click();
      await expect.poll(() => page.getByRole("status").first().textContent()).toBe(`${event.id} reenviado.`);
      const [, again] = await receiver.waitFor(2);
      expect(again.id).toBe(first.id); // the same webhook-id, sent again
      await shots(page, "developers-webhooks");
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
