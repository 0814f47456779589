/**
 * Offset-based Relay connections. Cursors are offsets (plugin-relay's `OffsetConnection:N`), so a
 * REST page N of size S is `first: S, after: cursor(S*(N-1)-1)`; the same pages on both surfaces.
 * Only the requested page is loaded; `totalCount` runs a COUNT only when selected.
 */
import { queryFromInfo } from "@pothos/plugin-prisma";
import { resolveOffsetConnection } from "@pothos/plugin-relay";
import type { GraphQLResolveInfo } from "graphql";
import type { GraphQLContext } from "./context.js";
import { ValidationError } from "../domain/errors.js";
import { tenant } from "../services/context.js";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

export async function offsetConnection<T>(
  args: ConnectionArgs,
  load: (page: { skip: number; take: number }) => Promise<T[]>,
  count: () => Promise<number>,
) {
  for (const key of ["first", "last"] as const) {
    const value = args[key];
    if (value !== null && value !== undefined && (value < 0 || value > MAX_PAGE_SIZE)) {
      throw ValidationError.field(key, `must be between 0 and ${MAX_PAGE_SIZE}`);
    }
  }
  let counted: Promise<number> | undefined;
  const totalCount = () => (counted ??= count());
  const needsTotal = (args.last ?? null) !== null && !args.before;
  const connection = await resolveOffsetConnection(
    { args, defaultSize: DEFAULT_PAGE_SIZE, maxSize: MAX_PAGE_SIZE, totalCount: needsTotal ? await totalCount() : undefined },
    ({ limit, offset }) => load({ skip: offset, take: limit }),
  );
  return { ...connection, totalCount };
}

/** The part of a Prisma model delegate a list needs (`ctx.prisma.invoice`, ...). */
interface ListDelegate {
  findMany(args: any): Promise<any[]>;
  count(args: { where: any }): Promise<number>;
}

/**
 * An offset connection over a Prisma model: one findMany for the page, selecting exactly what the
 * query asks of `edges.node` (relations included, so no N+1), and a COUNT only for totalCount.
 */
export function prismaConnection(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  model: ListDelegate,
  args: ConnectionArgs,
  query: { where: unknown; orderBy: unknown },
) {
  return offsetConnection(
    args,
    (page) => model.findMany({ ...queryFromInfo({ context: ctx, info, path: ["edges", "node"] }), ...query, ...page }),
    () => model.count({ where: query.where }),
  );
}

/**
 * The list of a tenant resource: rows of the caller's organization and mode matching every one of
 * `conditions` (Prisma where fragments, AND-ed), newest first (`createdAt`, then `id`).
 */
export function tenantConnection(ctx: GraphQLContext, info: GraphQLResolveInfo, model: ListDelegate, args: ConnectionArgs, conditions: object[]) {
  return prismaConnection(ctx, info, model, args, { where: { ...tenant(ctx), AND: conditions }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
}
