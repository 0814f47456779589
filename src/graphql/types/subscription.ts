/**
 * Subscriptions (spec "Subscription"; docs/subscriptions.md): node type, `subscriptions`
 * connection, create/update/cancel/pause/resume mutations. Rules: services/subscriptions.ts and
 * domain/subscriptions.ts (status machine).
 */
import { builder, PORTAL_FIELD } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import {
  DateTimeFilter,
  StringFilter,
  dateTimeConditions,
  enumConditions,
  enumFilter,
  stringConditions,
} from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import {
  cancelSubscription,
  createSubscription,
  pauseSubscription,
  resumeSubscription,
  updateSubscription,
  type SubscriptionInput as SubscriptionInputValue,
} from "../../services/subscriptions.js";
import {
  DEFAULT_CANCEL_REASON,
  type SubscriptionStatus as SubscriptionStatusValue,
} from "../../domain/subscriptions.js";
import type { AddonRate as AddonRateValue } from "../../domain/pricing.js";
import {
  parsePendingChanges,
  type PendingChanges as PendingChangesValue,
  type PendingLine as PendingLineStored,
  type ProrationBehavior as ProrationBehaviorValue,
} from "../../domain/proration.js";
import "./customer.js";
import "./product.js";
import { AddonRate } from "./addon.js";
import "./coupon.js";

// Value sets checked against the domain's lists (domain/subscriptions.ts, domain/proration.ts) by `satisfies`.

export const SubscriptionStatus = builder.enumType("SubscriptionStatus", {
  description:
    'Where a subscription is in its life (docs/subscriptions.md "Status"): active -> paused -> active, and either -> ' +
    "cancelled (final); active -> past_due -> active as its latest cycle invoice's payment goes (docs/dunning.md).",
  values: {
    active: { value: "active", description: "billed at every cycle's start (also while set to cancel at period end)" },
    past_due: {
      value: "past_due",
      description:
        "billed at every cycle's start, with its latest cycle invoice overdue or its renewal charge declined; " +
        "active again once that invoice is paid or marked uncollectible (docs/dunning.md)",
    },
    paused: { value: "paused", description: "not billed until resumed (pauseSubscription / resumeSubscription)" },
    cancelled: {
      value: "cancelled",
      description:
        "ended (cancelSubscription, or the billing run at the period end); never billed again, cannot change",
    },
  } as const satisfies DescribedValues<SubscriptionStatusValue>,
});

export const SubscriptionStatusFilter = enumFilter(SubscriptionStatus, "SubscriptionStatus");

export const ProrationBehavior = builder.enumType("ProrationBehavior", {
  description:
    "What a change of lines after a billed cycle does with the unused and remaining time of the current period " +
    "(docs/proration.md).",
  values: {
    create_prorations: {
      value: "create_prorations",
      description:
        "credit the unused time of the old lines and charge the remaining time of the new ones as pending invoice " +
        "items, billed by the next cycle invoice (the default)",
    },
    none: { value: "none", description: "no proration: the new lines bill from the next cycle" },
    always_invoice: {
      value: "always_invoice",
      description: "bill the net now: an invoice for a charge, a credit note for a credit",
    },
  } as const satisfies DescribedValues<ProrationBehaviorValue>,
});

export const SubscriptionLine = builder.prismaObject("SubscriptionLine", {
  description: "A plan of a subscription and its quantity, with an optional coupon of its own.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`lin_` id" }),
    plan: t.relation("plan", { description: "the plan (price) it bills" }),
    quantity: t.expose("quantity", {
      type: "Decimal",
      description: "units billed every cycle (metered plans: 1, usage decides)",
    }),
    coupon: t.relation("coupon", {
      nullable: true,
      description: "a coupon discounting this line only; null when none",
    }),
    couponRedemptions: t.exposeInt("couponRedemptions", { description: "invoices the line coupon has discounted" }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time, ISO 8601" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "last change, ISO 8601" }),
  }),
});

export const SubscriptionAddon = builder.prismaObject("SubscriptionAddon", {
  description: "An addon of a subscription: quantity and the rates (shares by cycle) it is billed in.",
  fields: (t) => ({
    addon: t.relation("addon", { description: "the addon billed" }),
    addonRedemptions: t.exposeInt("addonRedemptions", { description: "invoices that have billed this addon" }),
    quantity: t.exposeInt("quantity", { description: "units billed, at least 1" }),
    rates: t.field({
      type: [AddonRate],
      select: { rates: true },
      description: "the shares by cycle the addon is billed in (one-time addons); empty for recurring addons",
      resolve: (a) => (a.rates ?? []) as unknown as AddonRateValue[],
    }),
  }),
});

export const PendingInvoiceItem = builder.prismaObject("PendingInvoiceItem", {
  description:
    "An amount waiting for the subscription's next cycle invoice: a proration of a mid-cycle change or a credit " +
    "carried over (docs/proration.md).",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`pii_` id" }),
    name: t.exposeString("name", { description: 'e.g. "Unused time on 2 x Pro (Nov 21 - Dec 1)"' }),
    quantity: t.expose("quantity", { type: "Decimal", description: "units billed" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "signed unit amount in the subscription's currency: negative is a credit",
    }),
    exempt: t.exposeBoolean("exempt", { description: "true: billed as an exempt amount (not taxed)" }),
    periodStart: t.expose("periodStart", { type: "Date", description: "first day the amount covers, yyyy-mm-dd" }),
    periodEnd: t.expose("periodEnd", {
      type: "Date",
      description: "day after the last day it covers (exclusive), yyyy-mm-dd",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time, ISO 8601" }),
  }),
});

/** A stored pending line with the subscription it belongs to (to find the line it replaces). */
type PendingLineValue = PendingLineStored & { subscriptionId: string };

const PendingLine = builder.objectRef<PendingLineValue>("SubscriptionPendingLine").implement({
  description:
    "A line that replaces the current ones when the pending change takes effect. It has no id of its own: `line` is " +
    'the current line it replaces (docs/graphql.md "Changes in this release").',
  fields: (t) => ({
    id: t.exposeString("id", {
      description:
        "`lin_` id the line will have: the id of the current line at the same position, which it replaces, or a new " +
        "id for a line the change adds.",
      deprecationReason:
        "The id of the current line this one replaces (not an id of this object): Relay clients must not select it, " +
        "since two types would share it. Use `line { id }`; removed in the next release.",
    }),
    line: t.prismaField({
      type: "SubscriptionLine",
      nullable: true,
      description:
        "the current line this one replaces (same position; it keeps its id); null for a line the change adds",
      // findUnique calls of one tick are batched by Prisma into one query
      resolve: async (query, l, _args, ctx) => {
        const line = await ctx.prisma.subscriptionLine.findUnique({ ...query, where: { id: l.id } });
        return line && line.subscriptionId === l.subscriptionId ? line : null;
      },
    }),
    plan: t.exposeString("plan", { description: "`pla_` id of the plan it will bill" }),
    quantity: t.field({ type: "Decimal", description: "units it will bill every cycle", resolve: (l) => l.quantity }),
    coupon: t.exposeString("coupon", { nullable: true, description: "`cou_` id of its line coupon; null when none" }),
  }),
});

const PendingChanges = builder
  .objectRef<PendingChangesValue & { subscriptionId: string }>("SubscriptionPendingChanges")
  .implement({
    description:
      "Lines scheduled with atPeriodEnd: they replace the current lines when cycle `cycle` starts (docs/proration.md).",
    fields: (t) => ({
      cycle: t.exposeInt("cycle", { description: "the first cycle billed with the new lines" }),
      requested: t.field({
        type: "DateTime",
        description:
          "when the update that scheduled it was made, ISO 8601 (was an ISO 8601 String before this release)",
        resolve: (p) => new Date(p.requested),
      }),
      lines: t.field({
        type: [PendingLine],
        description: "the new lines, in order",
        resolve: (p) => p.lines.map((l) => ({ ...l, subscriptionId: p.subscriptionId })),
      }),
    }),
  });

export const Subscription = builder.prismaNode("Subscription", {
  id: { field: "id", description: "`sub_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A customer billed every cycle for plans, addons and coupons (docs/subscriptions.md).",
  fields: (t) => ({
    document: t.relation("documentType", { description: "invoice document type of the cycle invoices" }),
    customer: t.relation("customer", { description: "the customer billed" }),
    testMode: t.exposeBoolean("testMode", { description: "true: created with a test key, seen only in test mode" }),
    dateStart: t.expose("dateStart", { type: "Date", description: "start of cycle 1" }),
    endDate: t.expose("endDate", {
      type: "Date",
      nullable: true,
      description: "start of cycle billingCycles + 1 when billingCycles is set; null: until cancelled",
    }),
    billingCycles: t.exposeInt("billingCycles", {
      nullable: true,
      description: "number of cycles to bill; null: until cancelled",
    }),
    nextBilling: t.expose("nextBilling", {
      type: "Date",
      description: "when the next cycle is billed (cycles are billed in advance, at their start)",
    }),
    nextBillingCycle: t.exposeInt("nextBillingCycle", { description: "number of the next cycle to bill, from 1" }),
    previousBilling: t.expose("previousBilling", {
      type: "Date",
      nullable: true,
      description: "when the last cycle was billed; null before the first",
    }),
    lines: t.relation("lines", {
      description: "the plans billed, in order",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    addons: t.relation("addons", {
      description: "the addons billed, in order",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    coupon: t.relation("coupon", {
      nullable: true,
      description: "a coupon discounting the whole cycle invoice; null when none",
    }),
    couponRedemptions: t.exposeInt("couponRedemptions", {
      description: "invoices the subscription coupon has discounted",
    }),
    expirationDays: t.exposeInt("expirationDays", { description: "days from a cycle invoice's date to its due date" }),
    references: t.field({
      type: ["JSONObject"],
      description: 'document references copied to every cycle invoice (spec "References"); empty when none',
      select: { references: true },
      resolve: (s) => (Array.isArray(s.references) ? s.references : []) as Record<string, unknown>[],
    }),
    note: t.exposeString("note", {
      nullable: true,
      description: "free text printed on every cycle invoice; null when none",
    }),
    metadata: t.expose("metadata", { type: "JSONObject", description: "the organization's key-value pairs (strings)" }),
    taxSettings: t.expose("taxSettings", {
      type: "JSONObject",
      description: "tax settings copied to every cycle invoice",
    }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time, ISO 8601" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "last change, ISO 8601" }),
  }),
});

// its state (active, paused, cancelled) and what is pending for the next cycle
builder.prismaObjectFields("Subscription", (t) => ({
  status: t.field({
    type: SubscriptionStatus,
    description: "active, paused or cancelled",
    select: { status: true },
    resolve: (s) => s.status as SubscriptionStatusValue,
  }),
  paused: t.expose("paused", {
    type: "DateTime",
    nullable: true,
    description: "when it was paused; null unless paused",
  }),
  pausedReason: t.exposeString("pausedReason", {
    nullable: true,
    description: "the pause's reason; null unless paused with one",
  }),
  cancelled: t.expose("cancelled", {
    type: "DateTime",
    nullable: true,
    description: "when it was cancelled; null unless cancelled",
  }),
  cancelReason: t.exposeString("cancelReason", {
    nullable: true,
    description:
      `why it was (or will be, with cancelAtPeriodEnd) cancelled, e.g. ${DEFAULT_CANCEL_REASON} or ` +
      `no_card; null unless cancelled or set to cancel`,
  }),
  cancelAtPeriodEnd: t.exposeBoolean("cancelAtPeriodEnd", {
    description: "the billing run cancels it at the end of the current period",
  }),
  pendingChanges: t.field({
    type: PendingChanges,
    nullable: true,
    select: { id: true, pendingChanges: true },
    description: "lines scheduled with atPeriodEnd for the next cycle; null when none",
    resolve: (s) => {
      const pending = parsePendingChanges(s.pendingChanges);
      return pending && { ...pending, subscriptionId: s.id };
    },
  }),
  pendingInvoiceItems: t.relation("pendingInvoiceItems", {
    description: "items the next cycle invoice will bill (prorations, carried credits), oldest first",
    query: { where: { invoiceId: null }, orderBy: [{ createdAt: "asc" }, { position: "asc" }, { id: "asc" }] },
  }),
}));

const SubscriptionLineInput = builder.inputType("SubscriptionLineInput", {
  description: "A line of a subscription: a plan and its quantity.",
  fields: (t) => ({
    plan: t.id({ description: "`pla_` id of an active plan (required)" }),
    quantity: t.field({ type: "Decimal", description: "more than 0 (default 1); metered plans: 1" }),
    coupon: t.id({ description: "`cou_` id of a coupon for this line" }),
  }),
});

const SubscriptionAddonRateInput = builder.inputType("SubscriptionAddonRateInput", {
  description:
    "A share of a one-time addon billed in a cycle: a percent of its amount or an amount (docs/catalogue.md).",
  fields: (t) => ({
    cycle: t.int({ description: "subscription cycle, from 1, ascending" }),
    percent: t.field({ type: "Decimal", description: "percent of the addon's amount billed in that cycle, 0-100" }),
    amount: t.field({ type: "Decimal", description: "amount billed in that cycle, in the addon's currency" }),
  }),
});

const SubscriptionAddonInput = builder.inputType("SubscriptionAddonInput", {
  description: "An addon of a subscription.",
  fields: (t) => ({
    addon: t.id({ description: "`add_` id of an active addon in the subscription's currency (required)" }),
    quantity: t.int({ description: "integer, at least 1 (default 1)" }),
    rates: t.field({
      type: [SubscriptionAddonRateInput],
      description: "one-time addons: shares by cycle (default: the addon's rates)",
    }),
  }),
});

const SubscriptionInput = builder.inputType("SubscriptionInput", {
  description:
    "Subscription fields. On update only given fields change (metadata merges); addons and dateStart only while no " +
    "cycle has been billed " +
    "(nextBillingCycle 1; afterwards 409); lines afterwards with proration (docs/proration.md).",
  fields: (t) => ({
    customer: t.id({ description: "customer id (required on create; cannot change)" }),
    document: t.string({ description: "invoice document type (default CL33 for Chilean customers)" }),
    dateStart: t.field({ type: "Date", description: "default: today in the organization's time zone" }),
    endDate: t.field({ type: "Date", description: "only without billingCycles (set, endDate is computed)" }),
    billingCycles: t.int({ description: "positive; null: until cancelled" }),
    lines: t.field({
      type: [SubscriptionLineInput],
      description:
        "at least one; replaces all lines. After a billed cycle: same currency and frequency, metered lines stay, " +
        "the change is prorated (prorationBehavior) or scheduled (atPeriodEnd)",
    }),
    addons: t.field({ type: [SubscriptionAddonInput], description: "replaces all addons" }),
    coupon: t.id({ description: "`cou_` id; null or empty removes it" }),
    expirationDays: t.int({ description: "0 or more (default 0)" }),
    references: t.field({
      type: ["JSONObject"],
      description: "document references for the cycle invoices, at most 50 objects",
    }),
    note: t.string({ description: "free text printed on every cycle invoice" }),
    metadata: t.field({ type: "JSONObject", description: "merged; an empty value removes a key" }),
    taxSettings: t.field({ type: "JSONObject", description: "tax settings copied to every cycle invoice" }),
    prorationBehavior: t.field({
      type: ProrationBehavior,
      description:
        "update of lines after a billed cycle (docs/proration.md): default create_prorations; not with atPeriodEnd",
    }),
    prorationDate: t.field({
      type: "Date",
      description:
        "day the proration starts, within the current period (default today in the organization's time zone)",
    }),
    atPeriodEnd: t.boolean({
      description:
        "true: the new lines take effect at the next cycle (pendingChanges), nothing is prorated; the same lines as " +
        "now cancel a scheduled change",
    }),
  }),
});

const SubscriptionWhere = builder.inputType("SubscriptionWhere", {
  description: "Filter of `subscriptions`; every given field must match.",
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "`cus_` id of the customer" }),
    status: t.field({ type: SubscriptionStatusFilter, description: "active, paused or cancelled" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  }),
});

/** GraphQL input -> service input (ids as strings). */
function serviceInput(input: typeof SubscriptionInput.$inferInput): SubscriptionInputValue {
  return {
    ...input,
    customer: input.customer === undefined ? undefined : input.customer === null ? null : String(input.customer),
    coupon: input.coupon === undefined ? undefined : input.coupon === null ? null : String(input.coupon),
    lines: input.lines?.map((l) => ({
      plan: l.plan == null ? l.plan : String(l.plan),
      quantity: l.quantity,
      coupon: l.coupon == null ? l.coupon : String(l.coupon),
    })),
    addons: input.addons?.map((a) => ({
      addon: a.addon == null ? a.addon : String(a.addon),
      quantity: a.quantity,
      rates: a.rates,
    })),
  };
}

builder.queryFields((t) => ({
  subscriptions: t.connection(
    {
      type: Subscription,
      description: "Subscriptions of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: SubscriptionWhere, description: "filter; all subscriptions when absent" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return tenantConnection(ctx, info, ctx.prisma.subscription, args, [
          ...stringConditions("customerId", w.customer),
          ...enumConditions("status", w.status),
          ...dateTimeConditions("createdAt", w.created),
        ]);
      },
    },
    { description: "A page of subscriptions, newest first." },
    { description: "A subscription in a page of subscriptions." },
  ),
}));

builder.mutationFields((t) => ({
  createSubscription: t.prismaField({
    type: "Subscription",
    description:
      "Creates an active subscription; its first cycle is billed on dateStart. Errors: validation_error (customer " +
      "missing or unknown, document not an invoice type, " +
      "no lines, a plan archived or of another currency or frequency than the others, a coupon or addon of another " +
      "currency, billingCycles with endDate, endDate not after dateStart, " +
      "expirationDays, references or note out of range; fields named in snake_case, e.g. `lines.0.plan`).",
    args: {
      input: t.arg({
        type: SubscriptionInput,
        required: true,
        description: "the subscription; customer and lines required",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const created = await createSubscription(ctx, serviceInput(args.input));
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateSubscription: t.prismaField({
    type: "Subscription",
    description:
      "Updates a subscription; lines changed after a billed cycle are prorated per prorationBehavior or scheduled " +
      "with atPeriodEnd (docs/proration.md). " +
      "Errors: not_found, validation_error (as createSubscription; also: another currency or frequency, a metered " +
      "line changed, prorationBehavior or prorationDate with atPeriodEnd, a prorationDate outside the current " +
      "period, customer changed), " +
      "invalid_state (cancelled; addons or dateStart after the first billed cycle).",
    args: {
      id: t.arg.id({ required: true, description: "`sub_` id" }),
      input: t.arg({ type: SubscriptionInput, required: true, description: "the fields to change; metadata merges" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateSubscription(ctx, String(args.id), serviceInput(args.input));
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
}));

// a subscription's life: cancel, pause, resume
builder.mutationFields((t) => ({
  cancelSubscription: t.prismaField({
    ...PORTAL_FIELD,
    type: "Subscription",
    description:
      "Cancels now (status cancelled, cancelled set) or, with atPeriodEnd, at the end of the current period " +
      "(cancelAtPeriodEnd; the billing run ends it). " +
      "Customer portal: its customer's subscriptions only, with atPeriodEnd, when the branding's " +
      "portalCancelSubscriptions is on (else permission_denied). " +
      "Errors: not_found, invalid_state (already cancelled, or already set to cancel at period end), " +
      "validation_error (reason too long).",
    args: {
      id: t.arg.id({ required: true, description: "`sub_` id" }),
      cancelReason: t.arg.string({
        description: `free text, at most 255 characters (default ${DEFAULT_CANCEL_REASON}; e.g. no_card)`,
      }),
      atPeriodEnd: t.arg.boolean({ description: "default false: cancel now" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const cancelled = await cancelSubscription(ctx, String(args.id), {
        reason: args.cancelReason,
        atPeriodEnd: args.atPeriodEnd,
      });
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: cancelled.id } });
    },
  }),
  pauseSubscription: t.prismaField({
    type: "Subscription",
    description:
      "Pauses an active subscription (status paused; not billed until resumed). Errors: not_found, invalid_state " +
      "(not active), validation_error (reason longer than 255 characters).",
    args: {
      id: t.arg.id({ required: true, description: "`sub_` id" }),
      reason: t.arg.string({ description: "free text, at most 255 characters (pausedReason)" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const paused = await pauseSubscription(ctx, String(args.id), args.reason);
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: paused.id } });
    },
  }),
  resumeSubscription: t.prismaField({
    type: "Subscription",
    description: "Resumes a paused subscription (status active). Errors: not_found, invalid_state (not paused).",
    args: { id: t.arg.id({ required: true, description: "`sub_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const resumed = await resumeSubscription(ctx, String(args.id));
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: resumed.id } });
    },
  }),
}));
