/**
 * Webhook messages over HTTP (docs/webhooks.md "Delivery"): Standard Webhooks v1 signatures (an
 * HMAC-SHA256 by node:crypto), and one POST per attempt with node:http(s) on keep-alive agents,
 * never following a redirect, within a time limit, reading at most the first bytes of the answer.
 *
 * Server-side request forgery: every send goes through request-filtering-agent, which checks every
 * address the host resolves to when the connection is made and connects to that checked address. A
 * `strict` send (live mode, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS) refuses loopback, private,
 * link-local, unique-local, IPv4-mapped and every other non-unicast range; any other send (test mode,
 * or private networks allowed) refuses the link-local ranges only (where clouds serve instance
 * metadata and credentials, 169.254.169.254; nothing legitimate receives webhooks there) and the
 * unspecified address: request-filtering-agent's own checks, plus `guardedLookup` for the addresses
 * a host name resolves to and a check of an IP literal before the request (the agent's
 * `denyIPAddressList` cannot hold an IPv4 and an IPv6 range together: matching an address against
 * the other family's range throws inside it). `addressProblem` / `publicAddressProblem` run the same
 * checks when an endpoint is created, so a URL that cannot work is refused at once with a 400.
 */
import { createHmac, randomBytes } from "node:crypto";
import dns from "node:dns/promises";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";
import { RECORDED_BODY_BYTES, SECRET_BYTES, SECRET_PREFIX, signedContent } from "../domain/webhooks.js";

/** A new signing secret: its bytes (stored sealed) and its text as shown once (`whsec_` + base64). */
export function newWebhookSecret(): { bytes: Buffer; text: string } {
  const bytes = randomBytes(SECRET_BYTES);
  return { bytes, text: secretText(bytes) };
}

/** The text of a secret's bytes: `whsec_` + base64. */
export function secretText(bytes: Buffer): string {
  return `${SECRET_PREFIX}${bytes.toString("base64")}`;
}

/**
 * The `webhook-signature` header of a message: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` with
 * each secret (the current one first), space-separated.
 */
export function webhookSignature(
  secrets: readonly Buffer[],
  messageId: string,
  timestamp: number,
  body: string,
): string {
  const content = signedContent(messageId, timestamp, body);
  return secrets.map((key) => `v1,${createHmac("sha256", key).update(content).digest("base64")}`).join(" ");
}

/**
 * Why `address` (an IP literal) may not receive webhooks, or null when it may: with `publicOnly`
 * only ordinary unicast addresses are allowed (ipaddr.js's `range()`), everything else is refused;
 * without it only the link-local and unspecified addresses are refused.
 */
export function addressProblem(address: string, publicOnly = true): string | null {
  if (!net.isIP(address)) return null;
  const range = ipaddr.process(address).range();
  const refused = publicOnly ? range !== "unicast" : range === "linkLocal" || range === "unspecified";
  return refused ? `resolves to ${address}, a ${range} address` : null;
}

/** node:dns's `lookup` as net.connect calls it (`all` set by Happy Eyeballs, or a single address). */
export type Lookup = (
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * A `lookup` for net.connect that resolves with `resolve` (node:dns's by default) and fails with an
 * `EADDRNOTALLOWED` error when any address is one `addressProblem(address, false)` refuses
 * (link-local, unspecified), so no connection is made to it.
 */
export function guardedLookup(resolve: Lookup = dnsLookup as unknown as Lookup): Lookup {
  return (hostname, options, callback) =>
    resolve(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family);
      const found = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      for (const candidate of found) {
        const problem = addressProblem(candidate.address, false);
        if (problem)
          return callback(Object.assign(new Error(`${hostname} ${problem}`), { code: "EADDRNOTALLOWED" }), address);
      }
      callback(null, address, family);
    });
}

/**
 * Why the host of `url` may not receive webhooks (it is, or resolves to, an address
 * `addressProblem` refuses; or, with `publicOnly`, it does not resolve), or null.
 */
export async function publicAddressProblem(url: string, publicOnly = true): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  if (net.isIP(host)) return addressProblem(host, publicOnly);
  // a test-mode host that does not resolve yet (a local name) is not refused: its attempts will say so
  if (!publicOnly) return null;
  let addresses: { address: string }[];
  try {
    addresses = await dns.lookup(host, { all: true });
  } catch (e) {
    return `its host ${host} does not resolve (${(e as NodeJS.ErrnoException).code ?? "error"})`;
  }
  for (const { address } of addresses) {
    const problem = addressProblem(address, publicOnly);
    if (problem) return `its host ${host} ${problem}`;
  }
  return null;
}

/** What one attempt got. */
export interface AttemptResult {
  /** the answer's status, or null when none came */
  statusCode: number | null;
  durationMs: number;
  /** why it failed (none for a 2xx) */
  error: string | null;
  /** the first RECORDED_BODY_BYTES of the answer, as text */
  body: string | null;
  /** the answer's Retry-After header */
  retryAfter: string | null;
}

export interface WebhookHttpOptions {
  /** WEBHOOK_TIMEOUT_SECONDS in ms: the whole attempt, connection to answer */
  timeoutMs: number;
  /** keep-alive connections per host and agent (the per-endpoint concurrency bound) */
  socketsPerHost: number;
}

/** Bytes of an answer read before the rest is discarded with its connection. */
const MAX_READ_BYTES = 64 * 1024;

/** Sends webhook messages; `close` ends its keep-alive connections. */
export class WebhookHttp {
  private readonly agents: Record<"strict" | "open", { http: http.Agent; https: https.Agent }>;

  constructor(private readonly options: WebhookHttpOptions) {
    const agentOptions = {
      keepAlive: true,
      maxSockets: options.socketsPerHost,
      maxFreeSockets: options.socketsPerHost,
    };
    // private networks allowed: every address but the link-local ranges and the unspecified address
    const open = { allowPrivateIPAddress: true, allowMetaIPAddress: false, lookup: guardedLookup() };
    this.agents = {
      strict: {
        http: new RequestFilteringHttpAgent({ ...agentOptions, allowPrivateIPAddress: false }),
        https: new RequestFilteringHttpsAgent({ ...agentOptions, allowPrivateIPAddress: false }),
      },
      open: {
        http: new RequestFilteringHttpAgent({ ...open, ...agentOptions }),
        https: new RequestFilteringHttpsAgent({ ...open, ...agentOptions }),
      },
    };
  }

  /**
   * POSTs `body` to `url` with `headers`; `strict` refuses non-public addresses (see the module's
   * comment). Resolves with what happened, never rejects: a refused address, a timeout or a reset
   * is an AttemptResult with its `error` and no status.
   */
  send(url: string, headers: Record<string, string>, body: string, strict: boolean): Promise<AttemptResult> {
    const started = performance.now();
    const target = new URL(url);
    const secure = target.protocol === "https:";
    const agent = this.agents[strict ? "strict" : "open"][secure ? "https" : "http"];
    const payload = Buffer.from(body);
    // an IP literal is never looked up: the open agents' guard checks it here
    const literal = target.hostname.replace(/^\[(.*)\]$/, "$1");
    const refused = strict ? null : addressProblem(literal, false);
    if (refused)
      return Promise.resolve({
        statusCode: null,
        durationMs: 0,
        error: `address refused: it ${refused}`,
        body: null,
        retryAfter: null,
      });
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<AttemptResult, "durationMs">) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, durationMs: Math.round(performance.now() - started) });
      };
      const request = (secure ? https : http).request(target, {
        method: "POST",
        agent,
        headers: { ...headers, "content-type": "application/json", "content-length": String(payload.length) },
      });
      const timer = setTimeout(() => {
        request.destroy(new Error(`no answer within ${this.options.timeoutMs / 1000} s`));
      }, this.options.timeoutMs);
      request.on("error", (e) => finish({ statusCode: null, error: describeError(e), body: null, retryAfter: null }));
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          if (read < RECORDED_BODY_BYTES) chunks.push(chunk);
          read += chunk.length;
          // an answer this long is not read to its end: its connection is dropped instead
          if (read > MAX_READ_BYTES) response.destroy();
        });
        const done = () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).subarray(0, RECORDED_BODY_BYTES).toString("utf8");
          const ok = status >= 200 && status < 300;
          finish({
            statusCode: status,
            error: ok ? null : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`,
            body: text,
            retryAfter: (response.headers["retry-after"] as string | undefined) ?? null,
          });
        };
        response.on("end", done);
        response.on("close", done);
        response.on("error", done);
      });
      request.end(payload);
    });
  }

  /** Ends every keep-alive connection. */
  close(): void {
    for (const pair of Object.values(this.agents)) {
      pair.http.destroy();
      pair.https.destroy();
    }
  }
}

/** A connection error as one line. */
function describeError(e: Error & { code?: string }): string {
  const message = e.message.replace(/\s+/g, " ").slice(0, 300);
  return e.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
