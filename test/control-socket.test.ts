/**
 * The control socket's transport (src/infra/control-socket.ts) over real Unix sockets: the request
 * line and the answer's lines in order with the exit code, a malformed request, the file's mode, a
 * stale file replaced at listen, and the stop: no new connection, the handlers' signal aborted, a
 * command that finishes within the grace period answered in full, one that does not told the server
 * stopped. What the server runs with it (the commands) is tested with real processes in
 * test/integration/control-socket.test.ts.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  callControlSocket,
  ControlSocketUnavailableError,
  listenControlSocket,
  type ControlHandler,
  type ControlMessage,
} from "../src/infra/control-socket.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-sock-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const socketFile = () => path.join(dir, `s${n++}.sock`);

async function call(file: string, argv: string[]): Promise<{ code: number; messages: ControlMessage[] }> {
  const messages: ControlMessage[] = [];
  const code = await callControlSocket(file, { argv, version: "1.0.0" }, (m) => messages.push(m));
  return { code, messages };
}

describe("control socket", () => {
  it("carries the request and the answer's lines in order, then the exit code; the file is 0600", async () => {
    const file = socketFile();
    fs.writeFileSync(file, "left by a killed server"); // a stale file: replaced
    const seen: unknown[] = [];
    const server = await listenControlSocket(file, async (request, channel) => {
      seen.push(request);
      channel.send({ out: "line 1\n" });
      channel.send({ err: "a note\n" });
      channel.send({ progress: [1, 2], format: "{value}/{total}" });
      channel.send({ progressEnd: true });
      channel.send({ out: "línea 2 ✓\n" });
      return 3;
    });
    const stat = fs.statSync(file);
    expect([stat.isSocket(), (stat.mode & 0o777).toString(8)]).toEqual([true, "600"]);
    expect(await call(file, ["api-key", "list", "--json"])).toEqual({
      code: 3,
      messages: [
        { out: "line 1\n" },
        { err: "a note\n" },
        { progress: [1, 2], format: "{value}/{total}" },
        { progressEnd: true },
        { out: "línea 2 ✓\n" },
      ],
    });
    expect(seen).toEqual([{ argv: ["api-key", "list", "--json"], version: "1.0.0" }]);
    expect(await server.close(1000)).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("answers a malformed request with exit code 2; a handler's error is an error line and exit code 1", async () => {
    const file = socketFile();
    const server = await listenControlSocket(file, async (request) => {
      throw new Error(`cannot run ${request.argv.join(" ")}`);
    });
    expect(await call(file, ["boom"])).toEqual({ code: 1, messages: [{ err: "error: cannot run boom\n" }] });
    const raw = await new Promise<string>((resolve) => {
      const socket = net.connect(file, () => socket.write("not json\n"));
      let text = "";
      socket.on("data", (d) => (text += d));
      socket.on("close", () => resolve(text));
    });
    expect(raw).toBe('{"err":"error: the request is not one line of JSON\\n"}\n{"exit":2}\n');
    await server.close(1000);
  });

  it("a closed socket is unavailable: ENOENT without its file, ECONNREFUSED with a stale one", async () => {
    const file = socketFile();
    await expect(call(file, ["x"])).rejects.toMatchObject({ name: "ControlSocketUnavailableError", code: "ENOENT" });
    // a socket file nobody listens on: what kill -9 of a server leaves
    const killed = spawn(process.execPath, [
      "-e",
      `require("node:net").createServer().listen(${JSON.stringify(file)}, () => console.log("listening"))`,
    ]);
    await new Promise((r) => killed.stdout.once("data", r));
    killed.kill("SIGKILL");
    await new Promise((r) => killed.once("exit", r));
    expect(fs.statSync(file).isSocket()).toBe(true);
    const error = await call(file, ["x"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ControlSocketUnavailableError);
    expect((error as ControlSocketUnavailableError).code).toBe("ECONNREFUSED");
  });

  it("stopping: no new connection, the signal aborted, a command within the grace period answered", async () => {
    const file = socketFile();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let aborted = false;
    let started!: () => void;
    const handlerStarted = new Promise<void>((r) => (started = r));
    const handler: ControlHandler = async (_request, channel, signal) => {
      channel.send({ out: "started\n" });
      signal.addEventListener("abort", () => {
        aborted = true;
        release();
      });
      started();
      await released;
      channel.send({ out: "finished after the stop began\n" });
      return 0;
    };
    const server = await listenControlSocket(file, handler);
    const running = call(file, ["billing", "run"]);
    // the command is running (its handler listens to the signal): a connection counted by running() may still be
    // sending its request, and a handler called after the stop began gets a signal already aborted
    await handlerStarted;
    expect(server.running()).toBe(1);
    const closed = server.close(5000);
    expect(fs.existsSync(file), "the file goes at once").toBe(false);
    await expect(call(file, ["x"])).rejects.toBeInstanceOf(ControlSocketUnavailableError);
    expect(await closed).toBe(true);
    expect(aborted).toBe(true);
    expect(await running).toEqual({
      code: 0,
      messages: [{ out: "started\n" }, { out: "finished after the stop began\n" }],
    });
  });

  it("stopping: a command still running after the grace period is told the server stopped", async () => {
    const file = socketFile();
    const server = await listenControlSocket(file, async (_request, channel) => {
      channel.send({ out: "started\n" });
      await new Promise((r) => setTimeout(r, 2000));
      return 0;
    });
    const running = call(file, ["db", "copy"]);
    while (server.running() === 0) await new Promise((r) => setTimeout(r, 10));
    expect(await server.close(100)).toBe(false);
    expect(await running).toEqual({
      code: 1,
      messages: [{ out: "started\n" }, { err: "error: the server stopped before the command finished\n" }],
    });
  });
});
