/**
 * Dunning attempts (docs/dunning.md "Attempts"): node type and the `dunningAttempts` connection. Read-only; the
 * dunning worker writes them (services/dunning-attempts.ts).
 */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { StringFilter, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import type { AttemptCharge, AttemptInvoice, AttemptOutcome, FinalAction } from "../../domain/dunning.js";
import type { AttemptEmail } from "../../domain/dunning-mail.js";
import { DunningFinalAction } from "./dunning-campaign.js";
import "./reference.js";

export const DunningAttemptOutcome = builder.enumType("DunningAttemptOutcome", {
  description: "What an attempt left due on its invoices. REST `outcome` uses the same strings.",
  values: {
    paid: { value: "paid", description: "nothing is due on them: the run ended" },
    unpaid: { value: "unpaid", description: "something is still due" },
  } as const satisfies DescribedValues<AttemptOutcome>,
});

export const DunningAttemptCharge = builder.enumType("DunningAttemptCharge", {
  description: "What an attempt did with the customer's card for one invoice. REST `charge` uses the same strings.",
  values: {
    succeeded: { value: "succeeded", description: "the card was charged what was due" },
    declined: { value: "declined", description: "the card declined the charge (failureCode, declineKind)" },
    not_attempted: {
      value: "not_attempted",
      description:
        "no charge: the campaign does not retry cards, the customer has no usable card, the card declined hard " +
        "earlier in the run, or nothing was due",
    },
  } as const satisfies DescribedValues<AttemptCharge>,
});

export const DunningAttemptEmail = builder.enumType("DunningAttemptEmail", {
  description:
    'What became of an attempt\'s e-mail (docs/dunning.md "The e-mail"). REST `email` uses the same strings.',
  values: {
    queued: {
      value: "queued",
      description: "one message to the customer (and the campaign's bcc) went to the outbox, with the pay link",
    },
    off: { value: "off", description: "the campaign sends no e-mails (sendEmail false)" },
    no_address: { value: "no_address", description: "the customer has no e-mail address: nothing was sent" },
    not_needed: { value: "not_needed", description: "nothing was still due after the attempt" },
  } as const satisfies DescribedValues<AttemptEmail>,
});

export const DeclineKind = builder.enumType("DeclineKind", {
  description: 'A card decline\'s kind (docs/dunning.md "Hard and soft declines").',
  values: {
    hard: { value: "hard", description: "the card can never succeed: the run charges it no more" },
    soft: { value: "soft", description: "the card may succeed later: retried at the next attempt" },
  } as const satisfies DescribedValues<"hard" | "soft">,
});

export const DunningAttemptInvoice = builder.objectRef<AttemptInvoice>("DunningAttemptInvoice").implement({
  description: "One overdue invoice of an attempt: what was due on it, and the card charge the attempt made for it.",
  fields: (t) => ({
    invoice: t.exposeID("invoice", { description: "`inv_` id of the invoice" }),
    amountDue: t.field({
      type: "Decimal",
      description: "what was due on the invoice when the attempt began, in the attempt's currency's unit",
      resolve: (i) => i.amount_due,
    }),
    payment: t.exposeID("payment", {
      nullable: true,
      description: "`pay_` id of the attempt's payment of the invoice; null when nothing was charged",
    }),
    charge: t.field({
      type: DunningAttemptCharge,
      description: "how the charge went",
      resolve: (i) => i.charge,
    }),
    failureCode: t.exposeString("failure_code", {
      nullable: true,
      description: "the decline code of a declined charge (e.g. insufficient_funds); null otherwise",
    }),
    declineKind: t.field({
      type: DeclineKind,
      nullable: true,
      description: "hard or soft for a declined charge; null otherwise",
      resolve: (i) => i.decline_kind,
    }),
  }),
});

export const DunningAttempt = builder.prismaNode("DunningAttempt", {
  id: { field: "id", description: "`dat_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "One attempt of a dunning campaign on a customer's overdue invoices in one currency: every " +
    "`daysBetweenAttempts` days from the day the customer's overdue amount reached the campaign's threshold, up to " +
    "`maxAttempts`. Written once by the dunning worker, never changed.",
  fields: (t) => ({
    customer: t.relation("customer", { description: "the dunned customer" }),
    campaign: t.relation("campaign", { description: "the campaign that made the attempt" }),
    currency: t.relation("currency", { description: "the currency of the invoices and amounts" }),
    number: t.exposeInt("number", {
      description:
        "1 for the run's first attempt, up to the campaign's maxAttempts (one more for the closing record of a run " +
        "paid between attempts)",
    }),
    invoices: t.field({
      type: [DunningAttemptInvoice],
      description: "the customer's overdue invoices in the currency, oldest due date first",
      select: { invoices: true },
      resolve: (a) => a.invoices as unknown as AttemptInvoice[],
    }),
    amountDue: t.expose("amountDue", {
      type: "Decimal",
      description:
        "what is still due on those invoices after the attempt, in the currency's unit (invoices marked " +
        "uncollectible count 0)",
    }),
    outcome: t.field({
      type: DunningAttemptOutcome,
      description: "paid when amountDue is 0 (the run ended), else unpaid",
      select: { outcome: true },
      resolve: (a) => a.outcome as AttemptOutcome,
    }),
    finalAction: t.field({
      type: DunningFinalAction,
      nullable: true,
      description:
        "the campaign's final action, applied after this attempt because it was the last with something due; null " +
        "on every other attempt",
      select: { finalAction: true },
      resolve: (a) => a.finalAction as FinalAction | null,
    }),
    email: t.field({
      type: DunningAttemptEmail,
      description:
        "the attempt's e-mail of what was still due: queued, or why none was sent (the outbox sends queued ones)",
      select: { email: true },
      resolve: (a) => a.email as AttemptEmail,
    }),
    created: t.expose("createdAt", {
      type: "DateTime",
      description: "when the attempt was made (for a customer on a test clock, the clock's time)",
    }),
  }),
});

const DunningAttemptWhere = builder.inputType("DunningAttemptWhere", {
  description: "Dunning attempt list filters, AND-ed (REST /v1/dunning_attempts/?customer=...).",
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id (`cus_`)" }),
  }),
});

builder.queryFields((t) => ({
  dunningAttempts: t.connection(
    {
      type: DunningAttempt,
      description: "Dunning attempts of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: DunningAttemptWhere, description: "filters (all must match); absent: every attempt" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return prismaConnection(ctx, info, ctx.prisma.dunningAttempt, args, {
          where: { ...tenant(ctx), AND: [...stringConditions("customerId", w.customer)] },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
    },
    { description: "A page of dunning attempts, newest first." },
    { description: "A dunning attempt in a page, with its cursor." },
  ),
}));
