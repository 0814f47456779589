/**
 * Subscriptions (spec "Subscription"; docs/subscriptions.md): node type, `subscriptions`
 * connection, create/update/cancel/pause/resume mutations. Rules: services/subscriptions.ts and
 * domain/subscriptions.ts (status machine).
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
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
import { DEFAULT_CANCEL_REASON } from "../../domain/subscriptions.js";
import type { AddonRate as AddonRateValue } from "../../domain/pricing.js";
import { parsePendingChanges, type PendingChanges as PendingChangesValue } from "../../domain/proration.js";
import "./customer.js";
import "./product.js";
import { AddonRate } from "./addon.js";
import "./coupon.js";

export const SubscriptionLine = builder.prismaObject("SubscriptionLine", {
  description: "A plan of a subscription and its quantity, with an optional coupon of its own.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`lin_` id" }),
    plan: t.relation("plan"),
    quantity: t.expose("quantity", { type: "Decimal", description: "units billed every cycle (metered plans: 1, usage decides)" }),
    coupon: t.relation("coupon", { nullable: true }),
    couponRedemptions: t.exposeInt("couponRedemptions", { description: "invoices the line coupon has discounted" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const SubscriptionAddon = builder.prismaObject("SubscriptionAddon", {
  description: "An addon of a subscription: quantity and the rates (shares by cycle) it is billed in.",
  fields: (t) => ({
    addon: t.relation("addon"),
    addonRedemptions: t.exposeInt("addonRedemptions", { description: "invoices that have billed this addon" }),
    quantity: t.exposeInt("quantity"),
    rates: t.field({ type: [AddonRate], select: { rates: true }, resolve: (a) => (a.rates ?? []) as unknown as AddonRateValue[] }),
  }),
});

export const PendingInvoiceItem = builder.prismaObject("PendingInvoiceItem", {
  description: "An amount waiting for the subscription's next cycle invoice: a proration of a mid-cycle change or a credit carried over (docs/proration.md).",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`pii_` id" }),
    name: t.exposeString("name", { description: 'e.g. "Unused time on 2 x Pro (Nov 21 - Dec 1)"' }),
    quantity: t.expose("quantity", { type: "Decimal" }),
    amount: t.expose("amount", { type: "Decimal", description: "signed unit amount in the subscription's currency: negative is a credit" }),
    exempt: t.exposeBoolean("exempt"),
    periodStart: t.expose("periodStart", { type: "Date" }),
    periodEnd: t.expose("periodEnd", { type: "Date", description: "exclusive" }),
    created: t.expose("createdAt", { type: "DateTime" }),
  }),
});

interface PendingLineValue {
  id: string;
  plan: string;
  quantity: string;
  coupon: string | null;
}

const PendingLine = builder.objectRef<PendingLineValue>("SubscriptionPendingLine").implement({
  description: "A line that replaces the current ones when the pending change takes effect.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "`lin_` id (kept from the line at the same position)" }),
    plan: t.exposeString("plan", { description: "`pla_` id" }),
    quantity: t.field({ type: "Decimal", resolve: (l) => l.quantity }),
    coupon: t.exposeString("coupon", { nullable: true, description: "`cou_` id" }),
  }),
});

const PendingChanges = builder.objectRef<PendingChangesValue>("SubscriptionPendingChanges").implement({
  description: "Lines scheduled with atPeriodEnd: they replace the current lines when cycle `cycle` starts (docs/proration.md).",
  fields: (t) => ({
    cycle: t.exposeInt("cycle", { description: "the first cycle billed with the new lines" }),
    requested: t.exposeString("requested", { description: "ISO 8601 time of the update that scheduled it" }),
    lines: t.field({ type: [PendingLine], resolve: (p) => p.lines }),
  }),
});

export const Subscription = builder.prismaNode("Subscription", {
  id: { field: "id", description: "`sub_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A customer billed every cycle for plans, addons and coupons (docs/subscriptions.md).",
  fields: (t) => ({
    document: t.relation("documentType", { description: "invoice document type of the cycle invoices" }),
    customer: t.relation("customer"),
    testMode: t.exposeBoolean("testMode"),
    dateStart: t.expose("dateStart", { type: "Date", description: "start of cycle 1" }),
    endDate: t.expose("endDate", { type: "Date", nullable: true, description: "start of cycle billingCycles + 1 when billingCycles is set; null: until cancelled" }),
    billingCycles: t.exposeInt("billingCycles", { nullable: true, description: "number of cycles to bill; null: until cancelled" }),
    nextBilling: t.expose("nextBilling", { type: "Date", description: "when the next cycle is billed (cycles are billed in advance, at their start)" }),
    nextBillingCycle: t.exposeInt("nextBillingCycle", { description: "number of the next cycle to bill, from 1" }),
    previousBilling: t.expose("previousBilling", { type: "Date", nullable: true, description: "when the last cycle was billed; null before the first" }),
    lines: t.relation("lines", { query: { orderBy: [{ position: "asc" }, { id: "asc" }] } }),
    addons: t.relation("addons", { query: { orderBy: [{ position: "asc" }, { id: "asc" }] } }),
    coupon: t.relation("coupon", { nullable: true }),
    couponRedemptions: t.exposeInt("couponRedemptions", { description: "invoices the subscription coupon has discounted" }),
    expirationDays: t.exposeInt("expirationDays", { description: "days from a cycle invoice's date to its due date" }),
    references: t.field({ type: ["JSONObject"], select: { references: true }, resolve: (s) => (Array.isArray(s.references) ? s.references : []) as Record<string, unknown>[] }),
    note: t.exposeString("note", { nullable: true }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    taxSettings: t.expose("taxSettings", { type: "JSONObject" }),
    status: t.exposeString("status", { description: "active | paused | cancelled" }),
    paused: t.expose("paused", { type: "DateTime", nullable: true, description: "when it was paused; null unless paused" }),
    pausedReason: t.exposeString("pausedReason", { nullable: true }),
    cancelled: t.expose("cancelled", { type: "DateTime", nullable: true, description: "when it was cancelled" }),
    cancelReason: t.exposeString("cancelReason", { nullable: true }),
    cancelAtPeriodEnd: t.exposeBoolean("cancelAtPeriodEnd", { description: "the billing run cancels it at the end of the current period" }),
    pendingChanges: t.field({
      type: PendingChanges,
      nullable: true,
      select: { pendingChanges: true },
      description: "lines scheduled with atPeriodEnd for the next cycle; null when none",
      resolve: (s) => parsePendingChanges(s.pendingChanges),
    }),
    pendingInvoiceItems: t.relation("pendingInvoiceItems", {
      description: "items the next cycle invoice will bill (prorations, carried credits), oldest first",
      query: { where: { invoiceId: null }, orderBy: [{ createdAt: "asc" }, { position: "asc" }, { id: "asc" }] },
    }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const SubscriptionLineInput = builder.inputType("SubscriptionLineInput", {
  fields: (t) => ({
    plan: t.id({ description: "`pla_` id of an active plan (required)" }),
    quantity: t.field({ type: "Decimal", description: "more than 0 (default 1); metered plans: 1" }),
    coupon: t.id({ description: "`cou_` id of a coupon for this line" }),
  }),
});

const SubscriptionAddonRateInput = builder.inputType("SubscriptionAddonRateInput", {
  fields: (t) => ({
    cycle: t.int({ description: "subscription cycle, from 1, ascending" }),
    percent: t.field({ type: "Decimal" }),
    amount: t.field({ type: "Decimal" }),
  }),
});

const SubscriptionAddonInput = builder.inputType("SubscriptionAddonInput", {
  fields: (t) => ({
    addon: t.id({ description: "`add_` id of an active addon in the subscription's currency (required)" }),
    quantity: t.int({ description: "integer, at least 1 (default 1)" }),
    rates: t.field({ type: [SubscriptionAddonRateInput], description: "one-time addons: shares by cycle (default: the addon's rates)" }),
  }),
});

const SubscriptionInput = builder.inputType("SubscriptionInput", {
  description:
    "Subscription fields. On update only given fields change (metadata merges); addons and dateStart only while no cycle has been billed " +
    "(nextBillingCycle 1; afterwards 409); lines afterwards with proration (docs/proration.md).",
  fields: (t) => ({
    customer: t.id({ description: "customer id (required on create; cannot change)" }),
    document: t.string({ description: "invoice document type (default CL33 for Chilean customers)" }),
    dateStart: t.field({ type: "Date", description: "default: today in the organization's time zone" }),
    endDate: t.field({ type: "Date", description: "only without billingCycles (set, endDate is computed)" }),
    billingCycles: t.int({ description: "positive; null: until cancelled" }),
    lines: t.field({
      type: [SubscriptionLineInput],
      description: "at least one; replaces all lines. After a billed cycle: same currency and frequency, metered lines stay, the change is prorated (prorationBehavior) or scheduled (atPeriodEnd)",
    }),
    addons: t.field({ type: [SubscriptionAddonInput], description: "replaces all addons" }),
    coupon: t.id({ description: "`cou_` id; null or empty removes it" }),
    expirationDays: t.int({ description: "0 or more (default 0)" }),
    references: t.field({ type: ["JSONObject"], description: "at most 50 objects" }),
    note: t.string(),
    metadata: t.field({ type: "JSONObject", description: "merged; an empty value removes a key" }),
    taxSettings: t.field({ type: "JSONObject" }),
    prorationBehavior: t.string({
      description:
        "update of lines after a billed cycle (docs/proration.md): create_prorations (default: credit the unused time, charge the remaining time on the next invoice), " +
        "none (the new lines bill from the next cycle), always_invoice (bill the net now: an invoice for a charge, a credit note for a credit)",
    }),
    prorationDate: t.field({ type: "Date", description: "day the proration starts, within the current period (default today in the organization's time zone)" }),
    atPeriodEnd: t.boolean({ description: "true: the new lines take effect at the next cycle (pendingChanges), nothing is prorated; the same lines as now cancel a scheduled change" }),
  }),
});

const SubscriptionWhere = builder.inputType("SubscriptionWhere", {
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id" }),
    status: t.field({ type: StringFilter, description: "active | paused | cancelled" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

/** GraphQL input -> service input (ids as strings). */
function serviceInput(input: typeof SubscriptionInput.$inferInput): SubscriptionInputValue {
  return {
    ...input,
    customer: input.customer === undefined ? undefined : input.customer === null ? null : String(input.customer),
    coupon: input.coupon === undefined ? undefined : input.coupon === null ? null : String(input.coupon),
    lines: input.lines?.map((l) => ({ plan: l.plan == null ? l.plan : String(l.plan), quantity: l.quantity, coupon: l.coupon == null ? l.coupon : String(l.coupon) })),
    addons: input.addons?.map((a) => ({ addon: a.addon == null ? a.addon : String(a.addon), quantity: a.quantity, rates: a.rates })),
  };
}

builder.queryFields((t) => ({
  subscriptions: t.connection({
    type: Subscription,
    description: "Subscriptions of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: SubscriptionWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      return tenantConnection(ctx, info, ctx.prisma.subscription, args, [
        ...stringConditions("customerId", w.customer),
        ...stringConditions("status", w.status),
        ...dateTimeConditions("createdAt", w.created),
      ]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createSubscription: t.prismaField({
    type: "Subscription",
    description: "Creates an active subscription; its first cycle is billed on dateStart. Errors: validation_error.",
    args: { input: t.arg({ type: SubscriptionInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createSubscription(ctx, serviceInput(args.input));
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateSubscription: t.prismaField({
    type: "Subscription",
    description:
      "Updates a subscription; lines changed after a billed cycle are prorated per prorationBehavior or scheduled with atPeriodEnd (docs/proration.md). " +
      "Errors: not_found, validation_error (also: another currency or frequency, a metered line changed, an unknown prorationBehavior, a prorationDate outside the current period), " +
      "invalid_state (cancelled; addons or dateStart after the first billed cycle).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: SubscriptionInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateSubscription(ctx, String(args.id), serviceInput(args.input));
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  cancelSubscription: t.prismaField({
    type: "Subscription",
    description:
      "Cancels now (status cancelled, cancelled set) or, with atPeriodEnd, at the end of the current period (cancelAtPeriodEnd; the billing run ends it). " +
      "Errors: not_found, invalid_state (already cancelled, or already set to cancel at period end), validation_error (reason too long).",
    args: {
      id: t.arg.id({ required: true }),
      cancelReason: t.arg.string({ description: `free text, at most 255 characters (default ${DEFAULT_CANCEL_REASON}; e.g. no_card)` }),
      atPeriodEnd: t.arg.boolean({ description: "default false: cancel now" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const cancelled = await cancelSubscription(ctx, String(args.id), { reason: args.cancelReason, atPeriodEnd: args.atPeriodEnd });
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: cancelled.id } });
    },
  }),
  pauseSubscription: t.prismaField({
    type: "Subscription",
    description: "Pauses an active subscription (status paused; not billed until resumed). Errors: not_found, invalid_state (not active).",
    args: { id: t.arg.id({ required: true }), reason: t.arg.string({ description: "free text, at most 255 characters" }) },
    resolve: async (query, _root, args, ctx) => {
      const paused = await pauseSubscription(ctx, String(args.id), args.reason);
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: paused.id } });
    },
  }),
  resumeSubscription: t.prismaField({
    type: "Subscription",
    description: "Resumes a paused subscription (status active). Errors: not_found, invalid_state (not paused).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const resumed = await resumeSubscription(ctx, String(args.id));
      return ctx.prisma.subscription.findUniqueOrThrow({ ...query, where: { id: resumed.id } });
    },
  }),
}));
