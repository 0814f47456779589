/**
 * Events (docs/webhooks.md "Events"): the node type, the `events` connection, `redeliverEvent`, and
 * the `events` subscription (the live stream: ../event-feed.ts, docs/webhooks.md "The live event
 * stream (GraphQL)").
 * Events are written by the use cases in the transaction of each change (services/events.ts);
 * their `data` is JSON text with the REST API's names and formats, as webhooks deliver it.
 */
import { builder, ADMIN_FIELD } from "../builder.js";
import {
  DateTimeFilter,
  dateTimeConditions,
  enumConditions,
  enumFilter,
  StringFilter,
  stringConditions,
  type DateTimeFilterValue,
  type EnumFilterValue,
  type StringFilterValue,
} from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { redeliverEvent } from "../../services/webhook-delivery.js";
import { requestDatabase } from "../../services/request-transaction.js";
import { ServiceUnavailableError, ValidationError } from "../../domain/errors.js";
import type { StreamedEvent } from "../event-feed.js";
import {
  EVENT_RETENTION_NOTE,
  EVENT_TYPE_NAMES,
  EVENT_TYPES,
  type EventType as EventTypeName,
} from "../../domain/events.js";
import type { DescribedValues } from "../enums.js";

/** `invoice.finalized` -> `invoice_finalized`: an event type as a GraphQL enum value's name. */
export const eventTypeName = (type: string) => type.replace(/\./g, "_");

export const EventType = builder.enumType("EventType", {
  description:
    "What happened to which kind of resource. REST and webhooks write the type with a dot " +
    "(`invoice.finalized`); GraphQL names cannot hold one, so here it is an underscore (`invoice_finalized`).",
  values: Object.fromEntries(
    EVENT_TYPE_NAMES.map((type) => [eventTypeName(type), { value: type, description: EVENT_TYPES[type] }]),
  ) as unknown as DescribedValues<EventTypeName>,
});

export const EventTypeFilter = enumFilter(EventType, "EventType");

export const Event = builder.prismaNode("Event", {
  id: { field: "id", description: "`evt_` id; also each webhook message's `webhook-id`" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "Something that happened to a resource of the organization, in one mode: written in the same transaction as " +
    `the change, delivered to webhook endpoints and streamed to GraphQL subscriptions. ${EVENT_RETENTION_NOTE}`,
  fields: (t) => ({
    type: t.field({
      type: EventType,
      description: "what happened",
      select: { type: true },
      resolve: (event) => event.type as EventTypeName,
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when the change committed (ISO 8601)" }),
    testMode: t.exposeBoolean("testMode", { description: "true for an event of test-mode data" }),
    data: t.exposeString("data", {
      description:
        'The event\'s data as JSON text, exactly as webhooks send it: `{"object": ..., "previous_attributes": ' +
        "...}`, where `object` is the resource as the REST API's retrieve prints it at the time of the change (its " +
        "field names and formats; decimals are exact JSON numbers) and `previous_attributes`, on `*.updated` events " +
        "only, the old values of the fields that changed. Parse it with JSON.parse (or a decimal-aware parser for " +
        "amounts beyond 15 significant digits).",
    }),
  }),
});

const EventWhere = builder.inputType("EventWhere", {
  description: "Filters of the events list; every given filter must match.",
  fields: (t) => ({
    type: t.field({ type: EventTypeFilter, description: "the event's type (REST `type`, `type__in`)" }),
    created: t.field({
      type: DateTimeFilter,
      description: "when it happened (REST `created__gte`, `created__lt`, ...)",
    }),
    object: t.field({
      type: StringFilter,
      description:
        "the id of the event's `data.object` (an `inv_`, `pay_`, `cn_` ... id): `equals` gives one resource's " +
        "events, e.g. an invoice's history (REST `object`, `object__in`); an unknown id matches none",
    }),
  }),
});

/** The Prisma conditions of an EventWhere (none: every event). */
export function eventConditions(
  where:
    | {
        type?: EnumFilterValue<EventTypeName> | null;
        created?: DateTimeFilterValue | null;
        object?: StringFilterValue | null;
      }
    | null
    | undefined,
) {
  return [
    ...enumConditions("type", where?.type),
    ...dateTimeConditions("createdAt", where?.created),
    ...stringConditions("objectId", where?.object),
  ];
}

builder.queryFields((t) => ({
  events: t.connection(
    {
      type: Event,
      description: `Events of the caller's organization and mode, newest first. ${EVENT_RETENTION_NOTE}`,
      args: {
        where: t.arg({ type: EventWhere, description: "filters; none: every event" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) =>
        prismaConnection(ctx, info, ctx.prisma.event, args, {
          where: { ...tenant(ctx), AND: eventConditions(args.where) },
          orderBy: [{ sequence: "desc" }],
        }),
    },
    { description: "A page of events, newest first (Relay connection)." },
    { description: "An event in a page, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  redeliverEvent: t.prismaField({
    ...ADMIN_FIELD,
    type: "Event",
    description:
      "Sends an event again at once, with the same `webhook-id` and a new schedule of attempts: to `endpoint`, or " +
      "else to every enabled endpoint whose enabledEvents match its type. Errors: not_found (unknown event), " +
      "validation_error on endpoint (unknown), invalid_state (the endpoint is disabled, or no enabled endpoint " +
      "receives this type).",
    args: {
      id: t.arg.id({ required: true, description: "`evt_` id" }),
      endpoint: t.arg.id({ description: "`we_` id of the one endpoint to send it to; absent: every matching one" }),
    },
    resolve: async (query, _root, args, ctx) => {
      await redeliverEvent(ctx, String(args.id), args.endpoint == null ? null : String(args.endpoint));
      return ctx.prisma.event.findUniqueOrThrow({ ...query, where: { id: String(args.id) } });
    },
  }),
}));

builder.subscriptionFields((t) => ({
  events: t.prismaField({
    type: "Event",
    description:
      "The events of the caller's organization and mode as they commit, in commit order, one per message, from the " +
      "moment the stream opens (none from before: read those with the `events` query). At most once: an event " +
      "committed while the server's notification connection was down may be missed, and a client that falls more " +
      "than 1,000 events behind is cut off with `service_unavailable`; so is every stream when the server shuts " +
      "down. Subscribe again then (webhooks are the at-least-once delivery). Over Server-Sent Events: `Accept: " +
      "text/event-stream`. Errors: permission_denied for a customer-portal credential, validation_error on types " +
      "(an empty list), or for a request with an Idempotency-Key.",
    args: {
      types: t.arg({
        type: [EventType],
        description: "only events of these types (at least one); absent: every type",
      }),
    },
    subscribe: async (_root, args, ctx) => {
      if (args.types && args.types.length === 0)
        throw ValidationError.field("types", "must list at least one event type, or be left out for every type");
      // a keyed request runs in one transaction that ends with its answer (server.ts idempotent())
      if (requestDatabase())
        throw ValidationError.field("idempotency_key", "a subscription cannot run with an Idempotency-Key");
      if (!ctx.eventFeeds) throw new ServiceUnavailableError("No live event stream is served here.");
      return ctx.eventFeeds.open({ prisma: ctx.prisma, tenant: tenant(ctx), types: args.types ?? null });
    },
    resolve: (query, event: StreamedEvent, _args, ctx) =>
      ctx.prisma.event.findUniqueOrThrow({ ...query, where: { id: event.id, ...tenant(ctx) } }),
  }),
}));
