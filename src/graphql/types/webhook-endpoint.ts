/**
 * Webhook endpoints (docs/webhooks.md "Endpoints"): the node type with its delivery attempts, the
 * `webhookEndpoints` and `webhookDeliveries` connections, and create / update / delete / rotate.
 * Rules: domain/webhooks.ts; writes: services/webhook-endpoints.ts; sending:
 * services/webhook-delivery.ts.
 */
import { builder, ADMIN_FIELD } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { tenant } from "../../services/context.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  DESCRIPTION_MAX_LENGTH,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from "../../services/webhook-endpoints.js";
import { ALL_EVENTS, EVENT_TYPE_NAMES, EVENT_TYPES } from "../../domain/events.js";
import {
  FAILING_DISABLE_AFTER_MS,
  MAX_WEBHOOK_ENDPOINTS,
  RECORDED_BODY_BYTES,
  WEBHOOK_URL_MAX_LENGTH,
} from "../../domain/webhooks.js";
import { eventTypeName } from "./event.js";
import { NotFoundError } from "../../domain/errors.js";

type EnabledEventValue = string;

export const EnabledEvent = builder.enumType("EnabledEvent", {
  description:
    "An entry of an endpoint's enabledEvents: an event type, or `all`. REST " +
    "writes the types with a dot (`invoice.finalized`) and `all` as `*`.",
  values: {
    all: { value: ALL_EVENTS, description: "every event type, present and future (REST `*`)" },
    ...Object.fromEntries(
      EVENT_TYPE_NAMES.map((type) => [eventTypeName(type), { value: type, description: EVENT_TYPES[type] }]),
    ),
  } as unknown as DescribedValues<EnabledEventValue>,
});

type EndpointStatusValue = "enabled" | "disabled";

export const WebhookEndpointStatus = builder.enumType("WebhookEndpointStatus", {
  description: "Whether an endpoint receives messages.",
  values: {
    enabled: { value: "enabled", description: "receives the events its enabledEvents match" },
    disabled: {
      value: "disabled",
      description:
        "receives nothing: disabled by an update, because it answered 410 Gone, or because every delivery failed " +
        `for ${FAILING_DISABLE_AFTER_MS / 86_400_000} days (disabledReason says which); an update to enabled ` +
        "re-enables it",
    },
  } as const satisfies DescribedValues<EndpointStatusValue>,
});

type DisabledReasonValue = "gone" | "failing" | "requested";

export const WebhookEndpointDisabledReason = builder.enumType("WebhookEndpointDisabledReason", {
  description: "Why an endpoint is disabled.",
  values: {
    gone: { value: "gone", description: "it answered 410 Gone" },
    failing: {
      value: "failing",
      description: `every delivery to it failed for ${FAILING_DISABLE_AFTER_MS / 86_400_000} days`,
    },
    requested: { value: "requested", description: "an update set its status to disabled" },
  } as const satisfies DescribedValues<DisabledReasonValue>,
});

export const WebhookDelivery = builder.prismaNode("WebhookAttempt", {
  name: "WebhookDelivery",
  id: { field: "id", description: "`del_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "One HTTP attempt to deliver an event to an endpoint, and what the endpoint answered.",
  fields: (t) => ({
    event: t.relation("event", { description: "the event sent (the message's `webhook-id`)" }),
    endpoint: t.relation("endpoint", { description: "the endpoint it was sent to" }),
    attempt: t.exposeInt("attempt", {
      description:
        "1 for the first attempt of this message, 2 for its first retry, ... (a redelivery starts again at 1)",
    }),
    statusCode: t.exposeInt("statusCode", {
      nullable: true,
      description: "the answer's HTTP status; null when no answer came (refused, timed out, unreachable)",
    }),
    succeeded: t.boolean({
      description: "true for a 2xx answer within the time limit",
      select: { statusCode: true },
      resolve: (a) => a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
    }),
    durationMs: t.exposeInt("durationMs", { description: "from sending to the end of the answer, in milliseconds" }),
    error: t.exposeString("error", {
      nullable: true,
      description: "why it failed (HTTP status, time limit, refused address, ...); null when it succeeded",
    }),
    responseBody: t.exposeString("responseBody", {
      nullable: true,
      description: `the first ${RECORDED_BODY_BYTES} bytes of the answer's body; null when no answer came`,
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when the attempt ended (ISO 8601)" }),
  }),
});

/** A transient field of an endpoint row: its secret in clear, in the one answer that shows it. */
type WithSecret = { revealedSecret?: string };

export const WebhookEndpoint = builder.prismaNode("WebhookEndpoint", {
  id: { field: "id", description: "`we_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "A URL that receives the events of the organization in one mode as signed Standard Webhooks messages " +
    "(verify them with the `standardwebhooks` or `svix` libraries). A test-mode endpoint receives only test-mode " +
    "events.",
  fields: (t) => ({
    url: t.exposeString("url", {
      description: `where messages are POSTed (http(s), at most ${WEBHOOK_URL_MAX_LENGTH} characters)`,
    }),
    enabledEvents: t.field({
      type: [EnabledEvent],
      description: "the event types it receives, or [all]",
      select: { enabledEvents: true },
      resolve: (e) => e.enabledEvents,
    }),
    status: t.field({
      type: WebhookEndpointStatus,
      description: "enabled or disabled",
      select: { status: true },
      resolve: (e) => e.status as EndpointStatusValue,
    }),
    disabledReason: t.field({
      type: WebhookEndpointDisabledReason,
      nullable: true,
      description: "why it is disabled; null while enabled",
      select: { disabledReason: true, status: true },
      resolve: (e) => (e.status === "disabled" ? (e.disabledReason as DisabledReasonValue | null) : null),
    }),
    description: t.exposeString("description", { nullable: true, description: "a note; null when not set" }),
    metadata: t.expose("metadata", {
      type: "JSONObject",
      description: "string keys and values of the caller's own (at most 50 keys)",
    }),
    secret: t.string({
      nullable: true,
      description:
        "The signing secret (`whsec_` + base64 of 32 random bytes): only in the answer of createWebhookEndpoint and " +
        "rotateWebhookEndpointSecret, null everywhere else. Verify messages with it (Standard Webhooks: the " +
        "`standardwebhooks` or `svix` libraries).",
      resolve: (e) => (e as WithSecret).revealedSecret ?? null,
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time (ISO 8601)" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "last change (ISO 8601)" }),
  }),
});

const WebhookEndpointInput = builder.inputType("WebhookEndpointInput", {
  description:
    "An endpoint's fields: url and enabledEvents are required on create; an update changes what it gives " +
    "(metadata merges, an empty value removes a key).",
  fields: (t) => ({
    url: t.string({
      description:
        `absolute http(s) URL, at most ${WEBHOOK_URL_MAX_LENGTH} characters, without credentials; https and a ` +
        "public host in live mode (unless the service allows private networks)",
    }),
    enabledEvents: t.field({ type: [EnabledEvent], description: "event types it receives, or [all]" }),
    description: t.string({ description: `a note, at most ${DESCRIPTION_MAX_LENGTH} characters` }),
    metadata: t.field({ type: "JSONObject", description: "string keys and values, merged into the current ones" }),
    status: t.field({
      type: WebhookEndpointStatus,
      description: "update only: enabled re-enables a disabled endpoint, disabled disables it",
    }),
  }),
});

const WebhookDeliveryWhere = builder.inputType("WebhookDeliveryWhere", {
  description: "Filters of the delivery attempts; every given filter must match.",
  fields: (t) => ({
    event: t.field({ type: StringFilter, description: "the event's id (REST `event`, `event__in`)" }),
    created: t.field({ type: DateTimeFilter, description: "when the attempt ended (REST `created__gte`, ...)" }),
  }),
});

const WebhookEndpointDeletePayload = builder.objectRef<{ id: string }>("WebhookEndpointDeletePayload").implement({
  description: "Result of deleting a webhook endpoint.",
  fields: (t) => ({
    deletedId: t.exposeID("id", { description: "id of the deleted endpoint (Relay's deletedId convention)" }),
  }),
});

builder.queryFields((t) => ({
  webhookEndpoints: t.connection(
    {
      type: WebhookEndpoint,
      description:
        `Webhook endpoints of the caller's organization and mode (at most ${MAX_WEBHOOK_ENDPOINTS}), ` +
        "newest first.",
      args: { offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) =>
        prismaConnection(ctx, info, ctx.prisma.webhookEndpoint, args, {
          where: tenant(ctx),
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        }),
    },
    { description: "A page of webhook endpoints, newest first." },
    { description: "A webhook endpoint in a page." },
  ),
  webhookDeliveries: t.connection(
    {
      type: WebhookDelivery,
      description:
        "Delivery attempts of the caller's organization and mode (of one endpoint when `endpoint` is given), " +
        "newest first. Errors: not_found (an unknown endpoint).",
      args: {
        endpoint: t.arg.id({ description: "`we_` id: only this endpoint's attempts" }),
        where: t.arg({ type: WebhookDeliveryWhere, description: "filters; none: every attempt" }),
        offset: offsetArg(t),
      },
      resolve: async (_root, args, ctx, info) => {
        const endpoint = args.endpoint == null ? null : String(args.endpoint);
        if (endpoint) {
          const found = await ctx.prisma.webhookEndpoint.findFirst({
            where: { id: endpoint, ...tenant(ctx) },
            select: { id: true },
          });
          if (!found) throw new NotFoundError("webhook endpoint", endpoint);
        }
        const w = args.where ?? {};
        return prismaConnection(ctx, info, ctx.prisma.webhookAttempt, args, {
          where: {
            ...tenant(ctx),
            ...(endpoint ? { endpointId: endpoint } : {}),
            AND: [...stringConditions("eventId", w.event), ...dateTimeConditions("createdAt", w.created)],
          },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of delivery attempts, newest first." },
    { description: "A delivery attempt in a page." },
  ),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.prismaField({
    ...ADMIN_FIELD,
    type: "WebhookEndpoint",
    description:
      "Creates an enabled endpoint with a new signing secret, shown in this answer only (`secret`). Errors: " +
      "validation_error (url: not http(s), too long, with credentials, plain http or a non-public host in live " +
      `mode; enabledEvents: empty or an unknown type; more than ${MAX_WEBHOOK_ENDPOINTS} endpoints in this mode), ` +
      "invalid_state (no encryption key configured: CERTIFICATE_ENCRYPTION_KEY).",
    args: { input: t.arg({ type: WebhookEndpointInput, required: true, description: "its fields" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createWebhookEndpoint(ctx, args.input);
      const row = await ctx.prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id: created.id } });
      return Object.assign(row, { revealedSecret: created.revealedSecret });
    },
  }),
  updateWebhookEndpoint: t.prismaField({
    ...ADMIN_FIELD,
    type: "WebhookEndpoint",
    description:
      "Changes an endpoint's url, enabledEvents, description, metadata or status (enabled re-enables it). " +
      "Errors: not_found, validation_error as on create.",
    args: {
      id: t.arg.id({ required: true, description: "`we_` id" }),
      input: t.arg({ type: WebhookEndpointInput, required: true, description: "the fields to change" }),
    },
    resolve: async (query, _root, args, ctx) => {
      await updateWebhookEndpoint(ctx, String(args.id), args.input);
      return ctx.prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id: String(args.id) } });
    },
  }),
  deleteWebhookEndpoint: t.field({
    ...ADMIN_FIELD,
    type: WebhookEndpointDeletePayload,
    description: "Deletes an endpoint, its undelivered messages and its recorded attempts. Errors: not_found.",
    args: { id: t.arg.id({ required: true, description: "`we_` id" }) },
    resolve: async (_root, args, ctx) => {
      await deleteWebhookEndpoint(ctx, String(args.id));
      return { id: String(args.id) };
    },
  }),
  rotateWebhookEndpointSecret: t.prismaField({
    ...ADMIN_FIELD,
    type: "WebhookEndpoint",
    description:
      "Gives an endpoint a new signing secret, shown in this answer only (`secret`); for 24 hours messages carry " +
      "two signatures, with the new and the previous secret, then the new one alone. Errors: not_found, " +
      "invalid_state (no encryption key configured).",
    args: { id: t.arg.id({ required: true, description: "`we_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const rotated = await rotateWebhookEndpointSecret(ctx, String(args.id));
      const row = await ctx.prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id: rotated.id } });
      return Object.assign(row, { revealedSecret: rotated.revealedSecret });
    },
  }),
}));
