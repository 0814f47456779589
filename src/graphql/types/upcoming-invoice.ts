/**
 * `upcomingInvoice(subscription)`: the invoice the next cycle of a subscription will produce,
 * computed by the same pure function the billing run uses (services/upcoming-invoice.ts,
 * domain/billing-cycle.ts; docs/recurring-billing.md). Amounts in `currency`.
 */
import { builder } from "../builder.js";
import { upcomingInvoice, type UpcomingInvoice as UpcomingInvoiceValue } from "../../services/upcoming-invoice.js";
import type { CycleInvoiceLine } from "../../domain/billing-cycle.js";
import "./subscription.js";

type LineValue = CycleInvoiceLine & { total: string };

const UpcomingInvoiceLine = builder.objectRef<LineValue>("UpcomingInvoiceLine").implement({
  description: "A line of an upcoming invoice: a plan for the period (metered: the previous period's usage), an addon, or a pending item (a proration; negative: a credit).",
  fields: (t) => ({
    name: t.exposeString("name"),
    description: t.exposeString("description", { description: "period, usage or tiers the line bills" }),
    quantity: t.field({ type: "Decimal", resolve: (l) => l.quantity }),
    amount: t.field({ type: "Decimal", description: "unit price", resolve: (l) => l.amount }),
    discount: t.field({ type: "Decimal", description: "coupon discount, percent or amount per discountScheme", resolve: (l) => l.discount }),
    discountScheme: t.exposeString("discountScheme"),
    exempt: t.exposeBoolean("exempt"),
    total: t.field({ type: "Decimal", description: "line net after its discount", resolve: (l) => l.total }),
    periodStart: t.field({ type: "Date", resolve: (l) => l.periodStart }),
    periodEnd: t.field({ type: "Date", description: "exclusive", resolve: (l) => l.periodEnd }),
    subscriptionLine: t.string({ nullable: true, description: "`lin_` id of the subscription line it bills", resolve: (l) => (l.source.kind === "line" ? l.source.id : null) }),
    pendingItem: t.string({
      nullable: true,
      description: "`pii_` id of the pending invoice item it bills (a proration or a carried credit; docs/proration.md)",
      resolve: (l) => (l.source.kind === "pending_item" ? l.source.id : null),
    }),
  }),
});

const UpcomingInvoice = builder.objectRef<UpcomingInvoiceValue>("UpcomingInvoice").implement({
  description: "The invoice a subscription's next cycle will produce (not stored).",
  fields: (t) => ({
    subscription: t.exposeString("subscriptionId", { description: "`sub_` id" }),
    cycle: t.exposeInt("cycle", { description: "the cycle it bills (1 = the first)" }),
    final: t.exposeBoolean("final", {
      description: "true: the subscription ends on `date` (cancel at period end, billing_cycles, end_date) and this is its final invoice: the last period's metered usage and pending items only",
    }),
    date: t.field({ type: "Date", description: "issue date: the subscription's next_billing (the cycle's start)", resolve: (i) => i.date }),
    periodStart: t.field({ type: "Date", resolve: (i) => i.periodStart }),
    periodEnd: t.field({ type: "Date", description: "exclusive; the renewal date", resolve: (i) => i.periodEnd }),
    currency: t.exposeString("currency", { description: "ISO 4217" }),
    document: t.exposeString("document", { description: "document type id" }),
    lines: t.field({ type: [UpcomingInvoiceLine], resolve: (i) => i.lines.map((l, n) => ({ ...l, total: i.totals.lines[n].total.toFixed() })) }),
    discount: t.field({ type: "Decimal", description: "document discount (an invoice coupon)", resolve: (i) => i.discount }),
    discountScheme: t.exposeString("discountScheme"),
    amount: t.field({ type: "Decimal", description: "taxable net after the document discount", resolve: (i) => i.totals.amount.toFixed() }),
    exempt: t.field({ type: "Decimal", resolve: (i) => i.totals.exempt.toFixed() }),
    subtotal: t.field({ type: "Decimal", resolve: (i) => i.totals.subtotal.toFixed() }),
    taxPercent: t.field({ type: "Decimal", resolve: (i) => i.totals.taxPercent.toFixed() }),
    tax: t.field({ type: "Decimal", resolve: (i) => i.totals.tax.toFixed() }),
    total: t.field({ type: "Decimal", resolve: (i) => i.totals.total.toFixed() }),
  }),
});

builder.queryFields((t) => ({
  upcomingInvoice: t.field({
    type: UpcomingInvoice,
    description: "Preview of the next cycle's invoice of a subscription: exactly the invoice the billing run creates for that cycle when nothing changes before (docs/subscriptions.md). Errors: not_found; invalid_state when the run will bill nothing (paused, cancelled, or ending at that cycle's start with no final invoice to issue: cancel at period end, billing_cycles or end_date with no usage or pending item left to bill, or the no-card rule; the message says which and when).",
    args: { subscription: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => upcomingInvoice(ctx, String(args.subscription)),
  }),
}));
