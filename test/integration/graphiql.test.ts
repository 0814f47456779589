/**
 * GraphiQL at /graphql, in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core):
 * the page loads with every request to a host other than this machine aborted (and none is
 * attempted), the API key goes into the prefilled headers editor, a query runs and its result is
 * read from the result pane, a subscription streams an event as it commits (GraphiQL's default fetcher
 * speaks Server-Sent Events), and the key is still there after a reload (localStorage); the page's
 * Content-Security-Policy refuses nothing it needs.
 *
 * Runs in the pglite project only (vitest.config.ts): it checks the page, not the database.
 * Without Chromium the test fails (CI installs it: .ci/run).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { chileanCustomer, startTestServer, TEST_METRICS_TOKEN, type TestServer } from "../helpers/server.js";
import { launchChromium, MISSING_CHROMIUM } from "../helpers/chromium.js";

// the page is about 9 MB of inlined GraphiQL; on a busy 2-core machine it can take a while to start
const SLOW = 90_000;

let s: TestServer;
let browser: Browser | undefined;
beforeAll(async () => {
  // without Chromium the test below fails (not skips) with MISSING_CHROMIUM
  [s, browser] = await Promise.all([startTestServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Monaco editors of the GraphiQL page, by the model file GraphiQL gives each one. */
const editor = (page: Page, name: "operation.graphql" | "request-headers.json" | "response.json") =>
  page.locator(`.monaco-editor[data-uri$="-${name}"]`);

/** The text an editor shows, "" while it is not there (Monaco renders spaces as no-break spaces). */
const shown = async (e: Locator) => (await e.locator(".view-lines").allInnerTexts()).join("\n").replace(/\u00a0/g, " ");

/** Pastes `text` where the editor's cursor is, as Ctrl-V would (no auto-closed brackets, no completions). */
async function paste(e: Locator, text: string) {
  await e.locator("textarea").evaluate((area, value) => {
    const data = new DataTransfer();
    data.setData("text/plain", value);
    area.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

describe("GraphiQL in a browser", () => {
  it(
    "loads with no request leaving the machine, runs a query and a subscription with the key from the headers " +
      "editor, and remembers the key",
    { timeout: 240_000 },
    async () => {
      if (!browser) expect.fail(MISSING_CHROMIUM);
      const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
      expect(customer.status).toBe(201);
      const invoice = await s.rest("POST", "/v1/invoices/", {
        body: { customer: customer.body.id, document: "CL33", lines: [{ name: "Plan", quantity: 1, amount: 1000 }] },
      });
      expect(invoice.status).toBe(201);

      const context = await browser.newContext();
      context.setDefaultTimeout(SLOW);
      context.setDefaultNavigationTimeout(SLOW);
      // any request for another host is recorded and aborted; data: and blob: URLs never leave the page
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
      const errors: string[] = [];
      const page = await context.newPage();
      page.on("pageerror", (e) => errors.push(e.message));
      // the page runs under its Content-Security-Policy (docs/limits.md): nothing it needs is refused
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content[ -]Security[ -]Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (e) =>
          console.error(`Content Security Policy violation: ${e.effectiveDirective} ${e.blockedURI}`),
        );
      });

      // a step that fails because a request was aborted is reported as that request
      let failure: unknown;
      try {
        const answer = await page.goto(`${s.url}/graphql`);
        const csp = answer?.headers()["content-security-policy"] ?? "";
        expect(csp).toMatch(/script-src 'self' ('sha256-[^']+' )+blob:/);
        expect(csp).toContain("frame-ancestors 'none'");
        const headers = editor(page, "request-headers.json");
        await expect.poll(() => shown(headers), { timeout: SLOW }).toBe('{"Authorization": "Bearer "}');

        // the key goes after "Bearer ", as a person pastes it
        await headers.click();
        await page.keyboard.press("ControlOrMeta+End");
        await page.keyboard.press("ArrowLeft");
        await page.keyboard.press("ArrowLeft");
        await paste(headers, s.keys.acme);
        await expect.poll(() => shown(headers), { timeout: SLOW }).toBe(`{"Authorization": "Bearer ${s.keys.acme}"}`);

        const operation = editor(page, "operation.graphql");
        await operation.click();
        await page.keyboard.press("ControlOrMeta+A");
        await paste(operation, "{ invoices(first: 1) { totalCount } }");
        await expect.poll(() => shown(operation), { timeout: SLOW }).toBe("{ invoices(first: 1) { totalCount } }");

        await page.locator("button.graphiql-execute-button").click();
        const response = editor(page, "response.json");
        await expect.poll(() => shown(response), { timeout: SLOW }).toContain('"totalCount"');
        expect(JSON.parse(await shown(response))).toEqual({ data: { invoices: { totalCount: 1 } } });

        // a subscription, with GraphiQL's default fetcher (Server-Sent Events): events show as they commit
        const subscription = "subscription { events { type testMode } }";
        await operation.click();
        await page.keyboard.press("ControlOrMeta+A");
        await paste(operation, subscription);
        await expect.poll(() => shown(operation), { timeout: SLOW }).toBe(subscription);
        await page.locator("button.graphiql-execute-button").click();
        const openStreams = async () => {
          const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
          return Number(/^billing_event_streams_open (\d+)$/m.exec(await res.text())?.[1]);
        };
        await expect.poll(openStreams, { timeout: SLOW }).toBe(1);
        expect((await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).status).toBe(201);
        await expect.poll(() => shown(response), { timeout: SLOW }).toContain("customer_created");
        expect(JSON.parse(await shown(response))).toEqual({
          data: { events: { type: "customer_created", testMode: true } },
        });
        // the execute button stops it
        await page.locator("button.graphiql-execute-button").click();
        await expect.poll(openStreams, { timeout: SLOW }).toBe(0);

        // GraphiQL keeps the headers in localStorage (shouldPersistHeaders); after a reload the key is there
        const stored = () =>
          page.evaluate(
            (key) => Object.keys(localStorage).filter((k) => localStorage.getItem(k)?.includes(key)),
            s.keys.acme,
          );
        await expect.poll(stored, { timeout: SLOW }).not.toEqual([]);
        await page.reload();
        await expect
          .poll(() => shown(editor(page, "request-headers.json")), { timeout: SLOW })
          .toBe(`{"Authorization": "Bearer ${s.keys.acme}"}`);
      } catch (e) {
        failure = e;
      }
      await context.close();
      expect(outside, "requests for hosts other than this machine").toEqual([]);
      if (failure) throw failure;
      expect(errors, "errors thrown in the page").toEqual([]);
      expect(violations, "requests or scripts the page's CSP refused").toEqual([]);
    },
  );
});
