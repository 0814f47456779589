/**
 * Addons (the addon object of spec "Subscription"; docs/catalogue.md): node type, `addons`
 * connection, create/update/delete mutations. Rules: services/addons.ts, domain/pricing.ts.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createAddon, deleteAddon, updateAddon } from "../../services/addons.js";
import type { AddonRate as AddonRateValue } from "../../domain/pricing.js";
import { CatalogueDeletePayload, archivedCondition } from "./product.js";

export const AddonRate = builder.objectRef<AddonRateValue>("AddonRate").implement({
  description: "A share of a one-time addon's amount billed in subscription cycle `cycle` (1 = first): a percent or an amount.",
  fields: (t) => ({
    cycle: t.exposeInt("cycle"),
    percent: t.field({ type: "Decimal", nullable: true, resolve: (r) => ("percent" in r ? r.percent : null) }),
    amount: t.field({ type: "Decimal", nullable: true, resolve: (r) => ("amount" in r ? r.amount : null) }),
  }),
});

export const Addon = builder.prismaNode("Addon", {
  id: { field: "id", description: "`add_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "An extra charge added to subscriptions, once or every cycle.",
  fields: (t) => ({
    applyScheme: t.exposeString("applyScheme", { description: "one_time | recurring" }),
    durationTimes: t.exposeInt("durationTimes", { nullable: true, description: "recurring: number of cycles (null: while the subscription lasts)" }),
    sku: t.exposeString("sku", { nullable: true }),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    amount: t.expose("amount", { type: "Decimal" }),
    currency: t.relation("currency"),
    rates: t.field({ type: [AddonRate], select: { rates: true }, resolve: (a) => (a.rates ?? []) as unknown as AddonRateValue[] }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    status: t.exposeString("status", { description: "active | archived" }),
    archived: t.expose("archivedAt", { type: "DateTime", nullable: true }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const AddonRateInput = builder.inputType("AddonRateInput", {
  fields: (t) => ({
    cycle: t.int({ description: "subscription cycle, from 1, ascending" }),
    percent: t.field({ type: "Decimal", description: "share in percent (all rates percents, summing to 100)" }),
    amount: t.field({ type: "Decimal", description: "share as an amount (all rates amounts, summing to the addon's amount)" }),
  }),
});

const AddonInput = builder.inputType("AddonInput", {
  description: "Addon fields. On update only given fields change (pricing fields only while no subscription uses it).",
  fields: (t) => ({
    applyScheme: t.string({ description: "one_time (default) | recurring" }),
    durationTimes: t.int({ description: "recurring only: number of cycles" }),
    sku: t.string(),
    name: t.string({ description: "required" }),
    description: t.string(),
    amount: t.field({ type: "Decimal", description: "not negative (required)" }),
    currency: t.string({ description: "ISO 4217 code (required)" }),
    rates: t.field({ type: [AddonRateInput], description: "one_time only: how the amount is split over cycles" }),
    metadata: t.field({ type: "JSONObject" }),
  }),
});

const AddonWhere = builder.inputType("AddonWhere", {
  fields: (t) => ({
    name: t.field({ type: StringFilter }),
    status: t.field({ type: StringFilter }),
    currency: t.field({ type: StringFilter }),
    applyScheme: t.field({ type: StringFilter }),
    archived: t.boolean(),
    created: t.field({ type: DateTimeFilter }),
  }),
});

builder.queryFields((t) => ({
  addons: t.connection({
    type: Addon,
    description: "Addons of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: AddonWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      const where = {
        ...tenant(ctx),
        AND: [
          ...stringConditions("name", w.name),
          ...stringConditions("status", w.status),
          ...stringConditions("currencyId", w.currency, { uppercase: true }),
          ...stringConditions("applyScheme", w.applyScheme),
          ...archivedCondition(w.archived),
          ...dateTimeConditions("createdAt", w.created),
        ],
      };
      return prismaConnection(ctx, info, ctx.prisma.addon, args, { where, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    },
  }),
}));

builder.mutationFields((t) => ({
  createAddon: t.prismaField({
    type: "Addon",
    description: "Creates an addon. Errors: validation_error.",
    args: { input: t.arg({ type: AddonInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createAddon(ctx, args.input);
      return ctx.prisma.addon.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateAddon: t.prismaField({
    type: "Addon",
    description: "Updates an addon. Errors: not_found, validation_error, invalid_state (pricing of an addon subscriptions use).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: AddonInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateAddon(ctx, String(args.id), args.input);
      return ctx.prisma.addon.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteAddon: t.field({
    type: CatalogueDeletePayload,
    description: "Deletes an addon; archives it instead when a subscription uses it. Errors: not_found.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteAddon(ctx, String(args.id)),
  }),
}));
