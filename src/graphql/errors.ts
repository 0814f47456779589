/**
 * One error shape for GraphQL (docs/rest.md "Responses"): DomainErrors become GraphQL errors with
 * `extensions.code` (and `extensions.fields`); GraphQL's own validation and input-coercion errors
 * get code `validation_error` with the field named when the message gives it; anything else is
 * logged and masked as `internal_error`.
 */
import { GraphQLError } from "graphql";
import { DomainError, type FieldErrors } from "../domain/errors.js";
import type { Logger } from "../infra/logger.js";

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

export function maskError(error: unknown, logger: Logger): GraphQLError {
  const graphQLError = error instanceof GraphQLError ? error : null;
  const original = graphQLError ? graphQLError.originalError ?? null : error;
  const path = graphQLError?.path;
  if (original instanceof DomainError) {
    return new GraphQLError(original.message, {
      path,
      nodes: graphQLError?.nodes,
      extensions: {
        code: original.code,
        ...(original.fields && Object.keys(original.fields).length ? { fields: original.fields } : {}),
        ...(original.status === 401 ? { http: { status: 401 } } : {}),
      },
    });
  }
  if (graphQLError && (!original || original instanceof GraphQLError)) {
    if (graphQLError.extensions?.code && graphQLError.extensions.code !== "BAD_USER_INPUT") return graphQLError;
    const field = fieldFromMessage(graphQLError.message);
    const fields: FieldErrors | undefined = field ? { [field]: [graphQLError.message] } : undefined;
    return new GraphQLError(graphQLError.message, {
      path,
      nodes: graphQLError.nodes,
      extensions: { ...graphQLError.extensions, code: "validation_error", ...(fields ? { fields } : {}) },
    });
  }
  logger.error({ err: original ?? error }, "unexpected error");
  return new GraphQLError("Unexpected error.", { path, extensions: { code: "internal_error" } });
}
