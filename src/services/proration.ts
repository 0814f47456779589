/**
 * Proration of mid-cycle subscription changes with the database (docs/proration.md; rules in
 * domain/proration.ts). Everything here runs inside the caller's transaction (`ctx` from
 * withinTransaction), so a change, its pending items and the documents it issues commit together.
 *
 * For the billing run (branch `runner`), per cycle, in its transaction:
 *   1. applyPendingChanges(tx, subscriptionId, cycle): lines scheduled `at_period_end` replace the
 *      stored ones when their cycle starts;
 *   2. cycleInputOf + cycleInvoice (the input includes the pending items);
 *   3. markPendingItemsBilled(tx, subscriptionId, invoiceId, invoice): the items it billed point to
 *      the invoice, and credit that did not fit becomes a pending item of the next cycle.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { ValidationError } from "../domain/errors.js";
import type { CycleInvoice } from "../domain/billing-cycle.js";
import { linesAtCycle, netForInvoicing, parsePendingChanges, type PendingItemDraft } from "../domain/proration.js";
import { addDays } from "../domain/billing-periods.js";
import { Decimal, type CurrencyUnit } from "../domain/money.js";
import { tenant, type ServiceContext, type Tx } from "./context.js";
import { dateColumn } from "../domain/formats.js";
import { finalizeLockedDocument } from "./document-lifecycle.js";
import { organizationToday } from "./reference.js";
import { createInvoice } from "./invoices.js";
import { createCreditNoteIn } from "./credit-notes.js";

const tx = (ctx: ServiceContext) => ctx.prisma as unknown as Tx;

/** Stores `items` as pending items of subscription `subscriptionId` (billed by its next cycle invoice). */
export async function storePendingItems(
  ctx: ServiceContext,
  subscriptionId: string,
  items: readonly PendingItemDraft[],
): Promise<void> {
  if (items.length === 0) return;
  await ctx.prisma.pendingInvoiceItem.createMany({
    data: items.map((i, position) => ({
      id: newId("pii"),
      position,
      ...tenant(ctx),
      subscriptionId,
      name: i.name,
      quantity: i.quantity.toFixed(),
      amount: i.amount.toFixed(),
      exempt: i.exempt,
      periodStart: dateColumn(i.periodStart),
      periodEnd: dateColumn(i.periodEnd),
    })),
  });
}

/**
 * `always_invoice`: bills the net of `items` now, per tax class (domain/proration.ts
 * netForInvoicing). A net charge: an invoice of the subscription's customer and document type,
 * dated today (due after `expirationDays`), one line with the net and the items in its
 * description, finalized (numbered) in this transaction; it points to the subscription
 * (`subscriptionId`, no billing cycle). A net credit: a finalized credit note (default type) against
 * the current cycle's finalized invoice (`billingCycle` = nextBillingCycle - 1); when there is none,
 * or the credit exceeds what is left to credit on it, the credit is stored as a pending item of
 * the next cycle instead. Returns the ids of the documents issued.
 */
export async function invoiceProrationsNow(
  ctx: ServiceContext,
  subscription: {
    id: string;
    customerId: string;
    documentTypeId: string;
    expirationDays: number;
    nextBillingCycle: number;
  },
  currency: CurrencyUnit,
  items: readonly PendingItemDraft[],
): Promise<{ invoices: string[]; creditNotes: string[] }> {
  const issued = { invoices: [] as string[], creditNotes: [] as string[] };
  const nets = netForInvoicing(items, currency);
  if (nets.length === 0) return issued;
  const today = await organizationToday(ctx);
  const period = { start: items[0].periodStart, end: items[0].periodEnd };
  const charges = nets.filter((n) => n.net.isPositive());
  const credits = nets.filter((n) => n.net.isNegative());
  if (charges.length > 0) {
    const invoice = await createInvoice(ctx, {
      customer: subscription.customerId,
      document: subscription.documentTypeId,
      currency: currency.id,
      date: today,
      dueDate: addDays(today, subscription.expirationDays),
      periodStart: period.start,
      periodEnd: period.end,
      lines: charges.map((n) => ({
        name: n.name,
        description: n.description,
        quantity: 1,
        amount: n.net.toFixed(),
        exempt: n.exempt,
      })),
    });
    await ctx.prisma.invoice.update({ where: { id: invoice.id }, data: { subscriptionId: subscription.id } });
    await finalizeLockedDocument(tx(ctx), ctx, "invoice", invoice.id, "draft");
    issued.invoices.push(invoice.id);
  }
  if (credits.length > 0) {
    const cycleInvoice = await ctx.prisma.invoice.findFirst({
      where: {
        subscriptionId: subscription.id,
        billingCycle: subscription.nextBillingCycle - 1,
        status: "finalized",
        ...tenant(ctx),
      },
      select: { id: true },
    });
    let credited = false;
    if (cycleInvoice) {
      try {
        const note = await createCreditNoteIn(tx(ctx), ctx, {
          invoice: cycleInvoice.id,
          date: today,
          note: credits.map((n) => n.name).join("; "),
          lines: credits.map((n) => ({
            name: n.name,
            description: n.description,
            quantity: 1,
            amount: n.net.negated().toFixed(),
            exempt: n.exempt,
          })),
        });
        await finalizeLockedDocument(tx(ctx), ctx, "credit_note", note.id, "draft");
        issued.creditNotes.push(note.id);
        credited = true;
      } catch (error) {
        // only "exceeds what is left to credit" (checked before anything is written) falls back
        if (!(error instanceof ValidationError && error.fields?.total)) throw error;
      }
    }
    if (!credited) {
      const creditItems = items.filter((i) => credits.some((c) => c.exempt === i.exempt));
      await storePendingItems(ctx, subscription.id, creditItems);
    }
  }
  return issued;
}

/**
 * For the billing run, in its transaction, after storing the cycle invoice `invoiceId` computed
 * as `invoice` (cycleInvoice): marks the pending items it billed (`invoice.billedPendingItems`)
 * as billed by it, and stores the credit that did not fit (`invoice.carriedCredits`) as pending
 * items for the next cycle. Returns how many items were marked.
 */
export async function markPendingItemsBilled(
  ctx: ServiceContext,
  subscriptionId: string,
  invoiceId: string,
  invoice: Pick<CycleInvoice, "billedPendingItems" | "carriedCredits">,
): Promise<number> {
  const { count } = await ctx.prisma.pendingInvoiceItem.updateMany({
    where: { subscriptionId, invoiceId: null, id: { in: invoice.billedPendingItems } },
    data: { invoiceId },
  });
  await storePendingItems(
    ctx,
    subscriptionId,
    invoice.carriedCredits.map((c) => ({
      name: `Credit carried over: ${c.name}`,
      amount: c.amount,
      quantity: new Decimal(1),
      periodStart: c.periodStart,
      periodEnd: c.periodEnd,
      exempt: c.exempt,
    })),
  );
  return count;
}

/**
 * For the billing run, in its transaction, before it computes cycle `cycle`: when lines were
 * scheduled `at_period_end` for that cycle (or an earlier one), they replace the stored lines
 * (kept positions keep their line id, so usage stays attached; a changed coupon restarts its
 * redemptions) and `pendingChanges` is cleared. Returns whether anything changed.
 */
export async function applyPendingChanges(
  ctx: ServiceContext,
  subscriptionId: string,
  cycle: number,
): Promise<boolean> {
  const subscription = await ctx.prisma.subscription.findFirst({
    where: { id: subscriptionId, ...tenant(ctx) },
    select: { pendingChanges: true },
  });
  const lines = linesAtCycle(parsePendingChanges(subscription?.pendingChanges), cycle);
  if (!lines) return false;
  const stored = await ctx.prisma.subscriptionLine.findMany({
    where: { subscriptionId },
    select: { id: true, couponId: true },
  });
  const keep = new Set(lines.map((l) => l.id));
  const removed = stored.filter((s) => !keep.has(s.id)).map((s) => s.id);
  if (removed.length > 0) await ctx.prisma.subscriptionLine.deleteMany({ where: { id: { in: removed } } });
  for (const [position, line] of lines.entries()) {
    const before = stored.find((s) => s.id === line.id);
    const data = { position, planId: line.plan, quantity: line.quantity, couponId: line.coupon };
    if (before)
      await ctx.prisma.subscriptionLine.update({
        where: { id: line.id },
        data: { ...data, ...(before.couponId !== line.coupon ? { couponRedemptions: 0 } : {}) },
      });
    else
      await ctx.prisma.subscriptionLine.create({
        data: { id: line.id, subscriptionId, organizationId: ctx.auth.organizationId, ...data },
      });
  }
  await ctx.prisma.subscription.update({ where: { id: subscriptionId }, data: { pendingChanges: Prisma.DbNull } });
  return true;
}
