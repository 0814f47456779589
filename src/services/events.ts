/**
 * The event log (docs/webhooks.md "Events"). A use case that changes something a client cares about
 * calls `recordEvents` inside its own transaction, after the change: the event row (with the
 * resource as the REST API prints it at that moment) commits or rolls back with the change, and so
 * does one webhook message per enabled endpoint whose `enabled_events` match, written by the same
 * statement. The statement also queues notifications (`pg_notify`), which PostgreSQL and PGlite
 * deliver only on commit: one on EVENTS_CHANNEL per event (its organization, mode and id), which the
 * GraphQL event stream reads (services/event-stream.ts), and one on WEBHOOKS_CHANNEL when it wrote
 * webhook messages, which wakes the delivery worker (services/webhook-delivery.ts).
 *
 * How a resource is printed is the REST adapter's business (src/rest/event-objects.ts), a layer
 * above this one: the process's entry point installs it (`installEventPrinter`) before any use case
 * runs. Writing an event without one is a programming error, thrown as such.
 */
import { newId } from "../infra/ids.js";
import { preparedSql, queryPrepared } from "../infra/sql/index.js";
import { previousAttributes, type EventObjectKind, type EventType, type PrintedValue } from "../domain/events.js";
import type { ServiceContext } from "./context.js";

/**
 * The notification channel of committed events; a payload is `<organization> <true|false> <event id>`
 * (services/event-stream.ts parses it).
 */
export const EVENTS_CHANNEL = "billing_events";

/**
 * The notification channel of new webhook messages (no payload; one per transaction that wrote any):
 * the delivery worker (services/webhook-delivery.ts) wakes on it.
 */
export const WEBHOOKS_CHANNEL = "billing_webhooks";

/** A resource as the REST API prints it (decimals as exact-number markers the printer's `json` writes). */
export type PrintedObject = Record<string, PrintedValue>;

/** What the event log needs of the REST adapter: a resource printed, and JSON text with exact decimals. */
export interface EventPrinter {
  /**
   * The resources `ids` of `kind` as the REST API's retrieve prints them, read through `ctx` (the
   * caller's transaction), in the order of `ids`. Throws when one does not exist.
   */
  objects(ctx: ServiceContext, kind: EventObjectKind, ids: readonly string[]): Promise<PrintedObject[]>;
  /** `value` as JSON text, decimals exact (the REST adapter's own writer). */
  json(value: unknown): string;
}

let printer: EventPrinter | null = null;

/** Installs how resources are printed in events; each entry point (server, CLI, worker thread) calls it once. */
export function installEventPrinter(given: EventPrinter): void {
  printer = given;
}

function installedPrinter(): EventPrinter {
  if (!printer)
    throw new Error("no event printer installed: the entry point must call installEventPrinter before use cases run");
  return printer;
}

/**
 * The printed resources `ids` of `kind` now, read in the caller's transaction: what an `*.updated`
 * event compares with afterwards (`before`) and a `*.deleted` event reports (`objects`).
 */
export function printedObjects(
  ctx: ServiceContext,
  kind: EventObjectKind,
  ids: readonly string[],
): Promise<PrintedObject[]> {
  return installedPrinter().objects(ctx, kind, ids);
}

/** How `recordEvents` gets each event's object. */
export interface RecordOptions {
  /** the objects as printed before the change (an `*.updated` event: previous_attributes are what differs) */
  before?: readonly PrintedObject[];
  /** the objects to report, printed by the caller (a deleted resource, printed before it went) */
  objects?: readonly PrintedObject[];
}

/** Fields whose change alone is no update worth an event. */
const IGNORED_CHANGES = new Set(["updated"]);

/**
 * The event insert, its webhook messages and its notifications, one statement: $1 organization,
 * $2 mode, $3 ids, $4 types, $5 object ids (arrays in the same order), $6 the data texts as one JSON
 * array of strings (a batch's data is hundreds of KB of JSON: `JSON.stringify` escapes it natively,
 * where pg escapes each element of a `text[]` parameter in JavaScript).
 */
const INSERT_EVENTS = preparedSql(`
  WITH e AS (
    INSERT INTO "Event" ("id", "organizationId", "testMode", "type", "objectId", "data")
    SELECT v."id", $1::text, $2::boolean, v."type", v."objectId", v."data"
    FROM ROWS FROM (unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), json_array_elements_text($6::json))
      WITH ORDINALITY AS v("id", "type", "objectId", "data", n)
    ORDER BY v.n
    RETURNING "id", "type"
  ), m AS (
    INSERT INTO "WebhookMessage" ("eventId", "organizationId", "endpointId")
    SELECT e."id", $1::text, w."id" FROM e JOIN "WebhookEndpoint" w
      ON w."organizationId" = $1::text AND w."testMode" = $2::boolean AND w."status" = 'enabled'
      AND (w."enabledEvents" @> ARRAY[e."type"] OR w."enabledEvents" @> ARRAY['*'])
    RETURNING 1
  )
  SELECT pg_notify('${EVENTS_CHANNEL}', $1::text || ' ' || ($2::boolean)::text || ' ' || e."id")::text AS "sent" FROM e
  UNION ALL
  SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')::text WHERE EXISTS (SELECT 1 FROM m)`);

/**
 * Writes one event of `type` for each resource `ids` of `kind`, in the transaction `ctx` runs in
 * (call it after the change, inside `atomically`/`$transaction`), with one webhook message per
 * matching enabled endpoint. `data.object` is the resource as printed now (or `options.objects`);
 * with `options.before`, `data.previous_attributes` holds the old values of the fields that changed,
 * and a resource whose printed fields did not change (`updated` aside) gets no event. Returns the
 * events' ids (none when nothing changed).
 */
export async function recordEvents(
  ctx: ServiceContext,
  type: EventType,
  kind: EventObjectKind,
  ids: readonly string[],
  options: RecordOptions = {},
): Promise<string[]> {
  return writeEvents(ctx, [type], kind, ids, options);
}

/** recordEvents of one type or more (each type's event of every resource, printed once), in one statement. */
async function writeEvents(
  ctx: ServiceContext,
  types: readonly EventType[],
  kind: EventObjectKind,
  ids: readonly string[],
  options: RecordOptions,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const { json } = installedPrinter();
  const objects = options.objects ?? (await printedObjects(ctx, kind, ids));
  const rows: { id: string; type: EventType; objectId: string; data: string }[] = [];
  objects.forEach((object, i) => {
    const before = options.before?.[i];
    let data: string;
    if (before) {
      const changed = previousAttributes(before, object, (a, b) => json(a) === json(b));
      for (const ignored of IGNORED_CHANGES) delete changed[ignored];
      if (Object.keys(changed).length === 0) return;
      data = json({ object, previous_attributes: changed });
    } else data = json({ object });
    for (const type of types) rows.push({ id: newId("evt"), type, objectId: ids[i], data });
  });
  if (rows.length === 0) return [];
  await queryPrepared(ctx.prisma, INSERT_EVENTS, [
    ctx.auth.organizationId,
    ctx.auth.testMode,
    rows.map((r) => r.id),
    rows.map((r) => r.type),
    rows.map((r) => r.objectId),
    JSON.stringify(rows.map((r) => r.data)),
  ]);
  return rows.map((r) => r.id);
}

/** Events deleted per statement by the retention worker. */
export const RETENTION_BATCH = 1_000;

/**
 * One batch of expired events: at most RETENTION_BATCH older than $1, oldest first, skipping rows
 * another process holds; their webhook messages and attempts go with them (foreign keys cascade).
 */
const DELETE_EXPIRED = preparedSql(`
  DELETE FROM "Event" WHERE "id" IN (
    SELECT "id" FROM "Event" WHERE "createdAt" < $1::timestamptz ORDER BY "createdAt" LIMIT ${RETENTION_BATCH}
    FOR UPDATE SKIP LOCKED)
  RETURNING 1 AS "deleted"`);

/**
 * Deletes every event older than `retentionDays` before `now` (EVENT_RETENTION_DAYS), in batches of
 * RETENTION_BATCH, each its own statement, until none is left or `signal` aborts. Safe beside other
 * processes doing the same. Returns how many events it deleted.
 */
export async function deleteExpiredEvents(
  prisma: object,
  now: Date,
  retentionDays: number,
  signal?: AbortSignal,
): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  let deleted = 0;
  while (!signal?.aborted) {
    const rows = await queryPrepared(prisma, DELETE_EXPIRED, [before]);
    deleted += rows.length;
    if (rows.length < RETENTION_BATCH) break;
  }
  return deleted;
}

/** A resource of some organization and mode, for the events of work that spans several (the billing run). */
export interface TenantObject {
  /** a context of the resource's organization and mode */
  ctx: ServiceContext;
  id: string;
}

/** `items` grouped by organization and mode, in first-seen order, each group with its context bound to `db`. */
function byTenant(db: ServiceContext["prisma"], items: readonly TenantObject[]) {
  const groups = new Map<string, { ctx: ServiceContext; ids: string[] }>();
  for (const { ctx, id } of items) {
    const key = `${ctx.auth.organizationId}\u0000${ctx.auth.testMode}`;
    const group = groups.get(key) ?? { ctx: { ...ctx, prisma: db, inTransaction: true }, ids: [] };
    group.ids.push(id);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** printedObjects of resources of several organizations and modes, read through `db` (a transaction), by id. */
export async function printedTenantObjects(
  db: ServiceContext["prisma"],
  kind: EventObjectKind,
  items: readonly TenantObject[],
): Promise<Map<string, PrintedObject>> {
  const printed = new Map<string, PrintedObject>();
  for (const group of byTenant(db, items)) {
    const objects = await printedObjects(group.ctx, kind, group.ids);
    group.ids.forEach((id, i) => printed.set(id, objects[i]));
  }
  return printed;
}

/**
 * recordEvents for resources of several organizations and modes, in the transaction `db`: each
 * group's events under its organization and mode. `before` as recordEvents' (by id); `types` more
 * than one type writes each type's event of every resource, printed once (the billing run's
 * invoices are created and finalized in one transaction: both events carry the finalized invoice).
 */
export async function recordTenantEvents(
  db: ServiceContext["prisma"],
  types: readonly EventType[],
  kind: EventObjectKind,
  items: readonly TenantObject[],
  before?: Map<string, PrintedObject>,
): Promise<void> {
  for (const group of byTenant(db, items))
    await writeEvents(group.ctx, types, kind, group.ids, {
      before: before ? group.ids.map((id) => before.get(id)!) : undefined,
    });
}
