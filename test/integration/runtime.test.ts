/**
 * The built service run as a user and an operator would (docs/operations.md): `npm start` stopped
 * with SIGTERM leaves no process; a request in flight is answered during shutdown; kill -9 in the
 * middle of a stream of writes loses no acknowledged write and half-writes nothing; a second
 * server on the same embedded database fails at once naming the directory and the owner; bad
 * configuration, a port in use and an unreachable database are one clear log line and exit code 1;
 * the CLI's --version and migrate status.
 *
 * Embedded-database cases run in the pglite project, PostgreSQL cases in the postgres project.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { POSTGRES_URL, TEST_DB, templateDataDir, withDatabase } from "../helpers/databases.js";
import {
  cli,
  createKey,
  descendants,
  isRunning,
  portOpen,
  ROOT,
  serviceEnv,
  startProcess,
  startService,
  type ServiceProcess,
} from "../helpers/processes.js";

const running: ServiceProcess[] = [];
const dirs: string[] = [];

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-runtime-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
});
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };

async function api(url: string, key: string, method: string, pathname: string, body?: unknown) {
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe.skipIf(TEST_DB !== "pglite")("the service on the embedded database", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let key: string;

  beforeAll(() => {
    // a copy of the migrated template (the command line migrating a new directory: control-socket.test.ts)
    dir = templateDataDir(inject("template"), "billing-runtime-");
    dirs.push(dir);
    env = serviceEnv({ BILLING_DATA_DIR: dir });
    key = createKey(env);
  });

  it("CLI: --version prints the package version; migrate status lists every migration as applied", () => {
    const v = cli(["--version"], env);
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toBe(version);
    const status = cli(["migrate", "status", "--json"], env);
    expect(status.status, status.stderr).toBe(0);
    const parsed = JSON.parse(status.stdout);
    const local = fs
      .readdirSync(path.join(ROOT, "prisma", "migrations"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(parsed).toEqual({ applied: local, pending: [], modified: [], failed: [], unknown: [] });
  });

  it(
    "SIGTERM to `npm start` stops the server, closes the port and leaves no process behind",
    { timeout: 180_000 },
    async () => {
      const npm = startProcess("npm", ["start"], env);
      running.push(npm);
      const listening = await npm.waitForLog((l) => l.msg === "billing service listening", 120_000);
      const port = Number(new URL(listening.url).port);
      expect((await fetch(`${listening.url}/healthz`)).status).toBe(200);
      const tree = descendants(npm.child.pid!);
      expect(tree.length, "npm runs the service in a child process").toBeGreaterThan(0);
      npm.child.kill("SIGTERM");
      expect(await npm.exited).toBe(0);
      expect(npm.logs().map((l) => l.msg)).toEqual(
        expect.arrayContaining(["shutting down: no new connections, finishing requests in flight", "stopped"]),
      );
      expect(await portOpen(port)).toBe(false);
      expect(tree.filter(isRunning), "processes left after npm exited").toEqual([]);
      expect(fs.existsSync(path.join(dir, "pglite.lock")), "the data directory lock is released").toBe(false);
    },
  );

  it(
    "a request in flight when SIGTERM arrives is answered (Connection: close), then the process exits 0",
    { timeout: 120_000 },
    async () => {
      const service = await startService(env);
      running.push(service);
      const { port } = new URL(service.url);
      const body = JSON.stringify({ name: "En vuelo SpA", country: "CL" });
      const socket = net.connect(Number(port), "127.0.0.1");
      await new Promise((r) => socket.once("connect", r));
      let answer = "";
      socket.on("data", (d) => (answer += d));
      const ended = new Promise((r) => socket.once("close", r));
      // headers and half the body: the request is in flight, waiting for the rest
      socket.write(
        `POST /v1/customers/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: ` +
          `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
      );
      // give the idle server time to read the headers: a connection whose request has not been read
      // yet counts as idle and is closed at once by the shutdown
      await new Promise((r) => setTimeout(r, 1000));
      service.child.kill("SIGTERM");
      await service.waitForLog((l) => l.msg === "shutting down: no new connections, finishing requests in flight");
      // the listening socket closes in the event loop turn after the log line: poll briefly
      let listening = true;
      for (let i = 0; i < 50 && listening; i++) {
        listening = await portOpen(Number(port));
        if (listening) await new Promise((r) => setTimeout(r, 100));
      }
      expect(listening, "no new connections while draining").toBe(false);
      socket.write(body.slice(10));
      await ended;
      expect(answer).toMatch(/^HTTP\/1\.1 201 /);
      expect(answer.toLowerCase()).toContain("connection: close");
      expect(answer).toContain('"name":"En vuelo SpA"');
      expect(await service.exited).toBe(0);
    },
  );

  it(
    "a second server on the same data directory fails at once, naming the directory and the owner",
    { timeout: 120_000 },
    async () => {
      // (the command line beside a running server goes through its control socket: control-socket.test.ts)
      const service = await startService(env);
      running.push(service);
      const server2 = startProcess(process.execPath, [path.join(ROOT, "dist", "main.js")], env);
      running.push(server2);
      expect(await server2.exited).toBe(1);
      const fatal = server2.logs().filter((l) => l.level === 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toMatchObject({ pid: service.child.pid, dir: path.join(dir, "pglite") });
      // the first server is unaffected
      expect((await api(service.url, key, "GET", "/v1/customers/")).status).toBe(200);
      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
    },
  );

  it(
    "kill -9 in the middle of a stream of writes: the next start has every acknowledged write and nothing half-written",
    { timeout: 240_000 },
    async () => {
      const service = await startService(env);
      running.push(service);
      const customer = await api(service.url, key, "POST", "/v1/customers/", {
        name: "Crash SpA",
        country: "CL",
        tax_id: "76.042.235-5",
      });
      expect(customer.status).toBe(201);
      const created = new Map<string, number | null>(); // acknowledged invoice -> acknowledged number (null: draft)
      let stop = false;
      const writer = async () => {
        while (!stop) {
          try {
            const inv = await api(service.url, key, "POST", "/v1/invoices/", {
              customer: customer.body.id,
              document: "CL33",
              lines: [
                { name: "A", quantity: 2, amount: 1000 },
                { name: "B", quantity: 1, amount: 500 },
              ],
            });
            if (inv.status !== 201) throw new Error(`create answered ${inv.status}`);
            created.set(inv.body.id, null);
            const fin = await api(service.url, key, "GET", `/v1/invoices/${inv.body.id}/finalize/`);
            if (fin.status !== 200) throw new Error(`finalize answered ${fin.status}`);
            created.set(inv.body.id, fin.body.number);
          } catch (e) {
            if (!stop) throw e;
          }
        }
      };
      const writers = [writer(), writer(), writer()];
      while (created.size < 30) await new Promise((r) => setTimeout(r, 20));
      stop = true; // from here on a failed request is the kill, not a bug
      service.child.kill("SIGKILL");
      await service.exited;
      await Promise.all(writers);
      const acknowledged = new Map(created);

      const started = performance.now();
      const again = await startService(env);
      running.push(again);
      const seconds = (performance.now() - started) / 1000;
      expect(seconds, "the start after kill -9 came up within 30 s").toBeLessThan(30);
      const all: any[] = [];
      for (let after: string | null = null; ;) {
        const page: any = await fetch(`${again.url}/graphql`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({
            query:
              "query($after: String) { invoices(first: 100, after: $after) { pageInfo { hasNextPage endCursor } " +
              "edges { node { id status number total lines { id } } } } }",
            variables: { after },
          }),
        }).then((r) => r.json());
        expect(page.errors).toBeUndefined();
        all.push(...page.data.invoices.edges.map((e: any) => ({ ...e.node, total: Number(e.node.total) })));
        if (!page.data.invoices.pageInfo.hasNextPage) break;
        after = page.data.invoices.pageInfo.endCursor;
      }
      const byId = new Map(all.map((i) => [i.id, i]));
      for (const [id, number] of acknowledged) {
        const invoice = byId.get(id);
        expect(invoice, `acknowledged invoice ${id}`).toBeDefined();
        expect(invoice.lines).toHaveLength(2);
        expect(invoice.total).toBe(2975);
        if (number !== null) expect(invoice).toMatchObject({ status: "finalized", number });
      }
      // nothing half-written: finalized means numbered, numbers gapless from 1, drafts unnumbered
      const finalized = all.filter((i) => i.status === "finalized");
      expect(finalized.every((i) => Number.isInteger(i.number))).toBe(true);
      expect(finalized.map((i) => i.number).sort((a, b) => a - b)).toEqual(finalized.map((_, i) => i + 1));
      expect(all.filter((i) => i.status === "draft").every((i) => i.number === null)).toBe(true);
      expect(all.every((i) => i.lines.length === 2)).toBe(true);
      // the counter continues where the committed numbers end
      const next = await api(again.url, key, "POST", "/v1/invoices/", {
        customer: customer.body.id,
        document: "CL33",
        lines: [{ name: "C", quantity: 1, amount: 100 }],
      });
      const fin = await api(again.url, key, "GET", `/v1/invoices/${next.body.id}/finalize/`);
      expect(fin.body.number).toBe(finalized.length + 1);
      again.child.kill("SIGTERM");
      expect(await again.exited).toBe(0);
    },
  );
});

describe.skipIf(TEST_DB !== "pglite")("start-up errors", () => {
  it("a bad configuration value is one JSON line naming the variable, exit code 1", async () => {
    const p = startProcess(
      process.execPath,
      [path.join(ROOT, "dist", "main.js")],
      serviceEnv({ BILLING_DATA_DIR: dataDir(), PORT: "eighty" }),
    );
    expect(await p.exited).toBe(1);
    expect(p.lines).toHaveLength(1);
    expect(JSON.parse(p.lines[0])).toMatchObject({
      level: 60,
      variable: "PORT",
      msg: 'invalid configuration: PORT: must be an integer between 0 and 65535 (got "eighty")',
    });
    const smtp = startProcess(
      process.execPath,
      [path.join(ROOT, "dist", "main.js")],
      serviceEnv({ BILLING_DATA_DIR: dataDir(), SMTP_URL: "mail.example.com" }),
    );
    expect(await smtp.exited).toBe(1);
    expect(JSON.parse(smtp.lines[0])).toMatchObject({ variable: "SMTP_URL" });
  });

  it("a port in use is reported before the database is opened", async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const dir = dataDir();
      const p = startProcess(
        process.execPath,
        [path.join(ROOT, "dist", "main.js")],
        serviceEnv({ BILLING_DATA_DIR: dir, PORT: String(port) }),
      );
      expect(await p.exited).toBe(1);
      expect(p.logs()).toEqual([
        expect.objectContaining({ level: 60, msg: `port ${port} on 127.0.0.1 is already in use`, code: "EADDRINUSE" }),
      ]);
      expect(fs.existsSync(path.join(dir, "pglite")), "the database was not touched").toBe(false);
    } finally {
      blocker.close();
    }
  });
});

describe.skipIf(TEST_DB !== "postgres")("the service on PostgreSQL", () => {
  it("an unreachable server or a missing database is one JSON line with the reason, exit code 1", async () => {
    for (const [url, reason] of [
      ["postgresql://postgres@127.0.0.1:1/billing", /ECONNREFUSED/],
      [withDatabase(POSTGRES_URL, "billing_no_such_database"), /database "billing_no_such_database" does not exist/],
    ] as const) {
      const p = startProcess(process.execPath, [path.join(ROOT, "dist", "main.js")], serviceEnv({ DATABASE_URL: url }));
      expect(await p.exited).toBe(1);
      const fatal = p.logs().filter((l) => l.level === 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0].msg).toMatch(reason);
      expect(
        p.lines.filter((l) => !l.startsWith("{")),
        "only JSON lines",
      ).toEqual([]);
    }
  });
});
