/**
 * The command line's side of the control socket (infra/control-socket.ts): when the embedded
 * database is held by a live process, the command is sent to that process's control socket and
 * runs there (cli/serve.ts); what it prints comes back and is written to this process's stdout
 * and stderr, its progress drawn here, and its exit code becomes this process's.
 */
import { callControlSocket, ControlSocketUnavailableError } from "../infra/control-socket.js";
import type { LockOwner } from "../infra/data-dir-lock.js";
import type { CommandOutput, ProgressDisplay } from "./context.js";
import { progressBar } from "./progress.js";

/** A data directory held by a live process, and where that process's control socket would be. */
export interface HeldDataDir {
  /** the embedded database's directory (`<BILLING_DATA_DIR>/pglite`) */
  dir: string;
  owner: LockOwner;
  socket: string;
}

/**
 * Runs `argv` in the process holding the data directory, through its control socket; resolves
 * with the exit code. The command's stdout goes to `io.out`, its stderr to `io.notes`, its progress
 * to a bar on this process's stderr. When nothing answers there (the owner is not a server, or one
 * still starting), or the socket refuses this user, writes one `error:` line saying so to
 * `io.notes` and resolves 1. Interrupting this process does not stop the command in the server: it
 * finishes there.
 */
export async function runThroughServer(
  held: HeldDataDir,
  argv: string[],
  version: string,
  io: { out: CommandOutput; notes: CommandOutput },
): Promise<number> {
  let bar: ProgressDisplay | null = null;
  const endBar = () => {
    bar?.end();
    bar = null;
  };
  try {
    return await callControlSocket(held.socket, { argv, version }, (message) => {
      if ("out" in message) io.out.write(message.out);
      else if ("err" in message) io.notes.write(message.err);
      else if ("progress" in message) {
        bar ??= progressBar(message.format);
        bar.update(...message.progress);
      } else endBar();
    });
  } catch (e) {
    endBar();
    const { owner } = held;
    const holder = `process ${owner.pid} (${owner.command || "unknown command"}, since ${owner.since})`;
    if (e instanceof ControlSocketUnavailableError)
      io.notes.write(
        `error: the embedded database ${held.dir} is in use by ${holder}, and nothing answers on its control ` +
          `socket ${held.socket}: a server answers there once it has started (its "billing service listening" ` +
          `log line); another command line must finish first\n`,
      );
    else if ((e as NodeJS.ErrnoException).code === "EACCES")
      io.notes.write(
        `error: the embedded database ${held.dir} is in use by the server ${holder}, whose control socket ` +
          `${held.socket} does not let this user in (EACCES): run the command line as the user the server runs as\n`,
      );
    else io.notes.write(`error: ${(e as Error).message}\n`);
    return 1;
  }
}
