/**
 * The upcoming invoice of a subscription (docs/subscriptions.md: `upcomingInvoice` and GET
 * /v1/subscriptions/{id}/upcoming_invoice/): the invoice of its next cycle as
 * domain/billing-cycle.ts computes it, from the stored subscription, its plans, addons, coupons
 * and usage. The billing run (services/billing-run/) builds its inputs with the same
 * services/cycle-input.ts `loadCycleData` and `cycleInputFrom` and decides with the same
 * `cycleDecision`, so a preview and the invoice it becomes agree line for line, and the preview
 * is a 409 exactly when the run creates no invoice for the cycle
 * (test/integration/cycle-preview.test.ts checks it over generated subscriptions).
 */
import { cycleDecision, cycleInvoice, type CycleDecision, type CycleInvoice } from "../domain/billing-cycle.js";
import { InvalidStateError, NotFoundError } from "../domain/errors.js";
import { isoDate } from "../domain/formats.js";
import { tenant, type ServiceContext } from "./context.js";
import { noCardApplies } from "./cycle-decision.js";
import {
  cycleInputFrom,
  cycleState,
  loadCycleData,
  UsageAggregatesPeriodMismatch,
  type CycleData,
} from "./cycle-input.js";

export interface UpcomingInvoice extends CycleInvoice {
  subscriptionId: string;
  cycle: number;
  /** `yyyy-mm-dd`: the invoice's date, the subscription's `next_billing` (the cycle's start) */
  date: string;
  /**
   * the subscription ends at `date` and this is its final invoice: the last period's metered usage
   * and pending items only (domain/billing-cycle.ts cycleDecision, cycleInvoice `final`)
   */
  final: boolean;
  /** ISO 4217 code of every amount */
  currency: string;
  /** document type id of the invoice */
  document: string;
}

const END_WORDS: Record<string, string> = {
  cancel_at_period_end: "it is set to cancel at the end of its period",
  billing_cycles: "it has billed all its billing_cycles",
  end_date: "its end_date is reached",
  no_card:
    "the invoice of its previous cycle is past due and the customer has no card to charge (no_card rule; paying it " +
    "or adding a card keeps the subscription)",
};

/**
 * What the billing run will do at the start of the next cycle of `data`'s subscription
 * (domain/billing-cycle.ts cycleDecision), with the no-card rule read as the database is now.
 */
export async function nextCycleDecision(ctx: ServiceContext, data: CycleData): Promise<CycleDecision> {
  const state = cycleState(data.subscription);
  const decision = cycleDecision(state);
  if (decision.action !== "bill" || state.cycle <= 1) return decision;
  const previous = await ctx.prisma.invoice.findFirst({
    where: { subscriptionId: data.subscription.id, billingCycle: state.cycle - 1 },
    select: { id: true, status: true, dueDate: true },
  });
  const check = {
    cycle: state.cycle,
    date: state.date,
    previous: previous && { ...previous, dueDate: previous.dueDate ? isoDate(previous.dueDate) : null },
    customerId: data.subscription.customerId,
  };
  return (await noCardApplies(ctx, check)) ? cycleDecision(state, true) : decision;
}

/**
 * The invoice the next cycle of subscription `id` will produce: exactly the one the billing run
 * creates for that cycle when nothing changes in between (same data, same rules). 409 when the run
 * will create none: paused or cancelled, or the subscription ends at that cycle's start
 * (cancel at period end, billing_cycles, end_date, the no-card rule; domain/billing-cycle.ts
 * cycleDecision), with the reason and the date; also (as cycleInputOf) when it has no lines.
 * 404 unknown. A cycle with nothing to bill (cycle 1 of a metered-only subscription) answers an
 * invoice with no lines, which the run skips.
 */
export async function upcomingInvoice(ctx: ServiceContext, id: string): Promise<UpcomingInvoice> {
  const timeZone = (
    await ctx.prisma.organization.findUniqueOrThrow({
      where: { id: ctx.auth.organizationId },
      select: { timeZone: true },
    })
  ).timeZone;
  const load = async (usage: "rows" | "aggregates") => {
    const data = (await loadCycleData(ctx.prisma, [id], { where: tenant(ctx), timeZoneOf: () => timeZone, usage })).get(
      id,
    );
    if (!data) throw new NotFoundError("subscription", id);
    return data;
  };
  // usage aggregated by SQL (a preview's cost does not grow with the records); the records only
  // when a scheduled plan bills another period than the stored lines' (UsageAggregatesPeriodMismatch)
  try {
    return await upcomingInvoiceOf(ctx, id, await load("aggregates"));
  } catch (e) {
    if (e instanceof UsageAggregatesPeriodMismatch) return upcomingInvoiceOf(ctx, id, await load("rows"));
    throw e;
  }
}

async function upcomingInvoiceOf(ctx: ServiceContext, id: string, data: CycleData): Promise<UpcomingInvoice> {
  const decision = await nextCycleDecision(ctx, data);
  const ending = decision.action === "end" ? decision : null;
  const nothing = () =>
    new InvalidStateError(
      `Subscription ${id} bills no more invoices: ${END_WORDS[ending!.end]}, so the billing run cancels it ` +
        `on ${ending!.date} instead of billing cycle ${ending!.cycle}`,
    );
  if (ending && !ending.finalInvoice) throw nothing();
  const { input, currency, document, cycle } = cycleInputFrom(data, data.subscription.nextBillingCycle, {
    final: !!ending,
  });
  const invoice = cycleInvoice(input);
  // the final invoice when there is one (the last period's usage, pending items), else nothing
  if (ending && invoice.lines.length === 0) throw nothing();
  return {
    ...invoice,
    subscriptionId: id,
    cycle,
    final: !!ending,
    date: isoDate(data.subscription.nextBilling),
    currency,
    document,
  };
}
