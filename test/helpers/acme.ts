import { createApiKey, type CreatedApiKey } from "../../src/services/api-keys.js";
import type { PrismaClient } from "../../src/infra/prisma/generated/client.js";

/**
 * The test organization "Acme SpA"'s tax profile (OrganizationSettings columns): what the test servers, the service
 * tests and the database copy give it, so its documents print and sign with a valid RUT (SII: the issuer's RUT,
 * RznSoc, DirOrigen, CmnaOrigen and Giro).
 */
export const ACME_TAX_PROFILE = {
  taxId: "76042235-5",
  taxBusinessName: "Acme SpA",
  taxAddress: "Av. Providencia 1234",
  taxCommune: "Providencia",
  taxActivity: "Servicios informáticos",
} as const;

/** The test keys createTestOrganizations makes: Acme's in test and in live mode, and Other's. */
export interface TestOrganizations {
  acme: CreatedApiKey;
  acmeLive: CreatedApiKey;
  other: CreatedApiKey;
}

/**
 * The organizations every test database starts with: "Acme SpA" (a test key of ops@acme.cl, a live key of
 * live@acme.cl) and "Other Ltda" (a test key of ops@other.cl), Acme with ACME_TAX_PROFILE in both modes (settings are
 * per mode: docs/decisions.md). What the test servers (test/helpers/server.ts) and the service tests
 * (test/helpers/service-context.ts) stand on.
 */
export async function createTestOrganizations(prisma: PrismaClient): Promise<TestOrganizations> {
  const acme = await createApiKey(prisma, { organizationName: "Acme SpA", email: "ops@acme.cl", mode: "test" });
  const acmeLive = await createApiKey(prisma, { organizationName: "Acme SpA", email: "live@acme.cl", mode: "live" });
  const other = await createApiKey(prisma, { organizationName: "Other Ltda", email: "ops@other.cl", mode: "test" });
  await prisma.organizationSettings.updateMany({
    where: { organizationId: acme.organization },
    data: ACME_TAX_PROFILE,
  });
  return { acme, acmeLive, other };
}
