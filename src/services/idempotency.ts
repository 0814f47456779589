/**
 * Storage of idempotent requests (rules: domain/idempotency.ts). The key is reserved by an
 * INSERT ... ON CONFLICT DO NOTHING before the request runs, so two concurrent requests with one
 * key cannot both run: the second finds the reservation and gets a 409, later ones the answer.
 */
import { createHash } from "node:crypto";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { assertIdempotencyKey, idempotencyDecision } from "../domain/idempotency.js";
import type { Auth } from "./context.js";

export interface IdempotentRequest {
  key: string;
  /** "POST /v1/payments/" */
  operation: string;
  body: string;
}

export interface StoredAnswer {
  status: number;
  body: string;
}

/**
 * Runs `run` once per key of the caller (organization and mode): the first time it runs and its
 * answer is stored (unless it is a 5xx); afterwards the stored answer is returned with
 * `replayed: true`. Throws ValidationError (400) for a bad key or a key reused with another
 * request, InvalidStateError (409) while the first request still runs.
 */
export async function runIdempotent(
  prisma: PrismaClient,
  auth: Auth,
  request: IdempotentRequest,
  now: Date,
  run: () => Promise<StoredAnswer>,
): Promise<StoredAnswer & { replayed: boolean }> {
  assertIdempotencyKey(request.key);
  const requestHash = createHash("sha256").update(request.body).digest("hex");
  const id = { organizationId: auth.organizationId, testMode: auth.testMode, key: request.key };
  const reserve = () => prisma.$executeRaw`
    INSERT INTO "IdempotencyKey" ("organizationId", "testMode", "key", "operation", "requestHash", "createdAt")
    VALUES (${id.organizationId}, ${id.testMode}, ${id.key}, ${request.operation}, ${requestHash}, ${now})
    ON CONFLICT ("organizationId", "testMode", "key") DO NOTHING`;
  if ((await reserve()) === 0) {
    const stored = await prisma.idempotencyKey.findUnique({ where: { organizationId_testMode_key: id } });
    if (stored) {
      const decision = idempotencyDecision(stored, { operation: request.operation, requestHash }, now);
      if (decision === "replay") return { status: stored.responseStatus!, body: stored.responseBody ?? "", replayed: true };
      await prisma.idempotencyKey.deleteMany({ where: { ...id, createdAt: stored.createdAt } });
    }
    if ((await reserve()) === 0) return runIdempotent(prisma, auth, request, now, run);
  }
  let answer: StoredAnswer;
  try {
    answer = await run();
  } catch (e) {
    await prisma.idempotencyKey.delete({ where: { organizationId_testMode_key: id } });
    throw e;
  }
  if (answer.status >= 500) await prisma.idempotencyKey.delete({ where: { organizationId_testMode_key: id } });
  else await prisma.idempotencyKey.update({ where: { organizationId_testMode_key: id }, data: { responseStatus: answer.status, responseBody: answer.body } });
  return { ...answer, replayed: false };
}
