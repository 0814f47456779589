/**
 * Resolvers that the executor can run without a promise (docs/performance.md "After: the GraphQL page
 * of 50").
 *
 * `@pothos/plugin-relay` resolves every Node's `id` through an `async` wrapper (`t.globalID`), so each
 * invoice, customer and payment of a page answered a promise for its id: the executor then completes
 * every such object through `promiseForObject` and a round of microtasks, 150 of them for a page of 50
 * invoices with their customers and payments. The wrapper awaits the type's own id resolver (for a
 * `prismaNode`, its `id.field` column serialized, a string) and hands a string back unchanged;
 * `syncNodeIds` calls that resolver directly and answers its string at once.
 */
import { isInterfaceType, type GraphQLFieldResolver, type GraphQLSchema } from "graphql";

type Resolver = GraphQLFieldResolver<unknown, unknown>;

/**
 * Gives the `id` field of every Node type of `schema` a resolver that answers synchronously what
 * the relay plugin's async wrapper would: the type's own id resolver (`extensions.pothosOptions.id.resolve`,
 * what `prismaNode`'s `id` option configures) when it returns a string, else (an object to encode, a
 * promise) the wrapper itself, as before. Returns `schema`, changed in place (before any other
 * wrapping of resolvers, such as limits.ts `enforceDeadlines`).
 */
export function syncNodeIds(schema: GraphQLSchema): GraphQLSchema {
  const node = schema.getType("Node");
  if (!isInterfaceType(node)) return schema;
  for (const type of schema.getPossibleTypes(node)) {
    const options = (type.extensions as { pothosOptions?: { id?: { resolve?: unknown } } }).pothosOptions;
    const own = options?.id?.resolve;
    const field = type.getFields().id;
    const wrapper = field?.resolve;
    if (typeof own !== "function" || !wrapper) continue;
    const resolveId = own as Resolver;
    field.resolve = (parent, args, context, info) => {
      const id = resolveId(parent, args, context, info);
      return typeof id === "string" ? id : wrapper(parent, args, context, info);
    };
  }
  return schema;
}
