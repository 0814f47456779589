/**
 * Usage records (issue "Usage records"; spec "Usage"): quantities reported for metered
 * subscription lines, billed in arrears by the billing run (domain/billing-cycle.ts), which sets
 * each usage's invoice. Rules: domain/usage.ts checkUsage. A billed usage cannot be deleted (409),
 * so no usage is silently lost. Creating twice with one Idempotency-Key records once (server.ts).
 */
import type { Usage } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { customerContext } from "./test-clocks.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError } from "../domain/errors.js";
import { checkUsage } from "../domain/usage.js";
import { toDecimal, type DecimalInput } from "../domain/money.js";
import { lockTenantRow, tenant, type ServiceContext } from "./context.js";

export interface UsageInput {
  /** `lin_` id of a subscription line of the caller */
  subscriptionLine?: string | null;
  quantity?: DecimalInput | null;
  /** when it was used; default now */
  dateTime?: Date | null;
}

/** Records a usage. 400 naming each bad field (unknown or licensed line, negative quantity, future date); 409 for a cancelled subscription. */
export async function createUsage(ctx: ServiceContext, input: UsageInput): Promise<Usage> {
  const errors = new FieldErrorCollector();
  const line = input.subscriptionLine
    ? await ctx.prisma.subscriptionLine.findFirst({
        where: { id: input.subscriptionLine, subscription: tenant(ctx) },
        select: { id: true, plan: { select: { usageScheme: true } }, subscription: { select: { status: true, customerId: true } } },
      })
    : null;
  // usage of a customer on a test clock happens on the clock's time (services/test-clocks.ts)
  const now = line ? (await customerContext(ctx, line.subscription.customerId)).now() : ctx.now();
  if (!input.subscriptionLine) errors.add("subscription_line", "is required");
  else if (!line) errors.add("subscription_line", `unknown subscription line ${input.subscriptionLine}`);
  const dateTime = input.dateTime ?? now;
  checkUsage({ quantity: input.quantity, dateTime }, line ? { usageScheme: line.plan.usageScheme, subscriptionStatus: line.subscription.status } : null, now, errors);
  return ctx.prisma.usage.create({
    data: { id: newId("usa"), ...tenant(ctx), subscriptionLineId: line!.id, quantity: toDecimal(input.quantity!).toString(), dateTime },
  });
}

/** Deletes a usage that no invoice has billed; 404 unknown, 409 billed. One transaction. */
export async function deleteUsage(ctx: ServiceContext, id: string): Promise<void> {
  await ctx.prisma.$transaction(async (tx) => {
    const row = await lockTenantRow(tx, ctx, "Usage", id, ["invoiceId"]);
    if (!row) throw new NotFoundError("usage", id);
    if (row.invoiceId) throw new InvalidStateError(`Usage ${id} is billed by invoice ${row.invoiceId}; billed usage cannot be deleted`);
    await tx.usage.delete({ where: { id } });
  });
}
