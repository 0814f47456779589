/**
 * The server's control socket: a Unix domain socket in the embedded database's data directory
 * (`<BILLING_DATA_DIR>/control.sock`) through which the command line runs its commands inside the
 * running server, since an embedded database can be open in one process only (data-dir-lock.ts).
 * What a command does is up to the handler the server passes (cli/serve.ts); this module only
 * carries requests and answers.
 *
 * Who may connect is decided by the file's permissions: the socket is created 0600 (bound with a
 * umask of 0177, then chmod as well), so only the user the server runs as (and root) can use it:
 * connecting to a Unix socket needs write permission on its file. Anyone who can use it can do
 * what the command line can (create API keys of any organization).
 *
 * Protocol, one JSON object per line (UTF-8): the client sends one request line
 * `{"argv": ["api-key", "list"], "version": "1.2.0"}`; the server answers with any number of
 * `{"out": text}` (the command's stdout), `{"err": text}` (its stderr),
 * `{"progress": [done, total], "format": "..."}` and `{"progressEnd": true}` (a progress display in
 * cli-progress's format, drawn by the client), then `{"exit": code}`, and ends the connection.
 */
import fs from "node:fs";
import net from "node:net";
import readline from "node:readline";

/** The control socket's file name in the data directory. */
export const CONTROL_SOCKET_NAME = "control.sock";

/** Longest Unix socket path Linux takes (sun_path is 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/** Longest request line the server reads, in bytes. */
const MAX_REQUEST_BYTES = 64 * 1024;

/** What the command line asks the server to run. */
export interface ControlRequest {
  /** the command line's arguments after `cli.js` (`["api-key", "create", "--organization", "Acme SpA", ...]`) */
  argv: string[];
  /** the command line's package version; the server refuses another version's request */
  version: string;
}

/** One line of the server's answer. */
export type ControlMessage =
  | { out: string }
  | { err: string }
  | { progress: [number, number]; format: string }
  | { progressEnd: true }
  | { exit: number };

/** The answer of one request, as the handler writes it. */
export interface ControlChannel {
  send(message: Exclude<ControlMessage, { exit: number }>): void;
  /** true once the client went away (what is sent then is dropped) */
  readonly closed: boolean;
}

/**
 * Runs one request; resolves with the exit code. `signal` is aborted when the server stops: a
 * long command should end at its next safe point (the billing run after its batch in progress).
 */
export type ControlHandler = (request: ControlRequest, channel: ControlChannel, signal: AbortSignal) => Promise<number>;

/** A listening control socket. */
export interface ControlServer {
  file: string;
  /** requests being run now */
  running(): number;
  /**
   * Stops taking connections (the socket file is removed at once), aborts the handlers' signal and
   * waits up to `graceMs` for the requests being run; those still running then are told the server
   * stopped and their connections closed. Resolves true when every request finished in time.
   */
  close(graceMs: number): Promise<boolean>;
}

/** `<dataDir>/control.sock`. */
export function controlSocketPath(dataDir: string): string {
  return `${dataDir.replace(/[\\/]+$/, "")}/${CONTROL_SOCKET_NAME}`;
}

/**
 * Listens on the Unix socket `file` (created 0600) and runs each request with `handler`. A file
 * already there is removed first: the caller must hold the data directory's lock, so such a file
 * is a stale one left by a server that was killed. Rejects when the path is too long for a Unix
 * socket (107 bytes) or the socket cannot be created.
 */
export async function listenControlSocket(file: string, handler: ControlHandler): Promise<ControlServer> {
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH_BYTES)
    throw new Error(
      `the control socket path ${file} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a Unix socket path may have`,
    );
  fs.rmSync(file, { force: true });
  const aborter = new AbortController();
  const sessions = new Set<{ done: Promise<void>; socket: net.Socket }>();
  const server = net.createServer((socket) => {
    const done = serve(socket, handler, aborter.signal);
    const session = { done, socket };
    sessions.add(session);
    void done.finally(() => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // the socket file is created by the bind inside listen(), synchronously: created 0600 under this umask
    const umask = setUmask(0o177);
    try {
      server.listen(file, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      if (umask !== null) setUmask(umask);
    }
  });
  fs.chmodSync(file, 0o600);
  return {
    file,
    running: () => sessions.size,
    async close(graceMs) {
      server.close();
      aborter.abort();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
      const finished = await Promise.race([Promise.all([...sessions].map((s) => s.done)).then(() => true), late]);
      clearTimeout(timer);
      for (const { socket } of sessions) {
        write(socket, { err: "error: the server stopped before the command finished\n" });
        write(socket, { exit: 1 });
        socket.end();
      }
      return finished;
    },
  };
}

/** process.umask(mask), returning the previous mask; null where it cannot be set (a worker thread). */
function setUmask(mask: number): number | null {
  try {
    return process.umask(mask);
  } catch {
    return null;
  }
}

function write(socket: net.Socket, message: ControlMessage): void {
  if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(message)}\n`);
}

/** Reads the request line, runs it, writes the answer and ends the connection. */
async function serve(socket: net.Socket, handler: ControlHandler, signal: AbortSignal): Promise<void> {
  socket.on("error", () => undefined); // a client that went away: its answer is dropped
  let request: ControlRequest;
  try {
    request = await readRequest(socket);
  } catch (e) {
    write(socket, { err: `error: ${(e as Error).message}\n` });
    write(socket, { exit: 2 });
    socket.end();
    return;
  }
  const channel: ControlChannel = {
    send: (message) => write(socket, message),
    get closed() {
      return socket.destroyed || !socket.writable;
    },
  };
  let code: number;
  try {
    code = await handler(request, channel, signal);
  } catch (e) {
    write(socket, { err: `error: ${(e as Error).message}\n` });
    code = 1;
  }
  write(socket, { exit: code });
  socket.end();
}

/** The first line of `socket` as a request; what follows it is read and dropped (so a client going away is seen). */
function readRequest(socket: net.Socket): Promise<ControlRequest> {
  return new Promise((resolve, reject) => {
    let size = 0;
    let settled = false;
    const lines = readline.createInterface({ input: socket, crlfDelay: Infinity });
    lines.on("error", () => undefined); // a client that went away: the close below ends the wait
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) finish(new Error(`the request is longer than ${MAX_REQUEST_BYTES} bytes`));
    };
    const finish = (error: Error | null, request?: ControlRequest) => {
      if (settled) return;
      settled = true;
      socket.off("data", onData);
      lines.close();
      socket.resume();
      if (error) reject(error);
      else resolve(request!);
    };
    socket.on("data", onData);
    lines.once("line", (line) => {
      try {
        const parsed = JSON.parse(line) as ControlRequest;
        if (!Array.isArray(parsed.argv) || !parsed.argv.every((a) => typeof a === "string"))
          return finish(new Error("the request has no argv (a list of strings)"));
        finish(null, { argv: parsed.argv, version: String(parsed.version ?? "") });
      } catch {
        finish(new Error("the request is not one line of JSON"));
      }
    });
    lines.once("close", () => finish(new Error("the connection closed before a request was sent")));
  });
}

/** A control socket that cannot be reached: nobody listens on it, or the file is missing. */
export class ControlSocketUnavailableError extends Error {
  constructor(
    readonly file: string,
    readonly code: string,
  ) {
    super(`nothing answers on ${file} (${code})`);
    this.name = "ControlSocketUnavailableError";
  }
}

/**
 * Sends `request` to the control socket `file` and calls `onMessage` with each line of the answer
 * but the last; resolves with the exit code. Rejects with ControlSocketUnavailableError when
 * nobody listens there (no file, or a stale one: ENOENT, ECONNREFUSED), with EACCES's error when
 * the file's permissions refuse this user, and with an Error when the connection ends before the
 * exit code (the server stopped or was killed).
 */
export function callControlSocket(
  file: string,
  request: ControlRequest,
  onMessage: (message: Exclude<ControlMessage, { exit: number }>) => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(file);
    let connected = false;
    let exit: number | null = null;
    socket.once("connect", () => {
      connected = true;
      const lines = readline.createInterface({ input: socket, crlfDelay: Infinity });
      lines.on("error", () => undefined); // the socket's own error is handled below
      lines.on("line", (line) => {
        let message: ControlMessage;
        try {
          message = JSON.parse(line) as ControlMessage;
        } catch {
          return;
        }
        if ("exit" in message) exit = message.exit;
        else onMessage(message);
      });
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (!connected && (e.code === "ENOENT" || e.code === "ECONNREFUSED"))
        reject(new ControlSocketUnavailableError(file, e.code));
      else if (!connected) reject(e);
    });
    socket.once("close", () => {
      if (!connected) return;
      if (exit !== null) resolve(exit);
      else reject(new Error(`the server closed ${file} before the command finished (it stopped or was killed)`));
    });
  });
}
