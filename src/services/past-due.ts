/**
 * Past-due subscriptions (docs/dunning.md "Past-due subscriptions"): a subscription whose latest cycle invoice
 * became overdue (the overdue sweep, services/overdue-invoices.ts) or whose renewal charge was declined (the
 * billing run's collection, services/payments.ts) moves from `active` to `past_due` and writes
 * `subscription.past_due`; when that invoice is paid (nothing left due) or marked uncollectible it moves back
 * to `active` and writes `subscription.updated` (previous_attributes: `status` `past_due`). The rule is
 * domain/subscriptions.ts `pastDueMove`. Both run inside the transaction of the change that causes them, with the
 * subscription rows locked, so the status and its event commit with that change or not at all.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { pastDueMove } from "../domain/subscriptions.js";
import { sqlRows } from "../infra/sql/index.js";
import type { ServiceContext } from "./context.js";
import { printedObjects, recordEvents } from "./events.js";

/**
 * The subscriptions of the caller's organization and mode whose latest cycle invoice (highest `billingCycle`)
 * is one of `invoiceIds`, with their status, locked `FOR UPDATE` in id order.
 */
async function latestCycleSubscriptions(
  ctx: ServiceContext,
  invoiceIds: readonly string[],
): Promise<{ id: string; status: string }[]> {
  return sqlRows<{ id: string; status: string }>(
    ctx.prisma,
    Prisma.sql`
    SELECT s."id", s."status" FROM "Subscription" s
    JOIN "Invoice" i ON i."subscriptionId" = s."id"
    WHERE i."id" = ANY(${invoiceIds}::text[])
      AND s."organizationId" = ${ctx.auth.organizationId} AND s."testMode" = ${ctx.auth.testMode}
      AND i."billingCycle" = (SELECT max(l."billingCycle") FROM "Invoice" l WHERE l."subscriptionId" = s."id")
    ORDER BY s."id"
    FOR UPDATE OF s`,
  );
}

/**
 * Applies `pastDueMove(status, owing)` to the subscriptions whose latest cycle invoice is one of `invoiceIds`
 * (invoices of the caller's organization and mode; others and non-cycle invoices are ignored), inside the
 * caller's transaction `ctx`: `owing` true when those invoices became overdue or their renewal charge was
 * declined, false when they were paid or marked uncollectible. Writes `subscription.past_due` for each that
 * became past due and `subscription.updated` for each that became active again. Returns the ids moved.
 */
export async function movePastDue(
  ctx: ServiceContext,
  invoiceIds: readonly string[],
  owing: boolean,
): Promise<string[]> {
  if (invoiceIds.length === 0) return [];
  const moving = (await latestCycleSubscriptions(ctx, invoiceIds)).filter((s) => pastDueMove(s.status, owing));
  if (moving.length === 0) return [];
  const ids = moving.map((s) => s.id);
  const next = owing ? "past_due" : "active";
  const before = owing ? undefined : await printedObjects(ctx, "subscription", ids);
  await ctx.prisma.$executeRaw(
    Prisma.sql`UPDATE "Subscription" SET "status" = ${next}, "updatedAt" = ${ctx.now()}
      WHERE "id" = ANY(${ids}::text[])`,
  );
  if (owing) await recordEvents(ctx, "subscription.past_due", "subscription", ids);
  else await recordEvents(ctx, "subscription.updated", "subscription", ids, { before });
  return ids;
}
