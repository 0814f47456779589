/**
 * `npm run bench:page-load` (docs/performance.md "Pages: GraphiQL and /docs"): what the service's
 * pages cost a browser, as a user runs the service. Needs a current build (`npm run build`) and
 * Debian's Chromium (test/helpers/chromium.ts).
 *
 * Starts `node dist/main.js` on an empty embedded database in a temporary directory, then for each
 * page (GraphiQL at /graphql, the REST reference at /docs) in headless Chromium:
 * - the first view after the start (the server loads GraphiQL's module and compresses its files
 *   then), in a new browser context (empty cache);
 * - RUNS (default 5) more first views, each in a new context: the median;
 * - a reload in the last context (its cache full).
 * Each view counts the bytes that came over the network (CDP `Network.loadingFinished`
 * `encodedDataLength`: headers and the body as sent, compressed when it was; what DevTools calls
 * "transferred") and the requests, and times it from navigation until the page is usable: the
 * GraphiQL headers editor shows its text, the reference has rendered "Finalize an invoice".
 *
 * Figures go to stdout only; they never enter a test.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { buildState, root } from "../scripts/build-state.mjs";
import { launchChromium, MISSING_CHROMIUM } from "../test/helpers/chromium.js";

const RUNS = Number(process.env.RUNS ?? 5);
const PORT = Number(process.env.BENCH_PORT ?? 3987);
const BASE = `http://127.0.0.1:${PORT}`;

if (buildState() !== "fresh") {
  console.error("dist/ is missing or stale: run `npm run build` first");
  process.exit(1);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

interface View {
  bytes: number;
  requests: number;
  ms: number;
}

const PAGES: { path: string; ready: (page: Page) => Promise<unknown> }[] = [
  {
    path: "/graphql",
    ready: (page) =>
      page
        .locator('.monaco-editor[data-uri$="-request-headers.json"] .view-lines', { hasText: "Authorization" })
        .waitFor({ timeout: 120_000 }),
  },
  {
    path: "/docs",
    // the side menu's entries are rendered (hidden in a collapsed group) with the rest of the page
    ready: (page) => page.getByText("Finalize an invoice").first().waitFor({ state: "attached", timeout: 120_000 }),
  },
];

/** One view of `path` in `context` (a reload when `reload`): bytes over the network, requests, ms. */
async function view(context: BrowserContext, page: Page, spec: (typeof PAGES)[number], reload = false): Promise<View> {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  let bytes = 0;
  let requests = 0;
  cdp.on("Network.loadingFinished", (e) => {
    bytes += e.encodedDataLength;
    requests++;
  });
  const started = performance.now();
  if (reload) await page.reload();
  else await page.goto(`${BASE}${spec.path}`);
  await spec.ready(page);
  const ms = performance.now() - started;
  // requests the page makes after it is usable (Monaco's workers, the favicon) still count
  await page.waitForLoadState("networkidle");
  await cdp.detach();
  return { bytes, requests, ms };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-page-load-"));
const server = spawn(process.execPath, [path.join(root, "dist", "main.js")], {
  env: { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", BILLING_DATA_DIR: dir, LOG_LEVEL: "warn" },
  stdio: ["ignore", "ignore", "inherit"],
});
try {
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the service exited ${server.exitCode}`);
    const up = await fetch(`${BASE}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const browser = await launchChromium();
  if (!browser) throw new Error(MISSING_CHROMIUM);
  try {
    for (const spec of PAGES) {
      const views: View[] = [];
      let context: BrowserContext | undefined;
      let page: Page | undefined;
      for (let i = 0; i <= RUNS; i++) {
        await context?.close();
        context = await browser.newContext();
        page = await context.newPage();
        views.push(await view(context, page, spec));
      }
      const reload = await view(context!, page!, spec, true);
      await context!.close();
      const [first, ...rest] = views;
      console.log(`${spec.path}`);
      console.log(
        `  first view after start: ${kb(first!.bytes)} in ${first!.requests} requests, ${first!.ms.toFixed(0)} ms`,
      );
      console.log(
        `  first view (median of ${rest.length}): ${kb(median(rest.map((v) => v.bytes)))} in ` +
          `${median(rest.map((v) => v.requests))} requests, ${median(rest.map((v) => v.ms)).toFixed(0)} ms`,
      );
      console.log(
        `  reload (cache full): ${kb(reload.bytes)} in ${reload.requests} requests, ${reload.ms.toFixed(0)} ms`,
      );
    }
  } finally {
    await browser.close();
  }
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  fs.rmSync(dir, { recursive: true, force: true });
}
