/**
 * What the dashboard's Chromium tests share (dashboard-browser.test.ts, dashboard-admin.test.ts): the window sizes,
 * the members' password, invitations made through the service, browser contexts that reach only the test server
 * and report CSP violations, and screenshots at desktop and phone widths (with TEST_SCREENSHOTS=1 into
 * test-artifacts/dashboard/; with UPDATE_DOC_IMAGES=1 on PGlite also into docs/images/dashboard/).
 */
import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { MISSING_CHROMIUM } from "./chromium.js";
import type { TestServer } from "./server.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { inviteMember } from "../../src/services/members.js";

const db = process.env.TEST_DB ?? "pglite";
const ARTIFACTS = path.join(process.cwd(), "test-artifacts", "dashboard");
const DOC_IMAGES =
  db === "pglite" && process.env.UPDATE_DOC_IMAGES === "1"
    ? path.join(process.cwd(), "docs", "images", "dashboard")
    : null;
/** Whether `shots` photographs (TEST_SCREENSHOTS=1, or UPDATE_DOC_IMAGES=1 on PGlite). */
const SCREENSHOTS = process.env.TEST_SCREENSHOTS === "1" || DOC_IMAGES !== null;
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };
/** Every test member's password. */
export const PASSWORD = "correct horse battery staple";

/** The folders screenshots go to, made once before a file's tests. */
export function prepareScreenshots(): void {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  if (DOC_IMAGES) fs.mkdirSync(DOC_IMAGES, { recursive: true });
}

/** The helpers of a file whose server and browser `current` returns (they are started in its beforeAll). */
export function dashboardBrowser(current: () => { s: TestServer; browser: Browser | undefined }) {
  /** An invitation to acme made through the service: its one-time link. */
  async function invite(email: string, name: string, role: "admin" | "finance" | "viewer"): Promise<string> {
    const { s } = current();
    const invited = await inviteMember(
      { prisma: s.database.prisma, settings: DEFAULT_SETTINGS, baseUrl: s.url, now: new Date() },
      s.orgs.acme,
      { email, name, role },
    );
    return invited.link;
  }

  /** A member of acme invited through the service who has set PASSWORD (without a browser). */
  async function member(email: string, name: string, role: "admin" | "finance" | "viewer"): Promise<void> {
    const link = await invite(email, name, role);
    const accepted = await fetch(`${current().s.url}/dashboard/api/invites/${link.split("/").at(-1)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(accepted.status).toBe(200);
  }

  /** A browser context that reaches no web site but the test server (Chromium's own PDF viewer loads); CSP reports. */
  async function context(): Promise<{ ctx: BrowserContext; violations: string[] }> {
    const { s, browser } = current();
    if (!browser) expect.fail(MISSING_CHROMIUM);
    // a reader in Chile: instants print in America/Santiago, as the tests' today() computes them, on any machine
    const ctx = await browser.newContext({ viewport: DESKTOP, locale: "es-CL", timezoneId: "America/Santiago" });
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

  /**
   * The page photographed at desktop and phone widths (the viewport is left at desktop), when TEST_SCREENSHOTS=1 or
   * UPDATE_DOC_IMAGES=1 asks for pictures: a tenth of a browser file's time, and nothing checks them.
   */
  async function shots(page: Page, name: string): Promise<void> {
    if (!SCREENSHOTS) return;
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

  /** A page of a member signed in with PASSWORD (once `.member` reads memberText), its context and CSP reports. */
  async function signedIn(
    email: string,
    memberText: string,
  ): Promise<{ page: Page; ctx: BrowserContext; violations: string[] }> {
    const { ctx, violations } = await context();
    const page = await ctx.newPage();
    await page.goto(`${current().s.url}/dashboard`);
    await page.getByLabel("Correo").fill(email);
    await page.getByLabel("Contraseña").fill(PASSWORD);
    await page.getByRole("button", { name: "Entrar" }).click();
    await expect.poll(() => page.locator(".member").textContent()).toBe(memberText);
    return { page, ctx, violations };
  }

  /** A GraphQL request with a browser context's member cookie and CSRF header, as the page sends it: its body. */
  async function graphqlAs(
    ctx: BrowserContext,
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<{ data?: Record<string, unknown> | null; errors?: { message: string; extensions: { code: string } }[] }> {
    const { s } = current();
    const cookies = await ctx.cookies(s.url);
    const value = (name: string) => cookies.find((c) => c.name === name)?.value ?? "";
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        cookie: `dashboard_session=${value("dashboard_session")}; dashboard_csrf=${value("dashboard_csrf")}`,
        "x-dashboard-csrf": value("dashboard_csrf"),
      },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as Awaited<ReturnType<typeof graphqlAs>>;
  }

  return { invite, member, context, shots, signedIn, graphqlAs };
}
