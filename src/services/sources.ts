/**
 * A customer's saved payment sources (docs/payments.md "Default source", docs/customer-portal.md):
 * detaching one from its customer and choosing the customer's default source, which the billing
 * run charges first (services/cycle-decision.ts `usableSourceOf`). Each change is one transaction
 * with the source row locked.
 */
import type { Source } from "../infra/prisma/generated/client.js";
import { NotFoundError, ValidationError } from "../domain/errors.js";
import { atomically, checkPortalCustomer, lockTenantRow, tenant, type ServiceContext } from "./context.js";

/**
 * The caller's source `id` with its row locked; NotFoundError when unknown, or another customer's for a portal
 * credential.
 */
async function lockedSource(ctx: ServiceContext, id: string): Promise<Source> {
  await lockTenantRow(ctx.prisma, ctx, "Source", id);
  const source = await ctx.prisma.source.findFirst({ where: { id, ...tenant(ctx) } });
  if (!source) throw new NotFoundError("source", id);
  checkPortalCustomer(ctx, source.customerId, "source", id);
  return source;
}

/**
 * Detaches a source from its customer: it no longer belongs to the customer, is not listed in
 * `Customer.sources` and the billing run no longer charges it; when it was the customer's default,
 * the customer has no default any more. A source that belongs to no customer is left as it is.
 * NotFoundError for an unknown source (or another customer's, for a portal credential).
 */
export async function detachSource(ctx: ServiceContext, id: string): Promise<Source> {
  return atomically(ctx, async (tx) => {
    const source = await lockedSource(tx, id);
    if (!source.customerId) return source;
    await tx.prisma.customer.updateMany({
      where: { id: source.customerId, defaultSourceId: id },
      data: { defaultSourceId: null },
    });
    return tx.prisma.source.update({ where: { id }, data: { customerId: null } });
  });
}

/**
 * Makes a source its customer's default: the billing run charges it before any other of the
 * customer's sources. It must belong to a customer and be reusable and chargeable
 * (ValidationError on source otherwise). NotFoundError for an unknown source (or another
 * customer's, for a portal credential).
 */
export async function setDefaultSource(ctx: ServiceContext, id: string): Promise<Source> {
  return atomically(ctx, async (tx) => {
    const source = await lockedSource(tx, id);
    if (!source.customerId) throw ValidationError.field("source", `source ${id} belongs to no customer`);
    if (source.usage !== "reusable" || source.status !== "chargeable")
      throw ValidationError.field(
        "source",
        `source ${id} is ${source.usage} and ${source.status}: only a chargeable reusable source can be the default`,
      );
    await tx.prisma.customer.update({ where: { id: source.customerId }, data: { defaultSourceId: id } });
    return source;
  });
}
