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
import { insertRows } from "../infra/sql/index.js";
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

/** The cards each attempt charged that declined, once each, with their brand and last four digits; two reads. */
async function declinedCards(
  txCtx: ServiceContext,
  attempts: readonly (readonly AttemptInvoice[])[],
): Promise<DunningMailCard[][]> {
  const declinedOf = (rows: readonly AttemptInvoice[]) => rows.filter((r) => r.charge === "declined" && r.payment);
  const paymentIds = attempts.flatMap((rows) => declinedOf(rows).map((r) => r.payment!));
  if (paymentIds.length === 0) return attempts.map(() => []);
  const payments = await txCtx.prisma.payment.findMany({
    where: { id: { in: paymentIds } },
    select: { id: true, sourceId: true },
  });
  const sourceOf = new Map(payments.map((p) => [p.id, p.sourceId]));
  const sourceIds = [...new Set(payments.map((p) => p.sourceId).filter((s): s is string => !!s))];
  const sources = await txCtx.prisma.source.findMany({
    where: { id: { in: sourceIds } },
    select: { id: true, data: true },
  });
  return attempts.map((rows) => {
    const cards = new Map<string, DunningMailCard>();
    for (const row of declinedOf(rows)) {
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
  });
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
 * their PDFs attached at delivery. The rules are queueDunningEmails', for one attempt.
 */
export async function queueDunningEmail(txCtx: ServiceContext, request: DunningMailRequest): Promise<AttemptEmail> {
  const [email] = await queueDunningEmails(txCtx, [request]);
  return email;
}

/**
 * queueDunningEmail for several attempts of `txCtx`'s organization and mode (the dunning attempts' page) with a few
 * statements whatever their number: the customers, invoices, currencies, declined cards and branding read once,
 * the messages written with one statement. What became of each e-mail, in input order.
 */
export async function queueDunningEmails(
  txCtx: ServiceContext,
  requests: readonly DunningMailRequest[],
): Promise<AttemptEmail[]> {
  const due = requests.map(dueInvoices);
  const wanted = requests.filter((r, k) => due[k].length > 0 && r.sendEmail);
  const customers = wanted.length
    ? await txCtx.prisma.customer.findMany({
        where: { id: { in: wanted.map((r) => r.customerId) } },
        select: { id: true, email: true, name: true, countryId: true },
      })
    : [];
  const customerOf = new Map(customers.map((c) => [c.id, c]));
  const emails: AttemptEmail[] = requests.map((r, k) => {
    if (due[k].length === 0) return "not_needed";
    if (!r.sendEmail) return "off";
    return customerOf.get(r.customerId)?.email ? "queued" : "no_address";
  });
  const queued = requests.filter((_, k) => emails[k] === "queued");
  if (queued.length === 0) return emails;
  const [documents, currencies, cards, brand] = await Promise.all([
    txCtx.prisma.invoice.findMany({
      where: { id: { in: queued.flatMap((r) => dueInvoices(r).map((i) => i.id)) } },
      select: {
        id: true,
        number: true,
        numbering: true,
        dueDate: true,
        date: true,
        documentType: { select: { name: true, hasLocalFormat: true } },
      },
    }),
    txCtx.prisma.currency.findMany({ where: { id: { in: [...new Set(queued.map((r) => r.currencyId))] } } }),
    declinedCards(
      txCtx,
      queued.map((r) => r.rows),
    ),
    branding(txCtx),
  ]);
  const facts = { documents: new Map(documents.map((d) => [d.id, d])), brand };
  // one statement of one JSON parameter (infra/sql/insert-rows.ts): the messages' bodies are most of the page's bytes
  await insertRows(
    txCtx.prisma,
    "OutboxMessage",
    queued.map((request, n) =>
      dunningMessage(txCtx, request, {
        ...facts,
        customer: customerOf.get(request.customerId)!,
        currency: currencies.find((c) => c.id === request.currencyId)!,
        cards: cards[n],
      }),
    ),
  );
  return emails;
}

/**
 * The OutboxMessage row of one queued dunning e-mail (as infra/sql/insert-rows.ts inserts it), its words from
 * domain/dunning-mail.ts.
 */
function dunningMessage(
  txCtx: ServiceContext,
  request: DunningMailRequest,
  facts: {
    customer: { email: string | null; name: string | null; countryId: string | null };
    currency: { id: string; rounded: boolean; decimals: number };
    documents: Map<string, MailDocument>;
    cards: DunningMailCard[];
    brand: Awaited<ReturnType<typeof branding>>;
  },
): Prisma.OutboxMessageCreateManyInput {
  const invoices = dueInvoices(request);
  const locale = portalLocale(facts.customer.countryId);
  const labels = printedLabels(locale);
  const { currency, brand } = facts;
  const mail = dunningMail({
    locale,
    businessName: brand.businessName,
    customerName: facts.customer.name,
    currency: { id: currency.id, rounded: currency.rounded, decimals: currency.decimals },
    invoices: invoices.map((i) => {
      const doc = facts.documents.get(i.id)!;
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
    declinedCards: facts.cards,
    nextAttemptOn: request.nextAttemptAt ? isoDate(request.nextAttemptAt) : null,
    finalAction: request.finalAction,
    linkDays: txCtx.settings.dunningLinkDays,
    colors: brand.colors,
  });
  const now = new Date();
  return {
    id: randomUUID(),
    organizationId: txCtx.auth.organizationId,
    testMode: txCtx.auth.testMode,
    kind: DUNNING_MESSAGE_KIND,
    recipients: [facts.customer.email!],
    bcc: [...request.bcc],
    subject: mail.subject,
    body: mail.text,
    html: mail.html,
    customerId: request.customerId,
    invoiceIds: invoices.map((i) => i.id),
    status: request.sendsMail ? "pending" : "kept",
    // the outbox runs on the wall clock, whatever the customer's test clock says
    nextAttemptAt: now,
    createdAt: now,
  };
}

/** What the e-mail names of an invoice (printed-labels.ts printedHeading) and its due date. */
interface MailDocument {
  number: number | null;
  numbering: string | null;
  dueDate: Date | null;
  date: Date;
  documentType: { name: string; hasLocalFormat: boolean };
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
