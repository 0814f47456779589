/**
 * `npm run bench:page-load` (docs/performance.md "Pages: GraphiQL and /docs"): what the service's
 * pages cost a browser, as a user runs the service. Needs a current build (`npm run build`) and
 * Debian's Chromium (test/helpers/chromium.ts).
 *
 * Starts `node dist/main.js` (or BENCH_MAIN, another checkout's build, to compare) on an empty
 * embedded database in a temporary directory, behind a TCP proxy of this process that counts the
 * bytes the service sends, then for each page (GraphiQL at /graphql, the REST reference at /docs)
 * in headless Chromium (BENCH_MBPS: the proxy passes the service's bytes at that many Mbit/s, one
 * link for all connections, so the times include what the bytes cost on a real network):
 * - the first view after the start (the server loads GraphiQL's module and compresses its files
 *   then), in a new browser context (empty cache);
 * - RUNS (default 5) more first views, each in a new context: the median;
 * - a reload in the last context (its cache full).
 * Each view counts the bytes that came over the network (what the proxy passed from the service to
 * the browser: status lines, headers and bodies as sent, compressed when they were; what DevTools
 * calls "transferred", the scripts of workers included, which the page's CDP session does not
 * see) and the requests that reached the service (its request log lines; a file the browser took
 * from its cache is not one), and times it from navigation until the page is usable:
 * the GraphiQL headers editor shows its text and Monaco's workers run, the reference has rendered
 * "Finalize an invoice".
 *
 * Figures go to stdout only; they never enter a test.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { buildState, root } from "../scripts/build-state.mjs";
import { launchChromium, MISSING_CHROMIUM } from "../test/helpers/chromium.js";

const RUNS = Number(process.env.RUNS ?? 5);
const PORT = Number(process.env.BENCH_PORT ?? 3987);
const MAIN = process.env.BENCH_MAIN ?? path.join(root, "dist", "main.js");
/** The downlink to emulate in Mbit/s (0: none, the loopback's speed). */
const MBPS = Number(process.env.BENCH_MBPS ?? 0);

if (!process.env.BENCH_MAIN && buildState() !== "fresh") {
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

/** Bytes the service has sent through the proxy. */
let sent = 0;
/** When the emulated link is free again (ms, performance.now()), with BENCH_MBPS. */
let linkFree = 0;
const proxy = net.createServer((client) => {
  const upstream = net.connect(PORT, "127.0.0.1");
  client.pipe(upstream);
  upstream.on("data", (chunk: Buffer) => {
    sent += chunk.length;
    if (!MBPS) return void client.write(chunk);
    // one link for every connection, as a browser's downlink: each chunk leaves when the ones before it have
    linkFree = Math.max(linkFree, performance.now()) + (chunk.length * 8) / (MBPS * 1000);
    setTimeout(() => client.write(chunk), linkFree - performance.now());
  });
  // the service closing a connection closes the browser's once what it sent has gone through
  upstream.on("close", () => setTimeout(() => client.end(), Math.max(0, linkFree - performance.now())));
  upstream.on("error", () => {});
  client.on("close", () => upstream.destroy());
  client.on("error", () => upstream.destroy());
});
await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
const BASE = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;

const PAGES: { path: string; ready: (page: Page) => Promise<unknown> }[] = [
  {
    path: "/graphql",
    ready: async (page) => {
      await page
        .locator('.monaco-editor[data-uri$="-request-headers.json"] .view-lines', { hasText: "Authorization" })
        .waitFor({ timeout: 120_000 });
      // Monaco's workers: files of their own, or (before) blob: URLs made from the page
      for (let waited = 0; page.workers().length < 3 && waited < 120_000; waited += 50)
        await new Promise((r) => setTimeout(r, 50));
    },
  },
  {
    path: "/docs",
    // the side menu's entries are rendered (hidden in a collapsed group) with the rest of the page
    ready: (page) => page.getByText("Finalize an invoice").first().waitFor({ state: "attached", timeout: 120_000 }),
  },
];

/** Resolves once the service has sent nothing for 500 ms. */
async function quiet() {
  for (let last = -1; last !== sent;) {
    last = sent;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** One view of `spec`'s page in `page` (a reload when `reload`): bytes over the network, requests, ms. */
async function view(page: Page, spec: (typeof PAGES)[number], reload = false): Promise<View> {
  await quiet();
  const before = sent;
  const logged = requests;
  const started = performance.now();
  if (reload) await page.reload();
  else await page.goto(`${BASE}${spec.path}`);
  await spec.ready(page);
  const ms = performance.now() - started;
  // what the page asks for after it is usable (the favicon, a schema query) still counts
  await quiet();
  return { bytes: sent - before, requests: requests - logged, ms };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-page-load-"));
const server = spawn(process.execPath, [MAIN], {
  env: { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", BILLING_DATA_DIR: dir, LOG_LEVEL: "info" },
  stdio: ["ignore", "pipe", "inherit"],
});
/** Requests the service has answered (its log's "request" lines), /healthz polls not counted. */
let requests = 0;
let partial = "";
server.stdout.on("data", (chunk: Buffer) => {
  const lines = (partial + chunk.toString("utf8")).split("\n");
  partial = lines.pop()!;
  for (const line of lines) if (line.includes('"msg":"request"') && !line.includes('"path":"/healthz"')) requests++;
});
try {
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the service exited ${server.exitCode}`);
    const up = await fetch(`http://127.0.0.1:${PORT}/healthz`).then(
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
        views.push(await view(page, spec));
      }
      const reload = await view(page!, spec, true);
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
  proxy.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
