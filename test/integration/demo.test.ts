/**
 * `npm run demo` against a running server (src/demo.ts, docs/tour.md "The demo"), with real processes: the
 * built server on an embedded database with its SII worker every second, pointed at the fake SII
 * (test/helpers/fake-sii.ts), and the built demo. An organization set up before (tax profile,
 * certificate, CAF, a DTE numbered with an SII folio and uploaded to the fake SII: the worker and
 * its hosts work) comes out of the demo's runs with the same rows; the demo refuses its key; the
 * demo without a key creates an organization of its own through the server's control socket, and
 * nothing of it reaches SII (its test mode's sii_sending is off: no submission queued, no upload).
 * Embedded database only (the pglite project).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TEST_DB, templateDataDir } from "../helpers/databases.js";
import {
  cli,
  ROOT,
  runToEnd,
  serviceEnv,
  startService,
  type CommandRun,
  type ServiceProcess,
} from "../helpers/processes.js";
import { startFakeSii, type FakeSii } from "../helpers/fake-sii.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";
import { createDatabase } from "../../src/infra/database.js";

/** The existing organization's RUT (the demo's is 76042235-5). */
const USER_RUT = "78123456-7";
const DEMO_RUT = "76042235-5";

const running: ServiceProcess[] = [];
const dirs: string[] = [];
let sii: FakeSii;

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const p of running.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  await sii?.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** `node dist/demo.js` in `cwd` (its out/ goes there) with `env`, to completion. */
function runDemo(env: NodeJS.ProcessEnv, cwd: string): Promise<CommandRun> {
  return runToEnd(process.execPath, [path.join(ROOT, "dist", "demo.js")], env, cwd);
}

async function api(url: string, key: string, method: string, pathname: string, body?: unknown) {
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * The rows of organization `organizationId` the demo could change, read with the server stopped:
 * the organization, its settings of both modes, certificates, CAFs (their next folio), numbering
 * counters, customers, invoices (without `taxAgency` and `updatedAt`, which SII's answers to the
 * organization's own DTE may change) and API keys (without `lastUsedAt`: the demo reads with the
 * key it refuses).
 */
async function organizationRows(dir: string, organizationId: string) {
  const database = await createDatabase({ kind: "pglite", dir: path.join(dir, "pglite") });
  try {
    const p = database.prisma;
    const where = { organizationId };
    return {
      organization: await p.organization.findUniqueOrThrow({ where: { id: organizationId } }),
      settings: await p.organizationSettings.findMany({ where, orderBy: { testMode: "asc" } }),
      certificates: await p.certificate.findMany({ where, orderBy: { id: "asc" } }),
      cafs: await p.caf.findMany({ where, orderBy: { id: "asc" } }),
      counters: await p.documentCounter.findMany({
        where,
        orderBy: [{ testMode: "asc" }, { documentTypeId: "asc" }, { kind: "asc" }],
      }),
      customers: await p.customer.findMany({ where, orderBy: { id: "asc" } }),
      invoices: (await p.invoice.findMany({ where, orderBy: { id: "asc" } })).map(
        ({ taxAgency: _a, updatedAt: _u, ...row }) => row,
      ),
      apiKeys: (await p.apiKey.findMany({ where, orderBy: { id: "asc" } })).map(({ lastUsedAt: _l, ...row }) => row),
    };
  } finally {
    await database.close();
  }
}

async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  for (const started = Date.now(); !condition();) {
    if (Date.now() - started > ms) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(TEST_DB !== "pglite")("the demo against a running server", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    sii = await startFakeSii();
    dir = templateDataDir(inject("template"), "billing-demo-test-"); // migrated
    dirs.push(dir);
    const hosts = sii.hosts;
    env = serviceEnv({
      BILLING_DATA_DIR: dir,
      SII_SEND_INTERVAL_SECONDS: "1",
      SII_CERTIFICATION_URL: hosts.certificationUrl,
      SII_PRODUCTION_URL: hosts.productionUrl,
      SII_BOLETA_CERTIFICATION_URL: hosts.boletaCertificationUrl,
      SII_BOLETA_CERTIFICATION_UPLOAD_URL: hosts.boletaCertificationUploadUrl,
      SII_BOLETA_PRODUCTION_URL: hosts.boletaProductionUrl,
      SII_BOLETA_PRODUCTION_UPLOAD_URL: hosts.boletaProductionUploadUrl,
    });
  }, 180_000);

  it(
    "leaves an existing organization's rows as they were, refuses its key, creates its own, and sends SII nothing",
    { timeout: 900_000 },
    async () => {
      // an organization of the user's, set up for SII in test mode, with a DTE numbered and uploaded
      const first = await startService(env);
      running.push(first);
      const created = cli(["api-key", "create", "--organization", "Cliente Real SpA", "--email", "yo@real.cl"], env);
      expect(created.status, created.stderr).toBe(0);
      const { organization, key } = JSON.parse(created.stdout.trim().split("\n").at(-1)!);
      const profile = await api(first.url, key, "PATCH", "/v1/billers/built_in/tax_profile/", {
        tax_id: USER_RUT,
        business_name: "Cliente Real SpA",
        activity: "Comercio",
        activity_codes: ["471000"],
        address: "Calle Real 1",
        commune: "Santiago",
        city: "Santiago",
        resolution_number: 0,
        resolution_date: "2026-01-15",
      });
      expect(profile.status, JSON.stringify(profile.body)).toBe(200);
      const p12 = generatePkcs12({ rut: "11111111-1" });
      expect(
        (
          await api(first.url, key, "POST", "/v1/billers/built_in/certificates/", {
            file: p12.file.toString("base64"),
            password: p12.password,
          })
        ).status,
      ).toBe(201);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const caf = generateCaf({ rut: USER_RUT, type: 33, from: 1, to: 20, authorizedOn: yesterday });
      expect(
        (await api(first.url, key, "POST", "/v1/billers/built_in/cafs/", { file: caf.file.toString("base64") })).status,
      ).toBe(201);
      const customer = await api(first.url, key, "POST", "/v1/customers/", {
        name: "Comprador Ltda.",
        tax_id: "77.777.777-7",
        country: "CL",
        address: "Av. Uno 1",
        state: "RM",
      });
      expect(customer.status).toBe(201);
      const draft = await api(first.url, key, "POST", "/v1/invoices/", {
        customer: customer.body.id,
        document: "CL33",
        lines: [{ name: "Servicio", quantity: 1, amount: 10000 }],
      });
      const invoice = await api(first.url, key, "GET", `/v1/invoices/${draft.body.id}/finalize/`);
      expect([invoice.status, invoice.body.number, invoice.body.numbering]).toEqual([200, 1, "sii_folio"]);
      // the server's SII worker, pointed at the fake SII, uploads it: the sending works in this set-up
      await until(() => sii.uploads.some((u) => u.rutCompany === USER_RUT.split("-")[0]), 60_000, "the upload");
      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);
      const before = await organizationRows(dir, organization);
      expect(before.cafs.map((c) => c.nextFolio)).toEqual([2]);
      expect(before.settings.map((s) => [s.testMode, s.taxId, s.siiSending])).toEqual([
        [false, null, "automatic"],
        [true, USER_RUT, "automatic"],
      ]);

      const second = await startService(env);
      running.push(second);
      const uploads = sii.uploads.length;
      const work = tempDir("billing-demo-out-");

      // the user's key: its organization has data, so the demo stops before changing anything
      const refused = await runDemo({ ...env, BILLING_URL: second.url, BILLING_API_KEY: key }, work);
      expect(refused.status).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toBe(
        `demo: the organization of BILLING_API_KEY (${organization}) already has data in test mode: customers: 1, ` +
          `invoices: 1, CAFs: 1, a tax profile (RUT ${USER_RUT}), certificates: 1. The demo changes the ` +
          "organization it runs in (its test tax profile, a test certificate and CAF, which number its invoices " +
          "with SII folios), so it runs only in one of its own or in one without data; it changed nothing. Run it " +
          "without BILLING_API_KEY (it creates an organization of its own), or give it a test key of a new " +
          'organization: npm run --silent cli -- api-key create --organization "Demo SpA" --email ' +
          "you@example.com --mode test\n",
      );

      // no key: an organization of its own, created through the server's control socket
      const demo = await runDemo({ ...env, BILLING_URL: second.url }, work);
      expect(demo.status, demo.stderr).toBe(0);
      const own = /^demo organization (org_\w+) "(Demo SpA \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})", test key /m.exec(
        demo.stdout,
      );
      expect(own, demo.stdout).not.toBeNull();
      expect(demo.stderr).toBe(
        `created the organization ${own![1]} "${own![2]}"\nwrote the key to the embedded database in ${dir}, ` +
          `through the running server (process ${second.child.pid})\n`,
      );
      expect(demo.stdout).toContain("tax profile of test mode: Demo SpA RUT 76042235-5, SII sending off\n");
      expect(fs.existsSync(path.join(work, "out", "dte-33-1.xml"))).toBe(true);
      // several rounds of the SII worker (every second) later, the fake SII got no upload
      await new Promise((r) => setTimeout(r, 4_000));
      expect(sii.uploads.length).toBe(uploads);
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
      expect(sii.uploads.some((u) => u.rutCompany === DEMO_RUT.split("-")[0])).toBe(false);

      expect(await organizationRows(dir, organization)).toEqual(before);
      const demoRows = await organizationRows(dir, own![1]);
      expect(demoRows.organization.name).toBe(own![2]);
      expect(demoRows.settings.map((s) => [s.testMode, s.taxId, s.siiSending])).toEqual([
        [false, null, "automatic"],
        [true, DEMO_RUT, "off"],
      ]);
      expect([demoRows.certificates.length, demoRows.cafs.map((c) => [c.testMode, c.nextFolio])]).toEqual([
        1,
        [[true, 2]],
      ]);
      const database = await createDatabase({ kind: "pglite", dir: path.join(dir, "pglite") });
      try {
        const dte = await database.prisma.invoice.findFirstOrThrow({
          where: { organizationId: own![1], numbering: "sii_folio" },
        });
        expect([dte.number, (dte.taxAgency as Record<string, unknown>).status]).toEqual([1, "not_sent"]);
        expect(await database.prisma.siiSubmission.count({ where: { organizationId: own![1] } })).toBe(0);
        expect(await database.prisma.siiSubmission.count({ where: { organizationId: organization } })).toBe(1);
      } finally {
        await database.close();
      }
    },
  );
});
