/**
 * The dunning e-mail (docs/dunning.md "The e-mail"): queued by an attempt in the attempt's own transaction
 * (services/dunning-attempts.ts), so an attempt and its message are written together or not at all, and once per
 * attempt across processes and crashes; sent by the outbox (services/outbox.ts), which attaches the invoices' PDFs
 * and puts a fresh portal link into the body when it sends (`dunningPayLink`): the link's secret key never rests in
 * the database, and the link works DUNNING_LINK_DAYS from the moment the message leaves.
 *
 * The words are domain/dunning-mail.ts's; this module reads the facts they need (the customer, the invoices still
 * due, the cards that declined, the organization's branding) and writes the OutboxMessage.
 */
import { randomUUID } from "node:crypto";
import type { Prisma } from "../infra/prisma/generated/client.js";
import { dunningMail, payLink, type AttemptEmail, type DunningMailCard } from "../domain/dunning-mail.js";
import type { AttemptInvoice, FinalAction } from "../domain/dunning.js";
import { isoDate } from "../domain/formats.js";
import { printedHeading, printedLabels } from "../domain/printed-labels.js";
import { portalColors, portalLink, portalLocale } from "../domain/portal.js";
import { sum, toDecimal, type Decimal } from "../domain/money.js";
import { tenant, type ServiceContext } from "./context.js";
import { createCustomerSession } from "./customer-sessions.js";
import { readSettings } from "./organization-settings.js";

/** The outbox `kind` of a dunning e-mail. */
export const DUNNING_MESSAGE_KIND = "dunning";

/** What the attempt knows when it queues its e-mail. */
export interface DunningMailRequest {
  customerId: string;
  currencyId: string;
  /** the campaign's send_email and bcc_emails */
  sendEmail: boolean;
  bcc: readonly string[];
  /** the attempt's entries (their charges and declines) */
  rows: readonly AttemptInvoice[];
  /** what is still due on each invoice after the attempt; those marked uncollectible are left out */
  stillDue: readonly { id: string; due: string; markedUncollectible: boolean }[];
  /** the next attempt's time; null after the run's last */
  nextAttemptAt: Date | null;
  finalAction: FinalAction | null;
  /**
   * true: the message waits in the outbox for a worker to send it (`pending`); false: no mailer is configured,
   * it is written `kept` and never sent (as reminders are without SMTP_URL)
   */
  sendsMail: boolean;
}

/** The invoices the e-mail lists: those with something due, in the attempt's order (oldest due date first). */
function dueInvoices(request: DunningMailRequest): { id: string; due: Decimal }[] {
  return request.stillDue
    .filter((i) => !i.markedUncollectible && toDecimal(i.due).greaterThan(0))
    .map((i) => ({ id: i.id, due: toDecimal(i.due) }));
}

/** The cards the attempt charged that declined, once each, with their brand and last four digits. */
async function declinedCards(txCtx: ServiceContext, rows: readonly AttemptInvoice[]): Promise<DunningMailCard[]> {
  const declined = rows.filter((r) => r.charge === "declined" && r.payment);
  if (declined.length === 0) return [];
  const payments = await txCtx.prisma.payment.findMany({
    where: { id: { in: declined.map((r) => r.payment!) } },
    select: { id: true, sourceId: true },
  });
  const sourceOf = new Map(payments.map((p) => [p.id, p.sourceId]));
  const sourceIds = [...new Set(payments.map((p) => p.sourceId).filter((s): s is string => !!s))];
  const sources = await txCtx.prisma.source.findMany({
    where: { id: { in: sourceIds } },
    select: { id: true, data: true },
  });
  const cards = new Map<string, DunningMailCard>();
  for (const row of declined) {
    const sourceId = sourceOf.get(row.payment!);
    if (!sourceId || cards.has(sourceId)) continue;
    const data = (sources.find((s) => s.id === sourceId)?.data ?? {}) as { brand?: unknown; last4?: unknown };
    cards.set(sourceId, {
      brand: typeof data.brand === "string" ? data.brand : null,
      last4: typeof data.last4 === "string" ? data.last4 : null,
      failureCode: row.failure_code,
      kind: row.decline_kind === "hard" ? "hard" : "soft",
    });
  }
  return [...cards.values()];
}

/** The business name and readable colours of the caller's organization and mode (the portal's branding). */
async function branding(txCtx: ServiceContext) {
  const settings = await readSettings(txCtx.prisma, tenant(txCtx));
  const { name } = await txCtx.prisma.organization.findUniqueOrThrow({
    where: { id: txCtx.auth.organizationId },
    select: { name: true },
  });
  return {
    businessName: settings.businessName || name,
    colors: portalColors(settings.colorBackground, settings.colorAsset),
  };
}

/**
 * Queues the attempt's e-mail in the attempt's transaction `txCtx` (its organization and mode) and says what became
 * of it: `not_needed` when nothing is left due, `off` when the campaign does not send e-mails, `no_address` when the
 * customer has no e-mail address (the campaign's blind copies alone do not make a message: the link is the
 * customer's), else `queued`: one OutboxMessage to the customer with the campaign's bcc, listing the invoices with
 * their PDFs attached at delivery.
 */
export async function queueDunningEmail(txCtx: ServiceContext, request: DunningMailRequest): Promise<AttemptEmail> {
  const invoices = dueInvoices(request);
  if (invoices.length === 0) return "not_needed";
  if (!request.sendEmail) return "off";
  const customer = await txCtx.prisma.customer.findUniqueOrThrow({
    where: { id: request.customerId },
    select: { email: true, name: true, countryId: true },
  });
  if (!customer.email) return "no_address";
  const [documents, currency, cards, brand] = await Promise.all([
    txCtx.prisma.invoice.findMany({
      where: { id: { in: invoices.map((i) => i.id) } },
      select: {
        id: true,
        number: true,
        numbering: true,
        dueDate: true,
        date: true,
        documentType: { select: { name: true, hasLocalFormat: true } },
      },
    }),
    txCtx.prisma.currency.findUniqueOrThrow({ where: { id: request.currencyId } }),
    declinedCards(txCtx, request.rows),
    branding(txCtx),
  ]);
  const locale = portalLocale(customer.countryId);
  const labels = printedLabels(locale);
  const byId = new Map(documents.map((d) => [d.id, d]));
  const mail = dunningMail({
    locale,
    businessName: brand.businessName,
    customerName: customer.name,
    currency: { id: currency.id, rounded: currency.rounded, decimals: currency.decimals },
    invoices: invoices.map((i) => {
      const doc = byId.get(i.id)!;
      // named as its PDF heads it (domain/printed-labels.ts printedHeading): "Factura electrónica N° 12", or a
      // regulated type numbered before SII set-up "Documento no tributario N° interno 3"
      const { title, numberLine } = printedHeading(
        {
          documentName: doc.documentType.name,
          number: doc.number,
          numbering: doc.numbering,
          hasLocalFormat: doc.documentType.hasLocalFormat,
        },
        labels,
      );
      return { label: `${title} ${numberLine}`, dueDate: isoDate(doc.dueDate ?? doc.date), amountDue: i.due.toFixed() };
    }),
    totalDue: sum(invoices.map((i) => i.due)).toFixed(),
    declinedCards: cards,
    nextAttemptOn: request.nextAttemptAt ? isoDate(request.nextAttemptAt) : null,
    finalAction: request.finalAction,
    linkDays: txCtx.settings.dunningLinkDays,
    colors: brand.colors,
  });
  await txCtx.prisma.outboxMessage.create({
    data: {
      id: randomUUID(),
      organizationId: txCtx.auth.organizationId,
      testMode: txCtx.auth.testMode,
      kind: DUNNING_MESSAGE_KIND,
      recipients: [customer.email],
      bcc: [...request.bcc],
      subject: mail.subject,
      body: mail.text,
      html: mail.html,
      customerId: request.customerId,
      invoiceIds: invoices.map((i) => i.id),
      status: request.sendsMail ? "pending" : "kept",
      // the outbox runs on the wall clock, whatever the customer's test clock says
      nextAttemptAt: new Date(),
    } satisfies Prisma.OutboxMessageUncheckedCreateInput,
  });
  return "queued";
}

/**
 * A new portal link for a dunning message's customer that opens `invoiceIds` ready to pay (domain/dunning-mail.ts
 * `payLink`), made when the message is sent: a customer session of the customer (in `ctx`'s organization and mode)
 * that works DUNNING_LINK_DAYS days from `ctx.now()`, returning to the portal itself (a dunning e-mail comes from no
 * page of the business). The link is absolute on PUBLIC_URL (`settings.publicUrl`), else http://localhost:3000.
 */
export async function dunningPayLink(ctx: ServiceContext, customerId: string, invoiceIds: readonly string[]) {
  const base = ctx.settings.publicUrl ?? "http://localhost:3000";
  const days = ctx.settings.dunningLinkDays;
  const { key } = await createCustomerSession(
    { ...ctx, settings: { ...ctx.settings, sessionTtlSeconds: days * 86_400 } },
    { customer: customerId, returnUrl: `${base}/portal/` },
  );
  return payLink(portalLink(base, key), invoiceIds);
}
