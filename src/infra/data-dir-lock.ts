/**
 * One process at a time on an embedded database. PGlite runs PostgreSQL inside this process and
 * takes no lock of its own on its data directory, so a second process opening it (the CLI beside a
 * running server, a second server) would corrupt it or wait forever. Before opening, a process
 * creates `<data dir>.lock` (exclusive create) holding its pid, its start time and its command.
 *
 * A lock whose process is gone (kill -9, a crash, a reboot) is stale and taken over. A process is
 * identified by its pid and, on Linux, its start time (/proc/<pid>/stat), so a pid reused by an
 * unrelated process (a restarted container often gets the same pid) is not mistaken for the owner.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Thrown when another live process holds the data directory. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `the embedded database ${dir} is in use by process ${owner.pid} (${owner.command || "unknown command"}, ` +
        `since ${owner.since}); ` +
        "stop that process first (a running server takes the command line's commands through its control socket; " +
        "another command line must finish first)",
    );
    this.name = "DataDirInUseError";
  }
}

/** What a lock file records about its owner. */
export interface LockOwner {
  pid: number;
  /** process start time in clock ticks since boot (Linux /proc/<pid>/stat field 22), null elsewhere */
  startTicks: string | null;
  /** the owner's command line */
  command: string;
  /** ISO time the lock was taken */
  since: string;
  /** random id of this lock (tells this process's own live lock from a stale one with its pid) */
  token: string;
}

/** A held lock; `release` removes the lock file (idempotent). */
export interface DataDirLock {
  file: string;
  release(): void;
}

/** Start time of process `pid` in clock ticks since boot (Linux), or null when unknown. */
function startTicksOf(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) is in parentheses and may contain spaces: count fields after ")"
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null; // field 22 overall = index 19 after pid, comm
  } catch {
    return null;
  }
}

/** True when the process recorded in `owner` still runs (same pid and, where known, same start time). */
function isAlive(owner: LockOwner): boolean {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  if (owner.pid === process.pid) return heldHere.has(owner.token);
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false; // ESRCH: no such process
  }
  const ticks = startTicksOf(owner.pid);
  return owner.startTicks === null || ticks === null || ticks === owner.startTicks;
}

function readOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
    return typeof owner.pid === "number" ? owner : null;
  } catch {
    return null; // unreadable or half-written: a process died while writing it
  }
}

/**
 * The live process holding the lock of the embedded database in `dir` (`<dir>.lock`), or null when
 * there is none or its process is gone (a stale lock, which the next `lockDataDir` takes over).
 * Changes nothing. The command line asks this before it opens the database: a live server takes
 * its commands through its control socket instead (cli/run.ts).
 */
export function liveOwner(dir: string): LockOwner | null {
  const owner = readOwner(lockFileOf(dir));
  return owner && isAlive(owner) ? owner : null;
}

function lockFileOf(dir: string): string {
  return `${dir.replace(/[\\/]+$/, "")}.lock`;
}

/** tokens of the locks this process holds (a pid's own stale lock is told apart from a live one) */
const heldHere = new Set<string>();

/**
 * Takes the lock of the embedded database in `dir` (the file `<dir>.lock`). Throws
 * DataDirInUseError naming the directory and the owning process when another live process (or
 * this one) holds it; takes over a stale lock. The lock is released by `release()` and, as a last
 * resort, when this process exits normally.
 */
export function lockDataDir(dir: string): DataDirLock {
  const file = lockFileOf(dir);
  const owner: LockOwner = {
    pid: process.pid,
    startTicks: startTicksOf(process.pid),
    command: process.argv.slice(1).join(" "),
    since: new Date().toISOString(),
    token: randomUUID(),
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(owner)}\n`, { flag: "wx", mode: 0o644 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 2) throw e;
      const current = readOwner(file);
      if (current && isAlive(current)) throw new DataDirInUseError(dir, current);
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  heldHere.add(owner.token);
  const onExit = () => release();
  process.once("exit", onExit);
  let released = false;
  function release() {
    if (released) return;
    released = true;
    heldHere.delete(owner.token);
    process.off("exit", onExit);
    // remove only our own lock (a stale-lock takeover by another process must not be undone)
    if (readOwner(file)?.token === owner.token) fs.rmSync(file, { force: true });
  }
  return { file, release };
}
