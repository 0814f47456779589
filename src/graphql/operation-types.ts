/**
 * A validation rule graphql-js 16 lacks (it is in graphql-js 17 as KnownOperationTypesRule): an
 * operation whose root type the schema does not define (`subscription { ... }`: the schema has no
 * subscription root) is a validation error, answered before execution with code validation_error,
 * instead of an execution failure.
 */
import { GraphQLError, type ValidationRule } from "graphql";
import type { Plugin } from "graphql-yoga";

export const KnownOperationTypesRule: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const schema = context.getSchema();
    const root =
      node.operation === "query"
        ? schema.getQueryType()
        : node.operation === "mutation"
          ? schema.getMutationType()
          : schema.getSubscriptionType();
    if (!root) {
      context.reportError(
        new GraphQLError(`The schema does not support ${node.operation} operations.`, {
          nodes: node,
          extensions: { code: "validation_error" },
        }),
      );
    }
  },
});

/** KnownOperationTypesRule as a Yoga plugin. */
export function knownOperationTypesPlugin(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(KnownOperationTypesRule) };
}
