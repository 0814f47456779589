/**
 * The mail outbox (docs/reminders.md "Delivery"). Use cases write an OutboxMessage in the same
 * transaction as what it reports (a reminder); delivery happens after commit, here:
 *
 * - A new message is written already claimed by the request that wrote it (`claimedOnCreate`),
 *   which sends it right after commit (`deliverClaimed`); `deliverDueMessages`, run by the worker
 *   (`startOutboxWorker`, an interval in the server) or any other process, sends every due one.
 * - A message is claimed with one `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)`
 *   that counts the attempt and moves `nextAttemptAt` a lease ahead, so several workers (and the
 *   request) never send the same message twice, and a process that dies mid-send lets another one
 *   retry it once the lease is over. The send happens outside any transaction.
 * - Success: `sent` (sentAt). Failure: `lastError`, `nextAttemptAt = now + backoff(attempts)`,
 *   and `failed` after MAX_DELIVERY_ATTEMPTS (domain/reminders.ts). Rows are never deleted.
 * - The attachment (a document's PDF) is rendered at delivery time from `attachmentKind/Id`; a dunning e-mail's
 *   invoices from `invoiceIds`, and its portal pay link is made then too (services/dunning-mail.ts).
 *
 * Without SMTP (no Mailer) messages are written as `kept` and only logged; nothing sends them.
 */
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import type { Logger } from "../infra/logger.js";
import type { MailAttachment, Mailer } from "../infra/mail.js";
import { NotFoundError } from "../domain/errors.js";
import { CLAIM_LEASE_MS, afterFailure, attachmentFileName, type RelatedKind } from "../domain/reminders.js";
import { withinTransaction, type ServiceContext, type Tx } from "./context.js";
import { recordEvents } from "./events.js";
import { invoicePdf } from "./invoices.js";
import { orderPdf } from "./orders.js";
import { creditNotePdf } from "./credit-notes.js";
import { startIntervalWorker, type IntervalWorker } from "../infra/interval-worker.js";
import { mergeTaxAgency, type SubmissionKind } from "./tax-agency-state.js";
import { EXCHANGE_MESSAGE_KIND } from "./sii-exchange.js";
import { DUNNING_MESSAGE_KIND, dunningPayLink } from "./dunning-mail.js";
import { PORTAL_LINK_PLACEHOLDER, escapeHtml } from "../domain/dunning-mail.js";

export interface OutboxDeps {
  prisma: PrismaClient;
  /** null when SMTP_URL is unset: nothing is sent */
  mailer: Mailer | null;
  logger: Logger;
  settings: AppSettings;
}

export type AttachmentKind = Exclude<RelatedKind, "payment">;

export interface DeliveryReport {
  claimed: number;
  sent: number;
  /** failed this time, retried later */
  retrying: number;
  /** failed for the last time (status `failed`) */
  failed: number;
}

const EMPTY_REPORT: DeliveryReport = { claimed: 0, sent: 0, retrying: 0, failed: 0 };

/** A message's claim: the attempt it is on (the guard of the outcome's update). */
export interface Claim {
  id: string;
  attempts: number;
}

/**
 * The columns that write a new `pending` message already claimed for its first attempt by the
 * writer (the request), so no worker sends it meanwhile; if the writer dies before sending, the
 * lease runs out and a worker retries it.
 */
export function claimedOnCreate(now: Date): { status: "pending"; attempts: number; nextAttemptAt: Date } {
  return { status: "pending", attempts: 1, nextAttemptAt: new Date(now.getTime() + CLAIM_LEASE_MS) };
}

/**
 * Claims up to `limit` due `pending` messages: attempts + 1 and nextAttemptAt = now + lease, in
 * one statement. Rows another worker holds are skipped.
 */
async function claim(prisma: PrismaClient, now: Date, limit: number): Promise<Claim[]> {
  const lease = new Date(now.getTime() + CLAIM_LEASE_MS);
  const rows = await prisma.$queryRaw<{ id: string; attempts: number }[]>`
        UPDATE "OutboxMessage" SET "attempts" = "attempts" + 1, "nextAttemptAt" = ${lease}::timestamptz
        WHERE "id" IN (
          SELECT "id" FROM "OutboxMessage"
          WHERE "status" = 'pending' AND "nextAttemptAt" <= ${now}::timestamptz
          ORDER BY "nextAttemptAt", "id"
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING "id", "attempts"`;
  return rows.map((r) => ({ id: r.id, attempts: Number(r.attempts) }));
}

/** The use-case context of the organization and mode a message belongs to (to render its document). */
function ownerContext(
  deps: OutboxDeps,
  owner: { organizationId: string; testMode: boolean; userEmail: string },
  now: Date,
): ServiceContext {
  return {
    prisma: deps.prisma,
    auth: { organizationId: owner.organizationId, testMode: owner.testMode, userEmail: owner.userEmail, apiKeyId: "" },
    now: () => now,
    settings: deps.settings,
    baseUrl: "",
  };
}

/**
 * The PDF of `kind`/`id` as an attachment, rendered now. Undefined when the document no longer
 * exists (a draft deleted after the reminder): the message then goes without it.
 */
export async function renderAttachment(
  ctx: ServiceContext,
  kind: AttachmentKind,
  id: string,
): Promise<MailAttachment | undefined> {
  const where = { id, organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode };
  const select = { documentTypeId: true, number: true } as const;
  const doc =
    kind === "invoice"
      ? await ctx.prisma.invoice.findFirst({ where, select })
      : kind === "order"
        ? await ctx.prisma.order.findFirst({ where, select })
        : await ctx.prisma.creditNote.findFirst({ where, select });
  if (!doc) return undefined;
  try {
    const content =
      kind === "invoice"
        ? await invoicePdf(ctx, id)
        : kind === "order"
          ? await orderPdf(ctx, id)
          : await creditNotePdf(ctx, id);
    return {
      filename: attachmentFileName(kind, doc.documentTypeId, doc.number),
      content,
      contentType: "application/pdf",
    };
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

type Outcome = "sent" | "retrying" | "failed" | "skipped";

/** reminder.sent or reminder.failed of `reminder` (its organization and mode), in the outcome's transaction `tx`. */
async function recordReminderEvent(
  deps: OutboxDeps,
  tx: Tx,
  reminder: { id: string; organizationId: string; testMode: boolean; userEmail: string },
  type: "reminder.sent" | "reminder.failed",
  now: Date,
): Promise<void> {
  const ctx = withinTransaction(ownerContext(deps, reminder, now), tx);
  await recordEvents(ctx, type, "reminder", [reminder.id]);
}

/** The message `id` with what sending it needs of its reminder (null when gone: another process's cleanup). */
function loadMessage(prisma: PrismaClient, id: string) {
  return prisma.outboxMessage.findUnique({
    where: { id },
    include: { reminder: { select: { id: true, organizationId: true, testMode: true, userEmail: true } } },
  });
}

/** An outbox message as loadMessage reads it. */
type LoadedMessage = NonNullable<Awaited<ReturnType<typeof loadMessage>>>;

/** The guard of an outcome's update: the claim is ours while the message's status and attempts are unchanged. */
type ClaimGuard = { id: string; status: "pending"; attempts: number };

/** The fields of a message's log lines: the message, its reminder, the attempt. */
type DeliveryLog = { outboxMessage: string; reminder: string | null; attempt: number };

/**
 * Sends one claimed message and records the outcome (guarded by the claim's attempt count): `sent`, or on any
 * failure (rendering, the pay link, a missing file, SMTP, the outcome's own update) `retrying` or `failed` as
 * afterFailure says; `skipped` when the message is gone. Throws only when reading the message or recording a
 * failure fails (the lease then lets another attempt retry it).
 */
async function sendClaimed(deps: OutboxDeps, claimed: Claim, now: Date): Promise<Outcome> {
  const message = await loadMessage(deps.prisma, claimed.id);
  if (!message) return "skipped";
  const log: DeliveryLog = { outboxMessage: message.id, reminder: message.reminderId, attempt: claimed.attempts };
  // the claim is ours while status and attempts are unchanged
  const mine: ClaimGuard = { id: message.id, status: "pending", attempts: claimed.attempts };
  try {
    if (!deps.mailer) throw new Error("no SMTP server configured (SMTP_URL)"); // not reached: callers return early
    const attachments = await mailAttachments(deps, message, { now, log });
    const { text, html } = await withPayLink(deps, message, now);
    const result = await deps.mailer.send({
      from: deps.settings.mailFrom,
      to: message.recipients,
      bcc: message.bcc.length ? message.bcc : undefined,
      replyTo: message.reminder?.userEmail || undefined,
      subject: message.subject,
      text,
      html: html ?? undefined,
      attachments,
    });
    const note = result.rejected.length
      ? `accepted by ${result.accepted.length}; rejected: ${result.rejected.join(", ")}`
      : null;
    await recordSent(deps, { message, mine, now, note });
    deps.logger.info(
      { ...log, messageId: result.messageId, recipients: result.accepted.length, rejected: result.rejected },
      "mail sent",
    );
    return "sent";
  } catch (e) {
    return recordFailure(deps, { message, mine, now, log, error: e });
  }
}

/** The use-case context of the message's organization and mode (its reminder's, with its user), at `now`. */
function messageOwner(deps: OutboxDeps, message: LoadedMessage, now: Date): ServiceContext {
  return ownerContext(
    deps,
    message.reminder ?? { organizationId: message.organizationId, testMode: message.testMode ?? false, userEmail: "" },
    now,
  );
}

/**
 * The message's attachments, rendered or read now, in this order: its document's PDF (left out, with a warning,
 * when the document no longer exists), a dunning e-mail's invoices' PDFs, its stored files (an Error when one is
 * missing).
 */
async function mailAttachments(
  deps: OutboxDeps,
  message: LoadedMessage,
  { now, log }: { now: Date; log: DeliveryLog },
): Promise<MailAttachment[]> {
  const attachments: MailAttachment[] = [];
  if (message.attachmentKind && message.attachmentId) {
    const attachment = await renderAttachment(
      messageOwner(deps, message, now),
      message.attachmentKind as AttachmentKind,
      message.attachmentId,
    );
    if (attachment) attachments.push(attachment);
    else
      deps.logger.warn(
        { ...log, attachment: `${message.attachmentKind} ${message.attachmentId}` },
        "attachment's document no longer exists; sending without it",
      );
  }
  // a dunning e-mail's invoices (services/dunning-mail.ts): their PDFs as they are now
  for (const invoiceId of message.invoiceIds) {
    const attachment = await renderAttachment(messageOwner(deps, message, now), "invoice", invoiceId);
    if (attachment) attachments.push(attachment);
  }
  if (message.files.length) {
    // stored files attached as they are (the exchange's EnvioDTE, services/sii-exchange.ts)
    const stored = await deps.prisma.storedFile.findMany({
      where: { name: { in: message.files }, organizationId: message.organizationId },
      select: { name: true, content: true, contentType: true },
    });
    for (const name of message.files) {
      const file = stored.find((f) => f.name === name);
      if (!file) throw new Error(`the attached file ${name} is missing`);
      attachments.push({ filename: name, content: Buffer.from(file.content), contentType: file.contentType });
    }
  }
  return attachments;
}

/** The message's text and HTML, a dunning e-mail's with its portal pay link made now (valid DUNNING_LINK_DAYS). */
async function withPayLink(
  deps: OutboxDeps,
  message: LoadedMessage,
  now: Date,
): Promise<{ text: string; html: string | null }> {
  let { body: text, html } = message;
  if (message.kind === DUNNING_MESSAGE_KIND && message.customerId) {
    // the pay link is made now, so its key is never stored and it works DUNNING_LINK_DAYS from this send
    const link = await dunningPayLink(messageOwner(deps, message, now), message.customerId, message.invoiceIds);
    text = text.replaceAll(PORTAL_LINK_PLACEHOLDER, link);
    html = html?.replaceAll(PORTAL_LINK_PLACEHOLDER, escapeHtml(link)) ?? null;
  }
  return { text, html };
}

/**
 * Records a send in one transaction, if the claim is still ours: `sent` at `now` with `note` (the rejected
 * recipients) as lastError; an exchange e-mail's sending on its document; reminder.sent.
 */
async function recordSent(
  deps: OutboxDeps,
  sent: { message: LoadedMessage; mine: ClaimGuard; now: Date; note: string | null },
): Promise<void> {
  const { message, mine, now, note } = sent;
  await deps.prisma.$transaction(async (tx) => {
    const { count } = await tx.outboxMessage.updateMany({
      where: mine,
      data: { status: "sent", sentAt: now, lastError: note },
    });
    if (count && message.kind === EXCHANGE_MESSAGE_KIND && message.attachmentKind && message.attachmentId) {
      await mergeTaxAgency(tx, message.attachmentKind as SubmissionKind, message.attachmentId, {
        exchange_sent_at: now.toISOString(),
      });
    }
    if (count && message.reminder) await recordReminderEvent(deps, tx, message.reminder, "reminder.sent", now);
  });
}

/**
 * Records a failed attempt in one transaction, if the claim is still ours: lastError (2,000 characters at most) and
 * the next attempt after the backoff, or `failed` after the last attempt, which an exchange e-mail's document and
 * reminder.failed say too; logs it. The outcome: `retrying` or `failed`.
 */
async function recordFailure(
  deps: OutboxDeps,
  failure: { message: LoadedMessage; mine: ClaimGuard; now: Date; log: DeliveryLog; error: unknown },
): Promise<Outcome> {
  const { message, mine, now, log } = failure;
  const error = failure.error instanceof Error ? failure.error.message : String(failure.error);
  const next = afterFailure(mine.attempts, now);
  await deps.prisma.$transaction(async (tx) => {
    const { count } = await tx.outboxMessage.updateMany({
      where: mine,
      data: { status: next.status, nextAttemptAt: next.nextAttemptAt, lastError: error.slice(0, 2000) },
    });
    // an exchange e-mail that failed for good says so on its document
    if (
      count &&
      next.status === "failed" &&
      message.kind === EXCHANGE_MESSAGE_KIND &&
      message.attachmentKind &&
      message.attachmentId
    ) {
      await mergeTaxAgency(tx, message.attachmentKind as SubmissionKind, message.attachmentId, {
        exchange_error: `delivery failed for good: ${error.slice(0, 500)}`,
      });
    }
    if (count && next.status === "failed" && message.reminder)
      await recordReminderEvent(deps, tx, message.reminder, "reminder.failed", now);
  });
  if (next.status === "failed")
    deps.logger.error(
      { ...log, err: error },
      "mail delivery failed for good; the message stays in the outbox as failed",
    );
  else
    deps.logger.warn(
      { ...log, err: error, nextAttemptAt: next.nextAttemptAt.toISOString() },
      "mail delivery failed; will retry",
    );
  return next.status === "failed" ? "failed" : "retrying";
}

function tally(report: DeliveryReport, outcome: Outcome): DeliveryReport {
  if (outcome === "skipped") return report;
  return { ...report, [outcome]: report[outcome] + 1 };
}

/**
 * Sends a message the caller has claimed (written with `claimedOnCreate`): the request's
 * immediate attempt after commit. Delivery failures are recorded, never thrown.
 */
export async function deliverClaimed(
  deps: OutboxDeps,
  claimed: Claim,
  now: Date = new Date(),
): Promise<DeliveryReport> {
  if (!deps.mailer) return { ...EMPTY_REPORT };
  return tally({ ...EMPTY_REPORT, claimed: 1 }, await sendClaimed(deps, claimed, now));
}

/**
 * Delivers every message due at `now` (nothing without a Mailer), in batches of `batchSize` (at most `maxBatches` per
 * call so one call stays bounded). Safe to run in several processes at once. An aborted `signal` (the
 * server stopping) ends the call after the batch being sent.
 */
export async function deliverDueMessages(
  deps: OutboxDeps,
  now: Date = new Date(),
  { batchSize = 20, maxBatches = 10, signal }: { batchSize?: number; maxBatches?: number; signal?: AbortSignal } = {},
): Promise<DeliveryReport> {
  let report = { ...EMPTY_REPORT };
  if (!deps.mailer) return report;
  for (let batch = 0; batch < maxBatches && !signal?.aborted; batch++) {
    const claimed = await claim(deps.prisma, now, batchSize);
    report.claimed += claimed.length;
    for (const c of claimed) report = tally(report, await sendClaimed(deps, c, now));
    if (claimed.length < batchSize) break;
  }
  return report;
}

export type OutboxWorker = IntervalWorker;

/** Runs `deliverDueMessages` every `intervalMs` (one round at a time; the timer does not hold the process open). */
export function startOutboxWorker(deps: OutboxDeps, intervalMs: number): OutboxWorker {
  return startIntervalWorker(
    (signal) =>
      deliverDueMessages(deps, new Date(), { signal })
        .then((r) => r.claimed && deps.logger.info({ ...r }, "outbox round"))
        .catch((e) => deps.logger.error({ err: e }, "outbox round failed")),
    intervalMs,
  );
}
