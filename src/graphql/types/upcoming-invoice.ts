/**
 * `upcomingInvoice(subscription)`: the invoice the next cycle of a subscription will produce,
 * computed by the same pure function the billing run uses (services/upcoming-invoice.ts over
 * services/cycle-input.ts, domain/billing-cycle.ts; docs/recurring-billing.md). Amounts in
 * `currency`.
 */
import { builder } from "../builder.js";
import { upcomingInvoice, type UpcomingInvoice as UpcomingInvoiceValue } from "../../services/upcoming-invoice.js";
import type { CycleInvoiceLine } from "../../domain/billing-cycle.js";
import { tenant } from "../../services/context.js";
import { InvalidStateError } from "../../domain/errors.js";
import { DiscountScheme } from "../enums.js";
import "./subscription.js";

type LineValue = CycleInvoiceLine & { total: string };

const UpcomingInvoiceLine = builder.objectRef<LineValue>("UpcomingInvoiceLine").implement({
  description:
    "A line of an upcoming invoice: a plan for the period (metered: the previous period's usage), an addon, or a " +
    "pending item (a proration; negative: a credit).",
  fields: (t) => ({
    name: t.exposeString("name", {
      description: "the plan's, addon's or pending item's name, as the invoice line will read",
    }),
    description: t.exposeString("description", { description: "period, usage or tiers the line bills" }),
    quantity: t.field({
      type: "Decimal",
      description: "units billed (metered: the aggregated usage of the previous period)",
      resolve: (l) => l.quantity,
    }),
    amount: t.field({
      type: "Decimal",
      description: "unit price in the invoice's currency (negative: a credit)",
      resolve: (l) => l.amount,
    }),
    discount: t.field({
      type: "Decimal",
      description: "line coupon discount: a percent (0-100) or an amount in the invoice's currency, per discountScheme",
      resolve: (l) => l.discount,
    }),
    discountScheme: t.field({
      type: DiscountScheme,
      description: "how discount reads",
      resolve: (l) => l.discountScheme,
    }),
    exempt: t.exposeBoolean("exempt", { description: "true: an exempt (untaxed) line" }),
    total: t.field({
      type: "Decimal",
      description: "line net after its discount, in the invoice's currency",
      resolve: (l) => l.total,
    }),
    periodStart: t.field({
      type: "Date",
      description: "first day the line bills, yyyy-mm-dd",
      resolve: (l) => l.periodStart,
    }),
    periodEnd: t.field({
      type: "Date",
      description: "day after the last day it bills (exclusive), yyyy-mm-dd",
      resolve: (l) => l.periodEnd,
    }),
    subscriptionLine: t.string({
      nullable: true,
      description: "`lin_` id of the subscription line it bills; null for a pending item's line",
      resolve: (l) => (l.source.kind === "line" ? l.source.id : null),
    }),
    pendingItem: t.string({
      nullable: true,
      description:
        "`pii_` id of the pending invoice item it bills (a proration or a carried credit); " +
        "null for a subscription line's",
      resolve: (l) => (l.source.kind === "pending_item" ? l.source.id : null),
    }),
  }),
});

const UpcomingInvoice = builder.objectRef<UpcomingInvoiceValue>("UpcomingInvoice").implement({
  description: "The invoice a subscription's next cycle will produce (not stored).",
  fields: (t) => ({
    subscription: t.prismaField({
      type: "Subscription",
      description:
        "the subscription it previews (before this release a `sub_` id String: select `subscription { id }`)",
      resolve: (query, i, _args, ctx) =>
        ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: i.subscriptionId, ...tenant(ctx) } }),
    }),
    cycle: t.exposeInt("cycle", { description: "the cycle it bills (1 = the first)" }),
    final: t.exposeBoolean("final", {
      description:
        "true: the subscription ends on `date` (cancel at period end, billing_cycles, end_date) and this is its " +
        "final invoice: the last period's metered usage and pending items only",
    }),
    date: t.field({
      type: "Date",
      description: "issue date: the subscription's next_billing (the cycle's start)",
      resolve: (i) => i.date,
    }),
    periodStart: t.field({
      type: "Date",
      description: "first day of the billed period, yyyy-mm-dd",
      resolve: (i) => i.periodStart,
    }),
    periodEnd: t.field({
      type: "Date",
      description: "exclusive; the renewal date, yyyy-mm-dd",
      resolve: (i) => i.periodEnd,
    }),
    currency: t.exposeString("currency", { description: "ISO 4217 code of every amount, e.g. CLP" }),
    document: t.exposeString("document", { description: "document type id of the invoice, e.g. CL33" }),
    lines: t.field({
      type: [UpcomingInvoiceLine],
      description: "plans, addons and pending items billed, in invoice order",
      resolve: (i) => i.lines.map((l, n) => ({ ...l, total: i.totals.lines[n].total.toFixed() })),
    }),
    discount: t.field({
      type: "Decimal",
      description: "document discount (the subscription's coupon): a percent (0-100) or an amount, per discountScheme",
      resolve: (i) => i.discount,
    }),
    discountScheme: t.field({
      type: DiscountScheme,
      description: "how discount reads",
      resolve: (i) => i.discountScheme,
    }),
    amount: t.field({
      type: "Decimal",
      description: "taxable net after the document discount, in currency",
      resolve: (i) => i.totals.amount.toFixed(),
    }),
    exempt: t.field({
      type: "Decimal",
      description: "exempt (untaxed) net, in currency",
      resolve: (i) => i.totals.exempt.toFixed(),
    }),
    subtotal: t.field({
      type: "Decimal",
      description: "amount + exempt, in currency",
      resolve: (i) => i.totals.subtotal.toFixed(),
    }),
    taxPercent: t.field({
      type: "Decimal",
      description: "tax rate applied to amount, percent 0-100 (e.g. 19 for Chile's IVA)",
      resolve: (i) => i.totals.taxPercent.toFixed(),
    }),
    tax: t.field({
      type: "Decimal",
      description: "tax on amount, in currency, rounded to the currency's decimals",
      resolve: (i) => i.totals.tax.toFixed(),
    }),
    total: t.field({
      type: "Decimal",
      description: "subtotal + tax, in currency",
      resolve: (i) => i.totals.total.toFixed(),
    }),
  }),
});

builder.queryFields((t) => ({
  upcomingInvoice: t.field({
    type: UpcomingInvoice,
    description:
      "Preview of the next cycle's invoice of a subscription: exactly the invoice the billing run creates for that " +
      "cycle when nothing changes before (docs/subscriptions.md). Errors: not_found; invalid_state when the run will " +
      "bill nothing (paused, cancelled, or ending at that cycle's start with no final invoice to issue: cancel at " +
      "period end, billing_cycles or end_date with no usage or pending item left to bill, or the no-card rule; the " +
      "message says which and when).",
    args: { subscription: t.arg.id({ required: true, description: "`sub_` id" }) },
    resolve: (_root, args, ctx) => upcomingInvoice(ctx, String(args.subscription)),
  }),
}));

builder.prismaObjectField("Subscription", "upcomingInvoice", (t) =>
  t.field({
    type: UpcomingInvoice,
    nullable: true,
    select: { id: true },
    description:
      "Preview of the invoice the next cycle will produce, as the root field upcomingInvoice(subscription) " +
      "answers; null when the run will bill nothing (paused, cancelled, ending before the next cycle: the " +
      "invalid_state cases of upcomingInvoice).",
    resolve: async (subscription, _args, ctx) => {
      try {
        return await upcomingInvoice(ctx, subscription.id);
      } catch (e) {
        if (e instanceof InvalidStateError) return null;
        throw e;
      }
    },
  }),
);
