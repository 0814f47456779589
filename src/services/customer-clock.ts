/**
 * The per-customer clock (docs/test-clocks.md): in test mode, a customer attached to a test clock
 * lives at the clock's frozen time. Services that date something for a customer (a subscription's
 * start, a usage record's time check) take their `now` from customerContext. The clocks
 * themselves (create, advance, delete) are services/test-clocks.ts.
 */
import type { ServiceContext } from "./context.js";

/**
 * The caller's context as seen by customer `customerId`: `now` is its clock's frozen time when it
 * is attached to one, else unchanged. Services use it for a customer's dates (subscription start,
 * usage time checks).
 */
export async function customerContext(ctx: ServiceContext, customerId: string): Promise<ServiceContext> {
  if (!ctx.auth.testMode) return ctx;
  const customer = await ctx.prisma.customer.findFirst({
    where: { id: customerId, organizationId: ctx.auth.organizationId, testMode: true },
    select: { testClock: { select: { frozenTime: true } } },
  });
  const frozen = customer?.testClock?.frozenTime;
  return frozen ? { ...ctx, now: () => frozen } : ctx;
}
