/**
 * Usage records (spec "Usage"): node type, `usages` connection (newest usage first), createUsage
 * and deleteUsage. Rules: services/usages.ts and domain/usage.ts.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { createUsage, deleteUsage } from "../../services/usages.js";
import { DeletePayload } from "./document.js";
import "./subscription.js";
import "./invoice.js";

export const Usage = builder.prismaNode("Usage", {
  id: { field: "id", description: "`usa_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A quantity used on a metered subscription line at a time; billed in arrears by the next cycle's invoice.",
  fields: (t) => ({
    subscriptionLine: t.relation("subscriptionLine", {
      description: "the metered subscription line it was used on (before this release a `lin_` id String: select `subscriptionLine { id }`)",
    }),
    quantity: t.expose("quantity", { type: "Decimal", description: "units used, not negative (the plan's unit; decimals allowed)" }),
    dateTime: t.expose("dateTime", { type: "DateTime", description: "when it was used, ISO 8601" }),
    invoice: t.relation("invoice", {
      nullable: true,
      description: "the invoice that billed it; null until billed (before this release an `inv_` id String: select `invoice { id }`)",
    }),
    testMode: t.exposeBoolean("testMode", { description: "true: recorded with a test key, seen only in test mode" }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was recorded, ISO 8601" }),
  }),
});

const UsageInput = builder.inputType("UsageInput", {
  description: "A usage of a metered subscription line.",
  fields: (t) => ({
    subscriptionLine: t.id({ description: "`lin_` id of a metered subscription line (required)" }),
    quantity: t.field({ type: "Decimal", description: "not negative (required)" }),
    dateTime: t.field({ type: "DateTime", description: "default now; at most a day in the future" }),
  }),
});

const UsageWhere = builder.inputType("UsageWhere", {
  description: "Filter of `usages`; every given field must match.",
  fields: (t) => ({
    subscriptionLine: t.field({ type: StringFilter, description: "`lin_` id of the subscription line" }),
    dateTime: t.field({ type: DateTimeFilter, description: "when it was used" }),
    invoice: t.field({ type: StringFilter, description: "`inv_` id of the invoice that billed it" }),
  }),
});

builder.queryFields((t) => ({
  usages: t.connection({
    type: Usage,
    description: "Usage records of the caller's organization and mode, latest date_time first.",
    args: { where: t.arg({ type: UsageWhere, description: "filter; all usage records when absent" }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      const where = {
        ...tenant(ctx),
        AND: [...stringConditions("subscriptionLineId", w.subscriptionLine), ...stringConditions("invoiceId", w.invoice), ...dateTimeConditions("dateTime", w.dateTime)],
      };
      return prismaConnection(ctx, info, ctx.prisma.usage, args, { where, orderBy: [{ dateTime: "desc" }, { id: "desc" }] });
    },
  }, { description: "A page of usage records, latest dateTime first." }, { description: "A usage record in a page of usage records." }),
}));

builder.mutationFields((t) => ({
  createUsage: t.prismaField({
    type: "Usage",
    description: "Records a usage. Errors: validation_error (unknown or licensed line, negative quantity, more than a day ahead), invalid_state (cancelled subscription).",
    args: { input: t.arg({ type: UsageInput, required: true, description: "the usage; subscriptionLine and quantity required" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createUsage(ctx, { subscriptionLine: args.input.subscriptionLine ? String(args.input.subscriptionLine) : null, quantity: args.input.quantity, dateTime: args.input.dateTime });
      return ctx.prisma.usage.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  deleteUsage: t.field({
    type: DeletePayload,
    description: "Deletes a usage no invoice has billed. Errors: not_found, invalid_state (billed).",
    args: { id: t.arg.id({ required: true, description: "`usa_` id" }) },
    resolve: async (_root, args, ctx) => {
      await deleteUsage(ctx, String(args.id));
      return { id: String(args.id), deleted: true };
    },
  }),
}));
