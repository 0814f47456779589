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
import { preparedSql, queryPrepared } from "../infra/prepared-sql.js";
import { requireKey } from "../infra/secrets.js";
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
/** The shortest sleep when a due message could not be claimed (another process holds it for a moment; ms). */
const MIN_SLEEP_MS = 50;
/** After a failed round (a database error), the wait before the next (ms). */
const ERROR_PAUSE_MS = 1_000;

export interface WebhookDeliveryDeps {
  prisma: PrismaClient;
  settings: AppSettings;
  logger: Logger;
}

/** A claimed message: its event and endpoint, and the attempt it is on. */
interface Claim {
  eventId: string;
  endpointId: string;
  attempts: number;
}

/** A finished attempt, waiting to be written. */
interface Outcome {
  claim: Claim;
  endpoint: WebhookEndpoint;
  result: AttemptResult;
  at: Date;
}

/**
 * Claims due messages: $1 now, $2 the per-endpoint bound, $3/$4 this process's endpoints in flight
 * and their counts, $5 the most to claim, $6 the lease's end.
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
  )
  UPDATE "WebhookMessage" u SET "attempts" = u."attempts" + 1, "nextAttemptAt" = $6::timestamptz
  FROM due WHERE u."eventId" = due."eventId" AND u."organizationId" = due."organizationId"
    AND u."endpointId" = due."endpointId"
  RETURNING u."eventId", u."endpointId", u."attempts"`);

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

/** The claimed messages' events: what their bodies are made of. */
const EVENTS_OF = preparedSql(`
  SELECT "id", "type", "data", "createdAt", "testMode" FROM "Event" WHERE "id" = ANY($1::text[])`);

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
 * streak's start of each endpoint still enabled.
 */
const WRITE_STREAKS = preparedSql(`
  UPDATE "WebhookEndpoint" w SET "failingSince" =
    CASE WHEN v."succeeded" THEN v."firstFailure" ELSE COALESCE(w."failingSince", v."firstFailure") END
  FROM unnest($1::text[], $2::boolean[], $3::timestamptz[]) AS v("id", "succeeded", "firstFailure")
  WHERE w."id" = v."id"
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
  const { prisma, settings, logger } = deps;
  const http = new WebhookHttp({ timeoutMs: settings.webhooks.timeoutMs, socketsPerHost: PER_ENDPOINT_CONCURRENCY });
  const inFlight = new Map<string, number>();
  let inFlightTotal = 0;
  const sends = new Set<Promise<void>>();
  let outcomes: Outcome[] = [];
  let flushing: Promise<void> | null = null;
  let stopped = false;
  let wakeUp: (() => void) | null = null;
  let woken = true;
  let timer: NodeJS.Timeout | undefined;

  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const unsubscribe: (() => void)[] = [];
  void stream?.then((s) => {
    if (s && !stopped) unsubscribe.push(s.onWebhookMessages(wake), s.onGap(wake));
  });

  /** Sleeps until woken, a send finishes, or `ms` passed. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopped) return resolve();
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      wakeUp = null;
      clearTimeout(timer);
    });

  async function claim(now: Date): Promise<Claim[]> {
    const free = MAX_IN_FLIGHT - inFlightTotal;
    if (free <= 0) return [];
    const busy = [...inFlight.entries()];
    const lease = new Date(now.getTime() + leaseMs(settings.webhooks.timeoutMs));
    const rows = await queryPrepared<Claim>(prisma, CLAIM, [
      now,
      PER_ENDPOINT_CONCURRENCY,
      busy.map(([id]) => id),
      busy.map(([, n]) => n),
      free,
      lease,
    ]);
    return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
  }

  /** Sends the claimed messages (each on its own; outcomes queued for `flush`). */
  async function dispatch(claims: Claim[], now: Date): Promise<void> {
    const [events, endpoints] = await Promise.all([
      queryPrepared<{ id: string; type: string; data: string; createdAt: Date; testMode: boolean }>(prisma, EVENTS_OF, [
        [...new Set(claims.map((c) => c.eventId))],
      ]),
      prisma.webhookEndpoint.findMany({ where: { id: { in: [...new Set(claims.map((c) => c.endpointId))] } } }),
    ]);
    const eventById = new Map(events.map((e) => [e.id, e]));
    const endpointById = new Map(endpoints.map((e) => [e.id, e]));
    const key = requireKey(settings.certificateEncryptionKey);
    const secrets = new Map(endpoints.map((e) => [e.id, signingSecrets(e, key, now)]));
    for (const claim of claims) {
      const event = eventById.get(claim.eventId);
      const endpoint = endpointById.get(claim.endpointId);
      if (!event || !endpoint) continue; // deleted since the claim (retention, endpoint deleted): nothing to send
      inFlight.set(endpoint.id, (inFlight.get(endpoint.id) ?? 0) + 1);
      inFlightTotal++;
      const body = messageBody(event.type, new Date(event.createdAt), event.data);
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        "user-agent": "billing-service-webhooks/1",
        "webhook-id": event.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": webhookSignature(secrets.get(endpoint.id)!, event.id, timestamp, body),
      };
      const strict = !endpoint.testMode && !settings.webhooks.allowPrivateNetworks;
      const send: Promise<void> = http.send(endpoint.url, headers, body, strict).then((result) => {
        outcomes.push({ claim, endpoint, result, at: new Date() });
        const left = (inFlight.get(endpoint.id) ?? 1) - 1;
        if (left > 0) inFlight.set(endpoint.id, left);
        else inFlight.delete(endpoint.id);
        inFlightTotal--;
        sends.delete(send);
        startFlush();
        wake();
      });
      sends.add(send);
    }
  }

  function startFlush(): void {
    if (flushing || outcomes.length === 0) return;
    const batch = outcomes;
    outcomes = [];
    flushing = writeOutcomes(batch)
      .catch((err) => {
        // not written: the claims run out and the messages are sent again (at least once)
        logger.error({ err, messages: batch.length }, "webhook outcomes not recorded; they will be retried");
      })
      .finally(() => {
        flushing = null;
        startFlush();
        // the outcomes moved their messages' due times (a retry soon): look again
        wake();
      });
  }

  async function writeOutcomes(batch: Outcome[]): Promise<void> {
    const schedule = settings.webhooks.retrySchedule;
    const all = batch.map(({ claim, endpoint, result, at }) => {
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      const retryIn = ok
        ? null
        : nextRetryIn(schedule, {
            attempt: claim.attempts,
            statusCode: result.statusCode,
            retryAfterMs: retryAfterMs(result.retryAfter, at),
          });
      return {
        claim,
        endpoint,
        result,
        at,
        ok,
        status: ok ? "delivered" : retryIn === null ? "failed" : "pending",
        next: retryIn === null ? null : new Date(at.getTime() + retryIn),
      };
    });
    await prisma.$transaction(async (tx) => {
      const existing = await queryPrepared<{ id: string }>(tx, LOCK_ENDPOINTS, [
        [...new Set(all.map((r) => r.endpoint.id))],
      ]);
      const kept = new Set(existing.map((e) => e.id));
      // a deleted endpoint's messages and attempts went with it: nothing to record for them
      const rows = all.filter((r) => kept.has(r.endpoint.id));
      if (rows.length === 0) return;
      await queryPrepared(tx, WRITE_OUTCOMES, [
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
      ]);
      // each endpoint's failure streak, in the order the attempts finished
      const streaks = new Map<string, { succeeded: boolean; firstFailure: Date | null; gone: boolean }>();
      for (const r of rows) {
        const s = streaks.get(r.endpoint.id) ?? { succeeded: false, firstFailure: null, gone: false };
        if (r.ok) Object.assign(s, { succeeded: true, firstFailure: null, gone: false });
        else {
          s.firstFailure ??= r.at;
          if (r.result.statusCode === 410) s.gone = true;
        }
        streaks.set(r.endpoint.id, s);
      }
      const ids = [...streaks.keys()];
      const updated = await queryPrepared<{ id: string; status: string; failingSince: Date | null }>(
        tx,
        WRITE_STREAKS,
        [ids, ids.map((id) => streaks.get(id)!.succeeded), ids.map((id) => streaks.get(id)!.firstFailure)],
      );
      const now = new Date();
      for (const row of updated) {
        if (row.status !== "enabled" || !row.failingSince) continue;
        const streak = streaks.get(row.id)!;
        const reason: DisableReason | null = disablesEndpoint(
          streak.gone ? 410 : null,
          new Date(row.failingSince),
          now,
        );
        if (!reason) continue;
        const endpoint = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: row.id } });
        await disableEndpoint(endpointContext(tx as unknown as PrismaClient, endpoint, now), endpoint, reason);
        logger.warn({ endpoint: endpoint.id, url: endpoint.url, reason }, "webhook endpoint disabled");
      }
    });
  }

  /** The use-case context of an endpoint's organization and mode, inside `tx` (disabling writes its event). */
  function endpointContext(tx: PrismaClient, endpoint: WebhookEndpoint, now: Date): ServiceContext {
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

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        woken = false;
        const now = new Date();
        const claims = await claim(now);
        if (claims.length) await dispatch(claims, now);
        if (stopped) break;
        if (claims.length && inFlightTotal < MAX_IN_FLIGHT) continue; // more may be due
        // nothing more to claim now: sleep until woken (a notification, a send that ended) or the next
        // message is due; one due already waits for a slot of its endpoint (a send's end wakes us) or
        // for another process's claim to end
        const [next] = await queryPrepared<{ at: Date | null }>(prisma, NEXT_DUE, []);
        const dueIn = next?.at ? new Date(next.at).getTime() - Date.now() : IDLE_POLL_MS;
        const wait = dueIn > 0 ? dueIn : inFlightTotal > 0 ? IDLE_POLL_MS : MIN_SLEEP_MS;
        await sleep(Math.min(wait, IDLE_POLL_MS));
      } catch (err) {
        if (stopped) break;
        logger.error({ err }, "webhook delivery round failed");
        await sleep(ERROR_PAUSE_MS);
      }
    }
  }

  const running = loop();
  return {
    wake,
    async stop() {
      stopped = true;
      for (const u of unsubscribe) u();
      wake();
      await running;
      await Promise.all([...sends]);
      while (flushing || outcomes.length) {
        startFlush();
        await flushing;
      }
      http.close();
    },
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
