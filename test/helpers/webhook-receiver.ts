/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every message and
 * verifies its signature with the `standardwebhooks` package, as a user's receiver would.
 * `respond` decides each answer (status, headers, delay); by default 204.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One message as received. */
export interface ReceivedMessage {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** the parsed body ({type, timestamp, data}) */
  payload: {
    type: string;
    timestamp: string;
    data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
  };
  headers: http.IncomingHttpHeaders;
  /** the secrets (of those the receiver was given) whose signature verified */
  verifiedWith: string[];
  /** when it arrived (ms since epoch) */
  at: number;
  /** whether its answer was written (a delayed answer is not, until its delay ends) */
  answered: boolean;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** wait this long before answering (ms) */
  delayMs?: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedMessage[];
  /** secrets to verify with (whsec_...) */
  secrets: string[];
  /** how to answer the next messages */
  respond: (message: ReceivedMessage) => Answer;
  /** resolves once `count` messages arrived (rejects after `timeoutMs`) */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  close(): Promise<void>;
}

/** Verifies `message` with `secret` (standardwebhooks); true when its signature matches. */
export function verifies(secret: string, message: Pick<ReceivedMessage, "id" | "timestamp" | "signature" | "body">) {
  try {
    new Webhook(secret).verify(message.body, {
      "webhook-id": message.id,
      "webhook-timestamp": message.timestamp,
      "webhook-signature": message.signature,
    });
    return true;
  } catch {
    return false;
  }
}

export async function startWebhookReceiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const received: ReceivedMessage[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: WebhookReceiver = {
    url: "",
    received,
    secrets,
    respond: () => ({ status: 204 }),
    waitFor(count, timeoutMs = 20_000) {
      if (received.length >= count) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`webhook receiver: ${received.length} of ${count} messages after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received.slice());
          },
        });
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const message: ReceivedMessage = {
        id: String(req.headers["webhook-id"]),
        timestamp: String(req.headers["webhook-timestamp"]),
        signature: String(req.headers["webhook-signature"]),
        body,
        payload: JSON.parse(body),
        headers: req.headers,
        verifiedWith: [],
        at: Date.now(),
        answered: false,
      };
      message.verifiedWith = receiver.secrets.filter((s) => verifies(s, message));
      const answer = receiver.respond(message);
      received.push(message);
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? "", () => (message.answered = true));
      }, answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/**
 * Calls `read` until `done` holds for its value (every 50 ms, at most `timeoutMs`), and returns that
 * value: for what the service writes after answering (an attempt's outcome is recorded after the
 * receiver answered).
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`not done after ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
