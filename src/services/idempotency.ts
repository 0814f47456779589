/**
 * Storage of idempotent requests (rules: domain/idempotency.ts; docs/decisions.md "Idempotency
 * keys"). A keyed request runs inside one database transaction (request-transaction.ts) that
 * also takes the key and stores the answer: after a crash a key is either done (the answer
 * committed with the request's writes, replayed to a retry) or free (nothing committed, a retry
 * runs once). Two concurrent requests with one key cannot both run: the transaction first takes
 * a PostgreSQL advisory lock of the key (`pg_try_advisory_xact_lock`, held until it ends), and a
 * second request that cannot take it gets a 409 at once. On PGlite (one connection) transactions
 * run one at a time, so the second one starts after the first committed and replays its answer.
 */
import { createHash } from "node:crypto";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { InvalidStateError } from "../domain/errors.js";
import { assertIdempotencyKey, idempotencyDecision } from "../domain/idempotency.js";
import type { Auth } from "./context.js";
import { runInTransaction, type TransactionOptions } from "./request-transaction.js";

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
 * The transaction of a keyed request. maxWait: how long it may wait to start (a free pool
 * connection, or on PGlite the end of the transaction before it: keyed requests queue there);
 * timeout: how long the whole request may run. Past either, the request fails (5xx), nothing is
 * kept and the key stays free.
 */
export const IDEMPOTENT_TRANSACTION: TransactionOptions = { maxWait: 30_000, timeout: 60_000 };

/** The text whose `hashtextextended(text, 0)` (64 bits) is the advisory lock of a key. */
function idempotencyLockText(auth: Pick<Auth, "organizationId" | "testMode">, key: string): string {
  // organization ids and the mode hold no "/", so the text names one key
  return `idempotency/${auth.organizationId}/${auth.testMode ? "test" : "live"}/${key}`;
}

/** Thrown inside the transaction to roll back a failed request and hand its answer out. */
class RolledBack extends Error {
  constructor(readonly answer: StoredAnswer) {
    super("the request failed; rolled back");
  }
}

/**
 * The work of a keyed request: `run` answers it on the transaction's client `db`, through which it
 * must make every query of the request; `failed` tells an answer that rolls everything back
 * (default: a 5xx).
 */
export interface IdempotentWork {
  run: (db: PrismaClient) => Promise<StoredAnswer>;
  failed?: (answer: StoredAnswer) => boolean;
}

/**
 * Takes the advisory lock of `key` in transaction `db` (`pg_try_advisory_xact_lock`, held until it
 * ends). Throws InvalidStateError (409) when another request with the key holds it.
 */
async function lockKey(db: PrismaClient, auth: Auth, key: string): Promise<void> {
  const [lock] = await db.$queryRaw<
    { locked: boolean }[]
  >`SELECT pg_try_advisory_xact_lock(hashtextextended(${idempotencyLockText(auth, key)}, 0)) AS locked`;
  if (!lock.locked)
    throw new InvalidStateError("A request with this Idempotency-Key is still running; retry when it has answered");
}

/**
 * Runs `work.run` once per key of the caller (organization and mode), inside one transaction with
 * the key: server.ts makes the transaction's client the request's ambient database. Its answer
 * is stored with its writes (`now` the key's `createdAt`) and returned; afterwards the stored
 * answer is returned with `replayed: true`. A failed answer (`work.failed(answer)`, e.g. a 5xx) or
 * an error thrown by `work.run` rolls back everything, the key included. Throws ValidationError
 * (400) for a bad key or a key reused with another request, InvalidStateError (409) while another
 * request with the key runs.
 */
export async function runIdempotent(
  prisma: PrismaClient,
  auth: Auth,
  request: IdempotentRequest,
  now: Date,
  work: IdempotentWork,
): Promise<StoredAnswer & { replayed: boolean }> {
  const { run, failed = (answer) => answer.status >= 500 } = work;
  assertIdempotencyKey(request.key);
  const requestHash = createHash("sha256").update(request.body).digest("hex");
  const id = { organizationId: auth.organizationId, testMode: auth.testMode, key: request.key };
  let answer: StoredAnswer | null = null;
  try {
    return await runInTransaction(prisma, IDEMPOTENT_TRANSACTION, async (db) => {
      await lockKey(db, auth, request.key);
      const stored = await db.idempotencyKey.findUnique({ where: { organizationId_testMode_key: id } });
      if (stored && idempotencyDecision(stored, { operation: request.operation, requestHash }, now) === "replay") {
        return { status: stored.responseStatus!, body: stored.responseBody ?? "", replayed: true };
      }
      answer = await run(db);
      if (failed(answer)) throw new RolledBack(answer);
      const data = {
        operation: request.operation,
        requestHash,
        createdAt: now,
        responseStatus: answer.status,
        responseBody: answer.body,
      };
      if (stored) await db.idempotencyKey.update({ where: { organizationId_testMode_key: id }, data });
      else await db.idempotencyKey.create({ data: { ...id, ...data } });
      return { ...answer, replayed: false };
    });
  } catch (e) {
    if (e instanceof RolledBack) return { ...e.answer, replayed: false };
    // the answer was a 4xx ("nothing changed") but storing it or committing failed: nothing
    // changed indeed, so it is still the right answer (not stored: a retry runs again)
    const given = answer as StoredAnswer | null;
    if (given && given.status >= 400 && given.status < 500) return { ...given, replayed: false };
    throw e;
  }
}
