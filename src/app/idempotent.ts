/**
 * Keyed requests (docs/rest.md "Idempotent requests"): a POST to /v1 or /graphql with an `Idempotency-Key` header
 * runs once per key, in one database transaction with the key and its stored answer; the same key again replays the
 * first answer.
 */
import { runIdempotent } from "../services/idempotency.js";
import { withRequestDatabase } from "../services/request-transaction.js";
import { DomainError } from "../domain/errors.js";
import { assertIdempotencyKey } from "../domain/idempotency.js";
import { boundFieldErrors, boundMessage } from "../domain/input-limits.js";
import { domainErrorOfDatabaseFailure, RETRY_AFTER_SECONDS } from "../infra/database-errors.js";
import type { Logger } from "../infra/logger.js";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { errorResponse } from "../rest/router.js";
import type { RequestAuth } from "./credentials.js";

/** The surfaces a keyed request may go to. */
export type KeyedSurface = "graphql" | "rest";

/** Runs `request` (its key already taken out of its headers) once per `key`; `run` answers it. */
export type IdempotentRunner = (
  request: Request,
  key: string,
  surface: KeyedSurface,
  run: (request: Request) => Promise<Response>,
) => Promise<Response>;

/** What keyed requests need. */
export interface IdempotentDeps {
  prisma: PrismaClient;
  logger: Logger;
  requestAuth: RequestAuth;
}

/**
 * A POST to /v1 or /graphql with an `Idempotency-Key` header runs once per key (of the key's
 * organization and mode); the same key again replays the first answer with
 * `Idempotent-Replayed: true` (domain/idempotency.ts). The whole request runs in one database
 * transaction with the key and its stored answer (services/idempotency.ts): every query of the
 * request goes through it as the ambient database (request-transaction.ts), a 5xx answer (or a
 * GraphQL `internal_error`) rolls it all back and frees the key. Without a valid API key the
 * request runs as usual (and answers 401). A portal credential's keys live apart from the API keys'.
 */
export function idempotentRunner({ prisma, logger, requestAuth }: IdempotentDeps): IdempotentRunner {
  return async (request, key, surface, run) => {
    let auth;
    try {
      auth = await requestAuth(prisma, request);
      if (auth.portal) {
        // the portal's keys live apart from the API keys' (same organization and mode)
        assertIdempotencyKey(key);
        key = `portal/${auth.portal.customerId}/${key}`;
      }
    } catch (e) {
      // no valid key: the request runs as usual and answers 401; anything else (a database that
      // cannot serve) must not run the request without its key
      if (e instanceof DomainError && (e.status === 401 || e.status === 403)) return run(request);
      return keyedFailure(logger, e, key, surface);
    }
    const url = new URL(request.url);
    const body = await request.text();
    const replay = (r: Request) => new Request(r.url, { method: r.method, headers: r.headers, body });
    let firstHeaders: Headers | null = null;
    try {
      const answer = await runIdempotent(prisma, auth, { key, operation: `POST ${url.pathname}`, body }, new Date(), {
        run: (db) =>
          withRequestDatabase(db, async () => {
            const response = await run(replay(request));
            firstHeaders = response.headers;
            return { status: response.status, body: await response.text() };
          }),
        failed: (answer) => answer.status >= 500 || (surface === "graphql" && hasInternalError(answer.body)),
      });
      const headers =
        firstHeaders ??
        new Headers({ "content-type": "application/json; charset=utf-8", "idempotent-replayed": "true" });
      return new Response(answer.body || null, { status: answer.status, headers });
    } catch (e) {
      // not the request's own answer: its transaction could not start, store or commit (the
      // request's errors are answers, app/routes.ts catches them); everything is rolled back
      return keyedFailure(logger, e, key, surface);
    }
  };
}

/**
 * The answer of a keyed request that failed outside the request itself (authentication or its
 * transaction could not run, start, store or commit; everything is rolled back, the key stays
 * free): a DomainError as itself, a database that cannot serve as 503 with Retry-After
 * (infra/database-errors.ts), anything else a logged, masked 500.
 */
function keyedFailure(logger: Logger, e: unknown, key: string, surface: KeyedSurface): Response {
  const known = e instanceof DomainError ? e : domainErrorOfDatabaseFailure(e);
  if (!known) logger.error({ err: e, idempotencyKey: key }, "keyed request failed; rolled back, the key stays free");
  else if (!(e instanceof DomainError))
    logger.warn(
      { err: e, idempotencyKey: key },
      `keyed request failed: ${known.code}; rolled back, the key stays free`,
    );
  if (known && surface === "rest") return errorResponse(known.code, known.message, known.fields);
  const error = known
    ? {
        code: known.code,
        message: boundMessage(known.message),
        ...(known.fields ? { fields: boundFieldErrors(known.fields) } : {}),
      }
    : { code: "internal_error", message: "Unexpected error." };
  const status = known ? known.status : 500;
  const headers: Record<string, string> = status === 503 ? { "retry-after": String(RETRY_AFTER_SECONDS) } : {};
  return Response.json(
    surface === "graphql" ? { errors: [{ message: error.message, extensions: error }] } : { error },
    {
      status,
      headers,
    },
  );
}

/**
 * True when a GraphQL answer (200 with `errors`) reports a failure of the service rather than of
 * the request: an error with code `internal_error` (or none), or with an HTTP status of 5xx.
 */
function hasInternalError(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { errors?: { extensions?: { code?: string; http?: { status?: number } } }[] };
    return (parsed.errors ?? []).some(
      (e) => !e.extensions?.code || e.extensions.code === "internal_error" || (e.extensions.http?.status ?? 0) >= 500,
    );
  } catch {
    return false;
  }
}
