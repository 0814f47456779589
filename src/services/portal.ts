/**
 * The customer portal's credential (docs/customer-portal.md): a session key is exchanged for a
 * short-lived credential held in an HttpOnly cookie, which authenticates /graphql requests as that
 * one customer (`Auth.portal`). Only SHA-256 hashes of the credential's secret and of its CSRF
 * token are stored (PortalCredential). Rules: domain/portal.ts.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { newId, randomSecret } from "../infra/ids.js";
import { AuthenticationError, PermissionError } from "../domain/errors.js";
import { storedSessionSettings, type SessionSettings } from "../domain/customer-sessions.js";
import { credentialExpiresAt, isPortalSecret, PORTAL_SECRET_LENGTH } from "../domain/portal.js";
import { hashKey } from "./api-keys.js";
import type { Auth, ServiceContext } from "./context.js";

/** A session key exchanged for a credential: the secrets to set as cookies (shown once) and when they expire. */
export interface ExchangedCredential {
  ok: true;
  /** the credential's secret (the HttpOnly cookie's value) */
  secret: string;
  /** the CSRF token (the readable cookie's value, echoed in X-Portal-CSRF) */
  csrfToken: string;
  expiresAt: Date;
}

/**
 * A key that opens nothing: unknown, expired or revoked. `returnUrl` is the session's when the key names one, else
 * null.
 */
export interface RefusedKey {
  ok: false;
  returnUrl: string | null;
}

/**
 * Exchanges a session key for a new portal credential of the session's customer, organization and
 * mode, expiring after PORTAL_CREDENTIAL_TTL_SECONDS or with the session, whichever is first. One
 * transaction inserts it and deletes every expired credential (expiresAt <= now, of any
 * organization), so expired rows never pile up. A key that is unknown, expired (expiresAt <= now)
 * or revoked gives no credential; for a key of an existing session the answer carries its return
 * URL (the "link expired" page links there), never anything else of the session.
 */
export async function exchangeSessionKey(
  prisma: PrismaClient,
  key: string,
  now: Date,
): Promise<ExchangedCredential | RefusedKey> {
  const session = /^cs_[0-9A-Za-z]{1,64}$/.test(key)
    ? await prisma.customerSession.findUnique({ where: { keyHash: hashKey(key) } })
    : null;
  if (!session) return { ok: false, returnUrl: null };
  if (session.revokedAt || session.expiresAt.getTime() <= now.getTime())
    return { ok: false, returnUrl: session.returnUrl };
  const secret = randomSecret(PORTAL_SECRET_LENGTH);
  const csrfToken = randomSecret(PORTAL_SECRET_LENGTH);
  const expiresAt = credentialExpiresAt(now, session.expiresAt);
  await prisma.$transaction([
    // expired credentials open nothing: every exchange purges them, of every organization (PortalCredential_expiresAt)
    prisma.portalCredential.deleteMany({ where: { expiresAt: { lte: now } } }),
    prisma.portalCredential.create({
      data: {
        id: newId("pcr"),
        organizationId: session.organizationId,
        testMode: session.testMode,
        customerId: session.customerId,
        sessionId: session.id,
        tokenHash: hashKey(secret),
        csrfHash: hashKey(csrfToken),
        expiresAt,
        createdAt: now,
      },
    }),
  ]);
  return { ok: true, secret, csrfToken, expiresAt };
}

/** What a live credential opens: the caller's Auth and the session's settings snapshot. */
export interface PortalCredentialGrant {
  auth: Auth;
  settings: SessionSettings;
  expiresAt: Date;
}

const sameDigest = (a: string, b: string) => timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));

/**
 * Resolves a portal credential's secret (the cookie) to the customer it acts for. AuthenticationError
 * (401) when the secret is malformed or unknown, the credential expired (expiresAt <= now) or its
 * session was revoked. With `csrf` other than undefined (every /graphql request made with the
 * cookie), the X-Portal-CSRF value must be the credential's CSRF token: PermissionError (403)
 * otherwise.
 */
export async function authenticatePortal(
  prisma: PrismaClient,
  secret: string | undefined,
  csrf: string | null | undefined,
  now: Date,
): Promise<PortalCredentialGrant> {
  const expired = () => new AuthenticationError("The portal link has expired: open a new link from the business");
  if (!isPortalSecret(secret)) throw expired();
  const credential = await prisma.portalCredential.findUnique({
    where: { tokenHash: hashKey(secret) },
    include: { session: { select: { revokedAt: true, returnUrl: true, settings: true } } },
  });
  if (!credential || credential.session.revokedAt || credential.expiresAt.getTime() <= now.getTime()) throw expired();
  if (csrf !== undefined) {
    const given = createHash("sha256")
      .update(csrf ?? "")
      .digest("hex");
    if (!csrf || !sameDigest(given, credential.csrfHash))
      throw new PermissionError("Requests with the portal credential must carry its X-Portal-CSRF header");
  }
  const settings = storedSessionSettings(credential.session.settings, credential.session.returnUrl);
  return {
    auth: {
      organizationId: credential.organizationId,
      testMode: credential.testMode,
      userEmail: `portal:${credential.customerId}`,
      apiKeyId: "",
      portal: {
        customerId: credential.customerId,
        sessionId: credential.sessionId,
        credentialId: credential.id,
        displayInvoices: settings.displayInvoices,
      },
    },
    settings,
    expiresAt: credential.expiresAt,
  };
}

/**
 * Ends the caller's portal credential now (the portal's "Sign out", `signOutPortal`): deletes its row in one
 * statement, so the cookie opens nothing any more (the session and its other credentials are left as they are).
 * Answers the session's return URL, where the signed-out page links. PermissionError for a caller that is not a
 * portal credential.
 */
export async function signOutPortal(ctx: ServiceContext): Promise<{ returnUrl: string }> {
  const portal = ctx.auth.portal;
  if (!portal) throw new PermissionError("Only a customer-portal credential can sign out of the portal");
  const session = await ctx.prisma.customerSession.findUniqueOrThrow({
    where: { id: portal.sessionId },
    select: { returnUrl: true },
  });
  await ctx.prisma.portalCredential.deleteMany({ where: { id: portal.credentialId } });
  return { returnUrl: session.returnUrl };
}
