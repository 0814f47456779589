/**
 * Reminders (spec "Reminder"): node type with its delivery status, the `reminders` connection and
 * the `sendReminder` mutation. Rules: domain/reminders.ts; recording and delivery:
 * services/reminders.ts and services/outbox.ts (docs/reminders.md).
 */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { sendReminder } from "../../services/reminders.js";
import {
  MAX_DELIVERY_ATTEMPTS,
  MAX_MESSAGE_LENGTH,
  MAX_RECIPIENTS,
  MAX_SUBJECT_LENGTH,
  type OutboxStatus,
} from "../../domain/reminders.js";
import "./invoice.js";
import "./order.js";
import "./credit-note.js";
import "./payment.js";

export const ReminderDeliveryStatus = builder.enumType("ReminderDeliveryStatus", {
  description: "Where a reminder's e-mail is in the mail outbox (docs/reminders.md).",
  values: {
    pending: {
      value: "pending",
      description:
        "not sent yet: the first attempt is under way, or a failed attempt is retried with backoff at nextAttempt",
    },
    sent: { value: "sent", description: "accepted by the SMTP server (sent says when); final" },
    failed: {
      value: "failed",
      description: `gave up after ${MAX_DELIVERY_ATTEMPTS} attempts (lastError says why); kept for inspection; final`,
    },
    kept: {
      value: "kept",
      description: "no SMTP server is configured (SMTP_URL): stored in the outbox and logged, not sent; final",
    },
  } as const satisfies DescribedValues<OutboxStatus>,
});

export const ReminderDelivery = builder.prismaObject("OutboxMessage", {
  name: "ReminderDelivery",
  description:
    "Delivery of a reminder's e-mail (docs/reminders.md). status: pending (not sent yet; retried with " +
    "backoff), sent, " +
    `failed (gave up after ${MAX_DELIVERY_ATTEMPTS} attempts; kept for inspection), kept (no SMTP server configured: ` +
    `stored in the outbox and logged).`,
  fields: (t) => ({
    status: t.field({
      type: ReminderDeliveryStatus,
      description: "where the e-mail is",
      select: { status: true },
      resolve: (m) => m.status as OutboxStatus,
    }),
    attempts: t.exposeInt("attempts", { description: "delivery attempts made" }),
    lastError: t.exposeString("lastError", {
      nullable: true,
      description:
        "the last failure's reason (on sent messages: recipients the server refused); null when nothing failed",
    }),
    nextAttempt: t.field({
      type: "DateTime",
      nullable: true,
      description: "when the next attempt is due; null unless pending",
      resolve: (m) => (m.status === "pending" ? m.nextAttemptAt : null),
    }),
    sent: t.expose("sentAt", {
      type: "DateTime",
      nullable: true,
      description: "when the SMTP server accepted it (ISO 8601); null unless sent",
    }),
  }),
});

export const Reminder = builder.prismaNode("Reminder", {
  id: { field: "id", description: "`rem_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "An e-mail about one invoice, credit note, payment or order, with the document's PDF attached (payments " +
    "have none).",
  fields: (t) => ({
    subject: t.exposeString("subject", { description: "the e-mail's subject, one line" }),
    recipients: t.exposeStringList("recipients", { description: "e-mail addresses (REST `recipient`)" }),
    message: t.exposeString("message", { description: "the e-mail's text" }),
    invoice: t.relation("invoice", {
      nullable: true,
      description: "the invoice it is about; null when it is about another document",
    }),
    creditNote: t.relation("creditNote", {
      nullable: true,
      description: "the credit note it is about; null when it is about another document",
    }),
    payment: t.relation("payment", {
      nullable: true,
      description: "the payment it is about (no attachment); null when it is about another document",
    }),
    order: t.relation("order", {
      nullable: true,
      description: "the order it is about; null when it is about another document",
    }),
    testMode: t.exposeBoolean("testMode", { description: "true when sent with a test key" }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key sent it (the message's Reply-To)" }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was recorded (ISO 8601)" }),
    delivery: t.field({
      type: ReminderDelivery,
      nullable: true,
      description:
        "the delivery of its e-mail (recorded with the reminder, in the same transaction); null only if no e-mail " +
        "was recorded for it",
      select: { outbox: { orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: 1 } },
      resolve: (reminder) => reminder.outbox[0] ?? null,
    }),
  }),
});

const ReminderInput = builder.inputType("ReminderInput", {
  description:
    "A reminder: subject, recipients and message are required, and exactly one of invoice, creditNote, payment " +
    "or order.",
  fields: (t) => ({
    subject: t.string({ description: `one line, at most ${MAX_SUBJECT_LENGTH} characters (required)` }),
    recipients: t.stringList({ description: `1 to ${MAX_RECIPIENTS} e-mail addresses (duplicates are dropped)` }),
    message: t.string({ description: `plain text, at most ${MAX_MESSAGE_LENGTH} characters (required)` }),
    invoice: t.id({ description: "`inv_` id of the invoice it is about" }),
    creditNote: t.id({ description: "`cre_` id of the credit note it is about" }),
    payment: t.id({ description: "`pay_` id of the payment it is about (no attachment)" }),
    order: t.id({ description: "`ord_` id of the order it is about" }),
  }),
});

const ReminderWhere = builder.inputType("ReminderWhere", {
  description: "Filters of the reminders list; every given filter must match.",
  fields: (t) => ({
    invoice: t.field({ type: StringFilter, description: "invoice id" }),
    creditNote: t.field({ type: StringFilter, description: "credit note id" }),
    payment: t.field({ type: StringFilter, description: "payment id" }),
    order: t.field({ type: StringFilter, description: "order id" }),
    created: t.field({ type: DateTimeFilter, description: "when it was recorded" }),
  }),
});

const id = (value: string | number | null | undefined) =>
  value === null || value === undefined ? value : String(value);

builder.queryFields((t) => ({
  reminders: t.connection(
    {
      type: Reminder,
      description: "Reminders of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: ReminderWhere, description: "filters; none: every reminder" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return tenantConnection(ctx, info, ctx.prisma.reminder, args, [
          ...stringConditions("invoiceId", w.invoice),
          ...stringConditions("creditNoteId", w.creditNote),
          ...stringConditions("paymentId", w.payment),
          ...stringConditions("orderId", w.order),
          ...dateTimeConditions("createdAt", w.created),
        ]);
      },
    },
    { description: "A page of reminders, newest first (Relay connection)." },
    { description: "A reminder in a page, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  sendReminder: t.prismaField({
    type: "Reminder",
    description:
      "Records a reminder and sends its e-mail: over SMTP when the service has SMTP_URL (first attempt now, failures " +
      "retried with backoff), " +
      "else kept in the outbox and logged. Errors: validation_error (missing subject or message, bad or too many " +
      "recipients, " +
      "not exactly one related document, or one unknown to the caller's organization and mode); nothing is " +
      "written then.",
    args: { input: t.arg({ type: ReminderInput, required: true, description: "the reminder" }) },
    resolve: async (query, _root, args, ctx) => {
      const input = args.input;
      const reminder = await sendReminder(
        ctx,
        {
          subject: input.subject,
          recipients: input.recipients,
          message: input.message,
          invoice: id(input.invoice),
          creditNote: id(input.creditNote),
          payment: id(input.payment),
          order: id(input.order),
        },
        { prisma: ctx.prisma, mailer: ctx.mailer, logger: ctx.logger, settings: ctx.settings },
      );
      return ctx.prisma.reminder.findUniqueOrThrow({ ...query, where: { id: reminder.id } });
    },
  }),
}));
