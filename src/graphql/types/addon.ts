/**
 * Addons (the addon object of spec "Subscription"; docs/catalogue.md): node type, `addons`
 * connection, create/update/delete mutations. Rules: services/addons.ts, domain/pricing.ts.
 */
import { builder } from "../builder.js";
import {
  DateTimeFilter,
  StringFilter,
  dateTimeConditions,
  enumConditions,
  enumFilter,
  stringConditions,
} from "../filters.js";
import { CatalogueStatus, CatalogueStatusFilter, type DescribedValues } from "../enums.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createAddon, deleteAddon, updateAddon } from "../../services/addons.js";
import type { AddonRate as AddonRateValue } from "../../domain/pricing.js";
import type { APPLY_SCHEMES, CatalogueStatus as CatalogueStatusValue } from "../../domain/catalogue.js";
import { CatalogueDeletePayload, archivedCondition } from "./product.js";

type ApplySchemeValue = (typeof APPLY_SCHEMES)[number];

/** How an addon bills (domain/catalogue.ts APPLY_SCHEMES; the `satisfies` keeps both lists equal). */
export const AddonApplyScheme = builder.enumType("AddonApplyScheme", {
  description:
    'How an addon is billed on a subscription (docs/catalogue.md "Addons"). REST `apply_scheme` uses the same strings.',
  values: {
    one_time: {
      value: "one_time",
      description: "billed once: its amount, or the shares its rates give to the cycles they name",
    },
    recurring: {
      value: "recurring",
      description: "billed every cycle, for durationTimes cycles (or while the subscription lasts)",
    },
  } as const satisfies DescribedValues<ApplySchemeValue>,
});

export const AddonApplySchemeFilter = enumFilter(AddonApplyScheme, "AddonApplyScheme");

export const AddonRate = builder.objectRef<AddonRateValue>("AddonRate").implement({
  description:
    "A share of a one-time addon's amount billed in subscription cycle `cycle` (1 = first): a percent or an amount.",
  fields: (t) => ({
    cycle: t.exposeInt("cycle", {
      description: "subscription billing cycle this share is billed in: 1 is the first cycle",
    }),
    percent: t.field({
      type: "Decimal",
      nullable: true,
      description:
        "share of the addon's amount in percent (0-100; an addon's percents sum to 100); null when the share is " +
        "an amount",
      resolve: (r) => ("percent" in r ? r.percent : null),
    }),
    amount: t.field({
      type: "Decimal",
      nullable: true,
      description:
        "share as money in the addon's currency (an addon's amounts sum to its amount); null when the share is " +
        "a percent",
      resolve: (r) => ("amount" in r ? r.amount : null),
    }),
  }),
});

export const Addon = builder.prismaNode("Addon", {
  id: { field: "id", description: "`add_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    'An extra charge added to subscriptions, once or every cycle (docs/catalogue.md "Addons"; REST /v1/addons/).',
  fields: (t) => ({
    applyScheme: t.field({
      type: AddonApplyScheme,
      description: "billed once (one_time) or every cycle (recurring)",
      select: { applyScheme: true },
      resolve: (a) => a.applyScheme as ApplySchemeValue,
    }),
    durationTimes: t.exposeInt("durationTimes", {
      nullable: true,
      description:
        "recurring: number of cycles it is billed (null: while the subscription lasts); always null for one_time",
    }),
    sku: t.exposeString("sku", {
      nullable: true,
      description: "the organization's own stock-keeping code; null when not set",
    }),
    name: t.exposeString("name", { description: "name printed on the invoice line" }),
    description: t.exposeString("description", {
      nullable: true,
      description: "longer text for the invoice line; null when not set",
    }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "price per unit in `currency` units (not negative), billed per the applyScheme",
    }),
    currency: t.relation("currency", { description: "currency of `amount` and of amount rates" }),
    rates: t.field({
      type: [AddonRate],
      select: { rates: true },
      description:
        "one_time only: how the amount is split over subscription cycles, ascending by cycle; empty when billed " +
        "whole in the first cycle (and always for recurring)",
      resolve: (a) => (a.rates ?? []) as unknown as AddonRateValue[],
    }),
    metadata: t.expose("metadata", {
      type: "JSONObject",
      description: "the organization's own string keys and values; {} when none",
    }),
    status: t.field({
      type: CatalogueStatus,
      description: "active, or archived (deleted while subscriptions use it; refused on new subscriptions)",
      select: { status: true },
      resolve: (a) => a.status as CatalogueStatusValue,
    }),
    archived: t.expose("archivedAt", {
      type: "DateTime",
      nullable: true,
      description: "when it was archived; null while active",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed" }),
  }),
});

const AddonRateInput = builder.inputType("AddonRateInput", {
  description:
    "One share of a one-time addon's amount: cycle plus either percent or amount (every rate of an addon the same " +
    "kind). Errors name `rates.<i>.<field>`.",
  fields: (t) => ({
    cycle: t.int({ description: "subscription cycle, from 1, ascending" }),
    percent: t.field({ type: "Decimal", description: "share in percent (all rates percents, summing to 100)" }),
    amount: t.field({
      type: "Decimal",
      description: "share as an amount (all rates amounts, summing to the addon's amount)",
    }),
  }),
});

const AddonInput = builder.inputType("AddonInput", {
  description: "Addon fields. On update only given fields change (pricing fields only while no subscription uses it).",
  fields: (t) => ({
    applyScheme: t.field({ type: AddonApplyScheme, description: "one_time (default on create) or recurring" }),
    durationTimes: t.int({
      description:
        "recurring only: number of cycles (positive; absent: while the subscription lasts); on a one_time addon a " +
        "validation_error",
    }),
    sku: t.string({ description: "the organization's own stock-keeping code" }),
    name: t.string({ description: "name printed on invoice lines (required on create)" }),
    description: t.string({ description: "longer text for invoice lines" }),
    amount: t.field({
      type: "Decimal",
      description: "price per unit in `currency` units, not negative (required on create)",
    }),
    currency: t.string({ description: "ISO 4217 code of a known currency, e.g. CLP (required on create)" }),
    rates: t.field({
      type: [AddonRateInput],
      description:
        "one_time only: how the amount is split over cycles (percents summing to 100, or amounts summing to " +
        "the amount)",
    }),
    metadata: t.field({
      type: "JSONObject",
      description: "string keys and values; merged into the current metadata on update",
    }),
  }),
});

const AddonWhere = builder.inputType("AddonWhere", {
  description: "Addon list filters, AND-ed (REST /v1/addons/?name=...&status=...&apply_scheme=...).",
  fields: (t) => ({
    name: t.field({ type: StringFilter, description: "the addon's name" }),
    status: t.field({ type: CatalogueStatusFilter, description: "active or archived" }),
    currency: t.field({ type: StringFilter, description: "ISO 4217 code (case-insensitive)" }),
    applyScheme: t.field({ type: AddonApplySchemeFilter, description: "one_time or recurring" }),
    archived: t.boolean({ description: "true: archived addons only; false: unarchived only" }),
    created: t.field({ type: DateTimeFilter, description: "creation instant" }),
  }),
});

builder.queryFields((t) => ({
  addons: t.connection(
    {
      type: Addon,
      description: "Addons of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: AddonWhere, description: "filters (all must match); absent: every addon" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const where = {
          ...tenant(ctx),
          AND: [
            ...stringConditions("name", w.name),
            ...enumConditions("status", w.status),
            ...stringConditions("currencyId", w.currency, { uppercase: true }),
            ...enumConditions("applyScheme", w.applyScheme),
            ...archivedCondition(w.archived),
            ...dateTimeConditions("createdAt", w.created),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.addon, args, {
          where,
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of addons, newest first." },
    { description: "An addon in a page of addons, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  createAddon: t.prismaField({
    type: "Addon",
    description:
      "Creates an active addon. Errors: validation_error naming the field (name, amount or currency missing; unknown " +
      "currency; a negative amount; duration_times on a one_time addon; rates on a recurring addon or not summing to " +
      "100 percent / the amount; an apply_scheme outside the enum).",
    args: { input: t.arg({ type: AddonInput, required: true, description: "the addon's fields" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createAddon(ctx, args.input);
      return ctx.prisma.addon.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateAddon: t.prismaField({
    type: "Addon",
    description:
      "Updates the given fields of an addon. Errors: not_found (no such addon in this organization and mode), " +
      "validation_error naming the field (as createAddon), invalid_state (a pricing field, i.e. applyScheme, " +
      "durationTimes, amount, currency or rates, of an addon subscriptions use: create a new addon instead).",
    args: {
      id: t.arg.id({ required: true, description: "`add_` id of the addon" }),
      input: t.arg({
        type: AddonInput,
        required: true,
        description: "the fields to change; absent ones keep their value",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateAddon(ctx, String(args.id), args.input);
      return ctx.prisma.addon.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteAddon: t.field({
    type: CatalogueDeletePayload,
    description:
      "Deletes an addon; archives it instead when a subscription uses it. Errors: not_found (no such addon in this " +
      "organization and mode).",
    args: { id: t.arg.id({ required: true, description: "`add_` id of the addon" }) },
    resolve: (_root, args, ctx) => deleteAddon(ctx, String(args.id)),
  }),
}));
