/**
 * The cycle input builder (docs/recurring-billing.md, docs/billing-run.md): reads what the
 * invoice of a subscription's cycle is computed from (loadCycleData: the subscription, its lines
 * with plans and coupons, addons, pending items, scheduled changes and usage, for many
 * subscriptions in a fixed handful of queries) and turns it into domain/billing-cycle.ts
 * `CycleInput` with no database access (cycleInputFrom). The billing run (services/billing-run/)
 * and the upcoming-invoice preview (services/upcoming-invoice.ts) both build their inputs here,
 * so a preview and the invoice it becomes agree line for line.
 *
 * Usage: metered lines bill the period before the cycle (domain/billing-cycle.ts periodUsages:
 * `last_ever` reads the latest record before that period's end, the other aggregations the
 * period's records not billed yet).
 *
 * Proration (docs/proration.md): the subscription's pending items (prorations, carried credits)
 * are billed by its next cycle invoice, and lines scheduled `at_period_end` for this cycle replace
 * the stored ones (domain/proration.ts linesAtCycle; the billing run applies them first with
 * services/proration.ts applyPendingChanges, so both bill the same lines).
 */
import type {
  Addon,
  Coupon,
  Currency,
  DocumentType,
  PendingInvoiceItem,
  Plan,
  PrismaClient,
  Product,
  Subscription,
  SubscriptionAddon,
  SubscriptionLine,
} from "../infra/prisma/generated/client.js";
import { Prisma } from "../infra/prisma/generated/client.js";
import { sqlRows } from "../infra/sql/index.js";
import type { Frequency } from "../domain/catalogue.js";
import { billingPeriod } from "../domain/billing-periods.js";
import {
  meteredPeriod,
  periodUsages,
  type CycleInput,
  type CycleLine,
  type CycleSubscription,
} from "../domain/billing-cycle.js";
import { InvalidStateError, NotFoundError } from "../domain/errors.js";
import { linesAtCycle, parsePendingChanges } from "../domain/proration.js";
import { isoDate, zonedMidnight } from "../domain/formats.js";
import type { AddonRate } from "../domain/pricing.js";
import type { UsageAggregation } from "../domain/usage.js";
import { tenant, type ServiceContext, type Tx } from "./context.js";
import { taxRulesOf } from "../domain/document-lines.js";
import { couponTerms } from "./coupons.js";

type PlanRow = Plan & { product: Product; currency: Currency };
/** A subscription line row with its plan (product, currency) and coupon. */
export type LineRow = SubscriptionLine & { plan: PlanRow; coupon: Coupon | null };
/** A usage record as the cycle input reads it (`invoiceId` null: not billed yet). */
export interface UsageRow {
  id: string;
  subscriptionLineId: string;
  quantity: string;
  dateTime: Date;
  createdAt: Date;
  invoiceId: string | null;
}

/**
 * What the cycle inputs of one subscription are built from (loadCycleData), from cycle `fromCycle`
 * on. The billing run keeps it current in memory while it bills a subscription's cycles one after
 * the other (redemptions, billed usages, lines after pending changes), so each cycle's input is
 * what a fresh read would give.
 */
export interface CycleData {
  subscription: Subscription & { documentType: DocumentType; coupon: Coupon | null };
  /** stored lines, by position */
  lines: LineRow[];
  addons: (SubscriptionAddon & { addon: Addon })[];
  /** pending items not billed yet, in billing order */
  pendingItems: PendingInvoiceItem[];
  /** plans and coupons that `pendingChanges` schedules */
  scheduledPlans: PlanRow[];
  scheduledCoupons: Coupon[];
  /**
   * usage records of the lines: every record from the start of the period cycle `fromCycle` bills
   * on, and for `last_ever` lines also the latest record before it
   */
  usages: UsageRow[];
  /**
   * instead of `usages` (loadCycleData with `usage: "aggregates"`, the preview): each line's usage
   * of the period cycle `fromCycle` bills, aggregated by SQL
   */
  usageAggregates?: UsageAggregates;
  /** the organization's time zone */
  timeZone: string;
}

/**
 * A subscription's usage of one metered period [start, end), aggregated by SQL per line (the
 * preview reads these instead of every record, so its cost does not grow with the records): for
 * each aggregation the one record that prices the period under it (domain/usage.ts
 * aggregateUsage), absent when there is none. `sum` and `max` are records standing for the
 * period's unbilled records (their sum, their largest), dated at the period's start.
 */
export interface UsageAggregates {
  start: Date;
  end: Date;
  byLine: Map<string, Partial<Record<UsageAggregation, UsageRow>>>;
}

/**
 * cycleInputFrom was given usage aggregates of another period than the one the cycle bills (a scheduled plan of another
 * frequency): read the records instead.
 */
export class UsageAggregatesPeriodMismatch extends Error {}

/** The unbilled pending items of `subscriptionIds`, in billing order. */
export async function loadPendingItems(
  prisma: PrismaClient | Tx,
  subscriptionIds: readonly string[],
): Promise<PendingInvoiceItem[]> {
  return prisma.pendingInvoiceItem.findMany({
    where: { subscriptionId: { in: [...subscriptionIds] }, invoiceId: null },
    orderBy: [{ createdAt: "asc" }, { position: "asc" }, { id: "asc" }],
  });
}

/** How loadCycleData reads. */
export interface CycleDataOptions {
  /** extra conditions on the subscriptions (a tenant) */
  where?: { organizationId: string; testMode: boolean };
  /** each subscription's organization time zone */
  timeZoneOf: (s: Subscription) => string;
  /** the first cycle the data is for (default the subscription's next cycle) */
  fromCycle?: (s: Subscription) => number;
  /**
   * "rows" (default): `usages`, every record from the billed period on; "aggregates": `usageAggregates` of the period
   * cycle `fromCycle` bills, for a preview
   */
  usage?: "rows" | "aggregates";
}

/** The rows of some subscriptions, joined in memory (CycleData before it is split per subscription). */
interface CycleRows {
  subscriptions: CycleData["subscription"][];
  lines: LineRow[];
  addons: CycleData["addons"];
  pendingItems: PendingInvoiceItem[];
  /** the lines `pendingChanges` schedules, of every subscription */
  scheduledLines: NonNullable<ReturnType<typeof parsePendingChanges>>["lines"];
  scheduledPlans: PlanRow[];
  scheduledCoupons: Coupon[];
}

/** A usage record as read (quantity as text or a Decimal). */
type StoredUsage = {
  id: string;
  subscriptionLineId: string;
  quantity: { toString(): string };
  dateTime: Date;
  createdAt: Date;
  invoiceId: string | null;
};
const toUsageRow = (u: StoredUsage): UsageRow => ({ ...u, quantity: u.quantity.toString() });

/**
 * Reads the subscriptions `ids` (with `where`) and what their cycles use. The subscriptions with
 * their document type, coupon, lines (with plan, product, currency and coupon) and add-ons are ONE
 * statement (a joined read, infra/sql/joined-reads.ts: the relations are correlated subqueries built as
 * JSON in PostgreSQL); the pending items one more; the plans and coupons that only scheduled changes
 * name one each, when there are any. Flat Prisma reads joined here cost about ten statements, each
 * a query Prisma compiles and whose rows it maps (docs/performance.md "Billing run"). Null when
 * none is found.
 */
async function readCycleRows(
  prisma: PrismaClient | Tx,
  ids: string[],
  where: CycleDataOptions["where"],
): Promise<CycleRows | null> {
  const ordered = { orderBy: [{ position: "asc" as const }, { id: "asc" as const }] };
  const read = await prisma.subscription.findMany({
    where: { id: { in: ids }, ...where },
    include: {
      documentType: true,
      coupon: true,
      lines: { ...ordered, include: { plan: { include: { product: true, currency: true } }, coupon: true } },
      addons: { ...ordered, include: { addon: true } },
    },
  });
  if (read.length === 0) return null;
  const found = read.map((s) => s.id);
  const pendingItems = await loadPendingItems(prisma, found);
  const subscriptions = read.map((row) => {
    const s: Partial<typeof row> = { ...row };
    delete s.lines;
    delete s.addons;
    return s as CycleRows["subscriptions"][number];
  });
  const lines = read.flatMap((s) => s.lines);
  const scheduledLines = read.flatMap((s) => parsePendingChanges(s.pendingChanges)?.lines ?? []);
  const plans = new Map(lines.map((l) => [l.plan.id, l.plan]));
  const coupons = new Map<string, Coupon>();
  for (const c of [...read.map((s) => s.coupon), ...lines.map((l) => l.coupon)]) if (c) coupons.set(c.id, c);
  // what only the scheduled changes name
  const missingPlans = [...new Set(scheduledLines.map((l) => l.plan))].filter((id) => !plans.has(id));
  if (missingPlans.length)
    for (const p of await prisma.plan.findMany({
      where: { id: { in: missingPlans } },
      include: { product: true, currency: true },
    }))
      plans.set(p.id, p);
  const missingCoupons = [
    ...new Set(scheduledLines.map((l) => l.coupon).filter((id): id is string => !!id && !coupons.has(id))),
  ];
  if (missingCoupons.length)
    for (const c of await prisma.coupon.findMany({ where: { id: { in: missingCoupons } } })) coupons.set(c.id, c);
  const scheduledPlanIds = new Set(scheduledLines.map((l) => l.plan));
  const scheduledCouponIds = new Set(scheduledLines.map((l) => l.coupon));
  return {
    subscriptions,
    lines,
    addons: read.flatMap((s) => s.addons),
    pendingItems,
    scheduledLines,
    scheduledPlans: [...plans.values()].filter((p) => scheduledPlanIds.has(p.id)),
    scheduledCoupons: [...coupons.values()].filter((c) => scheduledCouponIds.has(c.id)),
  };
}

/** The period (zoned instants) the first cycle of `s` that the data is for bills usage of, or null without lines. */
function billedUsagePeriod(
  rows: CycleRows,
  s: Subscription,
  options: CycleDataOptions,
): { start: Date; end: Date } | null {
  const first = rows.lines.find((l) => l.subscriptionId === s.id)?.plan;
  if (!first) return null;
  const n = options.fromCycle?.(s) ?? s.nextBillingCycle;
  const period = billingPeriod(isoDate(s.dateStart), first.frequency as Frequency, Math.max(1, n - 1));
  const tz = options.timeZoneOf(s);
  return { start: zonedMidnight(period.start, tz), end: zonedMidnight(period.end, tz) };
}

/** The aggregations a line is priced with: its plan's, and a scheduled plan's. */
function aggregationsOf(rows: CycleRows, line: LineRow): Set<string | undefined> {
  const scheduled = rows.scheduledLines
    .filter((sl) => sl.id === line.id)
    .map((sl) => rows.scheduledPlans.find((p) => p.id === sl.plan)?.usageAggregation);
  return new Set([line.plan.usageAggregation, ...scheduled]);
}

/** Each subscription's usage of the period its first cycle bills, aggregated by SQL (usageAggregates). */
async function readUsageAggregates(
  prisma: PrismaClient | Tx,
  rows: CycleRows,
  options: CycleDataOptions,
): Promise<Map<string, UsageAggregates>> {
  const aggregatesOf = new Map<string, UsageAggregates>();
  for (const s of rows.subscriptions) {
    const period = billedUsagePeriod(rows, s, options);
    if (!period) continue;
    const mine = rows.lines.filter((l) => l.subscriptionId === s.id);
    aggregatesOf.set(
      s.id,
      await usageAggregates(
        prisma,
        mine.map((l) => ({ id: l.id, aggregations: aggregationsOf(rows, l) })),
        period,
      ),
    );
  }
  return aggregatesOf;
}

/**
 * The usage records of the lines: every record from the start of the period the first cycle
 * bills, and for `last_ever` lines also the latest record before it.
 */
async function readUsageRows(
  prisma: PrismaClient | Tx,
  rows: CycleRows,
  options: CycleDataOptions,
): Promise<UsageRow[]> {
  const fromOf = new Map<string, Date>();
  for (const s of rows.subscriptions) {
    const period = billedUsagePeriod(rows, s, options);
    if (period) fromOf.set(s.id, period.start);
  }
  const byStart = new Map<number, string[]>();
  const lastEverByStart = new Map<number, string[]>();
  for (const l of rows.lines) {
    const from = fromOf.get(l.subscriptionId);
    if (!from) continue;
    byStart.set(from.getTime(), [...(byStart.get(from.getTime()) ?? []), l.id]);
    if (aggregationsOf(rows, l).has("last_ever"))
      lastEverByStart.set(from.getTime(), [...(lastEverByStart.get(from.getTime()) ?? []), l.id]);
  }
  const usages: UsageRow[] = [];
  if (byStart.size) {
    // one raw statement (each line with its period start) on Usage_subscriptionLineId_dateTime_createdAt_idx:
    // a findMany with an OR branch per start date cost a query compilation per call; trim_scale gives
    // the quantity as Prisma's Decimal prints it ("3", not "3.000000"). The LATERAL subquery with
    // OFFSET 0 (not pulled up into a join) probes the index once per line: as a plain join, the
    // planner read the whole table into a hash join when its statistics were older than the rows
    const pairs = [...byStart].flatMap(([from, lineIds]) => lineIds.map((id) => [id, new Date(from)] as const));
    const found = await sqlRows<StoredUsage>(
      prisma,
      Prisma.sql`
      SELECT u.* FROM unnest(${pairs.map(([id]) => id)}::text[],
      ${pairs.map(([, from]) => from.toISOString())}::timestamptz[]) AS l("lineId", "from")
      CROSS JOIN LATERAL (
        SELECT "id", "subscriptionLineId", trim_scale("quantity")::text AS "quantity", "dateTime", "createdAt",
        "invoiceId"
        FROM "Usage" WHERE "subscriptionLineId" = l."lineId" AND "dateTime" >= l."from" OFFSET 0
      ) u`,
      { prepared: true },
    );
    usages.push(...found.map(toUsageRow));
  }
  // last_ever: each line's latest record before the period, one index probe per line (LATERAL ... LIMIT 1
  // on Usage_subscriptionLineId_dateTime_createdAt_idx, read backwards), however many records a line has
  for (const [from, lineIds] of lastEverByStart) {
    const found = await sqlRows<StoredUsage>(
      prisma,
      Prisma.sql`
      SELECT u.* FROM unnest(${lineIds}::text[]) AS l("lineId")
      CROSS JOIN LATERAL (
        SELECT "id", "subscriptionLineId", "quantity"::text AS "quantity", "dateTime", "createdAt", "invoiceId"
        FROM "Usage" WHERE "subscriptionLineId" = l."lineId" AND "dateTime" < ${new Date(from)}
        ORDER BY "dateTime" DESC, "createdAt" DESC LIMIT 1
      ) u`,
      { prepared: true },
    );
    usages.push(...found.map(toUsageRow));
  }
  return usages;
}

/**
 * Reads, in a fixed handful of queries whatever their number, what the cycle inputs of
 * `subscriptionIds` need (see CycleData) from cycle `options.fromCycle(subscription)` (default
 * its next cycle) on. Unknown ids are left out of the map.
 */
export async function loadCycleData(
  prisma: PrismaClient | Tx,
  subscriptionIds: readonly string[],
  options: CycleDataOptions,
): Promise<Map<string, CycleData>> {
  const result = new Map<string, CycleData>();
  if (subscriptionIds.length === 0) return result;
  const rows = await readCycleRows(prisma, [...subscriptionIds], options.where);
  if (!rows) return result;
  const aggregates = options.usage === "aggregates";
  const aggregatesOf = aggregates
    ? await readUsageAggregates(prisma, rows, options)
    : new Map<string, UsageAggregates>();
  const usages = aggregates ? [] : await readUsageRows(prisma, rows, options);
  const { scheduledPlans, scheduledCoupons } = rows;
  for (const s of rows.subscriptions) {
    result.set(s.id, {
      subscription: s,
      lines: [],
      addons: [],
      pendingItems: [],
      scheduledPlans,
      scheduledCoupons,
      usages: [],
      usageAggregates: aggregatesOf.get(s.id),
      timeZone: options.timeZoneOf(s),
    });
  }
  const subscriptionOfLine = new Map(rows.lines.map((l) => [l.id, l.subscriptionId]));
  for (const l of rows.lines) result.get(l.subscriptionId)!.lines.push(l);
  for (const a of rows.addons) result.get(a.subscriptionId)!.addons.push(a);
  for (const i of rows.pendingItems) result.get(i.subscriptionId)!.pendingItems.push(i);
  for (const u of usages) result.get(subscriptionOfLine.get(u.subscriptionLineId)!)!.usages.push(u);
  return result;
}

/**
 * The inputs of cycle `n` of the subscription `data` describes (loadCycleData), with no database
 * access: the one builder of the preview (cycleInputOf) and the billing run. Also returns the line
 * rows the cycle bills (the stored ones, or the ones `at_period_end` changes schedule for it, as
 * applyPendingChanges will write them). 409 when the subscription bills no such cycle (cancelled,
 * paused, or past its billing cycles) or has no lines.
 */
export function cycleInputFrom(
  data: CycleData,
  n: number,
  options: { final?: boolean } = {},
): {
  input: CycleInput;
  currency: string;
  document: string;
  cycle: number;
  subscription: Subscription;
  lines: LineRow[];
} {
  const { subscription } = data;
  const id = subscription.id;
  const final = options.final === true;
  if (subscription.status === "cancelled")
    throw new InvalidStateError(`Subscription ${id} is cancelled; it bills no more cycles`);
  if (subscription.status === "paused")
    throw new InvalidStateError(`Subscription ${id} is paused; resume it to bill its next cycle`);
  if (!final && subscription.billingCycles !== null && n > subscription.billingCycles)
    throw new InvalidStateError(`Subscription ${id} has billed its ${subscription.billingCycles} cycles`);
  const lines = linesOfCycle(data, n, final);
  const first = lines[0]?.plan;
  if (!first) throw new InvalidStateError(`Subscription ${id} has no lines`);
  const frequency = first.frequency as Frequency;
  const anchor = isoDate(subscription.dateStart);
  const input: CycleInput = {
    cycle: n,
    final,
    anchor,
    frequency,
    dayStart: (date: string) => zonedMidnight(date, data.timeZone),
    currency: first.currency,
    taxRules: taxRulesOf(subscription.documentType),
    lines: cycleLines(data, lines, meteredPeriod(anchor, frequency, n)),
    addons: data.addons.map((a) => ({
      id: a.id,
      name: a.addon.name,
      applyScheme: a.addon.applyScheme,
      durationTimes: a.addon.durationTimes,
      amount: a.addon.amount.toString(),
      quantity: a.quantity,
      rates: (a.rates ?? []) as unknown as AddonRate[],
      redemptions: a.addonRedemptions,
    })),
    coupon: subscription.coupon
      ? {
          ...couponTerms(subscription.coupon),
          id: subscription.coupon.id,
          name: subscription.coupon.name,
          redemptions: subscription.couponRedemptions,
        }
      : null,
    pendingItems: data.pendingItems.map((i) => ({
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

/**
 * The line rows cycle `n` bills: the stored ones, or the ones `at_period_end` changes schedule
 * for it, as applyPendingChanges will write them (kept ids keep their coupon redemptions). A
 * final invoice bills the lines the last period was served with: scheduled changes never start.
 */
function linesOfCycle(data: CycleData, n: number, final: boolean): LineRow[] {
  const { subscription } = data;
  const stored = data.lines;
  const scheduled = final ? null : linesAtCycle(parsePendingChanges(subscription.pendingChanges), n);
  if (!scheduled) return stored;
  return scheduled.map((l, position) => {
    const before = stored.find((s) => s.id === l.id);
    const coupon = data.scheduledCoupons.find((c) => c.id === l.coupon) ?? null;
    return {
      ...(before ?? { createdAt: subscription.createdAt, updatedAt: subscription.updatedAt, couponRedemptions: 0 }),
      id: l.id,
      subscriptionId: subscription.id,
      organizationId: subscription.organizationId,
      position,
      planId: l.plan,
      plan: data.scheduledPlans.find((p) => p.id === l.plan)!,
      quantity: new Prisma.Decimal(l.quantity),
      couponId: l.coupon,
      coupon,
      couponRedemptions: before && before.couponId === l.coupon ? before.couponRedemptions : 0,
    };
  });
}

/**
 * The cycle's lines as domain/billing-cycle.ts reads them. Metered lines price the usage of
 * `previous`, the period before the cycle (domain/billing-cycle.ts periodUsages, which the billing
 * run also uses to mark the records it billed); null: the first cycle, no usage yet.
 */
function cycleLines(data: CycleData, lines: LineRow[], previous: { start: string; end: string } | null): CycleLine[] {
  const dayStart = (date: string) => zonedMidnight(date, data.timeZone);
  const usagesOf = (lineId: string, aggregation: UsageAggregation): UsageRow[] => {
    if (!previous) return [];
    if (data.usageAggregates) {
      const { start, end, byLine } = data.usageAggregates;
      if (start.getTime() !== dayStart(previous.start).getTime() || end.getTime() !== dayStart(previous.end).getTime())
        throw new UsageAggregatesPeriodMismatch();
      const record = byLine.get(lineId)?.[aggregation];
      return record ? [record] : [];
    }
    const mine = data.usages.filter((u) => u.subscriptionLineId === lineId);
    return periodUsages(mine, aggregation, { start: dayStart(previous.start), end: dayStart(previous.end) }).priced;
  };
  return lines.map((line) => {
    const aggregation = line.plan.usageAggregation as UsageAggregation;
    return {
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
      coupon: line.coupon
        ? {
            ...couponTerms(line.coupon),
            id: line.coupon.id,
            name: line.coupon.name,
            redemptions: line.couponRedemptions,
          }
        : null,
      usages:
        line.plan.usageScheme === "metered"
          ? usagesOf(line.id, aggregation).map((u) => ({ quantity: u.quantity, dateTime: u.dateTime }))
          : [],
    };
  });
}

/**
 * The inputs of cycle `cycle` (default the next) of subscription `id` of `ctx.auth`'s organization
 * and mode: loadCycleData + cycleInputFrom, the same builder the billing run uses (callers may run
 * it inside a transaction). `known.timeZone`: the organization's time zone when the caller has it
 * (saves a query). 404 unknown; 409 as cycleInputFrom.
 */
export async function cycleInputOf(
  ctx: ServiceContext,
  id: string,
  cycle?: number,
  known: { timeZone?: string } = {},
): Promise<ReturnType<typeof cycleInputFrom>> {
  const timeZone =
    known.timeZone ??
    (
      await ctx.prisma.organization.findUniqueOrThrow({
        where: { id: ctx.auth.organizationId },
        select: { timeZone: true },
      })
    ).timeZone;
  const data = (
    await loadCycleData(ctx.prisma, [id], {
      where: tenant(ctx),
      timeZoneOf: () => timeZone,
      fromCycle: (s) => cycle ?? s.nextBillingCycle,
    })
  ).get(id);
  if (!data) throw new NotFoundError("subscription", id);
  return cycleInputFrom(data, cycle ?? data.subscription.nextBillingCycle);
}

/** The subscription's fields the cycle rules read (domain/billing-cycle.ts cycleDecision). */
export function cycleState(s: Subscription): CycleSubscription {
  return {
    status: s.status,
    cycle: s.nextBillingCycle,
    date: isoDate(s.nextBilling),
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    cancelReason: s.cancelReason,
    billingCycles: s.billingCycles,
    endDate: s.endDate ? isoDate(s.endDate) : null,
  };
}

/**
 * Each line's usage of [period.start, period.end) aggregated by SQL (see UsageAggregates), for the
 * aggregations `lines` name: one statement for sum and max (records not billed yet, as
 * domain/billing-cycle.ts periodUsages), one index probe per line for last_during_period (the
 * period's latest unbilled record) and for last_ever (the latest record before the period's end,
 * billed or not), each on Usage_subscriptionLineId_dateTime_createdAt_idx, which covers
 * quantity and invoiceId so the sum reads the index only (migration 20261124220000).
 */
export async function usageAggregates(
  prisma: PrismaClient | Tx,
  lines: readonly { id: string; aggregations: ReadonlySet<string | undefined> }[],
  period: { start: Date; end: Date },
): Promise<UsageAggregates> {
  const byLine = new Map<string, Partial<Record<UsageAggregation, UsageRow>>>(lines.map((l) => [l.id, {}]));
  const which = (aggregation: UsageAggregation) =>
    lines.filter((l) => l.aggregations.has(aggregation)).map((l) => l.id);
  const record = (lineId: string, quantity: string, dateTime: Date, createdAt: Date): UsageRow => ({
    id: `aggregate_${lineId}`,
    subscriptionLineId: lineId,
    quantity,
    dateTime,
    createdAt,
    invoiceId: null,
  });
  const summed = [...new Set([...which("sum"), ...which("max")])];
  if (summed.length) {
    const rows = await prisma.$queryRaw<{ lineId: string; sum: string; max: string }[]>`
      SELECT "subscriptionLineId" AS "lineId", sum("quantity")::text AS "sum", max("quantity")::text AS "max"
      FROM "Usage"
      WHERE "subscriptionLineId" = ANY(${summed}::text[]) AND "dateTime" >= ${period.start}
      AND "dateTime" < ${period.end} AND "invoiceId" IS NULL
      GROUP BY "subscriptionLineId"`;
    for (const r of rows) {
      const of = byLine.get(r.lineId)!;
      of.sum = record(r.lineId, r.sum, period.start, period.start);
      of.max = record(r.lineId, r.max, period.start, period.start);
    }
  }
  const latest = async (aggregation: "last_during_period" | "last_ever") => {
    const ids = which(aggregation);
    if (!ids.length) return;
    const since =
      aggregation === "last_ever"
        ? Prisma.empty
        : Prisma.sql`AND "dateTime" >= ${period.start} AND "invoiceId" IS NULL`;
    const rows = await prisma.$queryRaw<{ lineId: string; quantity: string; dateTime: Date; createdAt: Date }[]>`
      SELECT l."lineId", u."quantity", u."dateTime", u."createdAt"
      FROM unnest(${ids}::text[]) AS l("lineId")
      CROSS JOIN LATERAL (
        SELECT "quantity"::text AS "quantity", "dateTime", "createdAt" FROM "Usage"
        WHERE "subscriptionLineId" = l."lineId" AND "dateTime" < ${period.end} ${since}
        ORDER BY "dateTime" DESC, "createdAt" DESC LIMIT 1
      ) u`;
    for (const r of rows) byLine.get(r.lineId)![aggregation] = record(r.lineId, r.quantity, r.dateTime, r.createdAt);
  };
  await latest("last_during_period");
  await latest("last_ever");
  return { start: period.start, end: period.end, byLine };
}
