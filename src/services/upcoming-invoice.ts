/**
 * The upcoming invoice of a subscription (issue "Subscriptions": `upcomingInvoice` and GET
 * /v1/subscriptions/{id}/upcoming_invoice/): the invoice of its next cycle as
 * domain/billing-cycle.ts computes it, from the stored subscription, its plans, addons, coupons
 * and usage. The billing run (services/billing-run.ts) calls the same `cycleInputOf` and
 * `cycleInvoice`, so a preview and the invoice it becomes agree line for line.
 *
 * Usage: metered lines bill the period before the cycle; `last_ever` reads the latest record
 * before that period's end, the other aggregations the period's records not billed yet.
 *
 * Proration (docs/proration.md): the subscription's pending items (prorations, carried credits)
 * are billed by its next cycle invoice, and lines scheduled `at_period_end` for this cycle replace
 * the stored ones (domain/proration.ts linesAtCycle; the billing run applies them first with
 * services/proration.ts applyPendingChanges, so both bill the same lines).
 */
import type { Subscription, SubscriptionLine } from "../infra/prisma/generated/client.js";
import type { Frequency } from "../domain/catalogue.js";
import { billingPeriod } from "../domain/billing-periods.js";
import { cycleInvoice, type CycleInput, type CycleInvoice, type CycleLine } from "../domain/billing-cycle.js";
import { InvalidStateError, NotFoundError } from "../domain/errors.js";
import { linesAtCycle, parsePendingChanges } from "../domain/proration.js";
import { Prisma } from "../infra/prisma/generated/client.js";
import { isoDate, zonedMidnight } from "../domain/formats.js";
import type { AddonRate } from "../domain/pricing.js";
import type { UsageAggregation } from "../domain/usage.js";
import { tenant, type ServiceContext } from "./context.js";
import { taxRulesOf } from "./documents.js";
import { couponTerms } from "./subscriptions.js";

export interface UpcomingInvoice extends CycleInvoice {
  subscriptionId: string;
  cycle: number;
  /** ISO 4217 code of every amount */
  currency: string;
  /** document type id of the invoice */
  document: string;
}

/**
 * The inputs of cycle `cycle` of subscription `id` (of `ctx.auth`'s organization and mode; the
 * billing run builds a context per organization), read one query at a time (callers may run it
 * inside a transaction). `known.timeZone`: the organization's time zone when the caller has it
 * (saves a query). Also returns the subscription row and its line rows as read. 404 unknown; 409
 * when the subscription bills no such cycle (cancelled, paused, or past its billing cycles).
 */
export async function cycleInputOf(
  ctx: ServiceContext,
  id: string,
  cycle?: number,
  known: { timeZone?: string } = {},
): Promise<{ input: CycleInput; currency: string; document: string; cycle: number; subscription: Subscription; lines: SubscriptionLine[] }> {
  const subscription = await ctx.prisma.subscription.findFirst({ where: { id, ...tenant(ctx) }, include: { documentType: true, coupon: true } });
  if (!subscription) throw new NotFoundError("subscription", id);
  const n = cycle ?? subscription.nextBillingCycle;
  if (subscription.status === "cancelled") throw new InvalidStateError(`Subscription ${id} is cancelled; it bills no more cycles`);
  if (subscription.status === "paused") throw new InvalidStateError(`Subscription ${id} is paused; resume it to bill its next cycle`);
  if (subscription.billingCycles !== null && n > subscription.billingCycles) throw new InvalidStateError(`Subscription ${id} has billed its ${subscription.billingCycles} cycles`);
  const lineInclude = { plan: { include: { product: true, currency: true } }, coupon: true } as const;
  const stored = await ctx.prisma.subscriptionLine.findMany({ where: { subscriptionId: id }, orderBy: [{ position: "asc" }, { id: "asc" }], include: lineInclude });
  const scheduled = linesAtCycle(parsePendingChanges(subscription.pendingChanges), n);
  let lines = stored;
  if (scheduled) {
    // the lines as applyPendingChanges will write them: kept ids keep their coupon redemptions
    const plans = await ctx.prisma.plan.findMany({ where: { id: { in: scheduled.map((l) => l.plan) } }, include: lineInclude.plan.include });
    const couponIds = scheduled.map((l) => l.coupon).filter((c): c is string => !!c);
    const coupons = couponIds.length ? await ctx.prisma.coupon.findMany({ where: { id: { in: couponIds } } }) : [];
    lines = scheduled.map((l, position) => {
      const before = stored.find((s) => s.id === l.id);
      const coupon = coupons.find((c) => c.id === l.coupon) ?? null;
      return {
        ...(before ?? { createdAt: subscription.createdAt, updatedAt: subscription.updatedAt, couponRedemptions: 0 }),
        id: l.id,
        subscriptionId: id,
        position,
        planId: l.plan,
        plan: plans.find((p) => p.id === l.plan)!,
        quantity: new Prisma.Decimal(l.quantity),
        couponId: l.coupon,
        coupon,
        couponRedemptions: before && before.couponId === l.coupon ? before.couponRedemptions : 0,
      };
    });
  }
  const pendingItems = await ctx.prisma.pendingInvoiceItem.findMany({ where: { subscriptionId: id, invoiceId: null }, orderBy: [{ createdAt: "asc" }, { position: "asc" }, { id: "asc" }] });
  const addons = await ctx.prisma.subscriptionAddon.findMany({ where: { subscriptionId: id }, orderBy: [{ position: "asc" }, { id: "asc" }], include: { addon: true } });
  const org = known.timeZone ? { timeZone: known.timeZone } : await ctx.prisma.organization.findUniqueOrThrow({ where: { id: ctx.auth.organizationId }, select: { timeZone: true } });
  const first = lines[0]?.plan;
  if (!first) throw new InvalidStateError(`Subscription ${id} has no lines`);
  const frequency = first.frequency as Frequency;
  const anchor = isoDate(subscription.dateStart);
  const dayStart = (date: string) => zonedMidnight(date, org.timeZone);

  const previous = n > 1 ? billingPeriod(anchor, frequency, n - 1) : null;
  const usagesOf = async (lineId: string, aggregation: UsageAggregation) => {
    if (!previous) return [];
    const end = dayStart(previous.end);
    if (aggregation === "last_ever") {
      return ctx.prisma.usage.findMany({ where: { subscriptionLineId: lineId, dateTime: { lt: end } }, orderBy: [{ dateTime: "desc" }, { createdAt: "desc" }], take: 1, select: { quantity: true, dateTime: true } });
    }
    return ctx.prisma.usage.findMany({
      where: { subscriptionLineId: lineId, dateTime: { gte: dayStart(previous.start), lt: end }, invoiceId: null },
      orderBy: [{ dateTime: "asc" }, { createdAt: "asc" }],
      select: { quantity: true, dateTime: true },
    });
  };

  const cycleLines: CycleLine[] = [];
  for (const line of lines) {
    const aggregation = line.plan.usageAggregation as UsageAggregation;
    cycleLines.push({
      id: line.id,
      name: `${line.plan.product.name} - ${line.plan.name}`,
      plan: {
        amount: line.plan.amount.toString(),
        tiersMode: line.plan.tiersMode,
        tiers: line.plan.tiers as unknown as CycleLine["plan"]["tiers"],
        usageScheme: line.plan.usageScheme,
        usageAggregation: aggregation,
        exempt: line.plan.exempt,
      },
      quantity: line.quantity.toString(),
      coupon: line.coupon ? { ...couponTerms(line.coupon), id: line.coupon.id, name: line.coupon.name, redemptions: line.couponRedemptions } : null,
      usages: line.plan.usageScheme === "metered" ? (await usagesOf(line.id, aggregation)).map((u) => ({ quantity: u.quantity.toString(), dateTime: u.dateTime })) : [],
    });
  }
  const input: CycleInput = {
    cycle: n,
    anchor,
    frequency,
    dayStart,
    currency: first.currency,
    taxRules: taxRulesOf(subscription.documentType),
    lines: cycleLines,
    addons: addons.map((a) => ({
      id: a.id,
      name: a.addon.name,
      applyScheme: a.addon.applyScheme,
      durationTimes: a.addon.durationTimes,
      amount: a.addon.amount.toString(),
      quantity: a.quantity,
      rates: (a.rates ?? []) as unknown as AddonRate[],
      redemptions: a.addonRedemptions,
    })),
    coupon: subscription.coupon ? { ...couponTerms(subscription.coupon), id: subscription.coupon.id, name: subscription.coupon.name, redemptions: subscription.couponRedemptions } : null,
    pendingItems: pendingItems.map((i) => ({
      id: i.id,
      name: i.name,
      quantity: i.quantity.toString(),
      amount: i.amount.toString(),
      exempt: i.exempt,
      periodStart: isoDate(i.periodStart),
      periodEnd: isoDate(i.periodEnd),
    })),
  };
  return { input, currency: first.currencyId, document: subscription.documentTypeId, cycle: n, subscription, lines };
}

/** The invoice the next cycle of subscription `id` will produce. Errors as cycleInputOf. */
export async function upcomingInvoice(ctx: ServiceContext, id: string): Promise<UpcomingInvoice> {
  const { input, currency, document, cycle } = await cycleInputOf(ctx, id);
  return { ...cycleInvoice(input), subscriptionId: id, cycle, currency, document };
}
