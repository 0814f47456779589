/**
 * Webhook delivery (docs/webhooks.md "Delivery"): the worker that sends each webhook message (one
 * event to one endpoint, written with the event: services/events.ts) as a Standard Webhooks v1
 * POST, records every attempt, retries on the schedule and disables endpoints that are gone or
 * failing.
 *
 * - Claims: one statement takes due `pending` messages (`FOR UPDATE SKIP LOCKED`), at most
 *   PER_ENDPOINT_CONCURRENCY in flight per endpoint and MAX_IN_FLIGHT in all in this process, counts
 *   the attempt and moves `nextAttemptAt` a lease ahead (the attempt's time limit and a margin). So
 *   any number of processes send side by side and never send one message twice while none crashes;
 *   a process that dies mid-send leaves its claims to run out, and another process sends them again
 *   with the same `webhook-id` (at least once, never lost).
 * - Sends happen outside any transaction, each with its own time limit, so one slow or dead endpoint
 *   holds at most its own slots. Outcomes are written in batches (one transaction for what finished
 *   while the previous batch was written), each guarded by the claim's attempt count.
 * - Waking: on a notification from a transaction that wrote messages (LISTEN/NOTIFY on PostgreSQL,
 *   the same inside the process on PGlite: services/event-stream.ts), else at the next message's due
 *   time, and at least every IDLE_POLL_MS.
 */
import type { PrismaClient, WebhookEndpoint } from "../infra/prisma/generated/client.js";
import type { Logger } from "../infra/logger.js";
import type { AppSettings } from "../infra/config.js";
import { newId } from "../infra/ids.js";
import { directTransaction, preparedSql, queryPrepared } from "../infra/sql/index.js";
import { openSecret, requireKey } from "../infra/secrets.js";
import { WebhookHttp, webhookSignature, type AttemptResult } from "../infra/webhook-http.js";
import { disablesEndpoint, messageBody, nextRetryIn, retryAfterMs, type DisableReason } from "../domain/webhooks.js";
import { InvalidStateError, NotFoundError, ValidationError } from "../domain/errors.js";
import { receivesEvent } from "../domain/events.js";
import { atomically, tenant, type ServiceContext } from "./context.js";
import { WEBHOOKS_CHANNEL } from "./events.js";
import type { EventStream } from "./event-stream.js";
import { disableEndpoint, signingSecrets } from "./webhook-endpoints.js";

/** Messages in flight to one endpoint at a time, per process. */
export const PER_ENDPOINT_CONCURRENCY = 16;
/** Messages in flight at a time, per process. */
export const MAX_IN_FLIGHT = 256;
/**
 * How long a claim lasts before another process may take the message (ms from the claim): twice the
 * attempt's time limit and 5 s, so the attempt (cut at its limit) and the write of its outcome end well
 * before; a process that died mid-send has its messages sent again this long after it claimed them.
 */
export const leaseMs = (timeoutMs: number) => 2 * timeoutMs + 5_000;
/**
 * The longest the worker sleeps without looking for due messages (ms). It wakes on every commit that
 * wrote messages, and at the next one's due time (a retry, a crashed process's claim running out);
 * this poll is the safety net for a notification that was never sent.
 */
const IDLE_POLL_MS = 60_000;
/**
 * How old the worker's knowledge of the next due time may grow while every round claims something
 * (ms): the longest a message nothing announces (another process's retry, a crashed process's claim
 * running out) waits past its due time on a busy worker.
 */
const NEXT_DUE_REFRESH_MS = 5_000;
/** The shortest sleep when a due message could not be claimed (another process holds it for a moment; ms). */
const MIN_SLEEP_MS = 50;
/**
 * The shortest time between two claims started by notifications of new messages (ms): under a
 * stream of writes (one per invoice), one claim takes several transactions' messages instead of one
 * each. An idle worker claims at once on the first notification (docs/webhooks.md "Delivery").
 */
export const NOTIFIED_CLAIM_INTERVAL_MS = 50;
/**
 * How long the first finished attempt waits for others before their outcomes are written (ms), and
 * how many make a batch be written at once.
 */
const FLUSH_DELAY_MS = 10;
const FLUSH_AT = 256;
/** Opened secrets a worker keeps (more clears the cache). */
const MAX_OPENED = 1_000;
/** After a failed round (a database error), the wait before the next (ms). */
const ERROR_PAUSE_MS = 1_000;

export interface WebhookDeliveryDeps {
  prisma: PrismaClient;
  settings: AppSettings;
  logger: Logger;
}

/** What a message is sent to: the fields of its endpoint the worker uses. */
interface Endpoint {
  id: string;
  organizationId: string;
  testMode: boolean;
  url: string;
}

/** A claimed message: its event, its endpoint, and the attempt it is on. */
interface Claim {
  eventId: string;
  endpointId: string;
  attempts: number;
}

/** A finished attempt, waiting to be written. */
interface Outcome {
  claim: Claim;
  endpoint: Endpoint;
  result: AttemptResult;
  at: Date;
}

/** A row of CLAIM: a claimed message. */
interface ClaimRow {
  eventId: string;
  endpointId: string;
  attempts: number;
  /** the event's type, data and time: on the event's first row only (null on the others) */
  type: string | null;
  data: string | null;
  createdAt: Date | string | null;
  /** the endpoint's fields: on the endpoint's first row only (null on the others) */
  organizationId: string | null;
  testMode: boolean | null;
  url: string | null;
  secret: Uint8Array | null;
  previousSecret: Uint8Array | null;
  previousSecretExpiresAt: Date | string | null;
}

/**
 * Claims due messages: $1 now, $2 the per-endpoint bound, $3/$4 this process's endpoints in flight
 * and their counts, $5 the most to claim, $6 the lease's end. Each claimed message comes back with
 * its event's type, data and time on the event's first row, and its endpoint's URL, mode and sealed
 * secrets on the endpoint's first row (the other rows repeat neither: twenty endpoints of one event
 * carry its data once).
 */
const CLAIM = preparedSql(`
  WITH busy AS (SELECT * FROM unnest($3::text[], $4::int[]) AS b("endpointId", "inFlight")),
  due AS (
    SELECT m."eventId", m."organizationId", m."endpointId"
    FROM "WebhookEndpoint" w
    LEFT JOIN busy ON busy."endpointId" = w."id"
    CROSS JOIN LATERAL (
      SELECT "eventId", "organizationId", "endpointId" FROM "WebhookMessage"
      WHERE "endpointId" = w."id" AND "status" = 'pending' AND "nextAttemptAt" <= $1::timestamptz
      ORDER BY "nextAttemptAt"
      LIMIT GREATEST($2::int - COALESCE(busy."inFlight", 0), 0)
      FOR UPDATE SKIP LOCKED
    ) m
    WHERE w."status" = 'enabled'
    LIMIT $5::int
  ),
  claimed AS (
    UPDATE "WebhookMessage" u SET "attempts" = u."attempts" + 1, "nextAttemptAt" = $6::timestamptz
    FROM due WHERE u."eventId" = due."eventId" AND u."organizationId" = due."organizationId"
      AND u."endpointId" = due."endpointId"
    RETURNING u."eventId", u."organizationId", u."endpointId", u."attempts"
  ),
  rows AS (
    SELECT c."eventId", c."endpointId", c."attempts",
      row_number() OVER (PARTITION BY c."eventId" ORDER BY c."endpointId") AS "ofEvent",
      row_number() OVER (PARTITION BY c."endpointId" ORDER BY c."eventId") AS "ofEndpoint"
    FROM claimed c
  )
  SELECT r."eventId", r."endpointId", r."attempts",
    CASE WHEN r."ofEvent" = 1 THEN e."type" END AS "type",
    CASE WHEN r."ofEvent" = 1 THEN e."data" END AS "data",
    CASE WHEN r."ofEvent" = 1 THEN e."createdAt" END AS "createdAt",
    CASE WHEN r."ofEndpoint" = 1 THEN w."organizationId" END AS "organizationId",
    CASE WHEN r."ofEndpoint" = 1 THEN w."testMode" END AS "testMode",
    CASE WHEN r."ofEndpoint" = 1 THEN w."url" END AS "url",
    CASE WHEN r."ofEndpoint" = 1 THEN w."secret" END AS "secret",
    CASE WHEN r."ofEndpoint" = 1 THEN w."previousSecret" END AS "previousSecret",
    CASE WHEN r."ofEndpoint" = 1 THEN w."previousSecretExpiresAt" END AS "previousSecretExpiresAt"
  FROM rows r
  LEFT JOIN "Event" e ON e."id" = r."eventId"
  LEFT JOIN "WebhookEndpoint" w ON w."id" = r."endpointId"`);

/** When the next pending message of an enabled endpoint is due (null: none is). */
const NEXT_DUE = preparedSql(`
  SELECT m."nextAttemptAt" AS "at" FROM "WebhookMessage" m
  JOIN "WebhookEndpoint" w ON w."id" = m."endpointId" AND w."status" = 'enabled'
  WHERE m."status" = 'pending' ORDER BY m."nextAttemptAt" LIMIT 1`);

/**
 * The first statement of an outcome batch: $1 the batch's endpoints, locked `FOR KEY SHARE` in id order; returns
 * those that still exist. An endpoint deleted meanwhile (`DELETE /v1/webhook_endpoints/{id}/`, which cascades to its
 * messages and attempts) is then skipped. Without it, the batch's `UPDATE` locked a message the delete's cascade
 * was about to remove, and only at the statement's end did the attempts' foreign key checks lock the endpoint the
 * delete held: PostgreSQL broke the cycle by aborting one of them (40P01, docs/webhooks.md "Delivery"). With the
 * endpoints locked first, a batch and a delete wait for each other in one order only.
 */
const LOCK_ENDPOINTS = preparedSql(`
  SELECT "id" FROM "WebhookEndpoint" WHERE "id" = ANY($1::text[]) ORDER BY "id" FOR KEY SHARE`);

/**
 * Records outcomes: $1..$6 the attempts' rows (id, event, endpoint, attempt, status code, duration),
 * $7..$9 (error, body, time), $10 the messages' new statuses, $11 their next attempt times (or null),
 * $12 the endpoint's organization, $13 its mode. One message per row of the arrays.
 *
 * Each message is found by its primary key. The guard on `status` is written `(...) IS TRUE` (the same,
 * `status` is never null) so that it is not an index condition: written plainly, the planner may find the
 * rows through the ("endpointId", "status", "nextAttemptAt") index instead (it does with the statistics of
 * an empty or mostly delivered table), which reads every pending message of the endpoint for each outcome.
 * With a backlog that made a batch cost seconds, longer batches the next time, until a batch outran its
 * transaction's time limit (docs/performance.md "Webhook delivery").
 */
const WRITE_OUTCOMES = preparedSql(`
  WITH v AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::text[],
      $9::timestamptz[], $10::text[], $11::timestamptz[], $12::text[], $13::boolean[])
      AS v("id", "eventId", "endpointId", "attempt", "statusCode", "durationMs", "error", "responseBody", "at",
        "status", "nextAttemptAt", "organizationId", "testMode")
  ), attempts AS (
    INSERT INTO "WebhookAttempt" ("id", "eventId", "endpointId", "organizationId", "testMode", "attempt",
      "statusCode", "durationMs", "error", "responseBody", "createdAt")
    SELECT "id", "eventId", "endpointId", "organizationId", "testMode", "attempt", "statusCode", "durationMs",
      "error", "responseBody", "at" FROM v
  )
  UPDATE "WebhookMessage" m SET "status" = v."status",
    "nextAttemptAt" = COALESCE(v."nextAttemptAt", m."nextAttemptAt"),
    "deliveredAt" = CASE WHEN v."status" = 'delivered' THEN v."at" ELSE m."deliveredAt" END
  FROM v
  WHERE m."eventId" = v."eventId" AND m."organizationId" = v."organizationId" AND m."endpointId" = v."endpointId"
    AND m."attempts" = v."attempt"
    AND (m."status" = 'pending') IS TRUE`);

/**
 * The endpoints' failure streaks: $1 ids, $2 whether any attempt in this batch succeeded, $3 the
 * first failure after the batch's last success (null when its last attempt succeeded). Returns the
 * streak's start of each endpoint it wrote. An endpoint whose attempts in the batch ended with a
 * success and that was not failing is left alone: the usual case, and no row written for it.
 */
const WRITE_STREAKS = preparedSql(`
  UPDATE "WebhookEndpoint" w SET "failingSince" =
    CASE WHEN v."succeeded" THEN v."firstFailure" ELSE COALESCE(w."failingSince", v."firstFailure") END
  FROM unnest($1::text[], $2::boolean[], $3::timestamptz[]) AS v("id", "succeeded", "firstFailure")
  WHERE w."id" = v."id" AND NOT (v."succeeded" AND v."firstFailure" IS NULL AND w."failingSince" IS NULL)
  RETURNING w."id", w."status", w."failingSince"`);

export interface WebhookWorker {
  /** looks for due messages now (a notification, a test) */
  wake(): void;
  /** stops claiming, waits for the attempts in flight (at most their time limit) and writes their outcomes */
  stop(): Promise<void>;
}

/**
 * Starts the delivery worker of this process: it runs until `stop`, woken by `stream` (new
 * messages committed, or notifications missed) and by its own timers.
 */
export function startWebhookWorker(
  deps: WebhookDeliveryDeps,
  stream: Promise<EventStream | null> | null,
): WebhookWorker {
  const worker = new DeliveryWorker(deps);
  void stream?.then((s) => worker.follow(s));
  worker.start();
  return { wake: () => worker.wake(), stop: () => worker.stop() };
}

/** A finished attempt with what it decides: the message's new status and, for a retry, its next attempt time. */
interface DecidedOutcome extends Outcome {
  ok: boolean;
  status: "delivered" | "failed" | "pending";
  next: Date | null;
}

/**
 * What each finished attempt decides (docs/webhooks.md "Attempts"): a 2xx is delivered; anything else is retried on
 * `schedule` (honouring Retry-After) or, past its end or on 410, failed.
 */
function decideOutcomes(batch: Outcome[], schedule: number[]): DecidedOutcome[] {
  return batch.map((outcome) => {
    const { claim, result, at } = outcome;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const retryIn = ok
      ? null
      : nextRetryIn(schedule, {
          attempt: claim.attempts,
          statusCode: result.statusCode,
          retryAfterMs: retryAfterMs(result.retryAfter, at),
        });
    return {
      ...outcome,
      ok,
      status: ok ? "delivered" : retryIn === null ? "failed" : "pending",
      next: retryIn === null ? null : new Date(at.getTime() + retryIn),
    };
  });
}

/** An endpoint's failure streak over a batch, in the order its attempts finished. */
interface Streak {
  succeeded: boolean;
  firstFailure: Date | null;
  gone: boolean;
}

/** Each endpoint's failure streak over `rows` (in the order the attempts finished): a success resets it. */
function streaksOf(rows: DecidedOutcome[]): Map<string, Streak> {
  const streaks = new Map<string, Streak>();
  for (const r of rows) {
    const s = streaks.get(r.endpoint.id) ?? { succeeded: false, firstFailure: null, gone: false };
    if (r.ok) Object.assign(s, { succeeded: true, firstFailure: null, gone: false });
    else {
      s.firstFailure ??= r.at;
      if (r.result.statusCode === 410) s.gone = true;
    }
    streaks.set(r.endpoint.id, s);
  }
  return streaks;
}

/** The rows of WRITE_OUTCOMES, one array per column. */
function outcomeColumns(rows: DecidedOutcome[]): unknown[] {
  return [
    rows.map(() => newId("del")),
    rows.map((r) => r.claim.eventId),
    rows.map((r) => r.claim.endpointId),
    rows.map((r) => r.claim.attempts),
    rows.map((r) => r.result.statusCode),
    rows.map((r) => r.result.durationMs),
    rows.map((r) => r.result.error),
    rows.map((r) => r.result.body),
    rows.map((r) => r.at),
    rows.map((r) => r.status),
    rows.map((r) => r.next),
    rows.map((r) => r.endpoint.organizationId),
    rows.map((r) => r.endpoint.testMode),
  ];
}

/**
 * The delivery worker of one process (startWebhookWorker). Its state: the messages in flight (per endpoint and in
 * all), the outcomes waiting to be written and the one batch being written, the opened secrets, and what wakes the
 * loop (a notification, a slot freed while a due message waits for one, a retry written, a timer).
 */
class DeliveryWorker {
  private readonly prisma: PrismaClient;
  private readonly settings: AppSettings;
  private readonly logger: Logger;
  private readonly http: WebhookHttp;
  private readonly inFlight = new Map<string, number>();
  private inFlightTotal = 0;
  private readonly sends = new Set<Promise<void>>();
  private outcomes: Outcome[] = [];
  private flushing: Promise<void> | null = null;
  private flushTimer: NodeJS.Timeout | undefined;
  private notifiedTimer: NodeJS.Timeout | undefined;
  private lastNotifiedWake = 0;
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private woken = true;
  private timer: NodeJS.Timeout | undefined;
  /** a due message was left unclaimed for want of a slot: the end of a send is worth a look */
  private waitingForSlot = false;
  /** sends ended so far: one that ends while a claim runs frees a slot that claim did not see */
  private sendsEnded = 0;
  /** secrets opened, by their sealed bytes (base64; at most MAX_OPENED, cleared when full): a rotation seals anew */
  private readonly opened = new Map<string, Buffer>();
  private readonly unsubscribe: (() => void)[] = [];
  private running: Promise<void> = Promise.resolve();

  constructor({ prisma, settings, logger }: WebhookDeliveryDeps) {
    this.prisma = prisma;
    this.settings = settings;
    this.logger = logger;
    this.http = new WebhookHttp({ timeoutMs: settings.webhooks.timeoutMs, socketsPerHost: PER_ENDPOINT_CONCURRENCY });
  }

  /** Follows `stream`'s notifications of new messages, and its gaps (notifications possibly missed). */
  follow(stream: EventStream | null): void {
    if (stream && !this.stopped)
      this.unsubscribe.push(
        stream.onWebhookMessages(() => this.notified()),
        stream.onGap(() => this.wake()),
      );
  }

  start(): void {
    this.running = this.loop();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * A notification that messages were written: wakes the worker at once, or, within
   * NOTIFIED_CLAIM_INTERVAL_MS of the last such wake, at the interval's end. So under a stream of
   * writes one claim takes the messages of several transactions; an idle worker answers the first
   * notification at once.
   */
  private notified(): void {
    if (this.notifiedTimer) return;
    const wait = this.lastNotifiedWake + NOTIFIED_CLAIM_INTERVAL_MS - Date.now();
    if (wait <= 0) {
      this.lastNotifiedWake = Date.now();
      this.wake();
      return;
    }
    this.notifiedTimer = setTimeout(() => {
      this.notifiedTimer = undefined;
      this.lastNotifiedWake = Date.now();
      this.wake();
    }, wait);
  }

  /** Sleeps until woken, a send finishes, or `ms` passed. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.woken || this.stopped) return resolve();
      this.wakeUp = resolve;
      this.timer = setTimeout(resolve, ms);
    }).finally(() => {
      this.wakeUp = null;
      clearTimeout(this.timer);
    });
  }

  /** Sealed secret bytes opened with the encryption key, once while they stay the same. */
  private openSealed(sealed: Uint8Array): Buffer {
    const id = Buffer.from(sealed).toString("base64");
    let secret = this.opened.get(id);
    if (!secret) {
      secret = openSecret(requireKey(this.settings.certificateEncryptionKey), sealed);
      if (this.opened.size >= MAX_OPENED) this.opened.clear();
      this.opened.set(id, secret);
    }
    return secret;
  }

  /** The secrets that sign for a claimed endpoint now (webhook-endpoints.ts `signingSecrets`, CLAIM's sealed bytes). */
  private secretsOf(row: ClaimRow, now: Date): Buffer[] {
    return signingSecrets(
      { secret: row.secret!, previousSecret: row.previousSecret, previousSecretExpiresAt: row.previousSecretExpiresAt },
      (sealed) => this.openSealed(sealed),
      now,
    );
  }

  /**
   * Claims what is due and sends it (each on its own; outcomes queued for `flush`). Returns how many
   * it sent, and whether a bound held the claim back (an endpoint, or the process, got as many as its
   * free slots allowed: more may be due).
   */
  private async claimAndSend(now: Date): Promise<{ claimed: number; limited: boolean }> {
    const free = MAX_IN_FLIGHT - this.inFlightTotal;
    const busy = [...this.inFlight.entries()];
    const lease = new Date(now.getTime() + leaseMs(this.settings.webhooks.timeoutMs));
    const rows = await queryPrepared<ClaimRow>(this.prisma, CLAIM, [
      now,
      PER_ENDPOINT_CONCURRENCY,
      busy.map(([id]) => id),
      busy.map(([, n]) => n),
      Math.max(free, 0),
      lease,
    ]);
    const { bodies, endpoints } = this.claimedData(rows, now);
    let claimed = 0;
    const perEndpoint = new Map<string, number>();
    for (const row of rows) {
      perEndpoint.set(row.endpointId, (perEndpoint.get(row.endpointId) ?? 0) + 1);
      const body = bodies.get(row.eventId);
      const to = endpoints.get(row.endpointId);
      // not found (cannot happen: the claim holds the message and its event): its lease runs out
      if (body === undefined || !to) continue;
      const claim = { eventId: row.eventId, endpointId: row.endpointId, attempts: Number(row.attempts) };
      this.send(claim, to.endpoint, body, to.signingKeys);
      claimed++;
    }
    const limited =
      rows.length >= free ||
      busy.some(([id, n]) => (perEndpoint.get(id) ?? 0) >= PER_ENDPOINT_CONCURRENCY - n) ||
      [...perEndpoint.values()].some((n) => n >= PER_ENDPOINT_CONCURRENCY);
    return { claimed, limited };
  }

  /**
   * The message bodies of the claimed events and the claimed endpoints with their signing secrets: an event's data
   * and an endpoint's fields come on one of their rows, in no particular order.
   */
  private claimedData(rows: ClaimRow[], now: Date) {
    const bodies = new Map<string, string>();
    const endpoints = new Map<string, { endpoint: Endpoint; signingKeys: Buffer[] }>();
    for (const row of rows) {
      if (row.type !== null) bodies.set(row.eventId, messageBody(row.type, new Date(row.createdAt!), row.data!));
      if (row.url !== null) {
        const endpoint = {
          id: row.endpointId,
          organizationId: row.organizationId!,
          testMode: row.testMode!,
          url: row.url,
        };
        endpoints.set(row.endpointId, { endpoint, signingKeys: this.secretsOf(row, now) });
      }
    }
    return { bodies, endpoints };
  }

  /** Sends one claimed message; its outcome is queued for `flush`. */
  private send(claim: Claim, endpoint: Endpoint, body: string, signingKeys: Buffer[]): void {
    this.inFlight.set(endpoint.id, (this.inFlight.get(endpoint.id) ?? 0) + 1);
    this.inFlightTotal++;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      "user-agent": "billing-service-webhooks/1",
      "webhook-id": claim.eventId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": webhookSignature(signingKeys, claim.eventId, timestamp, body),
    };
    const strict = !endpoint.testMode && !this.settings.webhooks.allowPrivateNetworks;
    const sent: Promise<void> = this.http.send(endpoint.url, headers, body, strict).then((result) => {
      this.outcomes.push({ claim, endpoint, result, at: new Date() });
      const left = (this.inFlight.get(endpoint.id) ?? 1) - 1;
      if (left > 0) this.inFlight.set(endpoint.id, left);
      else this.inFlight.delete(endpoint.id);
      this.inFlightTotal--;
      this.sends.delete(sent);
      this.sendsEnded++;
      this.startFlush();
      // a slot is free: worth a claim only when a due message waits for one
      if (this.waitingForSlot) this.wake();
    });
    this.sends.add(sent);
  }

  /**
   * Writes the outcomes waiting, FLUSH_DELAY_MS after the first of them (at once when FLUSH_AT are
   * waiting, or when stopping), one batch at a time: the attempts that end meanwhile share the next.
   */
  private startFlush(): void {
    if (this.flushing || this.flushTimer || this.outcomes.length === 0) return;
    if (this.stopped || this.outcomes.length >= FLUSH_AT) this.flushNow();
    else this.flushTimer = setTimeout(() => this.flushNow(), FLUSH_DELAY_MS);
  }

  private flushNow(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.flushing || this.outcomes.length === 0) return;
    const batch = this.outcomes;
    this.outcomes = [];
    this.flushing = this.writeOutcomes(batch)
      .then((retrying) => {
        // a retry moved its message's due time (5 s on, or sooner with Retry-After): look again
        if (retrying) this.wake();
      })
      .catch((err) => {
        // not written: the claims run out and the messages are sent again (at least once); a round
        // now finds when
        this.logger.error({ err, messages: batch.length }, "webhook outcomes not recorded; they will be retried");
        this.wake();
      })
      .finally(() => {
        this.flushing = null;
        this.startFlush();
      });
  }

  /** Writes a batch of outcomes in one transaction; true when one of them schedules a retry. */
  private async writeOutcomes(batch: Outcome[]): Promise<boolean> {
    const all = decideOutcomes(batch, this.settings.webhooks.retrySchedule);
    await directTransaction(this.prisma, async (tx) => {
      const existing = await queryPrepared<{ id: string }>(tx, LOCK_ENDPOINTS, [
        [...new Set(all.map((r) => r.endpoint.id))],
      ]);
      const kept = new Set(existing.map((e) => e.id));
      // a deleted endpoint's messages and attempts went with it: nothing to record for them
      const rows = all.filter((r) => kept.has(r.endpoint.id));
      if (rows.length === 0) return;
      await queryPrepared(tx, WRITE_OUTCOMES, outcomeColumns(rows));
      await this.writeStreaks(tx as unknown as PrismaClient, streaksOf(rows));
    });
    return all.some((r) => r.status === "pending");
  }

  /**
   * Writes each endpoint's failure streak (inside the outcomes' transaction `tx`) and disables the endpoints it
   * decides to (410 Gone, or failing for 5 days: domain/webhooks.ts `disablesEndpoint`), with their event.
   */
  private async writeStreaks(tx: PrismaClient, streaks: Map<string, Streak>): Promise<void> {
    const ids = [...streaks.keys()];
    const updated = await queryPrepared<{ id: string; status: string; failingSince: Date | null }>(tx, WRITE_STREAKS, [
      ids,
      ids.map((id) => streaks.get(id)!.succeeded),
      ids.map((id) => streaks.get(id)!.firstFailure),
    ]);
    const now = new Date();
    for (const row of updated) {
      if (row.status !== "enabled" || !row.failingSince) continue;
      const streak = streaks.get(row.id)!;
      const reason: DisableReason | null = disablesEndpoint(streak.gone ? 410 : null, new Date(row.failingSince), now);
      if (!reason) continue;
      const endpoint = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: row.id } });
      await disableEndpoint(endpointContext(tx, endpoint, now, this.settings), endpoint, reason);
      this.logger.warn({ endpoint: endpoint.id, url: endpoint.url, reason }, "webhook endpoint disabled");
    }
  }

  /**
   * Runs rounds until stopped: claim and send what is due, then sleep until woken (a notification,
   * a slot freed while a due message waits for one, a retry written) or the next message is due.
   * When the next one is due comes from NEXT_DUE, asked when a round claimed nothing and at least
   * every NEXT_DUE_REFRESH_MS: a busy worker's rounds (each claiming what a notification announced)
   * then cost one statement, and the messages whose due time nothing announces (another process's
   * retries, a crashed process's claims running out) are still found.
   */
  private async loop(): Promise<void> {
    const due: NextDue = { at: null, checkedAt: 0 };
    while (!this.stopped) {
      try {
        this.woken = false;
        const endedBefore = this.sendsEnded;
        const { claimed, limited } = await this.claimAndSend(new Date());
        if (this.stopped) break;
        if (limited) {
          // a due message may wait for a slot: the end of a send is worth a claim, and one that
          // ended while this claim ran freed a slot it did not see
          this.waitingForSlot = true;
          if (this.sendsEnded !== endedBefore) continue;
          await this.sleep(IDLE_POLL_MS);
          continue;
        }
        this.waitingForSlot = false;
        await this.sleep(await this.nextWait(due, claimed));
      } catch (err) {
        if (this.stopped) break;
        this.logger.error({ err }, "webhook delivery round failed");
        await this.sleep(ERROR_PAUSE_MS);
      }
    }
  }

  /**
   * How long to sleep after a round that claimed `claimed` messages and was not held back by a bound (ms): until the
   * next message is due (NEXT_DUE, asked again when the round claimed nothing or the answer in `due` is
   * NEXT_DUE_REFRESH_MS old), at most IDLE_POLL_MS.
   */
  private async nextWait(due: NextDue, claimed: number): Promise<number> {
    const refresh = claimed === 0 || Date.now() - due.checkedAt >= NEXT_DUE_REFRESH_MS;
    if (refresh) {
      due.checkedAt = Date.now();
      const [next] = await queryPrepared<{ at: Date | null }>(this.prisma, NEXT_DUE, []);
      due.at = next?.at ? new Date(next.at) : null;
    }
    const dueIn = due.at ? due.at.getTime() - Date.now() : IDLE_POLL_MS;
    // an answer not asked this round is at most NEXT_DUE_REFRESH_MS old when acted on
    const fresh = refresh ? IDLE_POLL_MS : due.checkedAt + NEXT_DUE_REFRESH_MS - Date.now();
    let wait: number;
    if (dueIn > 0) wait = Math.min(dueIn, fresh);
    else if (!refresh)
      wait = fresh; // most likely the message claimed just now
    else wait = MIN_SLEEP_MS; // due, and held by another process's claim for a moment
    return Math.max(Math.min(wait, IDLE_POLL_MS), 0);
  }

  /** Stops claiming, waits for the attempts in flight (at most their time limit) and writes their outcomes. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe) u();
    this.wake();
    await this.running;
    await Promise.all([...this.sends]);
    clearTimeout(this.notifiedTimer);
    while (this.flushing || this.outcomes.length) {
      this.flushNow();
      await this.flushing;
    }
    this.http.close();
  }
}

/** When the next pending message is due, as NEXT_DUE last answered, and when it was asked (Date.now()). */
interface NextDue {
  at: Date | null;
  checkedAt: number;
}

/** The use-case context of an endpoint's organization and mode, inside `tx` (disabling writes its event). */
function endpointContext(
  tx: PrismaClient,
  endpoint: WebhookEndpoint,
  now: Date,
  settings: AppSettings,
): ServiceContext {
  return {
    prisma: tx,
    auth: {
      organizationId: endpoint.organizationId,
      testMode: endpoint.testMode,
      userEmail: "",
      apiKeyId: "",
    },
    now: () => now,
    settings,
    baseUrl: "",
    inTransaction: true,
  };
}

/**
 * Sends event `eventId` again at once (REST POST /v1/events/{id}/redeliver/, GraphQL redeliverEvent):
 * to `endpointId`, or else to every enabled endpoint whose enabled_events match its type, with the
 * same `webhook-id` and a new schedule of attempts. Returns the endpoints it goes to. Errors: 404
 * unknown event; 400 `endpoint` unknown; 409 the endpoint is disabled, or no enabled endpoint
 * receives the event's type.
 */
export async function redeliverEvent(
  ctx: ServiceContext,
  eventId: string,
  endpointId?: string | null,
): Promise<{ eventId: string; endpointIds: string[] }> {
  return atomically(ctx, async (tx) => {
    const event = await tx.prisma.event.findFirst({ where: { id: eventId, ...tenant(ctx) }, select: { type: true } });
    if (!event) throw new NotFoundError("event", eventId);
    let endpointIds: string[];
    if (endpointId) {
      const endpoint = await tx.prisma.webhookEndpoint.findFirst({ where: { id: endpointId, ...tenant(ctx) } });
      if (!endpoint) throw ValidationError.field("endpoint", `unknown webhook endpoint ${endpointId}`);
      if (endpoint.status !== "enabled")
        throw new InvalidStateError(`webhook endpoint ${endpointId} is disabled; enable it first (status: enabled)`);
      endpointIds = [endpoint.id];
    } else {
      const enabled = await tx.prisma.webhookEndpoint.findMany({
        where: { ...tenant(ctx), status: "enabled" },
        select: { id: true, enabledEvents: true },
      });
      endpointIds = enabled.filter((e) => receivesEvent(e.enabledEvents, event.type)).map((e) => e.id);
      if (endpointIds.length === 0)
        throw new InvalidStateError(`no enabled webhook endpoint receives ${event.type} events`);
    }
    await queryPrepared(tx.prisma, REDELIVER, [eventId, endpointIds, ctx.auth.organizationId]);
    return { eventId, endpointIds };
  });
}

/**
 * A message of event $1 (of organization $3) to each endpoint $2, due now, its attempts counted from zero again; and
 * the worker woken.
 */
const REDELIVER = preparedSql(`
  WITH m AS (
    INSERT INTO "WebhookMessage" ("eventId", "organizationId", "endpointId", "status", "attempts", "nextAttemptAt")
    SELECT $1::text, $3::text, e, 'pending', 0, CURRENT_TIMESTAMP FROM unnest($2::text[]) AS e
    ON CONFLICT ("eventId", "organizationId", "endpointId") DO UPDATE SET "status" = 'pending', "attempts" = 0,
      "nextAttemptAt" = CURRENT_TIMESTAMP, "deliveredAt" = NULL
    RETURNING 1
  )
  SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')::text AS "sent" WHERE EXISTS (SELECT 1 FROM m)`);
