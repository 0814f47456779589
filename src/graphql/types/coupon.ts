/**
 * Coupons (the coupon object of spec "Subscription"; docs/catalogue.md): node type, `coupons`
 * connection, create/update/delete mutations. Rules: services/coupons.ts.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, enumConditions, stringConditions } from "../filters.js";
import {
  CatalogueStatus,
  CatalogueStatusFilter,
  DiscountScheme,
  DiscountSchemeFilter,
  type DiscountSchemeValue,
  type DescribedValues,
} from "../enums.js";
import type { APPLY_ON, CatalogueStatus as CatalogueStatusValue, DURATION_SCHEMES } from "../../domain/catalogue.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createCoupon, deleteCoupon, updateCoupon } from "../../services/coupons.js";
import { CatalogueDeletePayload, archivedCondition } from "./product.js";

type DurationSchemeValue = (typeof DURATION_SCHEMES)[number];
type ApplyOnValue = (typeof APPLY_ON)[number];

/** How long a coupon's discount lasts (domain/catalogue.ts DURATION_SCHEMES; `satisfies` keeps both lists equal). */
export const CouponDurationScheme = builder.enumType("CouponDurationScheme", {
  description:
    'How many billing cycles of a subscription a coupon discounts (docs/catalogue.md "Coupons"). REST ' +
    "`duration_scheme` uses the same strings.",
  values: {
    once: { value: "once", description: "one billing cycle: the first invoice it discounts" },
    limited: { value: "limited", description: "durationTimes billing cycles, then it stops" },
    forever: { value: "forever", description: "every cycle while the subscription lasts" },
  } as const satisfies DescribedValues<DurationSchemeValue>,
});

/** What a coupon discounts (domain/catalogue.ts APPLY_ON). */
export const CouponApplyOn = builder.enumType("CouponApplyOn", {
  description:
    'What part of a subscription\'s invoice a coupon discounts (docs/catalogue.md "Coupons"). REST `apply_on` uses ' +
    "the same strings.",
  values: {
    invoice: { value: "invoice", description: "the invoice as a whole (the document discount)" },
    line: { value: "line", description: "each subscription line (a line discount on every plan line)" },
  } as const satisfies DescribedValues<ApplyOnValue>,
});

export const Coupon = builder.prismaNode("Coupon", {
  id: { field: "id", description: "`cou_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "A discount on subscriptions: a percent or an amount, once, for some cycles or forever (docs/catalogue.md " +
    '"Coupons"; REST /v1/coupons/).',
  fields: (t) => ({
    discountScheme: t.field({
      type: DiscountScheme,
      description: "percent (amount is a percent, REST `%`) or amount (amount is money in currency, REST `$`)",
      select: { discountScheme: true },
      resolve: (c) => c.discountScheme as DiscountSchemeValue,
    }),
    durationScheme: t.field({
      type: CouponDurationScheme,
      description: "once, limited (durationTimes cycles) or forever",
      select: { durationScheme: true },
      resolve: (c) => c.durationScheme as DurationSchemeValue,
    }),
    durationTimes: t.exposeInt("durationTimes", {
      nullable: true,
      description: "limited: number of billing cycles discounted; null for once and forever",
    }),
    name: t.exposeString("name", { description: "name shown on the discounted invoice" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description:
        "the discount: a percent (more than 0, at most 100) for discountScheme percent, else money in `currency` units",
    }),
    validUntil: t.expose("validUntil", {
      type: "DateTime",
      nullable: true,
      description: "last moment it can be redeemed; null: no limit",
    }),
    applyOn: t.field({
      type: CouponApplyOn,
      description: "invoice (the document discount) or line (each subscription line)",
      select: { applyOn: true },
      resolve: (c) => c.applyOn as ApplyOnValue,
    }),
    currency: t.relation("currency", {
      nullable: true,
      description: "currency of an amount coupon (required then); null for a percent coupon created without one",
    }),
    metadata: t.expose("metadata", {
      type: "JSONObject",
      description: "the organization's own string keys and values; {} when none",
    }),
    status: t.field({
      type: CatalogueStatus,
      description: "active, or archived (deleted while subscriptions use it; refused on new subscriptions)",
      select: { status: true },
      resolve: (c) => c.status as CatalogueStatusValue,
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

const CouponInput = builder.inputType("CouponInput", {
  description: "Coupon fields. On update only given fields change (the discount only while no subscription uses it).",
  fields: (t) => ({
    discountScheme: t.field({
      type: DiscountScheme,
      description: "percent (default on create; REST `%`) or amount (REST `$`)",
    }),
    durationScheme: t.field({
      type: CouponDurationScheme,
      description: "once (default on create), limited or forever",
    }),
    durationTimes: t.int({
      description: "limited only (required then): number of cycles, positive; with once or forever a validation_error",
    }),
    name: t.string({ description: "name shown on the discounted invoice (required on create)" }),
    amount: t.field({
      type: "Decimal",
      description:
        "positive (required on create): a percent at most 100 for percent; for amount, money in `currency` units, in " +
        "the currency's unit (CLP whole)",
    }),
    validUntil: t.field({ type: "DateTime", description: "last moment it can be redeemed; must be in the future" }),
    applyOn: t.field({ type: CouponApplyOn, description: "invoice (default on create) or line" }),
    currency: t.string({ description: "ISO 4217 code of a known currency; required for amount coupons" }),
    metadata: t.field({
      type: "JSONObject",
      description: "string keys and values; merged into the current metadata on update (an empty value removes a key)",
    }),
  }),
});

const CouponWhere = builder.inputType("CouponWhere", {
  description: "Coupon list filters, AND-ed (REST /v1/coupons/?name=...&status=...&discount_scheme=...).",
  fields: (t) => ({
    name: t.field({ type: StringFilter, description: "the coupon's name" }),
    status: t.field({ type: CatalogueStatusFilter, description: "active or archived" }),
    discountScheme: t.field({ type: DiscountSchemeFilter, description: "percent or amount (REST `%` or `$`)" }),
    archived: t.boolean({ description: "true: archived coupons only; false: unarchived only" }),
    created: t.field({ type: DateTimeFilter, description: "creation instant" }),
  }),
});

builder.queryFields((t) => ({
  coupons: t.connection(
    {
      type: Coupon,
      description: "Coupons of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: CouponWhere, description: "filters (all must match); absent: every coupon" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const where = {
          ...tenant(ctx),
          AND: [
            ...stringConditions("name", w.name),
            ...enumConditions("status", w.status),
            ...enumConditions("discountScheme", w.discountScheme),
            ...archivedCondition(w.archived),
            ...dateTimeConditions("createdAt", w.created),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.coupon, args, {
          where,
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of coupons, newest first." },
    { description: "A coupon in a page of coupons, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  createCoupon: t.prismaField({
    type: "Coupon",
    description:
      "Creates an active coupon. Errors: validation_error naming the field (name or amount missing; amount not " +
      "positive, a percent over 100, or an amount not in the currency's unit; currency missing on an amount coupon " +
      "or unknown; duration_times missing on limited or given on once/forever; valid_until not in the future).",
    args: { input: t.arg({ type: CouponInput, required: true, description: "the coupon's fields" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createCoupon(ctx, args.input);
      return ctx.prisma.coupon.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateCoupon: t.prismaField({
    type: "Coupon",
    description:
      "Updates the given fields of a coupon. Errors: not_found (no such coupon in this organization and mode), " +
      "validation_error naming the field (as createCoupon), invalid_state (a discount field, i.e. discountScheme, " +
      "durationScheme, durationTimes, amount, currency or applyOn, of a coupon subscriptions use: create a new " +
      "coupon instead).",
    args: {
      id: t.arg.id({ required: true, description: "`cou_` id of the coupon" }),
      input: t.arg({
        type: CouponInput,
        required: true,
        description: "the fields to change; absent ones keep their value",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateCoupon(ctx, String(args.id), args.input);
      return ctx.prisma.coupon.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteCoupon: t.field({
    type: CatalogueDeletePayload,
    description:
      "Deletes a coupon; archives it instead when a subscription uses it. Errors: not_found (no such coupon in this " +
      "organization and mode).",
    args: { id: t.arg.id({ required: true, description: "`cou_` id of the coupon" }) },
    resolve: (_root, args, ctx) => deleteCoupon(ctx, String(args.id)),
  }),
}));
