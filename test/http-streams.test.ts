/**
 * Streamed answers in the HTTP server (src/http-server.ts `writeStream`; docs/webhooks.md "The live
 * event stream (GraphQL)"): a Server-Sent Events answer is written as it comes, the stream is read
 * only as fast as the client takes it (a client that stops reading holds the stream back instead of
 * filling the server's memory), a client that takes nothing for the stall time is disconnected and
 * the stream cancelled, and one that goes away cancels it too. Over real TCP connections.
 */
import fs from "node:fs";
import net from "node:net";
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpServer, listen } from "../src/http-server.js";

const CHUNK = new Uint8Array(256 * 1024).fill(120); // 256 KiB of "x"

/** A server whose every answer is an endless event stream of CHUNKs, counting what it was asked for. */
async function streamingServer(stallMs: number) {
  const state = { pulls: 0, cancelled: false };
  const server = createHttpServer(
    {
      handle: async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull(controller) {
              state.pulls++;
              controller.enqueue(CHUNK);
            },
            cancel() {
              state.cancelled = true;
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        ),
    },
    { streamStallMs: stallMs },
  );
  const url = await listen(server, 0, "127.0.0.1");
  return { server, state, port: Number(new URL(url).port) };
}

/** A raw connection that sends a GET and collects the bytes it reads. */
async function connect(port: number) {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = 0;
  socket.on("data", (c: Buffer) => (received += c.length));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write("GET /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
  return { socket, closed, received: () => received };
}

/**
 * The most bytes a paused loopback connection can hold in flight: what the kernel lets the receiver's buffer grow to
 * (tcp_rmem's maximum, autotuned) and the sender's (tcp_wmem's), each counted up to twice (the kernel charges a
 * buffer's bookkeeping against it too), plus 16 MiB of node's own stream buffers. 64 MiB where /proc does not say
 * (a machine with tcp_rmem's maximum at 32 MiB held 69 MiB: a fixed 64 MiB bound failed there).
 */
function bufferedAtMost(): number {
  const max = (name: string) => Number(fs.readFileSync(`/proc/sys/net/ipv4/${name}`, "utf8").trim().split(/\s+/)[2]);
  try {
    return 2 * (max("tcp_rmem") + max("tcp_wmem")) + 16 * 1024 * 1024;
  } catch {
    return 64 * 1024 * 1024;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

describe("a streamed answer", () => {
  it("is read only as fast as the client takes it, and cancelled when the client goes away", async () => {
    const s = await streamingServer(60_000);
    server = s.server;
    const client = await connect(s.port);
    await expect.poll(() => client.received()).toBeGreaterThan(CHUNK.length);
    client.socket.pause();
    // the kernel's buffers fill, then the server stops asking the stream for more
    let before = -1;
    while (before !== s.state.pulls) {
      before = s.state.pulls;
      await sleep(300);
    }
    const held = s.state.pulls;
    await sleep(500);
    expect(s.state.pulls).toBe(held);
    // no more than the connection's buffers can hold, not the endless stream
    expect(held * CHUNK.length).toBeLessThan(bufferedAtMost());
    // reading again, the stream goes on
    client.socket.resume();
    await expect.poll(() => s.state.pulls).toBeGreaterThan(held + 10);
    expect(s.state.cancelled).toBe(false);
    client.socket.destroy();
    await expect.poll(() => s.state.cancelled).toBe(true);
  });

  it("disconnects a client that takes nothing for the stall time, and cancels the stream", async () => {
    const s = await streamingServer(300);
    server = s.server;
    const client = await connect(s.port);
    await expect.poll(() => client.received()).toBeGreaterThan(0);
    client.socket.pause();
    await expect.poll(() => s.state.cancelled, { timeout: 20_000 }).toBe(true);
    client.socket.resume();
    await client.closed;
    const pulls = s.state.pulls;
    await sleep(300);
    expect(s.state.pulls).toBe(pulls);
  });
});
