/**
 * The command line beside a running server on the embedded database (docs/operations.md "The
 * command line beside a running server"), with real processes: the built server (`dist/main.js`)
 * and the built command line (`dist/cli.js`). The server holds the data directory and listens on
 * `<BILLING_DATA_DIR>/control.sock` (0600); the command line finds it through the data-dir lock and
 * runs its commands there: keys created and revoked take effect on that server at once, stderr
 * names the database and the server, a usage mistake is answered without harm to the server, the
 * billing run, migrate status and db copy work through it; a process that holds the directory
 * without a socket is named; SIGTERM removes the socket file, and a stale one left by SIGKILL
 * breaks neither the command line nor the next start. The first start without an organization logs
 * the command to run next. Embedded database only (the pglite project).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, POSTGRES_URL, TEST_DB, withDatabase } from "../helpers/databases.js";
import { cli, ROOT, serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";
import { createDatabase } from "../../src/infra/database.js";
import { callControlSocket } from "../../src/infra/control-socket.js";

const running: ServiceProcess[] = [];
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

function dataDir(): string {
  // short: a Unix socket path may have at most 107 bytes
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-ctl-"));
  dirs.push(dir);
  return dir;
}

async function stop(p: ServiceProcess, signal: NodeJS.Signals): Promise<number | string> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  return p.exited;
}

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
afterAll(async () => {
  for (const p of running.splice(0)) await stop(p, "SIGKILL");
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function status(url: string, key: string): Promise<number> {
  return (await fetch(`${url}/v1/customers/`, { headers: { authorization: `Bearer ${key}` } })).status;
}

/** The JSON object `api-key create` prints as its last stdout line. */
function created(stdout: string): { organization: string; id: string; key: string } {
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe.skipIf(TEST_DB !== "pglite")("the command line beside a running server", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let service: ServiceProcess & { url: string };
  let through: string;

  beforeAll(async () => {
    dir = dataDir();
    env = serviceEnv({ BILLING_DATA_DIR: dir });
    // migrated ahead (by the command line, in its own process), so the server's first start is quick; no organization
    const migrated = cli(["migrate"], env);
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(migrated.stderr).toMatch(new RegExp(`^applied \\d+ migration\\(s\\) to the embedded database in ${dir}:\n`));
    service = await startService(env);
    running.push(service);
    through = `the embedded database in ${dir}, through the running server (process ${service.child.pid})`;
  }, 180_000);

  it("first start without an organization: one log line gives the command that creates the first key", async () => {
    const command =
      `BILLING_DATA_DIR=${dir} npm run --silent cli -- api-key create --organization "Your Company SpA" ` +
      "--email you@example.com --mode test";
    const hint = await service.waitForLog((l) => typeof l.msg === "string" && l.msg.startsWith("no organization"));
    expect([hint.level, hint.command, hint.msg]).toEqual([
      30,
      command,
      `no organization yet: create the first organization and its API key with: ${command}`,
    ]);
    const listening = service.logs().find((l) => l.msg === "billing service listening")!;
    const socket = path.join(dir, "control.sock");
    expect(listening.controlSocket).toBe(socket);
    const stat = fs.statSync(socket);
    expect([stat.isSocket(), (stat.mode & 0o777).toString(8)]).toEqual([true, "600"]);
  });

  it("api-key create works through the server; stderr names the database; the key answers 200 at once", async () => {
    const r = cli(["api-key", "create", "--organization", "Primera SpA", "--email", "ops@primera.cl"], env);
    expect(r.status, r.stderr).toBe(0);
    const key = created(r.stdout);
    expect(key.key).toMatch(/^sk_test_/);
    expect(r.stderr).toBe(`created the organization ${key.organization} "Primera SpA"\nwrote the key to ${through}\n`);
    expect(await status(service.url, key.key)).toBe(200);
    const logged = await service.waitForLog((l) => l.msg === "command run for the command line");
    expect([logged.command, logged.exitCode]).toEqual(["api-key create", 0]);
    expect(JSON.stringify(logged)).not.toContain("Primera"); // arguments are never logged
  });

  it("api-key list and revoke through the server: the revoked key answers 401 at once", async () => {
    const r = cli(["api-key", "create", "--organization", "Segunda SpA", "--email", "ops@segunda.cl"], env);
    expect(r.status, r.stderr).toBe(0);
    const key = created(r.stdout);
    expect(await status(service.url, key.key)).toBe(200);
    const list = cli(["api-key", "list", "--json", "--organization", key.organization], env);
    expect(list.status, list.stderr).toBe(0);
    expect(
      list.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([
      expect.objectContaining({
        id: key.id,
        prefix: key.key.slice(0, 12),
        organization: { id: key.organization, name: "Segunda SpA" },
        mode: "test",
        revoked_at: null,
      }),
    ]);
    const revoke = cli(["api-key", "revoke", key.id], env);
    expect(revoke.status, revoke.stderr).toBe(0);
    expect(revoke.stdout).toMatch(new RegExp(`^${key.id} \\(${key.key.slice(0, 12)}…\\) revoked at \\d{4}-`));
    expect(revoke.stderr).toBe(`revoked in ${through}\n`);
    expect(await status(service.url, key.key)).toBe(401);
  });

  it("a mistake is answered like the local command line's, and the server keeps serving", async () => {
    const missing = cli(["api-key", "create", "--email", "x@y.cl"], env);
    expect([missing.status, missing.stdout, missing.stderr]).toEqual([
      1,
      "",
      "error: required option '--organization <name or id>' not specified\n",
    ]);
    const unknown = cli(["api-key", "revoke", "key_doesnotexist"], env);
    expect([unknown.status, unknown.stderr]).toEqual([1, "error: No API key with id key_doesnotexist\n"]);
    // a command line of another version is refused by the server
    const errors: string[] = [];
    const code = await callControlSocket(
      path.join(dir, "control.sock"),
      { argv: ["api-key", "list"], version: "0.0.0-other" },
      (m) => void ("err" in m && errors.push(m.err)),
    );
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    expect([code, errors]).toEqual([
      1,
      [
        `error: the running server is version ${version} and this command line is version 0.0.0-other; run the ` +
          "server's build of the command line, or stop the server and run this one\n",
      ],
    ]);
    const help = cli(["api-key", "--help"], env);
    expect([help.status, help.stdout.split("\n")[0]]).toEqual([0, "Usage: billing api-key [options] [command]"]);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it("migrate status and the billing run go through the server too", () => {
    const migrations = cli(["migrate", "status", "--json"], env);
    expect(migrations.status, migrations.stderr).toBe(0);
    expect(JSON.parse(migrations.stdout)).toMatchObject({ pending: [], failed: [] });
    const run = cli(["billing", "run", "--json", "--no-progress"], env);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      billed: 0,
      invoices: 0,
      cycles: 0,
      cancelled: 0,
      collected: 0,
      failed: 0,
      declined: 0,
      skipped: 0,
      errors: [],
    });
    expect(run.stderr).toBe(`billing run on ${through}\n`);
  });

  it("db copy through the server copies the running server's database into PostgreSQL", async () => {
    const name = `billing_ctl_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE DATABASE "${name}"`);
    cleanups.push(() => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    const url = withDatabase(POSTGRES_URL, name);
    const copy = cli(["db", "copy", "--to", url], env);
    expect(copy.status, copy.stderr).toBe(0);
    expect(copy.stderr).toMatch(new RegExp(`^copying ${through.replace(/[()]/g, "\\$&")} into PostgreSQL database`));
    expect(copy.stdout.trim().split("\n").at(-1)).toMatch(/^total \d+ rows in \d+ tables$/);
    expect(copy.stdout).toMatch(/^ApiKey 2$/m);
    const target = await createDatabase({ kind: "postgres", url });
    try {
      const organizations = await target.prisma.organization.findMany({ orderBy: { name: "asc" } });
      expect(organizations.map((o) => o.name)).toEqual(["Primera SpA", "Segunda SpA"]);
    } finally {
      await target.close();
    }
    // the server went on serving while it was read
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it(
    "SIGTERM removes the socket file; a stale one left by SIGKILL breaks neither the command line nor the next " +
      "start",
    { timeout: 240_000 },
    async () => {
      const socket = path.join(dir, "control.sock");
      expect(await stop(service, "SIGTERM")).toBe(0);
      expect(fs.existsSync(socket), "the socket file is removed on a clean stop").toBe(false);

      const killed = await startService(env);
      running.push(killed);
      expect(fs.existsSync(socket)).toBe(true);
      expect(await stop(killed, "SIGKILL")).toBe("SIGKILL");
      expect(fs.existsSync(socket), "SIGKILL leaves the socket file").toBe(true);

      // no live owner: the command line opens the database itself (the stale lock is taken over)
      const local = cli(["api-key", "create", "--organization", "Tercera SpA", "--email", "ops@tercera.cl"], env);
      expect(local.status, local.stderr).toBe(0);
      expect(local.stderr).toContain(`wrote the key to the embedded database in ${dir}\n`);
      expect(local.stderr).not.toContain("through the running server");
      const key = created(local.stdout);

      const again = await startService(env);
      running.push(again);
      expect(await status(again.url, key.key)).toBe(200);
      const remote = cli(["api-key", "list", "--json"], env);
      expect(remote.status, remote.stderr).toBe(0);
      expect(remote.stdout.trim().split("\n")).toHaveLength(3);
      // organizations exist: no first-start line (it would come right after "listening", before any request)
      expect(again.logs().some((l) => typeof l.msg === "string" && l.msg.startsWith("no organization"))).toBe(false);
      const last = cli(["api-key", "create", "--organization", "Cuarta SpA", "--email", "ops@cuarta.cl"], env);
      expect(last.status, last.stderr).toBe(0);
      expect(last.stderr).toContain(`through the running server (process ${again.child.pid})`);
      expect(await status(again.url, created(last.stdout).key)).toBe(200);
      expect(await stop(again, "SIGTERM")).toBe(0);
      expect(fs.existsSync(socket)).toBe(false);
    },
  );

  it("a process that holds the data directory without a control socket is named, and nothing runs", async () => {
    const other = dataDir();
    const pglite = path.join(other, "pglite");
    const lockModule = path.join(ROOT, "dist", "infra", "data-dir-lock.js");
    const holder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { lockDataDir } = await import(${JSON.stringify(lockModule)}); ` +
          `lockDataDir(${JSON.stringify(pglite)}); console.log("locked"); setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    cleanups.push(async () => {
      holder.kill("SIGKILL");
      await new Promise((r) => holder.once("exit", r));
    });
    await new Promise<void>((resolve) => holder.stdout!.once("data", () => resolve()));
    const r = cli(["api-key", "list"], serviceEnv({ BILLING_DATA_DIR: other }));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`error: the embedded database ${pglite} is in use by process ${holder.pid} (`);
    expect(r.stderr).toContain(`nothing answers on its control socket ${path.join(other, "control.sock")}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.readdirSync(other).sort()).toEqual(["pglite.lock"]);
  });
});
