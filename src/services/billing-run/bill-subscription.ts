/**
 * Billing one claimed subscription (docs/billing-run.md "What is due", "The cycle rules: one
 * source"): every due cycle in order up to the cutoff, each decided by domain/billing-cycle.ts
 * `cycleDecision` (with the no-card rule read from the database only for a cycle that would be
 * billed) and computed by `cycleInvoice` over services/cycle-input.ts `cycleInputFrom`, exactly as
 * the upcoming-invoice preview does. The invoice drafts, their lines, usage marks and redemptions
 * are buffered in the batch's BatchWrites; the subscription's billing state is kept in memory (its
 * CycleData) and written by the batch (batch.ts).
 */
import { newId } from "../../infra/ids.js";
import {
  cycleDecision,
  cycleInvoice,
  periodUsages,
  type CycleDecision,
  type CycleInput,
  type CycleInvoice,
  type CycleSubscription,
} from "../../domain/billing-cycle.js";
import type { UsageAggregation } from "../../domain/usage.js";
import { isBilledStatus } from "../../domain/subscriptions.js";
import { isoDate, zonedMidnight } from "../../domain/formats.js";
import { linesAtCycle, parsePendingChanges } from "../../domain/proration.js";
import { withinTransaction, type ServiceContext, type Tx } from "../context.js";
import { noCardApplies } from "../cycle-decision.js";
import { cycleInputFrom, cycleState, loadPendingItems, type CycleData, type LineRow } from "../cycle-input.js";
import { dateColumn } from "../../domain/formats.js";
import { totalColumns } from "../../domain/document-lines.js";
import { lineRows } from "../document-lifecycle.js";
import { applyPendingChanges, markPendingItemsBilled } from "../proration.js";
import { BatchWrites } from "./bulk-writes.js";

/** At most this many cycles are billed per subscription in one run (a runaway catch-up guard). */
export const MAX_CYCLES_PER_RUN = 1000;

/** What billing one subscription did. */
export interface Outcome {
  invoices: string[];
  /** the invoices with their document type and customer, to finalize */
  drafts: { id: string; documentTypeId: string; customerId: string }[];
  /** the context the invoices were created with (their organization and mode) */
  ctx: ServiceContext;
  cycles: number;
  cancelled: boolean;
  /** still due after MAX_CYCLES_PER_RUN cycles */
  unfinished: boolean;
}

/** The invoice of cycle n-1 as the no-card rule reads it. */
interface PreviousInvoice {
  id: string;
  dueDate: Date | null;
  status: string;
}

/** The invoices of the batch's subscriptions by cycle: stored ones, and the ones the batch creates. */
export class PreviousInvoices {
  private readonly byKey = new Map<string, PreviousInvoice>();

  get(subscriptionId: string, cycle: number): PreviousInvoice | null {
    return this.byKey.get(`${subscriptionId}#${cycle}`) ?? null;
  }

  set(subscriptionId: string, cycle: number, invoice: PreviousInvoice): void {
    this.byKey.set(`${subscriptionId}#${cycle}`, invoice);
  }
}

/** One claimed subscription to bill, inside the batch's transaction. */
export interface SubscriptionJob {
  tx: Tx;
  /** the subscription's organization and mode (runContext) */
  base: ServiceContext;
  /** its CycleData, kept current in memory while its cycles are billed */
  data: CycleData;
  /** `yyyy-mm-dd`: the last cycle start to bill */
  cutoff: string;
  writes: BatchWrites;
  previous: PreviousInvoices;
}

/** A cycle's computed invoice with what it was computed from. */
interface BilledCycle {
  cycle: number;
  /** `yyyy-mm-dd`: the cycle's start, the invoice's date */
  date: string;
  input: CycleInput;
  invoice: CycleInvoice;
  currency: string;
  document: string;
  /** the subscription lines the cycle bills */
  lines: LineRow[];
}

/**
 * Bills every due cycle of one claimed subscription up to `job.cutoff`, buffering the writes in
 * `job.writes`; the subscription row itself is written by billBatch from `job.data.subscription`.
 */
export async function billSubscription(job: SubscriptionJob): Promise<Outcome> {
  const ctx = withinTransaction(job.base, job.tx);
  const outcome: Outcome = { invoices: [], drafts: [], ctx, cycles: 0, cancelled: false, unfinished: false };
  const sub = job.data.subscription;
  while (isBilledStatus(sub.status) && isoDate(sub.nextBilling) <= job.cutoff) {
    if (outcome.cycles >= MAX_CYCLES_PER_RUN) {
      outcome.unfinished = true;
      break;
    }
    if ((await billNextCycle(job, outcome)) === "stop") break;
    outcome.cycles++;
  }
  return outcome;
}

/**
 * Bills the subscription's next cycle: its invoice (when it has lines), then either the
 * subscription advances one cycle ("advanced") or it ends, or nothing is due ("stop").
 */
async function billNextCycle(job: SubscriptionJob, outcome: Outcome): Promise<"advanced" | "stop"> {
  const sub = job.data.subscription;
  const state = cycleState(sub);
  const decision = await decide(job, outcome.ctx, state);
  if (decision.action === "none") return "stop";
  const ending = decision.action === "end" ? decision : null;
  if (ending && !ending.finalInvoice) {
    end(job, outcome, ending, state.date);
    return "stop";
  }
  const billed = await computeCycle(job, outcome.ctx, state, !!ending);
  if (billed.invoice.lines.length > 0) await bufferInvoice(job, outcome, billed);
  if (billed.invoice.subscriptionCouponRedeemed) sub.couponRedemptions++;
  if (ending) {
    // ended after its final invoice: next_billing and next_billing_cycle stay where it ended
    end(job, outcome, ending, state.date);
    return "stop";
  }
  // the cycle's period ends where the next one starts
  sub.nextBilling = dateColumn(billed.invoice.periodEnd);
  sub.nextBillingCycle = state.cycle + 1;
  sub.previousBilling = dateColumn(state.date);
  return "advanced";
}

/** The cycle rules (domain/billing-cycle.ts cycleDecision), as the upcoming-invoice preview decides. */
async function decide(job: SubscriptionJob, ctx: ServiceContext, state: CycleSubscription): Promise<CycleDecision> {
  const decision = cycleDecision(state);
  if (decision.action !== "bill") return decision;
  // the no-card rule is read from the database only for a cycle that would be billed
  const sub = job.data.subscription;
  const previous = job.previous.get(sub.id, state.cycle - 1);
  const check = {
    cycle: state.cycle,
    date: state.date,
    previous: previous && { ...previous, dueDate: previous.dueDate ? isoDate(previous.dueDate) : null },
    customerId: sub.customerId,
  };
  return (await noCardApplies(ctx, check, () => job.writes.flush())) ? cycleDecision(state, true) : decision;
}

/** Cancels the subscription with the ending's reason, now or at the cycle's start. */
function end(
  job: SubscriptionJob,
  outcome: Outcome,
  ending: Extract<CycleDecision, { action: "end" }>,
  date: string,
): void {
  const sub = job.data.subscription;
  sub.status = "cancelled";
  sub.cancelled = ending.cancelledAt === "now" ? job.base.now() : zonedMidnight(date, job.data.timeZone);
  sub.cancelReason = ending.cancelReason;
  outcome.cancelled = true;
}

/**
 * The invoice of the cycle `state` describes. A final invoice (the subscription ends) bills the
 * stored lines' last usage and pending items; otherwise lines scheduled at_period_end for this
 * cycle take effect first (docs/proration.md): the input already bills them as
 * applyPendingChanges writes them.
 */
async function computeCycle(
  job: SubscriptionJob,
  ctx: ServiceContext,
  state: CycleSubscription,
  final: boolean,
): Promise<BilledCycle> {
  const d = job.data;
  const sub = d.subscription;
  const { input, currency, document, lines } = cycleInputFrom(d, state.cycle, { final });
  if (!final && linesAtCycle(parsePendingChanges(sub.pendingChanges), state.cycle)) {
    await job.writes.flush();
    await applyPendingChanges(ctx, sub.id, state.cycle);
    d.lines = lines;
    sub.pendingChanges = null;
  }
  return { cycle: state.cycle, date: state.date, input, invoice: cycleInvoice(input), currency, document, lines };
}

/**
 * Buffers the cycle's invoice draft and its lines (finalized, numbered, at the end of the
 * transaction: batch.ts finalizeInvoices), bills the subscription's pending items, and marks what the
 * invoice bills (usages, redemptions).
 */
async function bufferInvoice(job: SubscriptionJob, outcome: Outcome, billed: BilledCycle): Promise<void> {
  const sub = job.data.subscription;
  const { invoice, cycle, date } = billed;
  const invoiceId = newId("inv");
  const planOf = new Map(billed.lines.map((l) => [l.id, l.planId]));
  const due = new Date(dateColumn(date).getTime() + sub.expirationDays * 86_400_000);
  job.writes.invoices.push({
    id: invoiceId,
    organizationId: sub.organizationId,
    testMode: sub.testMode,
    customerId: sub.customerId,
    documentTypeId: billed.document,
    currencyId: billed.currency,
    date,
    dueDate: isoDate(due),
    ...totalColumns(invoice.totals, invoice),
    periodStart: invoice.periodStart,
    periodEnd: invoice.periodEnd,
    note: sub.note,
    status: "draft",
    userEmail: sub.userEmail,
    subscriptionId: sub.id,
    billingCycle: cycle,
  });
  const rows = lineRows(invoice.lines, invoice.totals).map((row, position) => {
    const l = invoice.lines[position];
    return {
      ...row,
      invoiceId,
      organizationId: sub.organizationId,
      planId: l.source.kind === "line" ? (planOf.get(l.source.id) ?? null) : null,
      periodStart: l.periodStart,
      periodEnd: l.periodEnd,
    };
  });
  job.writes.lines.push(...rows);
  job.previous.set(sub.id, cycle, { id: invoiceId, dueDate: due, status: "draft" });
  outcome.invoices.push(invoiceId);
  outcome.drafts.push({ id: invoiceId, documentTypeId: billed.document, customerId: sub.customerId });
  // prorations and carried credits this invoice bills; credit that did not fit waits for the next cycle
  if (invoice.billedPendingItems.length || invoice.carriedCredits.length) {
    await job.writes.flush();
    await markPendingItemsBilled(outcome.ctx, sub.id, invoiceId, invoice);
    job.data.pendingItems = await loadPendingItems(job.tx, [sub.id]);
  }
  markBilled(job, invoiceId, billed);
}

/**
 * Marks what invoice `invoiceId` bills: each metered line's period usage records not billed yet
 * (domain/billing-cycle.ts periodUsages: the records the preview priced), and one redemption of
 * each line coupon and addon it applied (in the buffered writes and in memory).
 */
function markBilled(job: SubscriptionJob, invoiceId: string, { invoice, input }: BilledCycle): void {
  const d = job.data;
  const dayStart = (date: string) => zonedMidnight(date, d.timeZone);
  for (const l of invoice.lines) {
    const plan = l.source.kind === "line" ? input.lines.find((c) => c.id === l.source.id)?.plan : undefined;
    if (plan?.usageScheme !== "metered") continue;
    const records = d.usages.filter((u) => u.subscriptionLineId === l.source.id);
    for (const u of periodUsages(records, plan.usageAggregation as UsageAggregation, {
      start: dayStart(l.periodStart),
      end: dayStart(l.periodEnd),
    }).billed) {
      u.invoiceId = invoiceId;
      job.writes.usageMarks.push({ id: u.id, invoiceId });
    }
  }
  for (const id of new Set(invoice.redeemedLineCoupons)) {
    BatchWrites.redeem(job.writes.lineRedemptions, id);
    const line = d.lines.find((x) => x.id === id);
    if (line) line.couponRedemptions++;
  }
  for (const id of new Set(invoice.billedAddons)) {
    BatchWrites.redeem(job.writes.addonRedemptions, id);
    const addon = d.addons.find((x) => x.id === id);
    if (addon) addon.addonRedemptions++;
  }
}
