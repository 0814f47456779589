/**
 * Customer sessions (spec "Session"; REST /v1/customer_base/sessions/, GraphQL
 * createCustomerSession/customerSession). A session gives one customer a secret `key` (for the
 * customer portal) that works until it expires. Only the key's SHA-256 is stored; the plaintext is
 * returned once, by create. `settings` is a snapshot of the organization's branding at creation.
 * Rules: docs/customer-sessions.md.
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import { newId, randomSecret } from "../infra/ids.js";
import { FieldErrorCollector, NotFoundError } from "../domain/errors.js";
import { isHttpUrl } from "../domain/formats.js";
import { URL_MAX_LENGTH, newSessionKey, sessionExpiresAt, sessionSettings } from "../domain/customer-sessions.js";
import { hashKey } from "./api-keys.js";
import { atomically, tenant, type ServiceContext } from "./context.js";
import { findDocumentCustomer } from "./reference.js";
import { readSettings } from "./organization-settings.js";

export interface CustomerSessionInput {
  /** `cus_` id of a customer of the caller's organization and mode */
  customer?: string | null;
  /** http(s) URL the portal sends the customer back to */
  returnUrl?: string | null;
}

/** Adds the errors of a required or optional http(s) URL under `field`. */
export function checkHttpUrl(
  value: string | null | undefined,
  field: string,
  errors: FieldErrorCollector,
  required: boolean,
): void {
  if (value === undefined || value === null || value === "") {
    if (required) errors.add(field, "is required");
    return;
  }
  if (value.length > URL_MAX_LENGTH) errors.add(field, `must have at most ${URL_MAX_LENGTH} characters`);
  else if (!isHttpUrl(value)) errors.add(field, "must be an absolute http(s) URL");
}

/**
 * Creates a session for a customer and returns it with its plaintext key (the only time the key
 * is available). ValidationError (400) names each bad field: `customer` missing or not a customer
 * of this organization and mode ("unknown customer"), `return_url` missing or not http(s).
 * The session is one INSERT, so a failure writes nothing.
 */
export async function createCustomerSession(ctx: ServiceContext, input: CustomerSessionInput) {
  const errors = new FieldErrorCollector();
  checkHttpUrl(input.returnUrl, "return_url", errors, true);
  const customer = await findDocumentCustomer(ctx, input.customer, errors);
  errors.throwIfAny("Invalid customer session");
  const { name } = await ctx.prisma.organization.findUniqueOrThrow({
    where: { id: ctx.auth.organizationId },
    select: { name: true },
  });
  const organization = { ...(await readSettings(ctx.prisma, tenant(ctx))), name };
  const key = newSessionKey(randomSecret);
  const createdAt = ctx.now();
  const session = await ctx.prisma.customerSession.create({
    data: {
      id: newId("ses"),
      ...tenant(ctx),
      customerId: customer!.id,
      keyHash: hashKey(key),
      returnUrl: input.returnUrl!,
      settings: sessionSettings(organization, input.returnUrl!) as unknown as Prisma.InputJsonValue,
      createdAt,
      expiresAt: sessionExpiresAt(createdAt, ctx.settings.sessionTtlSeconds),
    },
  });
  return { session, key };
}

/**
 * The filter that finds the live session with this key in the caller's organization and mode
 * (by the key's hash). Expired sessions (expiresAt <= now) do not match.
 */
export function activeSessionByKey(ctx: ServiceContext, key: string): Prisma.CustomerSessionWhereInput {
  return { keyHash: hashKey(key), ...tenant(ctx), expiresAt: { gt: ctx.now() }, revokedAt: null };
}

/** The filter for a live session by id in the caller's organization and mode (Relay node reads). */
export function activeSessionById(ctx: ServiceContext, id: string) {
  return { id, ...tenant(ctx), expiresAt: { gt: ctx.now() }, revokedAt: null };
}

/**
 * Ends a live session now (docs/customer-portal.md): its key stops opening the portal and every
 * portal credential it was exchanged for stops working (they are deleted in the same
 * transaction). NotFoundError when the caller has no live session with this id (unknown, expired,
 * already revoked or another tenant's).
 */
export async function revokeCustomerSession(ctx: ServiceContext, id: string) {
  return atomically(ctx, async (tx) => {
    const session = await tx.prisma.customerSession.findFirst({
      where: activeSessionById(tx, id),
      select: { id: true },
    });
    if (!session) throw new NotFoundError("customer session", id);
    await tx.prisma.portalCredential.deleteMany({ where: { sessionId: id } });
    return tx.prisma.customerSession.update({ where: { id }, data: { revokedAt: tx.now() } });
  });
}
