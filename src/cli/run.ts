/**
 * Where a command line runs (docs/operations.md "The command line beside a running server"): on
 * PostgreSQL, and on an embedded database no live process holds, in this process (cli/local.ts);
 * on an embedded database a live process holds (its lock, infra/data-dir-lock.ts), inside that
 * process through its control socket `<BILLING_DATA_DIR>/control.sock` (cli/remote.ts; the server
 * side is cli/serve.ts). Used by src/cli.ts and by the demo (src/demo.ts), which creates its own
 * organization this way.
 */
import { databaseTarget, dataDirOf } from "../infra/database-target.js";
import { liveOwner } from "../infra/data-dir-lock.js";
import { controlSocketPath } from "../infra/control-socket.js";
import type { CommandOutput } from "./context.js";
import type { HeldDataDir } from "./remote.js";

/** The configured embedded database's directory when a live process (not this one) holds it; else null. */
export function heldDataDir(env: NodeJS.ProcessEnv = process.env): HeldDataDir | null {
  const target = databaseTarget(env);
  const dataDir = dataDirOf(target);
  if (!dataDir || target.kind !== "pglite" || !target.dir) return null;
  const owner = liveOwner(target.dir);
  if (!owner || owner.pid === process.pid) return null;
  return { dir: target.dir, owner, socket: controlSocketPath(dataDir) };
}

/**
 * Help and version are answered in this process, whoever holds the database: no arguments, `-h`,
 * `--help`, `-V` or `--version` anywhere, or the `help` command among the words before the first
 * option (`help api-key`, `api-key help create`; not `--organization help`).
 */
function asksForHelp(argv: string[]): boolean {
  const firstOption = argv.findIndex((a) => a.startsWith("-"));
  const words = firstOption < 0 ? argv : argv.slice(0, firstOption);
  return (
    argv.length === 0 || words.includes("help") || argv.some((a) => ["-h", "--help", "-V", "--version"].includes(a))
  );
}

/**
 * Runs the command line `argv` (the arguments after `cli.js`) where it must run, its stdout to
 * `io.out` and its stderr to `io.notes`; resolves with its exit code (a command's error is printed
 * as `error: ...` and gives 1, a usage mistake commander's code). Never exits the process.
 */
export async function runCommand(
  argv: string[],
  version: string,
  io: { out: CommandOutput; notes: CommandOutput } = { out: process.stdout, notes: process.stderr },
): Promise<number> {
  // `events listen` talks to the server over HTTP, never to the database: it runs here whoever holds it
  const held = asksForHelp(argv) || argv[0] === "events" ? null : heldDataDir();
  if (held) {
    const { runThroughServer } = await import("./remote.js");
    return runThroughServer(held, argv, version, io);
  }
  const [{ buildProgram, commandFailure, containProgram }, { localContext }] = await Promise.all([
    import("./program.js"),
    import("./local.js"),
  ]);
  let code = 0;
  const program = buildProgram(
    localContext((c) => (code = c), io),
    version,
  );
  containProgram(
    program,
    (text) => io.out.write(text),
    (text) => io.notes.write(text),
  );
  try {
    await program.parseAsync(argv, { from: "user" });
    return code;
  } catch (e) {
    const failure = await commandFailure(e);
    io.notes.write(failure.text);
    return failure.code;
  }
}
