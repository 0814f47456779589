/**
 * Which database failures are the client's to retry (docs/input-limits.md "Database failures"):
 * an unreachable server, a closed or terminated connection, no free connection in the pool
 * (Prisma P2024, pg-pool's connect timeout), an interactive transaction that could not start or
 * was closed (P2028), too many connections, a statement or lock timeout. Those answer 503
 * `service_unavailable` with `Retry-After`; REST (server.ts, rest/router.ts) and GraphQL
 * (graphql/errors.ts) both ask `domainErrorOfDatabaseFailure`.
 *
 * A numeric overflow (SQLSTATE 22003, Prisma P2020) of a value computed from valid inputs (a
 * line total of a huge quantity times a huge price) is the client's input: 400.
 */
import { ServiceUnavailableError, ValidationError, type DomainError } from "../domain/errors.js";
import { MAX_DECIMAL } from "../domain/input-limits.js";

/** Seconds a client should wait before retrying after a 503 (the `Retry-After` header). */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Prisma error codes of an unavailable database: unreachable, timed out, closed, pool or transaction start timeout, too
 * many connections.
 */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1003", "P1008", "P1017", "P1018", "P2024", "P2028", "P2037"]);
/**
 * SQLSTATEs of the same: the database gone (3D000), admin/crash shutdown, cannot connect now, statement cancelled
 * (statement_timeout), lock timeout, too many connections, connection exceptions.
 */
const SQLSTATE_UNAVAILABLE = new Set([
  "3D000",
  "57P01",
  "57P02",
  "57P03",
  "57014",
  "55P03",
  "53300",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "08007",
]);
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
const ADAPTER_KINDS = new Set([
  "DatabaseDoesNotExist",
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TransactionAlreadyClosed",
]);
/** Messages of failures that carry no code (pg and pg-pool throw plain Errors for these). */
const UNAVAILABLE_MESSAGE = new RegExp(
  [
    "Connection terminated",
    "timeout exceeded when trying to connect",
    "Client has encountered a connection error",
    "Connection ended",
    "Can't reach database server",
    "Unable to start a transaction in the given time",
    "Transaction API error",
    "Server has closed the connection",
    "canceling statement due to (statement|lock) timeout",
    "terminating connection",
    "the database system is (shutting down|starting up|in recovery mode)",
    "is not currently accepting connections",
    'database "[^"]*" does not exist',
    "Timed out fetching a new connection",
    "Cannot use a pool after calling end",
    "PGlite is closed",
  ].join("|"),
  "i",
);

type Kind = "unavailable" | "out_of_range" | null;

/** Looks through `error`, its causes and Prisma's metadata (bounded) for a known failure. */
export function classifyDatabaseError(error: unknown): Kind {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  let kind: Kind = null;
  while (queue.length && seen.size < 20) {
    const e = queue.shift();
    if (e === null || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    const o = e as Record<string, unknown>;
    const codes = [o.code, o.originalCode, o.errorCode].filter((c): c is string => typeof c === "string");
    if (codes.some((c) => PRISMA_UNAVAILABLE.has(c) || SQLSTATE_UNAVAILABLE.has(c) || SOCKET_CODES.has(c)))
      return "unavailable";
    if (typeof o.kind === "string" && ADAPTER_KINDS.has(o.kind)) return "unavailable";
    if (typeof o.message === "string" && UNAVAILABLE_MESSAGE.test(o.message)) return "unavailable";
    if (codes.includes("22003") || codes.includes("P2020") || o.kind === "ValueOutOfRange") kind = "out_of_range";
    for (const next of [
      o.cause,
      o.meta,
      o.originalError,
      (o.meta as Record<string, unknown> | undefined)?.driverAdapterError,
    ])
      if (next) queue.push(next);
    if (Array.isArray(o.errors)) queue.push(...o.errors); // AggregateError (a connect to every address refused)
  }
  return kind;
}

/** The client-facing error for a database failure `error`, or null when it is not one we know (a 500). */
export function domainErrorOfDatabaseFailure(error: unknown): DomainError | null {
  const kind = classifyDatabaseError(error);
  if (kind === "unavailable") return new ServiceUnavailableError(undefined, RETRY_AFTER_SECONDS);
  if (kind === "out_of_range") {
    return ValidationError.field(
      "body",
      `a computed amount (a line total, discount or document total) exceeds the largest allowed value ${MAX_DECIMAL}` +
        `; use smaller quantities or amounts`,
    );
  }
  return null;
}
