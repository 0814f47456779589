/** What every use case needs: the database and who is asking (organization, mode, user). */
import type { PrismaClient } from "../infra/prisma/generated/client.js";

export interface Auth {
  organizationId: string;
  testMode: boolean;
  /** e-mail of the API key's user, written as `user` on documents */
  userEmail: string;
  apiKeyId: string;
}

export interface ServiceContext {
  prisma: PrismaClient;
  auth: Auth;
  /** current time (tests and test clocks may fix it) */
  now: () => Date;
}

/** The tenant filter every query of a tenant table carries. */
export function tenant(ctx: ServiceContext) {
  return { organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode };
}

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];
