/**
 * Reminders (spec "Reminder"; REST /v1/reminders/messages/, GraphQL sendReminder/reminders): an
 * e-mail about exactly one invoice, credit note, payment or order of the caller's organization and
 * mode. Rules: domain/reminders.ts. The reminder and its outbox message are written in one
 * transaction; delivery happens after commit (services/outbox.ts, docs/reminders.md).
 *
 * A reminder about a payment attaches nothing (payments have no PDF); one about an invoice, order
 * or credit note attaches the document's PDF, rendered when the message is delivered.
 */
import { randomUUID } from "node:crypto";
import type { Reminder } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector } from "../domain/errors.js";
import {
  MAX_MESSAGE_LENGTH,
  MAX_SUBJECT_LENGTH,
  exactlyOneDocument,
  normalizeRecipients,
  requiredText,
  type RelatedDocument,
} from "../domain/reminders.js";
import { tenant, type ServiceContext, type Tx } from "./context.js";
import { claimedOnCreate, deliverClaimed, type OutboxDeps } from "./outbox.js";
import { afterCommit } from "./request-transaction.js";

export interface ReminderInput {
  subject?: string | null;
  /** the spec's `recipient` */
  recipients?: readonly (string | null | undefined)[] | null;
  message?: string | null;
  invoice?: string | null;
  creditNote?: string | null;
  payment?: string | null;
  order?: string | null;
}

const LABEL = { invoice: "invoice", credit_note: "credit note", payment: "payment", order: "order" } as const;

/** Whether the related document exists in the caller's organization and mode (others read as unknown). */
async function relatedExists(tx: Tx, ctx: ServiceContext, doc: RelatedDocument): Promise<boolean> {
  const where = { id: doc.id, ...tenant(ctx) };
  const select = { id: true } as const;
  switch (doc.kind) {
    case "invoice":
      return !!(await tx.invoice.findFirst({ where, select }));
    case "credit_note":
      return !!(await tx.creditNote.findFirst({ where, select }));
    case "order":
      return !!(await tx.order.findFirst({ where, select }));
    case "payment":
      return !!(await tx.payment.findFirst({ where, select }));
  }
}

/**
 * Records a reminder and its outgoing message, then attempts delivery once (SMTP configured) or
 * logs it as kept in the outbox (no SMTP). ValidationError (400) names every bad field and
 * nothing is written or sent. A failed delivery does not fail the call: it is recorded on the
 * message and retried by the outbox worker.
 */
export async function sendReminder(ctx: ServiceContext, input: ReminderInput, outbox: OutboxDeps): Promise<Reminder> {
  const errors = new FieldErrorCollector();
  const subject = requiredText("subject", input.subject, MAX_SUBJECT_LENGTH, errors, { singleLine: true });
  const message = requiredText("message", input.message, MAX_MESSAGE_LENGTH, errors);
  const recipients = normalizeRecipients(input.recipients, errors);
  const related = exactlyOneDocument(
    { invoice: input.invoice, credit_note: input.creditNote, payment: input.payment, order: input.order },
    errors,
  );
  const kept = !outbox.mailer;
  const due = ctx.now();

  const { reminder, messageId, attempts } = await ctx.prisma.$transaction(async (tx) => {
    if (related && !(await relatedExists(tx, ctx, related)))
      errors.add(related.kind, `unknown ${LABEL[related.kind]} ${related.id}`);
    errors.throwIfAny("Invalid reminder");
    const doc = related!;
    const reminder = await tx.reminder.create({
      data: {
        id: newId("rem"),
        ...tenant(ctx),
        subject,
        recipients,
        message,
        invoiceId: doc.kind === "invoice" ? doc.id : null,
        creditNoteId: doc.kind === "credit_note" ? doc.id : null,
        paymentId: doc.kind === "payment" ? doc.id : null,
        orderId: doc.kind === "order" ? doc.id : null,
        userEmail: ctx.auth.userEmail,
      },
    });
    const created = await tx.outboxMessage.create({
      data: {
        id: randomUUID(),
        organizationId: ctx.auth.organizationId,
        reminderId: reminder.id,
        recipients,
        subject,
        body: message,
        // kept: stays in the outbox; else claimed for the first attempt made below, after commit
        ...(kept ? { status: "kept", nextAttemptAt: due } : claimedOnCreate(due)),
        attachmentKind: doc.kind === "payment" ? null : doc.kind,
        attachmentId: doc.kind === "payment" ? null : doc.id,
      },
    });
    return { reminder, messageId: created.id, attempts: created.attempts };
  });

  if (kept) {
    outbox.logger.info(
      {
        reminder: reminder.id,
        outboxMessage: messageId,
        from: outbox.settings.mailFrom,
        to: recipients,
        subject,
        text: message,
        attachment: related!.kind === "payment" ? null : `${related!.kind} ${related!.id}`,
      },
      "mail kept in the outbox (no SMTP_URL)",
    );
  } else {
    // the first attempt, after commit (of the request's transaction when the request is keyed:
    // request-transaction.ts); a failure is recorded on the message and retried later
    await afterCommit(outbox.prisma, (prisma) =>
      deliverClaimed({ ...outbox, prisma }, { id: messageId, attempts }, ctx.now()).catch((e) =>
        outbox.logger.error({ err: e, outboxMessage: messageId }, "immediate delivery attempt failed"),
      ),
    );
  }
  return reminder;
}
