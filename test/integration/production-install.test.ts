/**
 * The production path of docs/operations.md, exactly: in an empty directory, the built dist/ with
 * package.json, package-lock.json, .npmrc, prisma/migrations, schema/sii and scripts/ (what the
 * Dockerfile's runtime stage copies), `npm ci --omit=dev`, then `npm start` against PostgreSQL
 * (DATABASE_URL): /readyz 200, the CLI creates a key beside the running server, an invoice is
 * finalized and printed (PDF), and SIGTERM stops it with exit code 0. PostgreSQL project only.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { adminQuery, POSTGRES_URL, TEST_DB, withDatabase } from "../helpers/databases.js";
import { ROOT, serviceEnv, startProcess, type ServiceProcess } from "../helpers/processes.js";

/** What the runtime needs besides node_modules (the Dockerfile copies the same). */
const SHIPPED = [
  "dist",
  "package.json",
  "package-lock.json",
  ".npmrc",
  "prisma/migrations",
  "schema/sii",
  "scripts/run.mjs",
  "scripts/build-state.mjs",
];

describe.skipIf(TEST_DB !== "postgres")("production install", () => {
  // in memory when the machine has /dev/shm (vitest.config.ts puts TMPDIR there): npm ci writes some 400 packages,
  // which takes 18 s there against 30 s on this machine's disk (the install is the same either way)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-production-"));
  const database = `billing_production_${process.pid}`;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill("SIGKILL");
    await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    "npm ci --omit=dev over a built dist/ starts against PostgreSQL, serves /readyz 200 and stops on SIGTERM",
    { timeout: 420_000 },
    async () => {
      for (const item of SHIPPED) fs.cpSync(path.join(ROOT, item), path.join(dir, item), { recursive: true });
      // --prefer-offline: the same install, from the packages .ci/run's own `npm ci` left in npm's cache, without
      // asking the registry about each of them again (what the test checks is the install, not the network)
      const install = spawnSync("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 300_000,
      });
      expect(install.status, `${install.stdout}${install.stderr}`).toBe(0);
      expect(`${install.stdout}${install.stderr}`).not.toContain("EBADENGINE");
      // (typescript itself stays: prisma and @prisma/client depend on it)
      for (const dev of ["vitest", "tsx", "@graphql-codegen/cli", "playwright-core"])
        expect(fs.existsSync(path.join(dir, "node_modules", dev)), `${dev} is a dev dependency`).toBe(false);

      await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await adminQuery(`CREATE DATABASE "${database}"`);
      const env = serviceEnv({ DATABASE_URL: withDatabase(POSTGRES_URL, database) });
      service = startProcess("npm", ["start"], env, dir);
      const listening = await service.waitForLog((l) => l.msg === "billing service listening", 120_000);
      expect(service.logs().find((l) => l.msg === "migrations applied")?.applied.length).toBeGreaterThan(10);
      const url = listening.url as string;
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready", detail: "ok" });

      // the CLI of the installation, beside the running server (PostgreSQL)
      const created = spawnSync(
        process.execPath,
        ["dist/cli.js", "api-key", "create", "--organization", "Producción SpA", "--email", "ops@produccion.cl"],
        { cwd: dir, env, encoding: "utf8" },
      );
      expect(created.status, created.stderr).toBe(0);
      const { key } = JSON.parse(created.stdout.trim().split("\n").pop()!);
      const call = async (method: string, pathname: string, body?: unknown) => {
        const res = await fetch(`${url}${pathname}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.json() };
      };
      const customer = await call("POST", "/v1/customers/", {
        name: "Cliente SpA",
        country: "CL",
        tax_id: "76.042.235-5",
      });
      expect(customer.status).toBe(201);
      const invoice = await call("POST", "/v1/invoices/", {
        customer: customer.body.id,
        document: "CL33",
        lines: [
          { name: "Consultoría", quantity: 2, amount: 1000 },
          { name: "Soporte", quantity: 1, amount: 500, discount: 10, discount_scheme: "%" },
        ],
      });
      expect(invoice.status).toBe(201);
      expect(invoice.body.total).toBe(2916);
      const finalized = await call("GET", `/v1/invoices/${invoice.body.id}/finalize/`);
      expect(finalized.body).toMatchObject({ status: "finalized", number: 1 });
      const pdf = await call("GET", `/v1/invoices/${invoice.body.id}/pdf/`);
      expect(Buffer.from(pdf.body.file, "base64").subarray(0, 5).toString()).toBe("%PDF-");

      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
    },
  );
});
