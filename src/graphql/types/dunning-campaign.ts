/**
 * Dunning campaigns (docs/dunning.md): node type, `dunningCampaigns` connection, create/update/delete mutations.
 * Rules: domain/dunning.ts; writes: services/dunning-campaigns.ts.
 */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import {
  createDunningCampaign,
  deleteDunningCampaign,
  updateDunningCampaign,
} from "../../services/dunning-campaigns.js";
import {
  CODE_MAX_LENGTH,
  DAYS_BETWEEN_ATTEMPTS,
  MAX_ATTEMPTS,
  MAX_BCC_EMAILS,
  MAX_THRESHOLDS,
  type FinalAction,
} from "../../domain/dunning.js";
import "./reference.js";

/** What a campaign does after the last attempt (domain/dunning.ts FINAL_ACTIONS; `satisfies` keeps them equal). */
export const DunningFinalAction = builder.enumType("DunningFinalAction", {
  description:
    "What a dunning campaign does after a customer's last attempt when invoices are still unpaid. REST " +
    "`final_action` uses the same strings.",
  values: {
    none: { value: "none", description: "nothing: the invoices stay due" },
    pause_subscriptions: {
      value: "pause_subscriptions",
      description: "pauses the subscriptions whose invoices are still unpaid",
    },
    cancel_subscriptions: {
      value: "cancel_subscriptions",
      description: "cancels the subscriptions whose invoices are still unpaid (cancel reason `unpaid`)",
    },
    mark_uncollectible: {
      value: "mark_uncollectible",
      description: "marks the invoices still unpaid uncollectible (a later payment still counts)",
    },
  } as const satisfies DescribedValues<FinalAction>,
});

export const DunningThreshold = builder.prismaObject("DunningCampaignThreshold", {
  name: "DunningThreshold",
  description:
    "When a campaign acts on a customer in one currency: once the customer's overdue amount in that currency " +
    "reaches `amount`.",
  fields: (t) => ({
    currency: t.relation("currency", { description: "the currency of the overdue amount and of `amount`" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "the overdue amount that starts the campaign, in the currency's unit (0: any overdue amount)",
    }),
  }),
});

export const DunningCampaign = builder.prismaNode("DunningCampaign", {
  id: { field: "id", description: "`dun_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "How the service recovers what a customer owes after the due date: when it acts (thresholds per currency), how " +
    "often and how many times it tries (retrying the card, e-mailing the customer), and what it does after the last " +
    "attempt. Customers use the campaign they name (`dunningCampaign`), else the organization's default one.",
  fields: (t) => ({
    name: t.exposeString("name", { description: "the campaign's name" }),
    code: t.exposeString("code", {
      description: "the organization's own identifier of the campaign, unique in the organization and mode",
    }),
    description: t.exposeString("description", { nullable: true, description: "a note; null when not set" }),
    thresholds: t.relation("thresholds", {
      description: "one per currency, in the order given: the campaign acts on no currency without one",
      query: { orderBy: [{ position: "asc" }] },
    }),
    daysBetweenAttempts: t.exposeInt("daysBetweenAttempts", {
      description: `days from one attempt to the next, ${DAYS_BETWEEN_ATTEMPTS.min}-${DAYS_BETWEEN_ATTEMPTS.max}`,
    }),
    maxAttempts: t.exposeInt("maxAttempts", {
      description: `attempts before the final action, ${MAX_ATTEMPTS.min}-${MAX_ATTEMPTS.max}`,
    }),
    retryCard: t.exposeBoolean("retryCard", {
      description: "true: an attempt charges the customer's usable card for each overdue invoice",
    }),
    sendEmail: t.exposeBoolean("sendEmail", {
      description:
        "true: an attempt is to e-mail the customer what is still overdue, with a link to pay it (stored; the e-mail " +
        "is not sent yet)",
    }),
    bccEmails: t.exposeStringList("bccEmails", {
      description: "addresses that receive a blind copy of every e-mail of the campaign; empty when none",
    }),
    finalAction: t.field({
      type: DunningFinalAction,
      description: "what happens after the last attempt when invoices are still unpaid",
      select: { finalAction: true },
      resolve: (c) => c.finalAction as FinalAction,
    }),
    appliedToOrganization: t.exposeBoolean("appliedToOrganization", {
      description:
        "true: the organization's default campaign in this mode, used by every customer that names none (at most one)",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed" }),
  }),
});

const DunningThresholdInput = builder.inputType("DunningThresholdInput", {
  description: "A campaign's threshold in one currency. Errors name `thresholds.<i>.currency` or `.amount`.",
  fields: (t) => ({
    currency: t.string({ description: "ISO 4217 code of a known currency, one threshold per currency (required)" }),
    amount: t.field({
      type: "Decimal",
      description: "the overdue amount that starts the campaign, not negative, in the currency's unit (required)",
    }),
  }),
});

const DunningCampaignInput = builder.inputType("DunningCampaignInput", {
  description:
    "A campaign's fields: name, code, thresholds, daysBetweenAttempts and maxAttempts are required on create; an " +
    "update changes what it gives (thresholds replace the whole list).",
  fields: (t) => ({
    name: t.string({ description: "the campaign's name, at most 200 characters" }),
    code: t.string({
      description:
        `unique in the organization and mode, at most ${CODE_MAX_LENGTH} characters: a letter or digit first, then ` +
        "letters, digits, _, - or .",
    }),
    description: t.string({ description: "a note, at most 1,000 characters; empty clears it" }),
    thresholds: t.field({
      type: [DunningThresholdInput],
      description: `at least one and at most ${MAX_THRESHOLDS}, one per currency`,
    }),
    daysBetweenAttempts: t.int({
      description:
        "days from one attempt to the next, a whole number " +
        `${DAYS_BETWEEN_ATTEMPTS.min}-${DAYS_BETWEEN_ATTEMPTS.max}`,
    }),
    maxAttempts: t.int({
      description: `attempts before the final action, a whole number ${MAX_ATTEMPTS.min}-${MAX_ATTEMPTS.max}`,
    }),
    retryCard: t.boolean({ description: "charge the customer's usable card at each attempt (default true)" }),
    sendEmail: t.boolean({
      description: "e-mail the customer at each attempt (default true; stored, the e-mail is not sent yet)",
    }),
    bccEmails: t.stringList({ description: `at most ${MAX_BCC_EMAILS} e-mail addresses; replaces the list` }),
    finalAction: t.field({ type: DunningFinalAction, description: "default none on create" }),
    appliedToOrganization: t.boolean({
      description:
        "true makes it the organization's default campaign in this mode; a validation_error while another campaign " +
        "is the default (set that one's to false first). Default false on create",
    }),
  }),
});

const DunningCampaignWhere = builder.inputType("DunningCampaignWhere", {
  description: "Dunning campaign list filters, AND-ed (REST /v1/dunning_campaigns/?code=...).",
  fields: (t) => ({
    code: t.field({ type: StringFilter, description: "the campaign's code" }),
    appliedToOrganization: t.boolean({ description: "true: the default campaign only; false: the others" }),
    created: t.field({ type: DateTimeFilter, description: "creation instant" }),
  }),
});

const DunningCampaignDeletePayload = builder.objectRef<{ id: string }>("DunningCampaignDeletePayload").implement({
  description: "Result of deleting a dunning campaign.",
  fields: (t) => ({
    deletedId: t.exposeID("id", { description: "id of the deleted campaign (Relay's deletedId convention)" }),
  }),
});

builder.queryFields((t) => ({
  dunningCampaigns: t.connection(
    {
      type: DunningCampaign,
      description: "Dunning campaigns of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: DunningCampaignWhere, description: "filters (all must match); absent: every campaign" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const applied = w.appliedToOrganization;
        return prismaConnection(ctx, info, ctx.prisma.dunningCampaign, args, {
          where: {
            ...tenant(ctx),
            AND: [
              ...stringConditions("code", w.code),
              ...(applied === true || applied === false ? [{ appliedToOrganization: applied }] : []),
              ...dateTimeConditions("createdAt", w.created),
            ],
          },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of dunning campaigns, newest first." },
    { description: "A dunning campaign in a page, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  createDunningCampaign: t.prismaField({
    type: "DunningCampaign",
    description:
      "Creates a dunning campaign. Errors: validation_error naming the field (name, code or thresholds missing; a " +
      "code taken or malformed; a threshold's currency unknown or given twice, its amount negative or not in the " +
      `currency's unit; daysBetweenAttempts outside ${DAYS_BETWEEN_ATTEMPTS.min}-${DAYS_BETWEEN_ATTEMPTS.max}; ` +
      `maxAttempts outside ${MAX_ATTEMPTS.min}-${MAX_ATTEMPTS.max}; a bccEmails entry not an e-mail address; ` +
      "appliedToOrganization true while another campaign is the default).",
    args: { input: t.arg({ type: DunningCampaignInput, required: true, description: "the campaign's fields" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createDunningCampaign(ctx, args.input);
      return ctx.prisma.dunningCampaign.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateDunningCampaign: t.prismaField({
    type: "DunningCampaign",
    description:
      "Updates the given fields of a dunning campaign (thresholds replace the list). Errors: not_found (no such " +
      "campaign in this organization and mode), validation_error naming the field (as createDunningCampaign).",
    args: {
      id: t.arg.id({ required: true, description: "`dun_` id of the campaign" }),
      input: t.arg({
        type: DunningCampaignInput,
        required: true,
        description: "the fields to change; absent ones keep their value",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateDunningCampaign(ctx, String(args.id), args.input);
      return ctx.prisma.dunningCampaign.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deleteDunningCampaign: t.field({
    type: DunningCampaignDeletePayload,
    description:
      "Deletes a dunning campaign that no customer names. Errors: not_found (no such campaign in this organization " +
      "and mode), invalid_state (customers name it as their dunningCampaign: move them to another campaign, or to " +
      "null for the default, first).",
    args: { id: t.arg.id({ required: true, description: "`dun_` id of the campaign" }) },
    resolve: (_root, args, ctx) => deleteDunningCampaign(ctx, String(args.id)),
  }),
}));
