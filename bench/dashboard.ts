/**
 * `npm run bench:dashboard` (docs/performance.md "The dashboard's overview"): issue 34's target "the overview page in
 * headless Chromium on this machine: rendered (charts drawn) within 1.5 s of navigation" over the revenue data set of
 * `npm run bench:analytics` (bench/revenue-seed.ts: 100,000 subscriptions, about 1,000,000 invoices and 900,000
 * payments by default; BENCH_ANALYTICS_SUBSCRIPTIONS for another size). Needs a current build (`npm run build`) and
 * Debian's Chromium (test/helpers/chromium.ts).
 *
 * Creates a fresh database `bench_dashboard_<pid>` on the server of BENCH_POSTGRES_URL, else TEST_DATABASE_URL, else
 * postgresql://postgres@127.0.0.1:5432/test, migrates and seeds it, drains every customer into the revenue aggregates
 * (what the service's background drain does after such a load), and invites an admin member. Then starts
 * `node dist/main.js` on that database, accepts the invitation (the member's session cookies), and in headless
 * Chromium opens the overview (`/dashboard#/?to=2026-12`: the twelve months up to December 2026, the data set's last)
 * RUNS times (default 10), each in a new browser context (an empty cache, the session cookies set), timing from the
 * navigation until the page is rendered: its four revenue charts drawn on their canvases and nothing left loading;
 * then RUNS reloads of the last context (its cache full). Prints p50 and p99 of each, and one JSON line. The
 * database is dropped at the end. Figures go to stdout only; they never enter a test.
 */
import { spawn } from "node:child_process";
import { buildState, root } from "../scripts/build-state.mjs";
import { DEFAULT_SETTINGS } from "../src/infra/config.js";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { inviteMember } from "../src/services/members.js";
import { drainRevenueRound } from "../src/services/revenue-aggregates.js";
import { launchChromium, MISSING_CHROMIUM } from "../test/helpers/chromium.js";
import { seedRevenueOrganization, withBenchDatabase } from "./revenue-seed.js";

const subscriptions = Number(process.env.BENCH_ANALYTICS_SUBSCRIPTIONS ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 10);
const PORT = Number(process.env.BENCH_PORT ?? 3988);
const BASE = `http://127.0.0.1:${PORT}`;
const PASSWORD = "una contraseña larga de bench";

if (buildState() !== "fresh") {
  console.error("dist/ is missing or stale: run `npm run build` first");
  process.exit(1);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50Ms: Math.round(percentile(sorted, 0.5)), p99Ms: Math.round(percentile(sorted, 0.99)) };
};

/** Seeds the database at `url`, drains the aggregates and invites an admin: the invitation's token. */
async function prepare(url: string): Promise<{ token: string; counts: Record<string, number> }> {
  await migrateTarget({ kind: "postgres", url });
  const database = await createDatabase({ kind: "postgres", url });
  try {
    const prisma = database.prisma;
    const { organization, counts, seedSeconds } = await seedRevenueOrganization(prisma, subscriptions);
    console.log(`seeded in ${seedSeconds.toFixed(1)} s: ${JSON.stringify(counts)}`);
    const started = performance.now();
    const drained = await drainRevenueRound(prisma);
    console.log(`aggregates: ${drained.customers} customers in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await prisma.$executeRawUnsafe(`ANALYZE`);
    const invited = await inviteMember(
      { prisma, settings: DEFAULT_SETTINGS, baseUrl: BASE, now: new Date() },
      organization,
      { email: "duena@analitica.cl", name: "Dueña", role: "admin" },
    );
    return { token: invited.link.split("/").at(-1)!, counts };
  } finally {
    await database.close();
  }
}

/** Starts `node dist/main.js` on `url` and waits until /readyz answers 200. */
async function startService(url: string) {
  const service = spawn(process.execPath, [`${root}/dist/main.js`], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      PUBLIC_URL: BASE,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (;;) {
    if (service.exitCode !== null) throw new Error(`the service exited ${service.exitCode}`);
    const ready = await fetch(`${BASE}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return service;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The session cookies of the invitation accepted with PASSWORD, as a browser context takes them. */
async function sessionCookies(token: string) {
  const accepted = await fetch(`${BASE}/dashboard/api/invites/${token}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ password: PASSWORD }),
  });
  if (accepted.status !== 200) throw new Error(`accepting the invitation: ${accepted.status} ${await accepted.text()}`);
  return accepted.headers.getSetCookie().map((header) => {
    const [pair] = header.split(";");
    const at = pair.indexOf("=");
    return { name: pair.slice(0, at), value: pair.slice(at + 1), url: BASE };
  });
}

/** Resolves once the overview is rendered: four revenue charts on their canvases, no section still loading. */
const RENDERED = () =>
  document.querySelectorAll(".chart canvas").length === 4 &&
  !/Cargando…|Loading…/.test(document.querySelector("main")?.textContent ?? "Cargando…");

async function main() {
  await withBenchDatabase(`bench_dashboard_${process.pid}`, async (url) => {
    const { token, counts } = await prepare(url);
    const service = await startService(url);
    const browser = await launchChromium();
    try {
      if (!browser) throw new Error(MISSING_CHROMIUM);
      const cookies = await sessionCookies(token);
      const cold: number[] = [];
      const warm: number[] = [];
      let last;
      for (let k = 0; k < RUNS; k++) {
        await last?.close();
        last = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        await last.addCookies(cookies);
        const page = await last.newPage();
        const started = performance.now();
        await page.goto(`${BASE}/dashboard#/?to=2026-12`);
        await page.waitForFunction(RENDERED, undefined, { timeout: 120_000, polling: "raf" });
        cold.push(performance.now() - started);
      }
      const page = last!.pages()[0];
      for (let k = 0; k < RUNS; k++) {
        const started = performance.now();
        await page.reload();
        await page.waitForFunction(RENDERED, undefined, { timeout: 120_000, polling: "raf" });
        warm.push(performance.now() - started);
      }
      await last?.close();
      const figures = { subscriptions, counts, runs: RUNS, cold: summary(cold), warm: summary(warm) };
      console.log(
        `overview rendered (charts drawn): new context p50 ${figures.cold.p50Ms} ms, p99 ${figures.cold.p99Ms} ms; ` +
          `reload p50 ${figures.warm.p50Ms} ms, p99 ${figures.warm.p99Ms} ms`,
      );
      console.log(JSON.stringify(figures));
    } finally {
      await browser?.close();
      service.kill("SIGTERM");
      await new Promise((r) => service.once("exit", r));
    }
  });
}

await main();
