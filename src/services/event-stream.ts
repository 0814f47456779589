/**
 * Committed events as they happen, inside one process (docs/webhooks.md "Waking on commit"): one
 * LISTEN per process on services/events.ts EVENTS_CHANNEL and WEBHOOKS_CHANNEL, whose notifications
 * (sent by the event's own transaction, so only once it committed) are handed to the subscribers:
 * each GraphQL `events` subscription picks its organization's and mode's events, and the webhook
 * worker wakes when messages were written.
 * A notification names the event's organization, mode and id; readers load the event itself.
 * The same listener hears services/api-key-cache.ts API_KEYS_CHANNEL (keys revoked or created by any
 * process), which the app's API key cache follows (`followApiKeyChanges`): this is the process's one
 * LISTEN, and the only call of `Database.listen` (docs/scaling.md "Shared state").
 */
import type { Database, Listener } from "../infra/database.js";
import { EVENTS_CHANNEL, WEBHOOKS_CHANNEL } from "./events.js";
import { API_KEYS_CHANNEL, parseApiKeyNotification, type ApiKeyChange } from "./api-key-cache.js";

/** What a notification says of a committed event. */
export interface CommittedEvent {
  organizationId: string;
  testMode: boolean;
  eventId: string;
}

/** `<organization> <true|false> <event id>` (the payload services/events.ts sends) -> its parts; null otherwise. */
export function parseEventNotification(payload: string): CommittedEvent | null {
  const [organizationId, mode, eventId] = payload.split(" ");
  if (!organizationId || (mode !== "true" && mode !== "false") || !eventId) return null;
  return { organizationId, testMode: mode === "true", eventId };
}

export interface EventStream {
  /** calls `fn` with each event committed from now on (in any process on PostgreSQL); returns the unsubscribe */
  subscribe(fn: (event: CommittedEvent) => void): () => void;
  /** calls `fn` when a transaction committed new webhook messages; returns the unsubscribe */
  onWebhookMessages(fn: () => void): () => void;
  /**
   * calls `fn` when notifications may have been missed (PostgreSQL's listening connection broke and
   * came back), so a subscriber catches up from the database; returns the unsubscribe
   */
  onGap(fn: () => void): () => void;
  /**
   * calls `fn` when PostgreSQL's listening connection broke: notifications are missed from then until `onGap`
   * (never on the embedded database); returns the unsubscribe
   */
  onLost(fn: () => void): () => void;
  /** calls `fn` with each API key revoked or created from now on (in any process); returns the unsubscribe */
  onApiKeyChange(fn: (change: ApiKeyChange) => void): () => void;
  close(): Promise<void>;
}

/** Starts listening to committed events on `database`. */
export async function startEventStream(database: Pick<Database, "listen">): Promise<EventStream> {
  const subscribers = new Set<(event: CommittedEvent) => void>();
  const gapSubscribers = new Set<() => void>();
  const webhookSubscribers = new Set<() => void>();
  const lostSubscribers = new Set<() => void>();
  const apiKeySubscribers = new Set<(change: ApiKeyChange) => void>();
  const listener: Listener = await database.listen(
    [EVENTS_CHANNEL, WEBHOOKS_CHANNEL, API_KEYS_CHANNEL],
    (channel, payload) => {
      if (channel === WEBHOOKS_CHANNEL) {
        for (const fn of webhookSubscribers) fn();
        return;
      }
      if (channel === API_KEYS_CHANNEL) {
        const change = parseApiKeyNotification(payload);
        if (change) for (const fn of apiKeySubscribers) fn(change);
        return;
      }
      const event = parseEventNotification(payload);
      if (event) for (const fn of subscribers) fn(event);
    },
    () => {
      for (const fn of gapSubscribers) fn();
    },
    () => {
      for (const fn of lostSubscribers) fn();
    },
  );
  return {
    subscribe(fn) {
      subscribers.add(fn);
      return () => subscribers.delete(fn);
    },
    onWebhookMessages(fn) {
      webhookSubscribers.add(fn);
      return () => webhookSubscribers.delete(fn);
    },
    onGap(fn) {
      gapSubscribers.add(fn);
      return () => gapSubscribers.delete(fn);
    },
    onLost(fn) {
      lostSubscribers.add(fn);
      return () => lostSubscribers.delete(fn);
    },
    onApiKeyChange(fn) {
      apiKeySubscribers.add(fn);
      return () => apiKeySubscribers.delete(fn);
    },
    close: () => listener.close(),
  };
}
