/**
 * Usage records (spec "Usage"): node type, `usages` connection (newest usage first), createUsage
 * and deleteUsage. Rules: services/usages.ts and domain/usage.ts.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import {
  createUsage,
  deleteUsage,
  MAX_USAGE_BATCH,
  recordUsages,
  type UsageInput as ServiceUsageInput,
  type UsageRow,
} from "../../services/usages.js";
import type { Prisma } from "../../infra/prisma/generated/client.js";
import type { GraphQLContext } from "../context.js";
import { DeletePayload } from "./document.js";
import "./subscription.js";
import "./invoice.js";

export const Usage = builder.prismaNode("Usage", {
  id: { field: "id", description: "`usa_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "A quantity used on a metered subscription line at a time; billed in arrears by the next cycle's invoice.",
  fields: (t) => ({
    subscriptionLine: t.relation("subscriptionLine", {
      description:
        "the metered subscription line it was used on (before this release a `lin_` id String: select " +
        "`subscriptionLine { id }`)",
    }),
    quantity: t.expose("quantity", {
      type: "Decimal",
      description: "units used, not negative (the plan's unit; decimals allowed)",
    }),
    dateTime: t.expose("dateTime", { type: "DateTime", description: "when it was used, ISO 8601" }),
    invoice: t.relation("invoice", {
      nullable: true,
      description:
        "the invoice that billed it; null until billed (before this release an `inv_` id String: select `invoice " +
        "{ id }`)",
    }),
    transactionId: t.exposeString("transactionId", {
      nullable: true,
      description:
        "the sender's idempotency key it was recorded with (Lago's `transaction_id`), unique per organization and " +
        "mode; null when sent without one",
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
    transactionId: t.string({
      description:
        "optional idempotency key (Lago's `transaction_id`), 1 to 255 characters, unique per organization and mode: " +
        "a usage sent again with a key already recorded is not counted again (the usage first recorded with it is " +
        "returned)",
    }),
  }),
});

const RecordUsagesInput = builder.inputType("RecordUsagesInput", {
  description: "A batch of usage records, validated as a whole and written together or not at all.",
  fields: (t) => ({
    usages: t.field({
      type: [UsageInput],
      required: true,
      description:
        `1 to ${MAX_USAGE_BATCH} usage records; errors name a record's field as ` +
        `\`usages.<index>.<field>\` (0-based)`,
    }),
  }),
});

/** What recordUsages answers: the service's rows in input order and the duplicate indexes. */
interface RecordedUsagesShape {
  usages: UsageRow[];
  duplicates: number[];
}

/**
 * The usages a write returned (services/usages.ts: the INSERT's RETURNING), shaped as the
 * selection's Prisma `query` asks, without reading them again: a selection of the usage's own
 * fields and at most `subscriptionLine` and `invoice` as whole rows (what the REST operations and
 * most clients select) costs one read of the batch's distinct lines (and of its invoices, when a
 * duplicate is already billed). A deeper selection (say `subscriptionLine { plan { name } }`)
 * reads the usages again with the query, one statement per level, as any other read.
 */
async function usagesAsQueried(
  ctx: GraphQLContext,
  query: { include?: Record<string, unknown>; select?: Record<string, unknown> },
  rows: readonly UsageRow[],
): Promise<unknown[]> {
  const include = query.include ?? {};
  const simple =
    !query.select &&
    Object.entries(include).every(
      ([relation, value]) => (relation === "subscriptionLine" || relation === "invoice") && value === true,
    );
  if (!simple) {
    const read = await ctx.prisma.usage.findMany({
      ...query,
      where: { id: { in: [...new Set(rows.map((r) => r.id))] }, ...tenant(ctx) },
    } as Prisma.UsageFindManyArgs);
    const byId = new Map(read.map((r) => [r.id, r]));
    return rows.map((r) => byId.get(r.id)!);
  }
  const distinct = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];
  const lineIds = include.subscriptionLine ? distinct(rows.map((r) => r.subscriptionLineId)) : [];
  const invoiceIds = include.invoice ? distinct(rows.map((r) => r.invoiceId)) : [];
  const [lines, invoices] = await Promise.all([
    lineIds.length ? ctx.prisma.subscriptionLine.findMany({ where: { id: { in: lineIds } } }) : [],
    invoiceIds.length ? ctx.prisma.invoice.findMany({ where: { id: { in: invoiceIds }, ...tenant(ctx) } }) : [],
  ]);
  const lineById = new Map<string, unknown>(lines.map((l) => [l.id, l]));
  const invoiceById = new Map<string, unknown>(invoices.map((i) => [i.id, i]));
  return rows.map((r) => ({
    ...r,
    ...(include.subscriptionLine ? { subscriptionLine: lineById.get(r.subscriptionLineId) } : {}),
    ...(include.invoice ? { invoice: r.invoiceId === null ? null : (invoiceById.get(r.invoiceId) ?? null) } : {}),
  }));
}

const RecordUsagesPayload = builder.objectRef<RecordedUsagesShape>("RecordUsagesPayload").implement({
  description: "The usages of a batch, in the order sent, and which records were duplicates.",
  fields: (t) => ({
    usages: t.prismaField({
      type: ["Usage"],
      description:
        "one usage per record sent, in the same order; a duplicate record's entry is the usage first recorded with " +
        "its transactionId (so an id can appear more than once)",
      resolve: (query, parent, _args, ctx) => usagesAsQueried(ctx, query, parent.usages) as never,
    }),
    duplicates: t.exposeIntList("duplicates", {
      description:
        "0-based indexes of the records not counted because their transactionId was already recorded (before, by a " +
        "concurrent request, or earlier in this batch); empty when every record was new",
    }),
    created: t.int({
      description: "how many usages this call recorded (records sent minus duplicates)",
      resolve: (p) => p.usages.length - p.duplicates.length,
    }),
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

/** The service's input of a GraphQL UsageInput. */
function usageInput(input: {
  subscriptionLine?: string | number | null;
  quantity?: ServiceUsageInput["quantity"];
  dateTime?: Date | null;
  transactionId?: string | null;
}): ServiceUsageInput {
  return {
    subscriptionLine: input.subscriptionLine ? String(input.subscriptionLine) : null,
    quantity: input.quantity,
    dateTime: input.dateTime,
    transactionId: input.transactionId,
  };
}

builder.queryFields((t) => ({
  usages: t.connection(
    {
      type: Usage,
      description: "Usage records of the caller's organization and mode, latest date_time first.",
      args: {
        where: t.arg({ type: UsageWhere, description: "filter; all usage records when absent" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const where = {
          ...tenant(ctx),
          AND: [
            ...stringConditions("subscriptionLineId", w.subscriptionLine),
            ...stringConditions("invoiceId", w.invoice),
            ...dateTimeConditions("dateTime", w.dateTime),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.usage, args, {
          where,
          orderBy: [{ dateTime: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of usage records, latest dateTime first." },
    { description: "A usage record in a page of usage records." },
  ),
}));

builder.mutationFields((t) => ({
  createUsage: t.prismaField({
    type: "Usage",
    description:
      "Records a usage. With a transactionId already recorded nothing is written and the usage first recorded with " +
      "it is returned. Errors: validation_error (unknown or licensed line, negative quantity, more than a day ahead, " +
      "empty or over-long transactionId), invalid_state (cancelled subscription).",
    args: {
      input: t.arg({
        type: UsageInput,
        required: true,
        description: "the usage; subscriptionLine and quantity required",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const created = await createUsage(ctx, usageInput(args.input));
      return (await usagesAsQueried(ctx, query, [created.usage]))[0] as never;
    },
  }),
  recordUsages: t.field({
    type: RecordUsagesPayload,
    description:
      `Records a batch of 1 to ${MAX_USAGE_BATCH} usages with one multi-row write, all or nothing. A ` +
      `record whose transactionId is already recorded (or repeats one earlier in the batch) is not counted again: it ` +
      `is listed in \`duplicates\`. Errors: validation_error (any bad record, fields named ` +
      `\`usages.<index>.<field>\`; more than ${MAX_USAGE_BATCH} records), invalid_state (a record of a cancelled ` +
      `subscription, same field paths); nothing is written on error.`,
    args: { input: t.arg({ type: RecordUsagesInput, required: true, description: "the records" }) },
    resolve: (_root, args, ctx) => recordUsages(ctx, args.input.usages.map(usageInput)),
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
