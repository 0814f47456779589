/**
 * `revenueAnalytics(currency, from, to, interval)`: the organization's monthly revenue figures in one currency
 * (docs/analytics.md; services/revenue-analytics.ts, the rules in domain/revenue-analytics.ts). Read-only: any API
 * key or member may ask.
 */
import { builder } from "../builder.js";
import {
  revenueAnalytics,
  type RevenueAnalytics as RevenueAnalyticsValue,
  type RevenueMonth,
} from "../../services/revenue-analytics.js";

const AnalyticsInterval = builder.enumType("AnalyticsInterval", {
  description: "The period each entry of an analysis covers.",
  values: { month: { value: "month", description: "a calendar month (its first to its last day)" } } as const,
});

/** A Decimal field of a month, in the analysis' currency. */
const money = (description: string) => ({ type: "Decimal" as const, description });

const RevenueAnalyticsMonth = builder.objectRef<RevenueMonth>("RevenueAnalyticsMonth").implement({
  description:
    "One calendar month of revenue analytics. Amounts are in the analysis' currency (never converted), rounded to " +
    "its unit; MRR figures and balances are taken at the month's last day (docs/analytics.md has each definition " +
    "with a worked example).",
  fields: (t) => ({
    month: t.field({ type: "Date", description: "first day of the month, yyyy-mm-dd", resolve: (m) => m.month }),
    monthEnd: t.field({
      type: "Date",
      description: "last day of the month, yyyy-mm-dd: the day MRR, outstanding and overdue are taken at",
      resolve: (m) => m.monthEnd,
    }),
    mrr: t.field({
      ...money(
        "monthly recurring revenue at the month's last day: the licensed plan lines (net of tax, usage not counted) " +
          "of the subscription cycle invoices whose period covers that day, of subscriptions neither cancelled nor " +
          "paused by then, normalized to a month (a yearly plan divided by 12, a quarterly one by 3, weekly times " +
          "52/12, daily times 365/12), rounded per customer",
      ),
      resolve: (m) => m.mrr,
    }),
    newMrr: t.field({
      ...money("MRR at the month's end of customers who had none at the previous month's end"),
      resolve: (m) => m.newMrr,
    }),
    expansionMrr: t.field({
      ...money("increase of the customers whose MRR went up from more than 0"),
      resolve: (m) => m.expansionMrr,
    }),
    contractionMrr: t.field({
      ...money("decrease of the customers whose MRR went down to more than 0 (a positive amount)"),
      resolve: (m) => m.contractionMrr,
    }),
    churnedMrr: t.field({
      ...money(
        "previous month end's MRR of the customers who have none at this month's end (a positive amount); " +
          "mrr = previous mrr + newMrr + expansionMrr - contractionMrr - churnedMrr",
      ),
      resolve: (m) => m.churnedMrr,
    }),
    activeSubscriptions: t.exposeInt("activeSubscriptions", {
      description: "subscriptions counted in mrr at the month's end (those with a covering cycle invoice)",
    }),
    activeCustomers: t.exposeInt("activeCustomers", {
      description: "customers with at least one of those subscriptions",
    }),
    invoiced: t.field({
      ...money("totals (tax included) of the finalized invoices dated in the month"),
      resolve: (m) => m.invoiced,
    }),
    creditNotes: t.field({
      ...money("totals of the finalized credit notes dated in the month (a positive amount)"),
      resolve: (m) => m.creditNotes,
    }),
    debitNotes: t.field({
      ...money("totals of the finalized debit notes dated in the month"),
      resolve: (m) => m.debitNotes,
    }),
    iva: t.field({
      ...money(
        "IVA débito fiscal of the month: the tax of the finalized invoices and debit notes dated in it less the tax " +
          "of its finalized credit notes (the sales side of the monthly F29 return)",
      ),
      resolve: (m) => m.iva,
    }),
    collected: t.field({
      ...money("succeeded payments dated in the month, for invoices or on account"),
      resolve: (m) => m.collected,
    }),
    outstanding: t.field({
      ...money(
        "what the finalized invoices dated up to the month's last day still owed that day: their totals plus " +
          "their debit notes, less their credit notes and succeeded payments dated up to that day",
      ),
      resolve: (m) => m.outstanding,
    }),
    overdue: t.field({
      ...money("the part of outstanding on invoices due on or before the month's last day"),
      resolve: (m) => m.overdue,
    }),
  }),
});

const RevenueAnalytics = builder.objectRef<RevenueAnalyticsValue>("RevenueAnalytics").implement({
  description: "Revenue analytics of the organization and mode in one currency (docs/analytics.md).",
  fields: (t) => ({
    currency: t.exposeString("currency", { description: "ISO 4217 code of every amount, e.g. CLP" }),
    months: t.field({
      type: [RevenueAnalyticsMonth],
      description: "one entry per calendar month from `from`'s to `to`'s, oldest first",
      resolve: (a) => a.months,
    }),
  }),
});

builder.queryFields((t) => ({
  revenueAnalytics: t.field({
    type: RevenueAnalytics,
    description:
      "Monthly revenue figures of the organization and mode in one currency: MRR and its movements, active " +
      "subscriptions and customers, invoiced, collected, credit and debit notes, IVA, outstanding and overdue " +
      "(docs/analytics.md). Figures are never converted between currencies: ask once per currency. Errors: " +
      "validation_error on currency (unknown), from or to (not a date, to before from, more than 120 months).",
    args: {
      currency: t.arg.string({ required: true, description: "ISO 4217 code, e.g. CLP" }),
      from: t.arg({ type: "Date", required: true, description: "a day of the first month, yyyy-mm-dd" }),
      to: t.arg({ type: "Date", required: true, description: "a day of the last month, yyyy-mm-dd" }),
      interval: t.arg({
        type: AnalyticsInterval,
        defaultValue: "month",
        description: "the period of each entry; month (the default) is the only one",
      }),
    },
    resolve: (_root, args, ctx) =>
      revenueAnalytics(ctx, { currency: args.currency, from: String(args.from), to: String(args.to) }),
  }),
}));
