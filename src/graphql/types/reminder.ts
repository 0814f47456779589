/**
 * Reminders (spec "Reminder"): node type with its delivery status, the `reminders` connection and
 * the `sendReminder` mutation. Rules: domain/reminders.ts; recording and delivery:
 * services/reminders.ts and services/outbox.ts (docs/reminders.md).
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { sendReminder } from "../../services/reminders.js";
import { MAX_DELIVERY_ATTEMPTS, MAX_RECIPIENTS } from "../../domain/reminders.js";
import "./invoice.js";
import "./order.js";
import "./credit-note.js";
import "./payment.js";

export const ReminderDelivery = builder.prismaObject("OutboxMessage", {
  name: "ReminderDelivery",
  description:
    "Delivery of a reminder's e-mail (docs/reminders.md). status: pending (not sent yet; retried with backoff), sent, " +
    `failed (gave up after ${MAX_DELIVERY_ATTEMPTS} attempts; kept for inspection), kept (no SMTP server configured: stored in the outbox and logged).`,
  fields: (t) => ({
    status: t.exposeString("status", { description: "pending | sent | failed | kept" }),
    attempts: t.exposeInt("attempts", { description: "delivery attempts made" }),
    lastError: t.exposeString("lastError", { nullable: true, description: "the last failure's reason (on sent messages: recipients the server refused)" }),
    nextAttempt: t.field({
      type: "DateTime",
      nullable: true,
      description: "when the next attempt is due; null unless pending",
      resolve: (m) => (m.status === "pending" ? m.nextAttemptAt : null),
    }),
    sent: t.expose("sentAt", { type: "DateTime", nullable: true, description: "when the SMTP server accepted it" }),
  }),
});

export const Reminder = builder.prismaNode("Reminder", {
  id: { field: "id", description: "`rem_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "An e-mail about one invoice, credit note, payment or order, with the document's PDF attached (payments have none).",
  fields: (t) => ({
    subject: t.exposeString("subject"),
    recipients: t.exposeStringList("recipients", { description: "e-mail addresses (REST `recipient`)" }),
    message: t.exposeString("message", { description: "the e-mail's text" }),
    invoice: t.relation("invoice", { nullable: true }),
    creditNote: t.relation("creditNote", { nullable: true }),
    payment: t.relation("payment", { nullable: true }),
    order: t.relation("order", { nullable: true }),
    testMode: t.exposeBoolean("testMode"),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key sent it (the message's Reply-To)" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    delivery: t.field({
      type: ReminderDelivery,
      nullable: true,
      select: { outbox: { orderBy: { createdAt: "asc" }, take: 1 } },
      resolve: (reminder) => reminder.outbox[0] ?? null,
    }),
  }),
});

const ReminderInput = builder.inputType("ReminderInput", {
  description: "A reminder: subject, recipients and message are required, and exactly one of invoice, creditNote, payment or order.",
  fields: (t) => ({
    subject: t.string({ description: "one line, at most 255 characters" }),
    recipients: t.stringList({ description: `1 to ${MAX_RECIPIENTS} e-mail addresses (duplicates are dropped)` }),
    message: t.string({ description: "plain text, at most 10000 characters" }),
    invoice: t.id({ description: "invoice id" }),
    creditNote: t.id({ description: "credit note id" }),
    payment: t.id({ description: "payment id (no attachment)" }),
    order: t.id({ description: "order id" }),
  }),
});

const ReminderWhere = builder.inputType("ReminderWhere", {
  fields: (t) => ({
    invoice: t.field({ type: StringFilter, description: "invoice id" }),
    creditNote: t.field({ type: StringFilter, description: "credit note id" }),
    payment: t.field({ type: StringFilter, description: "payment id" }),
    order: t.field({ type: StringFilter, description: "order id" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

const id = (value: string | number | null | undefined) => (value === null || value === undefined ? value : String(value));

builder.queryFields((t) => ({
  reminders: t.connection({
    type: Reminder,
    description: "Reminders of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: ReminderWhere }), offset: offsetArg(t) },
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
  }),
}));

builder.mutationFields((t) => ({
  sendReminder: t.prismaField({
    type: "Reminder",
    description:
      "Records a reminder and sends its e-mail: over SMTP when the service has SMTP_URL (first attempt now, failures retried with backoff), " +
      "else kept in the outbox and logged. Errors: validation_error (missing subject or message, bad or too many recipients, " +
      "not exactly one related document, or one unknown to the caller's organization and mode); nothing is written then.",
    args: { input: t.arg({ type: ReminderInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const input = args.input;
      const reminder = await sendReminder(
        ctx,
        { subject: input.subject, recipients: input.recipients, message: input.message, invoice: id(input.invoice), creditNote: id(input.creditNote), payment: id(input.payment), order: id(input.order) },
        { prisma: ctx.prisma, mailer: ctx.mailer, logger: ctx.logger, settings: ctx.settings },
      );
      return ctx.prisma.reminder.findUniqueOrThrow({ ...query, where: { id: reminder.id } });
    },
  }),
}));
