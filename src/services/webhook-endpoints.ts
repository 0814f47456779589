/**
 * Webhook endpoints (REST /v1/webhook_endpoints/, GraphQL createWebhookEndpoint, ...;
 * docs/webhooks.md "Endpoints"): where an organization's events of one mode are delivered.
 *
 * - A URL is an absolute http(s) URL without credentials, https in live mode; in live mode its host
 *   must resolve to public addresses only (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS), checked here and
 *   again at every delivery (infra/webhook-http.ts). At most 16 endpoints per organization and mode.
 * - The signing secret (`whsec_` + base64 of 32 random bytes) is shown in the answer of create and
 *   of rotate only; it is stored sealed with the certificates' key (infra/secrets.ts). After a
 *   rotation the previous secret signs too for 24 hours.
 * - An endpoint is disabled by a PATCH, by a 410 Gone, or after 5 days in which every attempt
 *   failed (services/webhook-delivery.ts); disabling writes a `webhook_endpoint.disabled` event and
 *   e-mails the creator, and its undelivered messages are failed. A PATCH to `enabled` re-enables it.
 */
import { randomUUID } from "node:crypto";
import type { Prisma, WebhookEndpoint } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { requireKey, sealSecret } from "../infra/secrets.js";
import { newWebhookSecret, publicAddressProblem } from "../infra/webhook-http.js";
import { FieldErrorCollector, NotFoundError, ValidationError } from "../domain/errors.js";
import { mergeMetadata, type Metadata } from "../domain/metadata.js";
import {
  enabledEventsProblems,
  MAX_WEBHOOK_ENDPOINTS,
  PREVIOUS_SECRET_OVERLAP_MS,
  webhookUrlProblem,
  type DisableReason,
} from "../domain/webhooks.js";
import { atomically, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { recordEvents } from "./events.js";

/** Longest description. */
export const DESCRIPTION_MAX_LENGTH = 500;

/** An endpoint's fields as given (create: url and enabled_events required; update: what changes). */
export interface WebhookEndpointInput {
  url?: string | null;
  /** event types (`invoice.finalized`) or `*` */
  enabledEvents?: readonly string[] | null;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  /** update only: `enabled` re-enables a disabled endpoint, `disabled` disables it */
  status?: "enabled" | "disabled" | null;
}

/** An endpoint row with its signing secret in clear, for the one answer that shows it. */
export type EndpointWithSecret = WebhookEndpoint & { revealedSecret: string };

/** Checks the URL (form and, in live mode, where it points) into `errors`. */
async function checkUrl(ctx: ServiceContext, url: string, errors: FieldErrorCollector): Promise<void> {
  const live = !ctx.auth.testMode;
  const problem = webhookUrlProblem(url, live);
  if (problem) return void errors.add("url", problem);
  const publicOnly = live && !ctx.settings.webhooks.allowPrivateNetworks;
  const where = await publicAddressProblem(url, publicOnly);
  if (where)
    errors.add(
      "url",
      publicOnly
        ? `must point to a public address in live mode: ${where} (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows ` +
            "internal ones)"
        : `must not point to a link-local address (where clouds serve instance metadata): ${where}`,
    );
}

/** Checks `input`'s fields that are given (all required ones on create) and returns the columns they set. */
async function checkedColumns(
  ctx: ServiceContext,
  input: WebhookEndpointInput,
  current: WebhookEndpoint | null,
): Promise<Prisma.WebhookEndpointUncheckedUpdateInput> {
  const errors = new FieldErrorCollector();
  const data: Prisma.WebhookEndpointUncheckedUpdateInput = {};
  if (input.url !== undefined && input.url !== null) {
    await checkUrl(ctx, input.url, errors);
    data.url = input.url;
  } else if (!current) errors.add("url", "is required");
  if (input.enabledEvents !== undefined && input.enabledEvents !== null) {
    for (const [at, reason] of enabledEventsProblems(input.enabledEvents))
      errors.add(at ? `enabled_events.${at}` : "enabled_events", reason);
    data.enabledEvents = [...input.enabledEvents];
  } else if (!current) errors.add("enabled_events", 'is required (a list of event types, or ["*"] for all)');
  if (input.description !== undefined) {
    if (input.description && input.description.length > DESCRIPTION_MAX_LENGTH)
      errors.add("description", `must have at most ${DESCRIPTION_MAX_LENGTH} characters`);
    data.description = input.description || null;
  }
  errors.throwIfAny("Invalid webhook endpoint");
  if (input.metadata !== undefined)
    data.metadata = mergeMetadata((current?.metadata as Metadata | undefined) ?? {}, input.metadata);
  return data;
}

/**
 * Creates an endpoint, enabled, with a new signing secret (returned in clear, once). Errors: 400
 * naming the field (url, enabled_events, description, metadata; more than 16 endpoints in this
 * organization and mode), 409 without an encryption key (CERTIFICATE_ENCRYPTION_KEY).
 */
export async function createWebhookEndpoint(
  ctx: ServiceContext,
  input: WebhookEndpointInput,
): Promise<EndpointWithSecret> {
  const key = requireKey(ctx.settings.certificateEncryptionKey);
  const columns = await checkedColumns(ctx, input, null);
  const secret = newWebhookSecret();
  return atomically(ctx, async (tx) => {
    // the organization's settings row serializes concurrent creates (the limit holds under concurrency)
    await tx.prisma.$queryRaw`SELECT 1 FROM "Organization" WHERE "id" = ${ctx.auth.organizationId} FOR UPDATE`;
    const count = await tx.prisma.webhookEndpoint.count({ where: tenant(ctx) });
    if (count >= MAX_WEBHOOK_ENDPOINTS)
      throw ValidationError.field(
        "url",
        `at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints per organization and mode; delete one first`,
      );
    const created = await tx.prisma.webhookEndpoint.create({
      data: {
        id: newId("we"),
        ...tenant(ctx),
        url: columns.url as string,
        enabledEvents: columns.enabledEvents as string[],
        description: (columns.description as string | null | undefined) ?? null,
        metadata: (columns.metadata as Metadata | undefined) ?? {},
        secret: new Uint8Array(sealSecret(key, secret.bytes)),
        createdByEmail: ctx.auth.userEmail,
      },
    });
    return { ...created, revealedSecret: secret.text };
  });
}

/** Locks the caller's endpoint `id` until the transaction ends; 404 when it is not theirs. */
async function lockEndpoint(ctx: ServiceContext, id: string): Promise<WebhookEndpoint> {
  const found = await lockTenantRow(ctx.prisma, ctx, "WebhookEndpoint", id);
  if (!found) throw new NotFoundError("webhook endpoint", id);
  return ctx.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
}

/**
 * Changes an endpoint's url, enabled_events, description, metadata (merged) or status: `enabled`
 * re-enables a disabled one (its failure streak starts over), `disabled` disables it (its
 * undelivered messages are failed; no event, no e-mail: the caller asked). Errors: 404, 400 as on
 * create.
 */
export async function updateWebhookEndpoint(
  ctx: ServiceContext,
  id: string,
  input: WebhookEndpointInput,
): Promise<WebhookEndpoint> {
  return atomically(ctx, async (tx) => {
    const current = await lockEndpoint(tx, id);
    const data = await checkedColumns(tx, input, current);
    if (input.status === "enabled" && current.status !== "enabled")
      Object.assign(data, { status: "enabled", disabledAt: null, disabledReason: null, failingSince: null });
    const updated = await tx.prisma.webhookEndpoint.update({ where: { id }, data });
    if (input.status === "disabled" && current.status !== "disabled") {
      await disableEndpoint(tx, updated, "requested");
      return tx.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    }
    return updated;
  });
}

/** Deletes an endpoint with its messages and recorded attempts. 404 when it is not the caller's. */
export async function deleteWebhookEndpoint(ctx: ServiceContext, id: string): Promise<void> {
  await atomically(ctx, async (tx) => {
    await lockEndpoint(tx, id);
    await tx.prisma.webhookEndpoint.delete({ where: { id } });
  });
}

/**
 * Gives an endpoint a new signing secret (returned in clear, once); the current one becomes the
 * previous one and keeps signing for 24 hours. Errors: 404, 409 without an encryption key.
 */
export async function rotateWebhookEndpointSecret(ctx: ServiceContext, id: string): Promise<EndpointWithSecret> {
  const key = requireKey(ctx.settings.certificateEncryptionKey);
  const secret = newWebhookSecret();
  return atomically(ctx, async (tx) => {
    const current = await lockEndpoint(tx, id);
    const updated = await tx.prisma.webhookEndpoint.update({
      where: { id },
      data: {
        secret: new Uint8Array(sealSecret(key, secret.bytes)),
        previousSecret: current.secret,
        previousSecretExpiresAt: new Date(ctx.now().getTime() + PREVIOUS_SECRET_OVERLAP_MS),
      },
    });
    return { ...updated, revealedSecret: secret.text };
  });
}

/**
 * The secrets that sign a message to `endpoint` at `now` (docs/webhooks.md "Rotating the secret"): the current one,
 * then the previous one while it overlaps (`previousSecretExpiresAt` later than `now`). `open` turns sealed bytes
 * into the secret (infra/secrets.ts `openSecret` with the encryption key; the delivery worker passes one that keeps
 * what it opened).
 */
export function signingSecrets(
  endpoint: {
    secret: Uint8Array;
    previousSecret: Uint8Array | null;
    previousSecretExpiresAt: Date | string | null;
  },
  open: (sealed: Uint8Array) => Buffer,
  now: Date,
): Buffer[] {
  const secrets = [open(endpoint.secret)];
  const expires = endpoint.previousSecretExpiresAt ? new Date(endpoint.previousSecretExpiresAt) : null;
  if (endpoint.previousSecret && expires && expires > now) secrets.push(open(endpoint.previousSecret));
  return secrets;
}

/** What the e-mail to an endpoint's creator says about why it was disabled. */
const DISABLED_BECAUSE: Record<Exclude<DisableReason, "requested">, string> = {
  gone: "it answered 410 Gone, which asks for deliveries to stop",
  failing: "every delivery to it has failed for 5 days",
};

/**
 * Disables `endpoint` (already locked or just written in `ctx`'s transaction) for `reason`: its
 * undelivered messages are failed; unless the caller asked (`requested`), a
 * `webhook_endpoint.disabled` event is written and its creator e-mailed through the outbox.
 */
export async function disableEndpoint(
  ctx: ServiceContext,
  endpoint: WebhookEndpoint,
  reason: DisableReason,
): Promise<void> {
  const now = ctx.now();
  await ctx.prisma.webhookEndpoint.update({
    where: { id: endpoint.id },
    data: { status: "disabled", disabledAt: now, disabledReason: reason },
  });
  await ctx.prisma.webhookMessage.updateMany({
    where: { endpointId: endpoint.id, status: "pending" },
    data: { status: "failed" },
  });
  if (reason === "requested") return;
  await recordEvents(ctx, "webhook_endpoint.disabled", "webhook_endpoint", [endpoint.id]);
  await ctx.prisma.outboxMessage.create({
    data: {
      id: randomUUID(),
      organizationId: endpoint.organizationId,
      testMode: endpoint.testMode,
      kind: "webhook_endpoint_disabled",
      recipients: [endpoint.createdByEmail],
      subject: `Webhook endpoint disabled: ${endpoint.url}`,
      body:
        `The webhook endpoint ${endpoint.id} (${endpoint.url}) of your ${endpoint.testMode ? "test" : "live"} ` +
        `data was disabled because ${DISABLED_BECAUSE[reason]}. Its undelivered events were not sent.\n\n` +
        `Fix the receiver, then enable it again (PATCH /v1/webhook_endpoints/${endpoint.id}/ with ` +
        `{"status": "enabled"}) and send the events you need again (POST /v1/events/{id}/redeliver/).\n`,
      status: ctx.settings.smtpUrl ? "pending" : "kept",
      nextAttemptAt: now,
    },
  });
}
