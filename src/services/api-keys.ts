/**
 * Organizations and API keys (docs/rest.md "Tenancy, ids, money"; README "API keys"). Keys look like
 * `sk_test_<32 base62>` / `sk_live_<32 base62>`; only their SHA-256 hash is stored.
 */
import { createHash } from "node:crypto";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { newId, randomSecret } from "../infra/ids.js";
import { AuthenticationError, FieldErrorCollector } from "../domain/errors.js";
import { isEmailAddress } from "../domain/formats.js";
import type { Auth } from "./context.js";

export type KeyMode = "test" | "live";

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export interface CreatedApiKey {
  organization: string;
  key: string;
}

/**
 * Creates an API key for the organization named `organizationName` (created when no organization
 * has that name). Returns the key once; it cannot be read again. Throws ValidationError for a
 * blank name, a malformed e-mail or an unknown mode.
 */
export async function createApiKey(
  prisma: PrismaClient,
  input: { organizationName: string; email: string; mode: string },
): Promise<CreatedApiKey> {
  const errors = new FieldErrorCollector();
  const name = input.organizationName.trim();
  if (!name) errors.add("organization", "is required");
  if (!isEmailAddress(input.email)) errors.add("email", "must be an e-mail address");
  if (input.mode !== "test" && input.mode !== "live") errors.add("mode", "must be test or live");
  errors.throwIfAny("Cannot create API key");
  const testMode = input.mode === "test";
  const key = `sk_${input.mode}_${randomSecret(32)}`;
  return prisma.$transaction(async (tx) => {
    const organization =
      (await tx.organization.findFirst({ where: { name }, orderBy: { createdAt: "asc" } })) ??
      (await tx.organization.create({ data: { id: newId("org"), name, businessName: name } }));
    await tx.apiKey.create({
      data: {
        id: newId("key"),
        organizationId: organization.id,
        testMode,
        hash: hashKey(key),
        prefix: key.slice(0, 12),
        userEmail: input.email,
      },
    });
    return { organization: organization.id, key };
  });
}

/**
 * Resolves `Authorization: Bearer <key>` to the key's organization, mode and user.
 * Throws AuthenticationError (401) when the header is missing, malformed, unknown or revoked.
 */
export async function authenticate(prisma: PrismaClient, authorization: string | null | undefined): Promise<Auth> {
  const match = /^Bearer\s+(sk_(test|live)_[0-9A-Za-z]+)\s*$/.exec(authorization ?? "");
  if (!match) {
    throw new AuthenticationError("Send an API key as `Authorization: Bearer sk_test_...` or `sk_live_...`");
  }
  const apiKey = await prisma.apiKey.findUnique({ where: { hash: hashKey(match[1]) } });
  if (!apiKey || apiKey.revokedAt) throw new AuthenticationError("Unknown or revoked API key");
  return {
    organizationId: apiKey.organizationId,
    testMode: apiKey.testMode,
    userEmail: apiKey.userEmail,
    apiKeyId: apiKey.id,
  };
}
