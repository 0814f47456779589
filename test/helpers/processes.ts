/**
 * Running the built service as a user or an operator would: `npm start` or `node dist/main.js`
 * as child processes (their JSON log lines collected), `node dist/cli.js`, and the process tree
 * read from /proc to check that nothing is left behind.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { root } from "../../scripts/build-state.mjs";
import { dataDirOf, type DatabaseTarget } from "../../src/infra/database-target.js";

export const ROOT = root;

export interface ServiceProcess {
  child: ChildProcess;
  /** every stdout/stderr line so far */
  lines: string[];
  /** the JSON log lines so far, parsed */
  logs(): Record<string, any>[];
  /** resolves with the first log line matching `test` (rejects after `ms` or when the process exits first) */
  waitForLog(test: (line: Record<string, any>) => boolean, ms?: number): Promise<Record<string, any>>;
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | string>;
}

/** Environment for a child service: quiet workers, info logs, no inherited database selection. */
export function serviceEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    SII_SEND_INTERVAL_SECONDS: "0",
    NODE_ENV: "production",
  };
  delete env.DATABASE_URL;
  delete env.BILLING_DATA_DIR;
  delete env.LOG_FORMAT;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** The variable that gives a child service `target`: DATABASE_URL, or the BILLING_DATA_DIR of an embedded database. */
export function databaseVariables(target: DatabaseTarget): Record<string, string> {
  if (target.kind === "postgres") return { DATABASE_URL: target.url };
  const dir = dataDirOf(target);
  if (!dir) throw new Error("an in-memory database cannot be shared with a child process");
  return { BILLING_DATA_DIR: dir };
}

/** Starts `command args` in `cwd` (default the project root) and collects its output lines. */
export function startProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string = ROOT,
): ServiceProcess {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  for (const stream of [child.stdout!, child.stderr!]) {
    let rest = "";
    stream.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString("utf8")).split("\n");
      rest = parts.pop() ?? "";
      lines.push(...parts.filter(Boolean));
      for (const w of waiters) w();
    });
  }
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const logs = () =>
    lines.flatMap((l) => {
      try {
        const parsed = JSON.parse(l);
        return parsed && typeof parsed === "object" ? [parsed] : [];
      } catch {
        return [];
      }
    });
  const waitForLog: ServiceProcess["waitForLog"] = (test, ms = 60_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = logs().find(test);
        if (!found) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no matching log line within ${ms} ms; output:\n${lines.join("\n")}`));
      }, ms);
      if (check()) return;
      waiters.add(check);
      void exited.then((code) => {
        if (check()) return;
        waiters.delete(check);
        clearTimeout(timer);
        reject(new Error(`the process exited (${code}) before the log line; output:\n${lines.join("\n")}`));
      });
    });
  return { child, lines, logs, waitForLog, exited };
}

/** What a command run to its end printed, and its exit code. */
export interface CommandRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` in `cwd` with `env` to its end, without blocking the test's event loop. */
export function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CommandRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("exit", (status) => resolve({ status, stdout, stderr }));
  });
}

/** `node dist/main.js` with `env`; resolves once it listens, with its base URL. */
export async function startService(env: NodeJS.ProcessEnv): Promise<ServiceProcess & { url: string }> {
  const service = startProcess(process.execPath, [path.join(ROOT, "dist", "main.js")], env);
  const listening = await service.waitForLog((l) => l.msg === "billing service listening");
  return { ...service, url: listening.url as string };
}

/** Runs `node dist/cli.js ...args` to completion. */
export function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { status: number | null; stdout: string; stderr: string; ms: number } {
  const started = performance.now();
  const r = spawnSync(process.execPath, [path.join(ROOT, "dist", "cli.js"), ...args], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - started };
}

/** Creates an API key with the CLI (the server must not run on that embedded database). */
export function createKey(env: NodeJS.ProcessEnv): string {
  const r = cli(
    ["api-key", "create", "--organization", "Runtime SpA", "--email", "ops@runtime.cl", "--mode", "test"],
    env,
  );
  if (r.status !== 0) throw new Error(`api-key create failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!).key as string;
}

/** Pids of every descendant of `pid` (children, grandchildren...), from /proc. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(name), ppid);
    } catch {
      // the process ended while reading
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** True while process `pid` exists (and is not a zombie). */
export function isRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
