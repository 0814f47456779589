/**
 * The dashboard's revenue charts, Developers page and members page in headless Chromium (docs/dashboard.md), on both
 * databases: docs/analytics.md's worked example built on a test clock and read on the overview (the table to the
 * peso, four charts drawn on their canvases); an admin creates an API key in the page and uses it, revokes it and sees
 * it answer 401; invites a member in the page, who opens the link in a fresh browser, sets a password and signs in; a
 * finance member and a viewer see neither page and GraphQL refuses them the mutations. Screenshots as
 * dashboard-browser.test.ts takes them (UPDATE_DOC_IMAGES=1 on PGlite writes docs/images/dashboard/).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { launchChromium, MISSING_CHROMIUM } from "../helpers/chromium.js";
import { buildWorkedExample, WORKED_EXAMPLE } from "../helpers/revenue-example.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { inviteMember } from "../../src/services/members.js";

const db = process.env.TEST_DB ?? "pglite";
const ARTIFACTS = path.join(process.cwd(), "test-artifacts", "dashboard");
const DOC_IMAGES =
  db === "pglite" && process.env.UPDATE_DOC_IMAGES === "1"
    ? path.join(process.cwd(), "docs", "images", "dashboard")
    : null;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "correct horse battery staple";
const SLOW = 240_000;

let s: TestServer;
let browser: Browser | undefined;

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  if (DOC_IMAGES) fs.mkdirSync(DOC_IMAGES, { recursive: true });
  [s, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await buildWorkedExample(s);
}, SLOW);
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

/** A member of acme invited through the service who has set PASSWORD. */
async function member(email: string, name: string, role: "admin" | "finance" | "viewer") {
  const invited = await inviteMember(
    { prisma: s.database.prisma, settings: DEFAULT_SETTINGS, baseUrl: s.url, now: new Date() },
    s.orgs.acme,
    { email, name, role },
  );
  const accepted = await fetch(`${s.url}/dashboard/api/invites/${invited.link.split("/").at(-1)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ password: PASSWORD }),
  });
  expect(accepted.status).toBe(200);
}

/** A browser context that reaches no web site but the test server; CSP violations reported. */
async function context(): Promise<{ ctx: BrowserContext; violations: string[] }> {
  if (!browser) expect.fail(MISSING_CHROMIUM);
  const ctx = await browser.newContext({ viewport: DESKTOP, locale: "es-CL" });
  await ctx.route(
    (url) => /^(https?|wss?):/.test(url.protocol) && !url.href.startsWith(s.url),
    (route) => route.abort(),
  );
  const violations: string[] = [];
  ctx.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  return { ctx, violations };
}

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

/** The page photographed at desktop and phone widths (the viewport is left at desktop). */
async function shots(page: Page, name: string) {
  for (const [width, size] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await page.waitForTimeout(200); // the charts follow the window's size
    const file = `${name}-${width}.png`;
    await page.screenshot({ path: path.join(ARTIFACTS, `${db}-${file}`), fullPage: true });
    if (DOC_IMAGES) fs.copyFileSync(path.join(ARTIFACTS, `${db}-${file}`), path.join(DOC_IMAGES, file));
  }
  await page.setViewportSize(DESKTOP);
}

const clp = (n: number) => `CLP ${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ".")}`;

describe("the dashboard's admin pages in a browser", () => {
  it(
    "the overview draws docs/analytics.md's worked example, and its table has the figures to the peso",
    async () => {
      await member("ana@acme.cl", "Ana Rojas", "admin");
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
});
