/**
 * One Prisma query plan per `nodes(ids:)` field and type, not one per id (docs/performance.md "After
 * events: the cost of printing events").
 *
 * `@pothos/plugin-relay` loads the ids of a `nodes(ids:)` one at a time, through each `prismaNode`
 * type's `loadWithoutCache(id, context, info)`, and `@pothos/plugin-prisma` plans each one's Prisma
 * query from the field's selection (`queryFromInfo`, which calls `Plan.fromInfo` of
 * `@pothos/selection-mapper`): the same walk of the same selection, with the same answer, for every id.
 * For the 100 subscriptions or invoices an event batch prints (rest/event-objects.ts), the walks were
 * 18 % of the busy time of printing them (a subscription printed with 27 % less CPU without them).
 * The joined reads (infra/sql/joined-reads.ts) already send the reads of those ids as one statement; only
 * the planning was repeated.
 */
import { Plan } from "@pothos/selection-mapper";
import type { GraphQLResolveInfo } from "graphql";

/** `Plan.fromInfo` without its type parameters: this module only passes its arguments through. */
type FromInfo = (adapter: object, options: EntryOptions) => unknown;
interface EntryOptions {
  info: GraphQLResolveInfo;
  typeName?: string;
  path?: unknown[];
  paths?: unknown[][];
  initial?: unknown;
  skipDeferredFragments?: boolean;
}
let installed = false;

/**
 * Makes `Plan.fromInfo` answer the plan it built before for the same field execution (`info`: the
 * same object for every id of one `nodes(ids:)` call, and a new one for every other field and row)
 * and the same `typeName`, when the call gives no `path`, `paths` or `initial` selection (what
 * `loadWithoutCache` asks). A plan is made to be played more than once (its own documentation:
 * "the same plan can be played more than once"; plugin-prisma's fallback loader keeps one per
 * `Type@path` and request the same way): each id still gets a query of its own, played from it, and
 * records the same loader mappings under the same (list-index-free) path. Other calls pass through.
 * Installed once per process (schema.ts); idempotent. Throws if `@pothos/selection-mapper` no
 * longer has `Plan.fromInfo` (a Pothos upgrade that moved it: this must be revisited, not skipped).
 */
export function planNodesOncePerField(): void {
  if (installed) return;
  const plan = Plan as unknown as { fromInfo: FromInfo };
  const fromInfo = plan.fromInfo;
  if (typeof fromInfo !== "function") throw new Error("@pothos/selection-mapper: Plan.fromInfo is gone");
  type Entry = { adapter: object; skipDeferredFragments?: boolean; planned: unknown };
  const plans = new WeakMap<GraphQLResolveInfo, Map<string | undefined, Entry>>();
  plan.fromInfo = (adapter, options) => {
    if (options.path?.length || options.paths?.length || options.initial !== undefined)
      return fromInfo.call(Plan, adapter, options);
    let byType = plans.get(options.info);
    if (!byType) plans.set(options.info, (byType = new Map()));
    const entry = byType.get(options.typeName);
    if (entry?.adapter === adapter && entry.skipDeferredFragments === options.skipDeferredFragments)
      return entry.planned;
    const planned = fromInfo.call(Plan, adapter, options);
    byType.set(options.typeName, { adapter, skipDeferredFragments: options.skipDeferredFragments, planned });
    return planned;
  };
  installed = true;
}
