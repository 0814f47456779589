/**
 * The database facts the cycle rules need (domain/billing-cycle.ts cycleDecision, noCardEnds),
 * shared by the billing run (services/billing-run.ts) and the upcoming-invoice preview
 * (services/upcoming-invoice.ts), so both decide with the same facts: the customer's usable
 * source and the balance of the invoice of the cycle before.
 */
import { findGateway } from "../infra/gateways/index.js";
import { noCardCheckNeeded, noCardEnds, type PreviousCycleInvoice } from "../domain/billing-cycle.js";
import { toDecimal } from "../domain/money.js";
import type { ServiceContext } from "./context.js";
import { invoiceBalances } from "./invoice-balances.js";

/**
 * The customer's source the run charges: of the `chargeable` `reusable` sources of the customer
 * (in the context's organization and mode) whose gateway is enabled and allowed in that mode, the
 * customer's default source (services/sources.ts setDefaultSource) when it is one of them, else the
 * newest; null when there is none. `exclude`: sources not to take (the dunning attempts' cards that declined hard).
 * The rule is usableSourcesOf's, for one customer.
 */
export async function usableSourceOf(
  ctx: ServiceContext,
  customerId: string,
  exclude: readonly string[] = [],
): Promise<string | null> {
  const [sourceId] = await usableSourcesOf(ctx, [{ customerId, exclude }]);
  return sourceId;
}

/**
 * usableSourceOf for several customers of the context's organization and mode in one query (the dunning attempts'
 * page): the usable source of each `{customerId, exclude}`, in input order (null: none).
 */
export async function usableSourcesOf(
  ctx: ServiceContext,
  customers: readonly { customerId: string; exclude: readonly string[] }[],
): Promise<(string | null)[]> {
  if (customers.length === 0) return [];
  const sources = await ctx.prisma.source.findMany({
    where: {
      customerId: { in: [...new Set(customers.map((c) => c.customerId))] },
      organizationId: ctx.auth.organizationId,
      testMode: ctx.auth.testMode,
      usage: "reusable",
      status: "chargeable",
      gateway: { in: ctx.settings.paymentGateways },
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true, gateway: true, customerId: true, customer: { select: { defaultSourceId: true } } },
  });
  return customers.map(({ customerId, exclude }) => {
    const own = sources.filter((s) => s.customerId === customerId && !exclude.includes(s.id));
    const defaultId = own[0]?.customer?.defaultSourceId;
    // the default first, the others newest first
    own.sort((a, b) => Number(b.id === defaultId) - Number(a.id === defaultId));
    const usable = own.find((s) => {
      const gateway = findGateway(s.gateway, ctx.settings.paymentGateways);
      return gateway && gateway.charge && (!gateway.testOnly || ctx.auth.testMode);
    });
    return usable?.id ?? null;
  });
}

/**
 * The no-card rule for cycle `cycle` starting on `date` (domain/billing-cycle.ts noCardEnds):
 * reads the balance of `previous` (the invoice of the cycle before, with its id; null when there
 * is none) and the customer's usable source only when noCardCheckNeeded says the rule can apply.
 * `beforeReading` runs before the database is read (the run writes its buffered rows first).
 */
export async function noCardApplies(
  ctx: ServiceContext,
  check: { cycle: number; date: string; previous: (PreviousCycleInvoice & { id: string }) | null; customerId: string },
  beforeReading: () => Promise<void> = async () => {},
): Promise<boolean> {
  if (!noCardCheckNeeded(check.cycle, check.previous, check.date)) return false;
  await beforeReading();
  const [balance] = await invoiceBalances(ctx, [check.previous!.id]);
  // the sources are read only when something is due
  const hasUsableSource = toDecimal(balance.due).greaterThan(0)
    ? (await usableSourceOf(ctx, check.customerId)) !== null
    : true;
  return noCardEnds({ ...check, amountDue: balance.due, hasUsableSource });
}
