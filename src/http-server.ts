/**
 * The Node HTTP server around an app's `handle` (fetch API Request/Response): body limit, graceful
 * drain, listen, security headers on the answers it writes itself. Its own module, with nothing but
 * node:http, infra/http-security.ts (no dependencies) and `@whatwg-node/fetch` (the fetch API Yoga
 * itself uses; about 30 ms to load), so `main.ts` can bind the port before the app's modules (GraphQL
 * schema, Prisma client) have loaded.
 *
 * The request each answer starts from is whatwg-node's `Request` (what Yoga's own node integration
 * builds, `@whatwg-node/server`): it reads node's header object as it is and keeps the body as the
 * Buffer read here, where Node's own `Request` (undici) copies the headers and wraps the body in a web
 * stream with an abort signal: about 20 µs against 1 µs a request (docs/performance.md "After: REST
 * operations in process, and the HTTP layer without extra fetch objects").
 *
 * Answers are written whole, but streams (Server-Sent Events of GraphQL subscriptions), which are
 * written chunk by chunk as they come (`writeStream`): no timeout applies to how
 * long one lasts, the client's reading pace holds the stream back (a client that takes nothing for
 * STREAM_STALL_MS is disconnected), and a client that goes away cancels it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Request as FetchRequest } from "@whatwg-node/fetch";
import { securedHead } from "./infra/http-security.js";

/** The socket's peer address of each request this server made (read with `socketAddress`). */
const peers = new WeakMap<Request, string>();

/**
 * The address of the peer that sent `request` over its TCP connection (as node:http saw it, IPv4
 * addresses without the `::ffff:` prefix), or "unknown" for a request that did not come through
 * `createHttpServer` (tests calling `app.handle` directly).
 */
export function socketAddress(request: Request): string {
  return peers.get(request) ?? "unknown";
}

/** What the server calls for each request (server.ts `App` has it). */
export interface RequestHandler {
  handle(request: Request): Promise<Response>;
}

/** Options of createHttpServer. */
export interface HttpServerOptions {
  /** how long a stream's client may take nothing before it is disconnected (ms; default STREAM_STALL_MS) */
  streamStallMs?: number;
}

/**
 * Node http server around `app.handle` (fetch API Request/Response). While the server is closing
 * (`drainHttpServer`), answers carry `Connection: close`, so keep-alive clients reconnect elsewhere.
 *
 * HEAD is answered here for every path, as RFC 9110 says: the app gets the request as a GET, and
 * the client the GET's status and headers without its body. Every answer says its Content-Length
 * (the body is whole here), a HEAD's the length its GET's body has; but a stream (`text/event-stream`,
 * the GraphQL event stream), written as it comes, chunk by chunk, whose length is not known.
 */
export function createHttpServer(app: RequestHandler, options: HttpServerOptions = {}): http.Server {
  const stallMs = options.streamStallMs ?? STREAM_STALL_MS;
  const server = http.createServer(async (req, res) => {
    try {
      const host = req.headers.host ?? "localhost";
      const url = `http://${host}${req.url ?? "/"}`;
      const head = req.method === "HEAD";
      const method = head ? "GET" : (req.method ?? "GET");
      const body = method === "GET" ? undefined : await readBody(req);
      const request: Request = new FetchRequest(url, {
        method,
        headers: req.headers as Record<string, string>,
        body: body as unknown as BodyInit | undefined,
      });
      peers.set(request, (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:/, ""));
      const response = await app.handle(request);
      // every answer over HTTP carries the security headers (infra/http-security.ts)
      const fields = securedHead(response.headers);
      if (!server.listening) fields.connection = "close";
      const stream = response.body && isStream(response.headers) ? response.body : null;
      if (stream) {
        // a reverse proxy (nginx) must pass a stream on as it comes, not buffer it; its length is unknown
        fields["x-accel-buffering"] = "no";
        res.writeHead(response.status, fields);
        if (head) {
          await response.body?.cancel().catch(() => undefined);
          res.end();
        } else await writeStream(stream, res, stallMs);
        return;
      }
      const content = Buffer.from(await response.arrayBuffer());
      // a 304 or 204 has no body, and no length of one (a 304's would be the 200's)
      if (response.status !== 304 && response.status !== 204) fields["content-length"] = String(content.length);
      res.writeHead(response.status, fields);
      res.end(head ? undefined : content);
    } catch (e) {
      if (e instanceof BodyTooLargeError) {
        res.writeHead(413, securedHead(new Headers({ "content-type": "application/json", connection: "close" })));
        // in the error shape of the surface: GraphQL's on /graphql (docs/graphql.md "Errors"), REST's elsewhere
        const error = { code: "payload_too_large", message: `The body is larger than ${MAX_BODY_BYTES} bytes` };
        const graphql = (req.url ?? "").startsWith("/graphql");
        res.end(
          JSON.stringify(
            graphql ? { errors: [{ message: error.message, extensions: { code: error.code } }] } : { error },
          ),
        );
        return;
      }
      res.writeHead(500, securedHead(new Headers({ "content-type": "application/json" })));
      res.end(JSON.stringify({ error: { code: "internal_error", message: "Unexpected error." } }));
    }
  });
  return server;
}

/**
 * Stops `server` gracefully: no new connections, idle keep-alive connections closed at once,
 * requests in flight answered (their connections closed after the answer) for up to `graceMs`;
 * after that the remaining connections are closed. Resolves true when everything in flight
 * finished within `graceMs`.
 */
export async function drainHttpServer(server: http.Server, graceMs: number): Promise<boolean> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // a connection idle now is closed by close(); one busy now becomes idle after its answer
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  try {
    const drained = await Promise.race([closed.then(() => true as const), late]);
    if (!drained) {
      server.closeAllConnections();
      await closed;
    }
    return drained;
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}

/**
 * A client of a stream that takes no bytes for this long while the server has some to send is
 * disconnected (ms): a stalled reader must not hold its connection, and what waits for it, forever.
 */
export const STREAM_STALL_MS = 30_000;

/** True for an answer written as it comes: Server-Sent Events. */
function isStream(headers: Headers): boolean {
  return headers.get("content-type")?.startsWith("text/event-stream") ?? false;
}

/**
 * Writes `body` to `res` chunk by chunk as the stream yields them, reading the next one only once
 * the client has taken the last (Node's `drain`), so a slow client holds the stream back instead
 * of filling memory; one that takes nothing for `stallMs` is disconnected. When the client goes
 * away the stream is cancelled (for a GraphQL subscription: its source stops).
 */
async function writeStream(body: ReadableStream<Uint8Array>, res: http.ServerResponse, stallMs: number): Promise<void> {
  const reader = body.getReader();
  // the connection closed (the client went away, or it was destroyed here): the stream stops; a no-op once it ended
  res.once("close", () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value) && !(await drained(res, stallMs))) {
        res.destroy();
        return;
      }
    }
    res.end();
  } catch {
    // the stream failed: the client sees its answer cut short
    res.destroy();
  }
}

/** Resolves true once `res` drained, false when it closed first or `ms` passed. */
function drained(res: http.ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (ok: boolean) => {
      clearTimeout(timer);
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => settle(true);
    const onClose = () => settle(false);
    const timer = setTimeout(() => settle(false), ms);
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}

/** Largest request body accepted; a larger one is answered 413 `payload_too_large`. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

class BodyTooLargeError extends Error {}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        // stop keeping the body, let the rest drain so the 413 can be written
        req.off("data", onData);
        req.resume();
        reject(new BodyTooLargeError());
      } else chunks.push(c);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * Listens on `port` (0 = random); resolves with the server's base URL. Rejects with the listen
 * error (EADDRINUSE: the port is taken; EACCES: not allowed; EADDRNOTAVAIL: no such interface).
 */
export async function listen(server: http.Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
}
