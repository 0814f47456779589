/**
 * The source of GraphQL's `events` subscription (docs/webhooks.md "The live event stream (GraphQL)"):
 * one feed per open stream, over the process's one LISTEN (services/event-stream.ts).
 *
 * - A feed registers with the event stream when the subscription starts, before the answer's first
 *   byte is sent, so every event whose notification reaches this process after that is streamed.
 * - It keeps its organization's and mode's notifications in the order they came, which is the order
 *   the transactions committed in; ids are read in batches (the `types` filter and the tenant filter
 *   applied there) and handed out one by one in that order: the field's resolver then reads each
 *   event with the client's selection (graphql/types/event.ts).
 * - When notifications may have been missed (PostgreSQL's listening connection broke and came back:
 *   `onGap`), it reads the events whose `sequence` is above the highest one it streamed (or, before
 *   the first, the highest that existed when it started), skipping those already streamed, then goes
 *   on with the live ones. An event whose transaction took a sequence number below that mark and
 *   committed during the gap is not streamed: the stream is at most once (webhooks are the at-least-
 *   once delivery).
 * - A client that reads too slowly is cut off: when `maxBacklog` notifications wait unread, the feed
 *   drops them, stops listening and ends the stream with a `service_unavailable` error, the next time
 *   the client reads (the HTTP layer holds a stalled connection only briefly: http-server.ts).
 * - `EventFeeds.close` (server shutdown) ends every open stream with a `service_unavailable` error,
 *   so clients subscribe again elsewhere or once the server is back.
 */
import { ServiceUnavailableError } from "../domain/errors.js";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { TenantKey } from "../services/context.js";
import type { CommittedEvent, EventStream } from "../services/event-stream.js";

/** Notifications a stream may have waiting unread before it is cut off. */
export const MAX_STREAM_BACKLOG = 1_000;
/** Events read by id in one statement. */
const LOAD_BATCH = 100;

/** What a feed hands out for each event: its id (the field's resolver reads the rest). */
export interface StreamedEvent {
  id: string;
  sequence: bigint;
}

/** Why a stream ended other than by its client. */
export type StreamEnd = "behind" | "shutdown";

export interface EventFeedsOptions {
  /** the process's event stream (null: it could not listen, and no feed can open) */
  stream: Promise<EventStream | null>;
  /** notifications a feed may have waiting before it is cut off (MAX_STREAM_BACKLOG) */
  maxBacklog?: number;
  /** called when a stream is ended by the server (for metrics) */
  onEnd?: (reason: StreamEnd) => void;
}

/** What a feed streams: whose events, which types (null: every type), read through `prisma`. */
export interface FeedScope {
  prisma: PrismaClient;
  tenant: TenantKey;
  types: readonly string[] | null;
}

function shuttingDown(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    "The server is shutting down and ended this stream; subscribe again (events committed meanwhile are not " +
      "replayed: read them with the events query).",
    1,
  );
}

function behind(maxBacklog: number): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `This stream fell more than ${maxBacklog} events behind (the client reads slower than events are written) and ` +
      "was ended; subscribe again, and read the events you missed with the events query.",
    1,
  );
}

/** The open feeds of one app. */
export class EventFeeds {
  private readonly feeds = new Set<Feed>();
  private closing = false;
  private readonly maxBacklog: number;

  constructor(private readonly options: EventFeedsOptions) {
    this.maxBacklog = options.maxBacklog ?? MAX_STREAM_BACKLOG;
  }

  /** Streams open now. */
  get size(): number {
    return this.feeds.size;
  }

  /**
   * Opens a feed of `scope`'s events committed from now on. Throws ServiceUnavailableError when the
   * server is shutting down or could not listen to committed events, and the database's error when
   * the starting mark cannot be read.
   */
  async open(scope: FeedScope): Promise<AsyncIterableIterator<StreamedEvent>> {
    if (this.closing) throw shuttingDown();
    const stream = await this.options.stream;
    if (!stream)
      throw new ServiceUnavailableError(
        "The server could not listen to committed events, so it has no live stream now; read events with the " +
          "events query, or retry later.",
      );
    if (this.closing) throw shuttingDown();
    const feed = new Feed(scope, this.maxBacklog, (f) => this.feeds.delete(f), this.options.onEnd);
    this.feeds.add(feed);
    try {
      await feed.start(stream);
    } catch (e) {
      await feed.return();
      throw e;
    }
    return feed;
  }

  /** Ends every open stream with a shutdown error, and refuses new ones. */
  close(): void {
    this.closing = true;
    for (const feed of this.feeds) feed.fail(shuttingDown(), "shutdown");
  }
}

const GAP = Symbol("gap");

/** One open stream (see the module's comment). */
class Feed implements AsyncIterableIterator<StreamedEvent> {
  /** notified ids not read yet, in commit order; GAP where notifications may be missing */
  private queue: (string | typeof GAP)[] = [];
  /** read events to hand out, in order */
  private ready: StreamedEvent[] = [];
  /** ids handed out lately (at most 2 x maxBacklog), so a catch-up and a notification never stream one twice */
  private readonly recent = new Set<string>();
  /** the highest sequence streamed, or the highest existing at the start */
  private mark = 0n;
  private failure: Error | null = null;
  private done = false;
  private wake: (() => void) | null = null;
  private unlisten: (() => void)[] = [];

  constructor(
    private readonly scope: FeedScope,
    private readonly maxBacklog: number,
    private readonly removed: (feed: Feed) => void,
    private readonly onEnd?: (reason: StreamEnd) => void,
  ) {}

  /** Listens first, then reads the starting mark: an event committed in between is notified. */
  async start(stream: EventStream): Promise<void> {
    this.unlisten = [stream.subscribe((e) => this.notified(e)), stream.onGap(() => this.push(GAP))];
    const last = await this.scope.prisma.event.findFirst({
      where: { ...this.scope.tenant },
      orderBy: { sequence: "desc" },
      select: { sequence: true },
    });
    this.mark = last?.sequence ?? 0n;
  }

  private notified(event: CommittedEvent): void {
    const { organizationId, testMode } = this.scope.tenant;
    if (event.organizationId === organizationId && event.testMode === testMode) this.push(event.eventId);
  }

  private push(item: string | typeof GAP): void {
    if (this.done || this.failure) return;
    if (this.queue.length >= this.maxBacklog) {
      this.fail(behind(this.maxBacklog), "behind");
      return;
    }
    this.queue.push(item);
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Ends the stream with `error` at the client's next read; what waited is dropped. */
  fail(error: Error, reason: StreamEnd): void {
    if (this.done || this.failure) return;
    this.failure = error;
    this.queue = [];
    this.ready = [];
    this.stopListening();
    this.onEnd?.(reason);
    this.signal();
  }

  private stopListening(): void {
    for (const unlisten of this.unlisten) unlisten();
    this.unlisten = [];
    this.removed(this);
  }

  async next(): Promise<IteratorResult<StreamedEvent>> {
    for (;;) {
      if (this.done) return { done: true, value: undefined };
      if (this.failure) {
        const failure = this.failure;
        this.finish();
        throw failure;
      }
      const event = this.ready.shift();
      if (event) {
        if (this.recent.has(event.id)) continue;
        this.delivered(event);
        return { done: false, value: event };
      }
      if (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
      else await this.load();
    }
  }

  private delivered(event: StreamedEvent): void {
    this.recent.add(event.id);
    if (this.recent.size > 2 * this.maxBacklog) this.recent.delete(this.recent.values().next().value!);
    if (event.sequence > this.mark) this.mark = event.sequence;
  }

  /** Reads the next batch of notified events (or catches up after a gap) into `ready`. */
  private async load(): Promise<void> {
    const { prisma, tenant, types } = this.scope;
    const typeFilter = types ? { type: { in: [...types] } } : {};
    if (this.queue[0] === GAP) {
      this.queue.shift();
      const rows = await prisma.event.findMany({
        where: { ...tenant, ...typeFilter, sequence: { gt: this.mark } },
        orderBy: { sequence: "asc" },
        take: this.maxBacklog + 1,
        select: { id: true, sequence: true },
      });
      if (rows.length > this.maxBacklog) this.fail(behind(this.maxBacklog), "behind");
      else this.ready.push(...rows);
      return;
    }
    const ids: string[] = [];
    while (ids.length < LOAD_BATCH && typeof this.queue[0] === "string") ids.push(this.queue.shift() as string);
    const rows = await prisma.event.findMany({
      where: { id: { in: ids }, ...tenant, ...typeFilter },
      select: { id: true, sequence: true },
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) {
      const row = byId.get(id);
      if (row) this.ready.push(row);
    }
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.queue = [];
    this.ready = [];
    this.stopListening();
    this.signal();
  }

  /** The client went away (or the stream completed): stops listening. */
  async return(): Promise<IteratorResult<StreamedEvent>> {
    this.finish();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<StreamedEvent>> {
    this.finish();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StreamedEvent> {
    return this;
  }
}
