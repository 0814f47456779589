/**
 * Organizations and API keys (docs/rest.md "Tenancy, ids, money"; docs/tour.md "API keys"). Keys look like
 * `sk_test_<32 base62>` / `sk_live_<32 base62>`; only their SHA-256 hash is stored.
 */
import { createHash } from "node:crypto";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { newId, randomSecret } from "../infra/ids.js";
import {
  AuthenticationError,
  FieldErrorCollector,
  NotFoundError,
  PermissionError,
  ValidationError,
} from "../domain/errors.js";
import { isEmailAddress } from "../domain/formats.js";
import {
  bearerKey,
  isKeyExpired,
  isOrganizationId,
  LAST_USED_RESOLUTION_MS,
  lastUseIsStale,
  mayManageKeyOfMode,
} from "../domain/api-keys.js";
import type { Auth, ServiceContext, Tx } from "./context.js";
import {
  API_KEYS_CHANNEL,
  apiKeyNotification,
  forgetApiKey,
  learnApiKey,
  LIVE_KEY_PREFIX_LENGTH,
  type ApiKeyCache,
  type ApiKeyChange,
  type CachedApiKey,
  type LiveApiKeyIndex,
} from "./api-key-cache.js";
import { newOrganizationSettings } from "./organization-settings.js";

export type KeyMode = "test" | "live";

/** The SHA-256 of `key` as stored (hex): API keys, session keys, portal secrets. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The last API key `presentedKeyHash` hashed, with its hash. */
let lastPresented: { key: string; hash: string } | undefined;

/**
 * The stored hash (`hashKey`) of the API key that `authorization` presents (`Bearer sk_...`,
 * domain/api-keys.ts bearerKey), or null when it presents none. The last key's hash is kept, so a
 * request's rate-limit bucket (server.ts) and its key lookup (`authenticate`) hash the key once; a
 * request of another key in between costs one more hash, nothing else.
 */
export function presentedKeyHash(authorization: string | null | undefined): string | null {
  const key = bearerKey(authorization);
  if (!key) return null;
  if (lastPresented?.key !== key) lastPresented = { key, hash: hashKey(key) };
  return lastPresented.hash;
}

export interface CreatedApiKey {
  /** organization id (`org_...`) */
  organization: string;
  /** the organization's name */
  organization_name: string;
  /** true when this call created the organization, false when the key joined an existing one */
  organization_created: boolean;
  /** the key's id (`key_...`), for `api-key revoke` */
  id: string;
  /** the full key; shown once, only its hash is stored */
  key: string;
  /** ISO 8601 instant from which the key answers 401, or null (never expires) */
  expires_at: string | null;
}

/**
 * Creates an API key, in one transaction, for
 * - `organizationId` (`org_...`): that organization; NotFoundError (404) when there is none, so a
 *   mistyped id never creates an organization;
 * - else `organizationName`: the organization with exactly that name (the key joins it and the
 *   result says `organization_created: false`), or a new organization with that name and both
 *   modes' settings (`organization_created: true`). ValidationError on `organization` when more than
 *   one organization has that name: name one by its id.
 * `expiresAt`: the instant the key stops working (null or absent: never; see domain/api-keys.ts
 * parseKeyExpiry for the CLI's `--expires`). Returns the key once; it cannot be read again.
 * Throws ValidationError for neither or both of organizationId and organizationName, a blank
 * name, a malformed e-mail, an unknown mode or an `expiresAt` not after `now`; nothing is written then.
 */
export async function createApiKey(
  prisma: PrismaClient,
  input: NewApiKeyInput,
  now: Date = new Date(),
): Promise<CreatedApiKey> {
  const { byId, wanted, expiresAt } = checkedKeyInput(input, now);
  const testMode = input.mode === "test";
  const key = `sk_${input.mode}_${randomSecret(32)}`;
  const id = newId("key");
  const result = await prisma.$transaction(async (tx) => {
    const { organizationId, name, created } =
      byId !== undefined ? await organizationById(tx, byId) : await organizationNamed(tx, wanted);
    await tx.apiKey.create({
      data: {
        id,
        organizationId,
        testMode,
        hash: hashKey(key),
        prefix: key.slice(0, 12),
        userEmail: input.email,
        expiresAt,
      },
    });
    // on commit, every process's index of live keys knows it (services/api-key-cache.ts followApiKeyChanges)
    await notifyApiKeyChange(tx, { kind: "created", hashPrefix: hashKey(key).slice(0, LIVE_KEY_PREFIX_LENGTH) });
    return {
      organization: organizationId,
      organization_name: name,
      organization_created: created,
      id,
      key,
      expires_at: expiresAt?.toISOString() ?? null,
    };
  });
  // after the commit: this process's indexes of live keys know it at once (services/api-key-cache.ts)
  learnApiKey(hashKey(key));
  return result;
}

/** What createApiKey is asked for. */
export interface NewApiKeyInput {
  organizationName?: string;
  organizationId?: string;
  email: string;
  mode: string;
  expiresAt?: Date | null;
  /** what the caller's input calls the expiry, named by its error (default `expires`, the CLI's flag) */
  expiresField?: string;
}

/**
 * createApiKey's input checked at `now`: the organization's id (trimmed) or wanted name (trimmed, `""` when named
 * by id), and the expiry (null: never). ValidationError listing every problem (see createApiKey).
 */
function checkedKeyInput(
  input: NewApiKeyInput,
  now: Date,
): { byId: string | undefined; wanted: string; expiresAt: Date | null } {
  const errors = new FieldErrorCollector();
  const byId = input.organizationId?.trim();
  const wanted = input.organizationName?.trim() ?? "";
  if (byId !== undefined && input.organizationName !== undefined)
    errors.add("organization", "name it by id or by name, not both");
  else if (byId !== undefined && !isOrganizationId(byId))
    errors.add(
      "organization",
      `must be an organization id (org_ and 24 letters or digits), got ${JSON.stringify(byId.slice(0, 40))}`,
    );
  else if (byId === undefined && !wanted) errors.add("organization", "is required");
  if (!isEmailAddress(input.email)) errors.add("email", "must be an e-mail address");
  if (input.mode !== "test" && input.mode !== "live") errors.add("mode", "must be test or live");
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt && !(expiresAt.getTime() > now.getTime()))
    errors.add(input.expiresField ?? "expires", "must be in the future");
  errors.throwIfAny("Cannot create API key");
  return { byId, wanted, expiresAt };
}

/** The organization a key joins (or, `created`, was made for), with its name. */
interface KeyOrganization {
  organizationId: string;
  name: string;
  created: boolean;
}

/** The organization with id `id`, read in `tx`; NotFoundError when there is none. */
async function organizationById(tx: Tx, id: string): Promise<KeyOrganization> {
  const found = await tx.organization.findUnique({ where: { id }, select: { id: true, name: true } });
  if (!found) throw new NotFoundError("organization", id);
  return { organizationId: found.id, name: found.name, created: false };
}

/**
 * The one organization named exactly `name`, or a new one with that name and both modes' settings (`created`),
 * written in `tx`. ValidationError on `organization` when several have that name.
 */
async function organizationNamed(tx: Tx, name: string): Promise<KeyOrganization> {
  const named = await tx.organization.findMany({
    where: { name },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true },
  });
  if (named.length > 1) {
    throw ValidationError.field(
      "organization",
      `${named.length} organizations are named ${JSON.stringify(name)} (${named.map((o) => o.id).join(", ")}): ` +
        `name one by its org_ id`,
    );
  }
  if (named.length === 1) return { organizationId: named[0].id, name, created: false };
  const organizationId = newId("org");
  await tx.organization.create({ data: { id: organizationId, name } });
  await tx.organizationSettings.createMany({ data: newOrganizationSettings(organizationId, name) });
  return { organizationId, name, created: true };
}

/**
 * Queues `change` on API_KEYS_CHANNEL in transaction `tx`: PostgreSQL (and PGlite) deliver it when `tx` commits, to
 * every process's listener (services/event-stream.ts), and never when it rolls back.
 */
async function notifyApiKeyChange(tx: Pick<PrismaClient, "$executeRaw">, change: ApiKeyChange): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${API_KEYS_CHANNEL}, ${apiKeyNotification(change)})`;
}

/** One key as `api-key list` shows it: never the key nor its hash. Times are ISO 8601 or null. */
export interface ApiKeyListing {
  id: string;
  /** first 12 characters of the key (`sk_test_ab12`) */
  prefix: string;
  organization: { id: string; name: string };
  mode: KeyMode;
  email: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/**
 * Lists API keys, oldest first, of every organization or of one: `organization` is an
 * organization id (`org_...`) or an exact organization name. Throws NotFoundError when no
 * organization has that id or name.
 */
export async function listApiKeys(
  prisma: PrismaClient,
  filter: { organization?: string } = {},
): Promise<ApiKeyListing[]> {
  let organizationIds: string[] | undefined;
  if (filter.organization !== undefined) {
    const wanted = filter.organization.trim();
    const organizations = await prisma.organization.findMany({
      where: { OR: [{ id: wanted }, { name: wanted }] },
      select: { id: true },
    });
    if (!organizations.length) throw new NotFoundError("organization", wanted);
    organizationIds = organizations.map((o) => o.id);
  }
  const keys = await prisma.apiKey.findMany({
    where: organizationIds ? { organizationId: { in: organizationIds } } : {},
    select: {
      id: true,
      prefix: true,
      testMode: true,
      userEmail: true,
      createdAt: true,
      lastUsedAt: true,
      expiresAt: true,
      revokedAt: true,
      organization: { select: { id: true, name: true } },
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return keys.map((k) => ({
    id: k.id,
    prefix: k.prefix,
    organization: { id: k.organization.id, name: k.organization.name },
    mode: k.testMode ? "test" : "live",
    email: k.userEmail,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  }));
}

export interface RevokedApiKey {
  id: string;
  prefix: string;
  /** ISO 8601 instant of the (first) revocation */
  revoked_at: string;
  /** true when the key was already revoked before this call (its revokedAt is kept) */
  already_revoked: boolean;
}

/**
 * Revokes the key with id `id` (`key_...`): sets `revokedAt` to `now` with one conditional
 * UPDATE, so the key answers 401 from the next request on in this process (its cached entry is
 * dropped at once) and, through the notification its transaction sends (API_KEYS_CHANNEL), as soon
 * as other processes hear it (milliseconds; docs/operations.md "API key cache"). Revoking a revoked
 * key changes nothing and reports `already_revoked` with the first revocation's time. Throws
 * NotFoundError for an unknown id and ValidationError for a blank one.
 */
export async function revokeApiKey(prisma: PrismaClient, id: string, now: Date = new Date()): Promise<RevokedApiKey> {
  const wanted = id.trim();
  if (!wanted) throw ValidationError.field("id", "is required");
  const revoked = await prisma.$transaction(async (tx) => {
    const { count } = await tx.apiKey.updateMany({ where: { id: wanted, revokedAt: null }, data: { revokedAt: now } });
    const key = await tx.apiKey.findUnique({
      where: { id: wanted },
      select: { id: true, prefix: true, revokedAt: true },
    });
    if (!key || !key.revokedAt) throw new NotFoundError("API key", wanted);
    // on commit, every process drops it from its caches (services/api-key-cache.ts followApiKeyChanges)
    if (count > 0) await notifyApiKeyChange(tx, { kind: "revoked", id: key.id });
    return { id: key.id, prefix: key.prefix, revoked_at: key.revokedAt.toISOString(), already_revoked: count === 0 };
  });
  // after the commit (a request reading the key before it would cache it again): this process's
  // caches drop it now, before its own notification arrives; other processes' when theirs does
  forgetApiKey(revoked.id);
  return revoked;
}

/**
 * Resolves `Authorization: Bearer <key>` (the scheme in any case, RFC 7235; domain/api-keys.ts
 * bearerKey) to the key's organization, mode and user. With `cache` (the app's ApiKeyCache,
 * services/api-key-cache.ts) a key read within the cache's TTL is served without any statement;
 * else (or without `cache`) with one SELECT by hash, and a key found and not revoked is cached.
 * Throws AuthenticationError (401) when the header is missing or malformed, the key is unknown or
 * revoked, or it expired (`expiresAt` at or before `now`; checked on every call, cached or not).
 * When the `lastUsedAt` known (read, or last written by this cache) is null or older than
 * LAST_USED_RESOLUTION_MS (60 s) it is set to `now` with one conditional UPDATE (a concurrent
 * request that already wrote it makes the UPDATE match no row).
 */
export async function authenticate(
  prisma: PrismaClient,
  authorization: string | null | undefined,
  now: Date = new Date(),
  cache?: ApiKeyCache,
): Promise<Auth> {
  const hash = presentedKeyHash(authorization);
  if (!hash) {
    throw new AuthenticationError("Send an API key as `Authorization: Bearer sk_test_...` or `sk_live_...`");
  }
  let apiKey: CachedApiKey | undefined = cache?.get(hash);
  if (!apiKey) {
    const generation = cache?.generation ?? 0;
    const row = await prisma.apiKey.findUnique({ where: { hash } });
    // unknown and revoked keys are never cached (services/api-key-cache.ts)
    if (!row || row.revokedAt) throw new AuthenticationError("Unknown or revoked API key");
    apiKey = {
      id: row.id,
      organizationId: row.organizationId,
      testMode: row.testMode,
      userEmail: row.userEmail,
      expiresAt: row.expiresAt,
      lastUsedAt: row.lastUsedAt,
    };
    cache?.set(hash, apiKey, generation);
  }
  if (isKeyExpired(apiKey.expiresAt, now))
    throw new AuthenticationError(`API key expired at ${apiKey.expiresAt!.toISOString()}`);
  if (lastUseIsStale(apiKey.lastUsedAt, now)) {
    const cutoff = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    // marked before the write, so concurrent requests of this process do not repeat it
    apiKey.lastUsedAt = now;
    // raw, so it is not a model operation: the per-request query lists tests keep stay as they were
    await prisma.$executeRaw`
      UPDATE "ApiKey" SET "lastUsedAt" = ${now}
      WHERE "id" = ${apiKey.id} AND ("lastUsedAt" IS NULL OR "lastUsedAt" < ${cutoff})`;
  }
  return {
    organizationId: apiKey.organizationId,
    testMode: apiKey.testMode,
    userEmail: apiKey.userEmail,
    apiKeyId: apiKey.id,
  };
}

/**
 * The hash prefixes (`LIVE_KEY_PREFIX_LENGTH` hex characters of `hashKey`) of every API key not revoked and not
 * expired at `now`, with one SELECT of the ApiKey table: what a LiveApiKeyIndex (services/api-key-cache.ts) keeps.
 */
export async function liveApiKeyPrefixes(prisma: PrismaClient, now: Date = new Date()): Promise<string[]> {
  // raw, so it is not a model operation: the per-request query lists tests keep stay as they were
  const rows = await prisma.$queryRaw<{ prefix: string }[]>`
    SELECT left("hash", ${LIVE_KEY_PREFIX_LENGTH}::int) AS "prefix" FROM "ApiKey"
    WHERE "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > ${now})`;
  return rows.map((r) => r.prefix);
}

/**
 * Whether `authorization` may authenticate, decided without a statement of its own (docs/limits.md "Failed
 * authentications"): what a client address past the failed-authentication limit is asked before its request runs.
 * - no well-formed API key (`Bearer sk_...`): false;
 * - a key in `cache`: true unless it expired at `now`;
 * - else whether `index` holds its hash prefix (a key live when the index was last read; reading it again, one
 *   statement for every key, at most once per its refresh period).
 * True means the request runs and `authenticate` decides as usual (reading the key when the cache does not hold
 * it); false means the key cannot authenticate, or was unknown to this process when `index` was last read.
 */
export async function mayAuthenticate(
  authorization: string | null | undefined,
  now: Date,
  cache: ApiKeyCache,
  index: LiveApiKeyIndex,
): Promise<boolean> {
  const hash = presentedKeyHash(authorization);
  if (!hash) return false;
  const cached = cache.get(hash);
  if (cached) return !isKeyExpired(cached.expiresAt, now);
  return index.mayExist(hash);
}

/**
 * True when `authorization` presents an API key that `cache` holds and that has not expired at `now`: a key that
 * authenticates without a statement, which the failed-authentication limit never refuses, so server.ts does not
 * read its address's count (on PostgreSQL a statement: infra/rate-limit.ts).
 */
export function holdsValidKey(authorization: string | null | undefined, now: Date, cache: ApiKeyCache): boolean {
  const hash = presentedKeyHash(authorization);
  const cached = hash ? cache.get(hash) : undefined;
  return cached !== undefined && !isKeyExpired(cached.expiresAt, now);
}

/** The caller's right to manage keys of `mode`: PermissionError (403) unless domain/api-keys.ts allows it. */
function checkKeyMode(ctx: Pick<ServiceContext, "auth">, mode: KeyMode): void {
  if (!mayManageKeyOfMode({ member: Boolean(ctx.auth.member), testMode: ctx.auth.testMode }, mode)) {
    const own = ctx.auth.testMode ? "test" : "live";
    throw new PermissionError(`A ${own} API key creates and revokes ${own} keys only; ask an admin member`);
  }
}

/** The caller's organization's API keys of both modes, oldest first (listApiKeys' listing). */
export function organizationApiKeys(ctx: Pick<ServiceContext, "prisma" | "auth">): Promise<ApiKeyListing[]> {
  return listApiKeys(ctx.prisma, { organization: ctx.auth.organizationId });
}

/**
 * Creates an API key of `mode` in the caller's organization, acting for the caller's e-mail (the member's, or the
 * calling key's user), expiring at `expiresAt` (null: never). Returns the key once with its listing. Errors: 403
 * when an API key asks for a key of the other mode (checkKeyMode); 400 on `expiresAt` when it is not in the future.
 */
export async function createOrganizationApiKey(
  ctx: Pick<ServiceContext, "prisma" | "auth" | "now">,
  input: { mode: KeyMode; expiresAt?: Date | null },
): Promise<{ key: string; apiKey: ApiKeyListing }> {
  checkKeyMode(ctx, input.mode);
  const created = await createApiKey(
    ctx.prisma,
    {
      organizationId: ctx.auth.organizationId,
      email: ctx.auth.userEmail,
      mode: input.mode,
      expiresAt: input.expiresAt,
      expiresField: "expiresAt",
    },
    ctx.now(),
  );
  const listing = (await organizationApiKeys(ctx)).find((k) => k.id === created.id)!;
  return { key: created.key, apiKey: listing };
}

/**
 * Revokes API key `id` of the caller's organization (revokeApiKey: at once in every process; revoking a revoked key
 * changes nothing) and returns its listing. Errors: 404 for a key of another organization or none; 403 when an API
 * key revokes a key of the other mode.
 */
export async function revokeOrganizationApiKey(
  ctx: Pick<ServiceContext, "prisma" | "auth" | "now">,
  id: string,
): Promise<ApiKeyListing> {
  const key = await ctx.prisma.apiKey.findFirst({
    where: { id, organizationId: ctx.auth.organizationId },
    select: { testMode: true },
  });
  if (!key) throw new NotFoundError("API key", id);
  checkKeyMode(ctx, key.testMode ? "test" : "live");
  await revokeApiKey(ctx.prisma, id, ctx.now());
  return (await organizationApiKeys(ctx)).find((k) => k.id === id)!;
}
