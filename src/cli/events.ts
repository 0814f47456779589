/**
 * `events` commands of the command line (wired into src/cli.ts; docs/webhooks.md "Local development:
 * events listen"):
 *   events listen --api-key sk_test_... [--url http://localhost:3000] [--events invoice.finalized,payment.failed]
 *                 [--forward-to http://localhost:4000/hooks] [--secret whsec_...]
 *       prints each event of the key's organization and mode as it commits, one JSON line each on stdout, as the
 *       REST API prints an event; with --forward-to, POSTs it there as a Standard Webhooks message signed with the
 *       secret it prints on stderr when it starts, and prints each forward's answer on stderr.
 *
 * It talks to a running server over HTTP only (the GraphQL `events` subscription over Server-Sent Events), never
 * to the database, so it works beside the server on either database. When the connection breaks or the server
 * ends the stream (a restart), it says so on stderr and subscribes again, waiting 1 s, then twice as long each
 * time up to 30 s; events committed while it was away are not replayed. A refused key (401) or a request the server
 * refuses (a 4xx other than 429) ends it with exit code 1 and the server's message. ^C (SIGINT) or SIGTERM ends it
 * with exit code 0. The modules it needs are imported when it runs, so building the command tree stays cheap.
 */
import { Command } from "commander";

/** Where the command prints: `out` the JSON lines, `notes` what is meant for a person. */
export interface CommandOutput {
  write(text: string): unknown;
}

/** The subscription `events listen` sends. */
export const LISTEN_DOCUMENT =
  "subscription Listen($types: [EventType!]) { events(types: $types) { id type created testMode data } }";

/** Waits before subscribing again: first this long (ms), doubling up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
/** A forward without an answer by then failed (ms): the server's default WEBHOOK_TIMEOUT_SECONDS. */
const FORWARD_TIMEOUT_MS = 15_000;

/** A mistake the user must fix (the command line, the key, the URL): its message alone is printed, exit code 1. */
export class ListenError extends Error {
  override name = "UsageError";
}

/** An event as the subscription answers it. */
interface StreamedEvent {
  id: string;
  type: string;
  created: string;
  testMode: boolean;
  /** JSON text, decimals exact */
  data: string;
}

/** One Server-Sent Events message. */
interface SseMessage {
  event: string;
  data: string;
}

/** The messages of a Server-Sent Events body as they come (comments, such as keep-alive pings, skipped). */
export async function* serverSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (event !== "message" || data.length > 0) yield { event, data: data.join("\n") };
    }
  }
}

/** Why a stream stopped: the listener subscribes again after `retry`, stops with `fatal`. */
type Stop = { retry: string; afterMs?: number } | { fatal: string };

/** The first error of a GraphQL answer (body text), as `message (code)`, and its code. */
function graphqlError(text: string): { message: string; code?: string } {
  try {
    const parsed = JSON.parse(text) as { errors?: { message?: string; extensions?: { code?: string } }[] };
    const error = parsed.errors?.[0];
    if (error?.message) return { message: error.message, code: error.extensions?.code };
  } catch {
    // not JSON: the text itself
  }
  return { message: text.slice(0, 300) || "no message" };
}

/**
 * The first GraphQL error of an answer that is not a stream: its body is JSON, or (a request refused
 * before its stream opened, such as a 401) Server-Sent Events whose first `next` holds the errors.
 */
async function answerError(res: Response): Promise<{ message: string; code?: string }> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return graphqlError(text);
  const data = /^data: (\{.*\})$/m.exec(text.replace(/\r\n?/g, "\n"));
  return graphqlError(data ? data[1] : text);
}

/** `--events` as the subscription's `types` (GraphQL enum names), or null for every type. Throws ListenError. */
function eventTypes(list: string | undefined, known: readonly string[]): string[] | null {
  if (list === undefined) return null;
  const types = list
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types.filter((t) => !known.includes(t));
  if (types.length === 0 || unknown.length > 0)
    throw new ListenError(
      "--events must list event types separated by commas " +
        `(${unknown.length ? `unknown: ${unknown.join(", ")}; ` : ""}` +
        `known: ${known.join(", ")})`,
    );
  // GraphQL names cannot hold a dot: `invoice.finalized` is `invoice_finalized` (graphql/types/event.ts eventTypeName)
  return types.map((t) => t.replace(/\./g, "_"));
}

/** An http(s) URL option, or a ListenError naming it. */
function httpUrl(value: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ListenError(`${option} must be an absolute http(s) URL, got ${value}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ListenError(`${option} must be an http(s) URL, got ${value}`);
  return url;
}

interface ListenOptions {
  url: string;
  apiKey?: string;
  events?: string;
  forwardTo?: string;
  secret?: string;
}

/**
 * The `events` command. `out` receives the JSON lines (tests pass a buffer), `notes` the lines meant for a person
 * (stderr by default); `signal` stops listening (default: SIGINT and SIGTERM).
 */
export function eventsCommands(
  out: CommandOutput = process.stdout,
  notes: CommandOutput = process.stderr,
  signal?: AbortSignal,
): Command {
  const command = new Command("events").description("events of the running service (docs/webhooks.md)");
  command
    .command("listen")
    .description(
      "print each event of the API key's organization and mode as it commits (one JSON line each), and with " +
        "--forward-to send it to a local URL as a signed webhook; talks to the running server over HTTP",
    )
    .option("--url <url>", "base URL of the running service", "http://localhost:3000")
    .option("--api-key <key>", "an API key (sk_test_... or sk_live_...); default: the BILLING_API_KEY variable")
    .option("--events <types>", "only these event types, separated by commas (invoice.finalized,payment.failed)")
    .option("--forward-to <url>", "POST each event to this URL as a Standard Webhooks message")
    .option("--secret <whsec_...>", "sign forwarded messages with this secret instead of a new one each run")
    .action((options: ListenOptions) => listen(options, { out, notes, signal }));
  return command;
}

/** The modules `events listen` loads when it runs (building the command tree stays cheap). */
async function listenModules() {
  const [{ EVENT_TYPE_NAMES }, { messageBody, SECRET_PREFIX }, { newWebhookSecret, webhookSignature, WebhookHttp }] =
    await Promise.all([
      import("../domain/events.js"),
      import("../domain/webhooks.js"),
      import("../infra/webhook-http.js"),
    ]);
  return { EVENT_TYPE_NAMES, messageBody, SECRET_PREFIX, newWebhookSecret, webhookSignature, WebhookHttp };
}

type ListenModules = Awaited<ReturnType<typeof listenModules>>;

/** A webhook signing secret: its bytes (24 to 64) and its text (`whsec_` + base64). */
interface SigningSecret {
  bytes: Buffer;
  text: string;
}

/** What `events listen` subscribes to and where it forwards, checked from its options. */
interface ListenTarget {
  apiKey: string;
  /** --url */
  base: URL;
  /** the service's /graphql under `base` */
  endpoint: string;
  /** the subscription's `types` (GraphQL enum names), null for every type */
  types: string[] | null;
  /** --forward-to, or null: no forwarding */
  forwardTo: string | null;
  /** the secret forwards are signed with (--secret, else a new one); null without --forward-to */
  secret: SigningSecret | null;
}

/**
 * The target of `options`, checked in the order the options are named in the errors: the API key (--api-key, else
 * BILLING_API_KEY), --url, --events, --forward-to, --secret. Throws ListenError.
 */
function listenTarget(options: ListenOptions, modules: ListenModules): ListenTarget {
  const apiKey = options.apiKey ?? process.env.BILLING_API_KEY;
  if (!apiKey) throw new ListenError("an API key is required: --api-key sk_test_... or the BILLING_API_KEY variable");
  const base = httpUrl(options.url, "--url");
  const endpoint = new URL("graphql", base.href.endsWith("/") ? base.href : `${base.href}/`).href;
  const types = eventTypes(options.events, modules.EVENT_TYPE_NAMES);
  const forwardTo = options.forwardTo === undefined ? null : httpUrl(options.forwardTo, "--forward-to").href;
  const secret = forwardTo ? signingSecret(options.secret, modules) : null;
  return { apiKey, base, endpoint, types, forwardTo, secret };
}

/** --secret as a signing secret (ListenError unless `whsec_` and 24 to 64 bytes in base64), else a new secret. */
function signingSecret(given: string | undefined, modules: ListenModules): SigningSecret {
  if (given === undefined) return modules.newWebhookSecret();
  const bytes = given.startsWith(modules.SECRET_PREFIX)
    ? Buffer.from(given.slice(modules.SECRET_PREFIX.length), "base64")
    : Buffer.alloc(0);
  if (bytes.length < 24 || bytes.length > 64)
    throw new ListenError("--secret must be whsec_ followed by 24 to 64 bytes in base64");
  return { bytes, text: given };
}

/** Forwards events to --forward-to as signed webhooks, one at a time in the order they came. */
interface Forwarder {
  /** queues `event` (of REST type `type`) for forwarding; its answer is noted when it comes */
  forward(event: StreamedEvent, type: string): void;
  /** waits for the forwards queued, then closes the HTTP client */
  close(): Promise<void>;
}

/**
 * The forwarder to `forwardTo`: each event POSTed as a Standard Webhooks message signed with `secret`, and each
 * answer noted on `notes` as `<-- [status] POST url type id (ms)` (status `failed` without an answer, with the
 * reason; a forward gives up after FORWARD_TIMEOUT_MS).
 */
function eventForwarder(
  to: { forwardTo: string; secret: SigningSecret },
  notes: CommandOutput,
  modules: ListenModules,
): Forwarder {
  const { forwardTo, secret } = to;
  const http = new modules.WebhookHttp({ timeoutMs: FORWARD_TIMEOUT_MS, socketsPerHost: 1 });
  let forwarding: Promise<void> = Promise.resolve();
  const forward = (event: StreamedEvent, type: string) => {
    const body = modules.messageBody(type, new Date(event.created), event.data);
    forwarding = forwarding.then(async () => {
      const timestamp = Math.floor(Date.now() / 1000);
      const result = await http.send(
        forwardTo,
        {
          "user-agent": "billing-cli-events-listen/1",
          "webhook-id": event.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": modules.webhookSignature([secret.bytes], event.id, timestamp, body),
        },
        body,
        false,
      );
      const status = result.statusCode === null ? "failed" : String(result.statusCode);
      notes.write(
        `<-- [${status}] POST ${forwardTo} ${type} ${event.id} (${result.durationMs} ms)` +
          `${result.error && result.statusCode === null ? `: ${result.error}` : ""}\n`,
      );
    });
  };
  const close = async () => {
    await forwarding;
    http.close();
  };
  return { forward, close };
}

/** `event` (of REST type `type`) as one JSON line on `out`, as the REST API prints an event. */
function printEvent(out: CommandOutput, event: StreamedEvent, type: string): void {
  // the event as the REST API prints it (rest/printer.ts: instants with an explicit +00:00), data as it is stored
  const created = event.created.replace(/Z$/, "+00:00");
  out.write(
    `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(type)},"created":${JSON.stringify(created)},` +
      `"test_mode":${event.testMode},"data":${event.data}}\n`,
  );
}

/** One subscription of `events listen`: where, with what, and what to do as it streams. */
interface Subscription {
  endpoint: string;
  apiKey: string;
  types: string[] | null;
  /** aborts the request and the stream (^C) */
  signal: AbortSignal;
  /** the stream opened (a 200 of Server-Sent Events) */
  onOpen(): void;
  /** an event came */
  onEvent(event: StreamedEvent): void;
}

/**
 * Opens the subscription: its answer when it is a stream, else why not: a retry (the server unreachable, a 429 or
 * 5xx, waiting its Retry-After when it gives one, in ms) or a fatal stop (a refused key, any other answer).
 */
async function subscribe(sub: Subscription): Promise<Response | Stop> {
  let res: Response;
  try {
    res = await fetch(sub.endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        authorization: `Bearer ${sub.apiKey}`,
      },
      body: JSON.stringify({ query: LISTEN_DOCUMENT, variables: { types: sub.types } }),
      signal: sub.signal,
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { retry: cause?.code ?? cause?.message ?? (e as Error).message };
  }
  const type = res.headers.get("content-type") ?? "";
  if (res.status === 401) return { fatal: `the server refused the API key (401): ${(await answerError(res)).message}` };
  if (res.status === 429 || res.status >= 500) {
    const wait = Number(res.headers.get("retry-after"));
    await res.body?.cancel();
    return { retry: `HTTP ${res.status}`, afterMs: Number.isFinite(wait) && wait > 0 ? wait * 1000 : undefined };
  }
  if (res.status !== 200 || !type.startsWith("text/event-stream"))
    return {
      fatal:
        `${sub.endpoint} answered ${res.status} ${type || "without a content type"}: ` +
        `${(await answerError(res)).message} (is --url the billing service?)`,
    };
  return res;
}

/** One subscription, until it stops; what to do next. */
async function streamOnce(sub: Subscription): Promise<Stop> {
  const res = await subscribe(sub);
  if ("retry" in res || "fatal" in res) return res;
  sub.onOpen();
  try {
    for await (const message of serverSentEvents(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (message.event === "complete") return { retry: "the server ended the stream" };
      if (message.event !== "next") continue;
      const result = JSON.parse(message.data) as { data?: { events?: StreamedEvent }; errors?: unknown };
      if (result.errors) {
        const { message: why, code } = graphqlError(message.data);
        // the server shutting down, or a stream that fell behind: subscribe again
        if (code === "service_unavailable") return { retry: why };
        return { fatal: `the server refused the subscription: ${why}${code ? ` (${code})` : ""}` };
      }
      if (result.data?.events) sub.onEvent(result.data.events);
    }
  } catch (e) {
    if (sub.signal.aborted) return { retry: "stopped" };
    return { retry: `the connection broke (${(e as Error).message})` };
  }
  return { retry: "the connection closed" };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/**
 * `events listen`: subscribes, prints (and forwards) each event, and subscribes again whenever the stream stops,
 * waiting RECONNECT_MIN_MS, doubling up to RECONNECT_MAX_MS (or the server's Retry-After), until `io.signal` aborts
 * (default: SIGINT or SIGTERM). Throws ListenError for a bad option or a fatal stop; waits for the forwards queued.
 */
async function listen(
  options: ListenOptions,
  io: { out: CommandOutput; notes: CommandOutput; signal?: AbortSignal },
): Promise<void> {
  const { out, notes, signal: given } = io;
  const modules = await listenModules();
  const target = listenTarget(options, modules);
  const { base, forwardTo, secret } = target;
  const restType = (type: string) => modules.EVENT_TYPE_NAMES.find((t) => t.replace(/\./g, "_") === type) ?? type;

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (given) given.addEventListener("abort", onSignal, { once: true });
  else {
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  // forwards go one at a time, in the order the events came
  const forwarder = forwardTo && secret ? eventForwarder({ forwardTo, secret }, notes, modules) : null;

  let connected = false;
  /** whether the last subscription opened (the wait before the next one starts again from RECONNECT_MIN_MS) */
  let streamed = false;
  const subscription: Subscription = {
    endpoint: target.endpoint,
    apiKey: target.apiKey,
    types: target.types,
    signal: stop.signal,
    onOpen: () => {
      streamed = true;
      if (!connected)
        notes.write(
          secret
            ? `Ready! Your webhook signing secret is ${secret.text} (^C to quit)\n`
            : `Ready! Listening for events (^C to quit)\n`,
        );
      else notes.write(`Reconnected to ${base.origin}.\n`);
      connected = true;
    },
    onEvent: (event) => {
      const type = restType(event.type);
      printEvent(out, event, type);
      forwarder?.forward(event, type);
    },
  };

  let delay = RECONNECT_MIN_MS;
  try {
    while (!stop.signal.aborted) {
      streamed = false;
      const outcome = await streamOnce(subscription);
      if (stop.signal.aborted) break;
      if ("fatal" in outcome) throw new ListenError(outcome.fatal);
      if (streamed) delay = RECONNECT_MIN_MS;
      const wait = outcome.afterMs ?? delay;
      notes.write(
        `${connected ? "Lost the connection" : "Cannot connect"} to ${base.origin}: ${outcome.retry}; ` +
          `retrying in ${Math.round(wait / 1000)} s (events committed meanwhile are not replayed: GET /v1/events).\n`,
      );
      await pause(wait, stop.signal);
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await forwarder?.close();
  }
}
