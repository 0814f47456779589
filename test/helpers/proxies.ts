/**
 * Debian's nginx and PgBouncer for the scaling tests (docs/scaling.md), each run with the
 * repository's configuration (deploy/nginx.conf, deploy/pgbouncer.ini) and only the addresses,
 * ports and paths of the test changed: a temporary directory holds the configuration, pid, logs
 * and temporary files, ports are free high ones, so no privilege and no system service is needed.
 * Without the programs the tests fail naming the install (.ci/run installs them).
 */
import { existsSync } from "node:fs";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { portOpen, ROOT, startProcess, type ServiceProcess } from "./processes.js";

export const NGINX = "/usr/sbin/nginx";
export const PGBOUNCER = "/usr/sbin/pgbouncer";
export const MISSING = (program: string, pkg: string) =>
  `no ${program}: install Debian's (apt-get update && apt-get install -y ${pkg}; .ci/run does)`;

/** A free TCP port on 127.0.0.1 (bound and released: free at that moment). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once 127.0.0.1:`port` accepts connections; rejects after `ms` or when `process` exits first. */
async function untilListening(port: number, process: ServiceProcess, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  let exited = false;
  void process.exited.then(() => (exited = true));
  while (!(await portOpen(port))) {
    if (exited || Date.now() > deadline)
      throw new Error(
        `nothing listens on ${port}${exited ? " (the process exited)" : ""}:\n${process.lines.join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A program the test started, in its own directory. */
export interface Proxy {
  /** e.g. http://127.0.0.1:port for nginx */
  port: number;
  process: ServiceProcess;
  dir: string;
  /** stops it (SIGTERM) and removes its directory */
  stop(): Promise<void>;
}

function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `billing-${label}-`));
  // the programs' unprivileged workers (nginx's as `nobody` when started by root) read and write in it
  fs.chmodSync(dir, 0o777);
  return dir;
}

function stopper(process: ServiceProcess, dir: string): () => Promise<void> {
  return async () => {
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGTERM");
    await process.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
}

/**
 * deploy/nginx.conf with its upstream servers replaced by 127.0.0.1:`upstreams` (their other
 * parameters kept) and `listen 80` by 127.0.0.1:`port`.
 */
export function nginxSite(upstreams: number[], port: number): string {
  const site = fs.readFileSync(path.join(ROOT, "deploy", "nginx.conf"), "utf8");
  const servers = [...site.matchAll(/^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;$/gm)];
  if (servers.length === 0) throw new Error("deploy/nginx.conf: no `server 127.0.0.1:...` line in its upstream");
  const [indent, params] = [servers[0][1], servers[0][2] ?? ""];
  const lines = upstreams.map((p) => `${indent}server 127.0.0.1:${p}${params};`).join("\n");
  let replaced = false;
  const withUpstreams = site.replace(/^\s*server 127\.0\.0\.1:\d+( [^;]*)?;$/gm, () => {
    if (replaced) return "";
    replaced = true;
    return lines;
  });
  if (!/^\s*listen 80;$/m.test(withUpstreams)) throw new Error("deploy/nginx.conf: no `listen 80;`");
  return withUpstreams.replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`);
}

/** Starts nginx in the foreground with deploy/nginx.conf in front of the processes on `upstreams`. */
export async function startNginx(upstreams: number[]): Promise<Proxy> {
  if (!existsSync(NGINX)) throw new Error(MISSING("nginx", "nginx"));
  const dir = tempDir("nginx");
  const port = await freePort();
  fs.writeFileSync(path.join(dir, "billing.conf"), nginxSite(upstreams, port));
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${path.join(dir, t)};`)
    .join("\n");
  fs.writeFileSync(
    path.join(dir, "nginx.conf"),
    [
      "daemon off;",
      "worker_processes 1;",
      `pid ${path.join(dir, "nginx.pid")};`,
      "error_log stderr warn;",
      "events { worker_connections 512; }",
      "http {",
      `  access_log ${path.join(dir, "access.log")};`,
      temp,
      `  include ${path.join(dir, "billing.conf")};`,
      "}",
      "",
    ].join("\n"),
  );
  const process = startProcess(NGINX, ["-p", dir, "-e", "stderr", "-c", path.join(dir, "nginx.conf")], {
    PATH: "/usr/sbin:/usr/bin:/bin",
  });
  await untilListening(port, process);
  return { port, process, dir, stop: stopper(process, dir) };
}

/**
 * Starts PgBouncer in the foreground with deploy/pgbouncer.ini (transaction pooling), every
 * database name forwarded to the PostgreSQL of `postgresUrl`, trust authentication for its user, and
 * `poolSize` server connections per database (small, so the service's connections share them).
 * Started by root, it runs as `nobody` (PgBouncer refuses to run as root).
 */
export async function startPgBouncer(postgresUrl: string, poolSize: number): Promise<Proxy> {
  if (!existsSync(PGBOUNCER)) throw new Error(MISSING("pgbouncer", "pgbouncer"));
  const dir = tempDir("pgbouncer");
  const port = await freePort();
  const postgres = new URL(postgresUrl);
  const user = decodeURIComponent(postgres.username) || "postgres";
  fs.writeFileSync(path.join(dir, "userlist.txt"), `"${user}" ""\n`, { mode: 0o644 });
  // the repository's file first; its last section is [pgbouncer], whose settings the lines after it override
  // (a second [pgbouncer] header would reset them)
  fs.writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${postgres.hostname} port=${postgres.port || "5432"}`,
      `%include ${path.join(ROOT, "deploy", "pgbouncer.ini")}`,
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "logfile =",
      `pidfile = ${path.join(dir, "pgbouncer.pid")}`,
      "auth_type = trust",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      `default_pool_size = ${poolSize}`,
      "reserve_pool_size = 0",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const args = [...(process.getuid?.() === 0 ? ["-u", "nobody"] : []), path.join(dir, "pgbouncer.ini")];
  const child = startProcess(PGBOUNCER, args, { PATH: "/usr/sbin:/usr/bin:/bin" });
  await untilListening(port, child);
  return { port, process: child, dir, stop: stopper(child, dir) };
}
