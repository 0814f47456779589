/**
 * The service context the billing run acts with (docs/billing-run.md): the run has no API key, so
 * each subscription's invoices are created for its organization and mode, as its user.
 */
import type { PrismaClient } from "../../infra/prisma/generated/client.js";
import type { AppSettings } from "../../infra/config.js";
import type { ServiceContext } from "../context.js";

/** A service context acting for `organizationId` in mode `testMode` (the run has no API key). */
export function runContext(
  prisma: PrismaClient,
  settings: AppSettings,
  now: () => Date,
  c: { organizationId: string; testMode: boolean; userEmail: string },
): ServiceContext {
  return {
    prisma,
    auth: { organizationId: c.organizationId, testMode: c.testMode, userEmail: c.userEmail, apiKeyId: "" },
    now,
    settings,
    baseUrl: "",
  };
}
