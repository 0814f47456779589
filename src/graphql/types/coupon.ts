/**
 * Coupons (the coupon object of spec "Subscription"; docs/catalogue.md): node type, `coupons`
 * connection, create/update/delete mutations. Rules: services/coupons.ts.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createCoupon, deleteCoupon, updateCoupon } from "../../services/coupons.js";
import { CatalogueDeletePayload, archivedCondition } from "./product.js";

export const Coupon = builder.prismaNode("Coupon", {
  id: { field: "id", description: "`cou_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A discount on subscriptions: a percent or an amount, once, for some cycles or forever.",
  fields: (t) => ({
    discountScheme: t.exposeString("discountScheme", { description: "% (amount is a percent) | $ (amount in currency)" }),
    durationScheme: t.exposeString("durationScheme", { description: "once | limited (durationTimes cycles) | forever" }),
    durationTimes: t.exposeInt("durationTimes", { nullable: true }),
    name: t.exposeString("name"),
    amount: t.expose("amount", { type: "Decimal" }),
    validUntil: t.expose("validUntil", { type: "DateTime", nullable: true, description: "last moment it can be redeemed" }),
    applyOn: t.exposeString("applyOn", { description: "invoice (document discount) | line (each subscription line)" }),
    currency: t.relation("currency", { nullable: true, description: "required for $ coupons" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    status: t.exposeString("status", { description: "active | archived" }),
    archived: t.expose("archivedAt", { type: "DateTime", nullable: true }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const CouponInput = builder.inputType("CouponInput", {
  description: "Coupon fields. On update only given fields change (the discount only while no subscription uses it).",
  fields: (t) => ({
    discountScheme: t.string({ description: "% (default) | $" }),
    durationScheme: t.string({ description: "once (default) | limited | forever" }),
    durationTimes: t.int({ description: "limited only (required then): number of cycles" }),
    name: t.string({ description: "required" }),
    amount: t.field({ type: "Decimal", description: "positive; a percent at most 100 for %, an amount in currency for $" }),
    validUntil: t.field({ type: "DateTime", description: "in the future" }),
    applyOn: t.string({ description: "invoice (default) | line" }),
    currency: t.string({ description: "ISO 4217 code; required for $" }),
    metadata: t.field({ type: "JSONObject" }),
  }),
});

const CouponWhere = builder.inputType("CouponWhere", {
  fields: (t) => ({
    name: t.field({ type: StringFilter }),
    status: t.field({ type: StringFilter }),
    discountScheme: t.field({ type: StringFilter }),
    archived: t.boolean(),
    created: t.field({ type: DateTimeFilter }),
  }),
});

builder.queryFields((t) => ({
  coupons: t.connection({
    type: Coupon,
    description: "Coupons of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: CouponWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      const where = {
        ...tenant(ctx),
        AND: [
          ...stringConditions("name", w.name),
          ...stringConditions("status", w.status),
          ...stringConditions("discountScheme", w.discountScheme),
          ...archivedCondition(w.archived),
          ...dateTimeConditions("createdAt", w.created),
        ],
      };
      return prismaConnection(ctx, info, ctx.prisma.coupon, args, { where, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    },
  }),
}));

builder.mutationFields((t) => ({
  createCoupon: t.prismaField({
    type: "Coupon",
    description: "Creates a coupon. Errors: validation_error.",
    args: { input: t.arg({ type: CouponInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createCoupon(ctx, args.input);
      return ctx.prisma.coupon.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateCoupon: t.prismaField({
    type: "Coupon",
    description: "Updates a coupon. Errors: not_found, validation_error, invalid_state (discount of a coupon subscriptions use).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: CouponInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateCoupon(ctx, String(args.id), args.input);
      return ctx.prisma.coupon.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteCoupon: t.field({
    type: CatalogueDeletePayload,
    description: "Deletes a coupon; archives it instead when a subscription uses it. Errors: not_found.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteCoupon(ctx, String(args.id)),
  }),
}));
