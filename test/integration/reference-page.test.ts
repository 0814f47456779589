/**
 * The REST reference: `GET /v1/openapi.json` needs no API key and is the document of
 * src/rest/openapi.ts; `/docs` is Redoc rendering it, in headless Chromium (Debian's
 * /usr/bin/chromium driven by playwright-core, as test/integration/graphiql.test.ts) with every
 * request to another host aborted (none is attempted) and no Content-Security-Policy violation;
 * the invoice endpoints are listed, under the page's title "Billing API reference" and the heading
 * "Billing API (v1)", and no text on the page names a file of this repository.
 *
 * Runs in the pglite project only (vitest.config.ts): it checks the page, not the database.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { openApiDocument } from "../../src/rest/openapi.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const CHROMIUM = "/usr/bin/chromium";
// the launch flags of graphiql.test.ts (no calls home)
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const SLOW = 90_000;
const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

let s: TestServer;
let browser: Browser | undefined;
beforeAll(async () => {
  [s, browser] = await Promise.all([
    startTestServer(),
    existsSync(CHROMIUM) ? chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }) : undefined,
  ]);
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe("the REST reference", () => {
  it("serves the OpenAPI document without an API key", async () => {
    const res = await fetch(`${s.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const served = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(served.openapi).toBe("3.1.0");
    expect(Object.keys(served.paths)).toContain("/v1/invoices/{id}/finalize/");
  });

  it("serves /docs with Redoc's bundle from the service, under a CSP without inline scripts", async () => {
    const page = await fetch(`${s.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self';");
    const html = await page.text();
    expect(html).toContain('<redoc spec-url="/v1/openapi.json"');
    expect(html).not.toMatch(/<script>[^<]/);
    const src = /<script src="(\/docs\/redoc\.standalone-[0-9a-f]{16}\.js)">/.exec(html)?.[1];
    expect(src).toBeDefined();
    const bundle = await fetch(`${s.url}${src}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(500_000);
  });

  it(
    "renders the invoice endpoints in Chromium, offline, with no CSP violation",
    async () => {
      if (!browser) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (.ci/run does)`);
      const context = await browser.newContext();
      context.setDefaultTimeout(SLOW);
      const outside: string[] = [];
      await context.route("**/*", (route) => {
        const url = new URL(route.request().url());
        if (
          url.protocol === "data:" ||
          url.protocol === "blob:" ||
          ((url.protocol === "http:" || url.protocol === "https:") && LOCAL_HOSTS.has(url.hostname))
        )
          return route.continue();
        outside.push(url.href);
        return route.abort();
      });
      const page = await context.newPage();
      const errors: string[] = [];
      const violations: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => {
        if (/Content[ -]Security[ -]Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (e) =>
          console.error(`Content Security Policy violation: ${e.effectiveDirective} ${e.blockedURI}`),
        );
      });
      await page.goto(`${s.url}/docs`);
      await expect.poll(() => page.getByText("Finalize an invoice").count(), { timeout: SLOW }).toBeGreaterThan(0);
      const text = await page.locator("body").innerText();
      for (const summary of ["Create an invoice", "Retrieve an invoice", "Update an invoice", "PDF of an invoice"])
        expect(text).toContain(summary);
      // the tab's title and the page's heading (Redoc's: the document's title and version)
      expect(await page.title()).toBe("Billing API reference");
      expect(await page.locator(".api-info h1").innerText()).toBe("Billing API (v1)");
      // public docs: the introduction and the groups read in words, with no file of this repository
      expect(text).toContain("Every operation takes an API key as Authorization: Bearer <key>.");
      expect(text).toContain("Sales invoices. A draft can be changed or deleted");
      expect(text).not.toMatch(/\b(docs|src)\/|\.md\b/);
      await context.close();
      expect(outside).toEqual([]);
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
    },
    SLOW * 2,
  );
});
