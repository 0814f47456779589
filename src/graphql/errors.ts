/**
 * One error shape for GraphQL (docs/rest.md "Responses"): DomainErrors become GraphQL errors with
 * `extensions.code` (and `extensions.fields`); GraphQL's own validation and input-coercion errors
 * get code `validation_error` with the field named when the message gives it; anything else is
 * logged and masked as `internal_error`. A database that cannot serve the request now (unreachable,
 * pool exhausted, statement timeout: infra/database-errors.ts) is `service_unavailable` with HTTP
 * 503 and `Retry-After`. Messages and field reasons are bounded here (domain/input-limits.ts
 * `boundMessage`: at most 200 characters of quoted input).
 */
import { GraphQLError } from "graphql";
import { DomainError, ServiceUnavailableError, type FieldErrors } from "../domain/errors.js";
import { boundFieldErrors, boundMessage } from "../domain/input-limits.js";
import { domainErrorOfDatabaseFailure } from "../infra/database-errors.js";
import type { Logger } from "../infra/logger.js";
import { snake } from "./input-guard.js";
import { InputReasonError } from "./scalars.js";

/** Reasons of graphql-js's coercion errors (by their message), in the words the input guard and the services use. */
const COERCION_REASONS: [RegExp, string][] = [
  [/^Expected non-nullable type .* not to be null/, "must not be null"],
  [/^Expected type "[^"]+" to be an object/, "must be an object"],
  [/^(Value .* does not exist in|Enum .* cannot represent)/, "must be one of the enum's values"],
  [/^(String|ID) cannot represent/, "must be a string"],
  [/^Int cannot represent/, "must be an integer"],
  [/^Float cannot represent/, "must be a number"],
  [/^Boolean cannot represent/, "must be true or false"],
];

/**
 * A variable's coercion error as its field and reason: `Variable "$input" got invalid value "x" at
 * "input.lines[0].quantity"; Decimal must be ...` -> `lines.0.quantity`, "must be a decimal number"
 * (the path from the variable's root in snake_case, as REST names it; a scalar's own reason,
 * InputReasonError, else the table above). An item of a list is reported on the list, its index in
 * the reason.
 */
function coercionField(error: GraphQLError): [string, string] | undefined {
  const inner = error.originalError;
  if (!(inner instanceof GraphQLError) || !/^Variable "\$\w+" got invalid value /.test(error.message)) return undefined;
  const head = error.message.slice(0, -(inner.message.length + 2));
  const at = / at "\w+((?:\.\w+|\[\d+\])*)"$/.exec(head)?.[1] ?? "";
  const path = at
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter(Boolean)
    .map(snake);
  let reason = inner instanceof InputReasonError ? inner.reason : inner.message;
  const field = /^Field "(\w+)" (of required type .* was not provided|is not defined by type)/.exec(inner.message);
  if (field) {
    path.push(snake(field[1]));
    reason = field[2].startsWith("of required") ? "is required" : "unknown field";
  } else reason = COERCION_REASONS.find(([pattern]) => pattern.test(reason))?.[1] ?? reason;
  if (/^\d+$/.test(path.at(-1) ?? "")) reason = `item ${path.pop()}: ${reason}`;
  if (path.length === 0) path.push(/^Variable "\$(\w+)"/.exec(error.message)![1]);
  return [path.join("."), reason];
}

/** `Variable "$input" got invalid value ... at "input.lines[0].quantity"` -> `lines.0.quantity` */
function fieldFromMessage(message: string): string | undefined {
  const at = /at "([^"]+)"/.exec(message);
  if (at) return at[1].replace(/\[(\d+)\]/g, ".$1").replace(/^[a-zA-Z]+\./, "");
  const notDefined = /Field "([^"]+)" is not defined by type/.exec(message);
  if (notDefined) return notDefined[1];
  const required = /Field "[^"]+\.([^"]+)" of required type/.exec(message);
  if (required) return required[1];
  const variable = /Variable "\$([^"]+)"/.exec(message);
  return variable?.[1];
}

/**
 * The code of an error Yoga or graphql-js raised itself (upper case, e.g. `BAD_REQUEST` for a
 * missing query or a body that is not JSON, `GRAPHQL_PARSE_FAILED`, `PERSISTED_QUERY_MISMATCH`)
 * in the project's lower-case codes (docs/graphql.md "Errors"): by the HTTP status Yoga gave it
 * (405 `method_not_allowed`, 413 `payload_too_large`), else by name, else any other 4xx
 * `validation_error` and anything else `internal_error`. `PERSISTED_QUERY_NOT_FOUND` stays as it is: Apollo's
 * persisted-queries link reads that code (and the message `PersistedQueryNotFound`) to send the
 * query again with its hash. A code already in lower case is returned unchanged.
 */
export function projectErrorCode(code: string, status?: number): string {
  if (code === "PERSISTED_QUERY_NOT_FOUND" || code !== code.toUpperCase()) return code;
  const named: Record<string, string> = {
    BAD_REQUEST: "validation_error",
    BAD_USER_INPUT: "validation_error",
    GRAPHQL_PARSE_FAILED: "validation_error",
    GRAPHQL_VALIDATION_FAILED: "validation_error",
    PERSISTED_QUERY_MISMATCH: "validation_error",
  };
  if (status === 405) return "method_not_allowed";
  if (status === 413) return "payload_too_large";
  if (named[code]) return named[code];
  if (status !== undefined && status >= 400 && status < 500) return "validation_error";
  return "internal_error";
}

export function maskError(error: unknown, logger: Logger): GraphQLError {
  const graphQLError = error instanceof GraphQLError ? error : null;
  let original = graphQLError ? (graphQLError.originalError ?? null) : error;
  const path = graphQLError?.path;
  if (original && !(original instanceof DomainError) && !(original instanceof GraphQLError)) {
    const mapped = domainErrorOfDatabaseFailure(original);
    if (mapped) {
      logger.warn({ err: original }, "database failure answered as " + mapped.code);
      original = mapped;
    }
  }
  if (original instanceof DomainError) {
    const http =
      original instanceof ServiceUnavailableError
        ? { http: { status: 503, headers: { "retry-after": String(original.retryAfterSeconds) } } }
        : original.status === 401
          ? { http: { status: 401 } }
          : original.status === 403 && !path
            ? // a request refused before any field ran (the portal's CSRF check, server.ts)
              { http: { status: 403 } }
            : {};
    return new GraphQLError(boundMessage(original.message), {
      path,
      nodes: graphQLError?.nodes,
      extensions: {
        code: original.code,
        ...(original.fields && Object.keys(original.fields).length
          ? { fields: boundFieldErrors(original.fields) }
          : {}),
        ...http,
      },
    });
  }
  if (graphQLError && (!original || original instanceof GraphQLError)) {
    const code = graphQLError.extensions?.code;
    if (typeof code === "string" && code !== "BAD_USER_INPUT") {
      const status = (graphQLError.extensions.http as { status?: number } | undefined)?.status;
      const projected = projectErrorCode(code, status);
      const bounded = boundMessage(graphQLError.message);
      if (bounded === graphQLError.message && projected === code) return graphQLError;
      return new GraphQLError(bounded, {
        path,
        nodes: graphQLError.nodes,
        extensions: { ...graphQLError.extensions, code: projected },
      });
    }
    const message = boundMessage(graphQLError.message);
    const [field, reason] = coercionField(graphQLError) ?? [fieldFromMessage(message), message];
    const fields: FieldErrors | undefined = field ? boundFieldErrors({ [field]: [reason] }) : undefined;
    return new GraphQLError(message, {
      path,
      nodes: graphQLError.nodes,
      extensions: { ...graphQLError.extensions, code: "validation_error", ...(fields ? { fields } : {}) },
    });
  }
  logger.error({ err: original ?? error }, "unexpected error");
  return new GraphQLError("Unexpected error.", { path, extensions: { code: "internal_error" } });
}
