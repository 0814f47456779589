/**
 * The dunning e-mail (docs/dunning.md "The e-mail"): what a campaign's attempt sends the customer when something is
 * still due after it. Pure: services/dunning-mail.ts gathers the facts and queues the message; the outbox replaces
 * PORTAL_LINK_PLACEHOLDER with a portal link made when the message is sent (services/outbox.ts).
 *
 * The message, in the portal's language (Spanish for customers of Spanish-speaking countries, else English:
 * domain/portal.ts `portalLocale`), under the organization's business name and colours:
 * - the overdue invoices, oldest due date first, each with its due date and what is due, and the total;
 * - the cards the attempt tried: a hard decline says that card will not be charged again, a soft one that the
 *   card will be tried again on the next attempt's date;
 * - the link that opens those invoices in the customer portal, ready to pay, and how many days it works;
 * - on the run's last attempt, the final action the campaign took.
 *
 * Worked example (es, CLP): invoices "Factura electrónica 12" due 2026-11-30 with 119000 due and "Factura
 * electrónica 15" due 2026-12-31 with 59500 due; a card Visa 0341 declined `insufficient_funds` (soft), next try
 * 2027-01-03: subject "Acme: tienes 2 facturas vencidas por CLP 178.500", the text lists "Factura electrónica 12,
 * vencida el 30-11-2026: CLP 119.000" and says "Intentaremos cobrar de nuevo tu tarjeta Visa terminada en 0341 el
 * 03-01-2027." (test/domain/dunning-mail.test.ts).
 */
import type { FinalAction } from "./dunning.js";
import { formatMoney } from "./format-money.js";
import type { CurrencyUnit } from "./money.js";
import type { PortalColors, PortalLocale } from "./portal.js";

/** Where the body holds the portal link; the outbox puts a fresh link there when it sends the message. */
export const PORTAL_LINK_PLACEHOLDER = "{{portal_link}}";

/** What an attempt records about its e-mail (REST `email` of a dunning attempt). */
export const ATTEMPT_EMAILS = ["queued", "off", "no_address", "not_needed"] as const;
export type AttemptEmail = (typeof ATTEMPT_EMAILS)[number];

/** An overdue invoice as the e-mail lists it. */
export interface DunningMailInvoice {
  /** the document's name and number, as its PDF heads it, e.g. "Factura electrónica N° 12" */
  label: string;
  /** yyyy-mm-dd */
  dueDate: string;
  /** what is due, a decimal in the currency's unit */
  amountDue: string;
}

/** A card the attempt charged and that declined. */
export interface DunningMailCard {
  /** e.g. "visa"; null when the gateway gave none */
  brand: string | null;
  last4: string | null;
  /** the decline code, e.g. insufficient_funds */
  failureCode: string | null;
  /** hard: never charged again in this run; soft: tried again at the next attempt */
  kind: "hard" | "soft";
}

/** Everything the e-mail says. */
export interface DunningMailFacts {
  locale: PortalLocale;
  /** the organization's business name (its name when the branding has none) */
  businessName: string;
  /** the customer's name, null when unknown */
  customerName: string | null;
  currency: CurrencyUnit;
  invoices: readonly DunningMailInvoice[];
  /** the sum of the invoices' amounts due */
  totalDue: string;
  declinedCards: readonly DunningMailCard[];
  /** yyyy-mm-dd of the next attempt; null after the last one */
  nextAttemptOn: string | null;
  /** the final action taken after this attempt (the run's last), else null */
  finalAction: FinalAction | null;
  /** how many days the link works (DUNNING_LINK_DAYS) */
  linkDays: number;
  /** readable branding colours (domain/portal.ts `portalColors`) */
  colors: PortalColors;
}

/** A rendered message: subject, plain text and HTML, both bodies holding PORTAL_LINK_PLACEHOLDER once. */
export interface DunningMail {
  subject: string;
  text: string;
  html: string;
}

/** yyyy-mm-dd as the language writes dates: 30-11-2026 (es), 2026-11-30 (en, ISO). */
export function mailDate(date: string, locale: PortalLocale): string {
  return locale === "es" ? date.split("-").reverse().join("-") : date;
}

/**
 * An amount with its currency code: Chilean separators in Spanish (CLP 178.500, USD 1.234,50) and English ones in
 * English (CLP 178,500, USD 1,234.50).
 */
export function mailMoney(amount: string, currency: CurrencyUnit, locale: PortalLocale): string {
  const es = formatMoney(amount, currency);
  return locale === "es" ? es : es.replace(/[.,]/g, (c) => (c === "." ? "," : "."));
}

const FINAL_ACTION_TEXT: Record<PortalLocale, Record<Exclude<FinalAction, "none">, string>> = {
  es: {
    pause_subscriptions: "Como las facturas siguen impagas, pausamos tus suscripciones asociadas.",
    cancel_subscriptions: "Como las facturas siguen impagas, cancelamos tus suscripciones asociadas.",
    mark_uncollectible: "Como las facturas siguen impagas, las registramos como incobrables; aún puedes pagarlas.",
  },
  en: {
    pause_subscriptions: "As the invoices are still unpaid, we paused the subscriptions they belong to.",
    cancel_subscriptions: "As the invoices are still unpaid, we cancelled the subscriptions they belong to.",
    mark_uncollectible: "As the invoices are still unpaid, we recorded them as uncollectible; you can still pay them.",
  },
};

function cardName(card: DunningMailCard, locale: PortalLocale): string {
  const brand = card.brand ? card.brand.charAt(0).toUpperCase() + card.brand.slice(1) : "";
  const last4 = card.last4 ?? "????";
  return locale === "es"
    ? `tu tarjeta ${brand ? `${brand} ` : ""}terminada en ${last4}`
    : `your ${brand ? `${brand} ` : ""}card ending in ${last4}`;
}

/** The sentences about the declined cards and the final action, in order. */
function notices(facts: DunningMailFacts): string[] {
  const { locale } = facts;
  const es = locale === "es";
  const out: string[] = [];
  for (const card of facts.declinedCards) {
    const name = cardName(card, locale);
    const code = card.failureCode ?? (locale === "es" ? "rechazo" : "declined");
    const declined = es
      ? `El cobro a ${name} fue rechazado (${code}).`
      : `The charge to ${name} was declined (${code}).`;
    if (card.kind === "hard")
      out.push(
        es
          ? `El cobro a ${name} fue rechazado (${code}) y no volveremos a intentarlo con esa tarjeta: ` +
              "paga con otro medio en el enlace."
          : `The charge to ${name} was declined (${code}) and we will not try that card again: ` +
              "please pay another way with the link.",
      );
    else if (facts.nextAttemptOn) {
      const on = mailDate(facts.nextAttemptOn, locale);
      out.push(
        es
          ? `${declined} Intentaremos cobrar de nuevo ${name} el ${on}.`
          : `${declined} We will try ${name} again on ${on}.`,
      );
    } else out.push(declined);
  }
  if (facts.finalAction && facts.finalAction !== "none") out.push(FINAL_ACTION_TEXT[locale][facts.finalAction]);
  return out;
}

function invoiceLine(invoice: DunningMailInvoice, facts: DunningMailFacts): string {
  const { locale, currency } = facts;
  const due = mailDate(invoice.dueDate, locale);
  const amount = mailMoney(invoice.amountDue, currency, locale);
  return locale === "es" ? `${invoice.label}, vencida el ${due}: ${amount}` : `${invoice.label}, due ${due}: ${amount}`;
}

/** The subject: the business, how many invoices and the total ("Acme: tienes 2 facturas vencidas por CLP 178.500"). */
export function dunningSubject(facts: DunningMailFacts): string {
  const total = mailMoney(facts.totalDue, facts.currency, facts.locale);
  const n = facts.invoices.length;
  if (facts.locale === "es")
    return `${facts.businessName}: tienes ${n === 1 ? "1 factura vencida" : `${n} facturas vencidas`} por ${total}`;
  return `${facts.businessName}: ${n === 1 ? "1 overdue invoice" : `${n} overdue invoices`} for ${total}`;
}

/** The plain-text body (the link as PORTAL_LINK_PLACEHOLDER on a line of its own). */
export function dunningText(facts: DunningMailFacts): string {
  const { locale } = facts;
  const total = mailMoney(facts.totalDue, facts.currency, locale);
  const es = locale === "es";
  const said = notices(facts);
  const lines = [
    es
      ? `Hola${facts.customerName ? ` ${facts.customerName}` : ""}:`
      : `Hello${facts.customerName ? ` ${facts.customerName}` : ""},`,
    "",
    es
      ? `Según nuestros registros, estas facturas de ${facts.businessName} están vencidas:`
      : `According to our records, these invoices from ${facts.businessName} are overdue:`,
    "",
    ...facts.invoices.map((i) => `- ${invoiceLine(i, facts)}`),
    "",
    es ? `Total por pagar: ${total}` : `Total due: ${total}`,
    ...(said.length ? ["", ...said] : []),
    "",
    es
      ? `Puedes pagarlas en línea (el enlace funciona ${facts.linkDays} días):`
      : `You can pay them online (the link works for ${facts.linkDays} days):`,
    PORTAL_LINK_PLACEHOLDER,
    "",
    es
      ? "Adjuntamos las facturas en PDF. Si ya pagaste, no consideres este mensaje."
      : "The invoices are attached as PDFs. If you have already paid, please disregard this message.",
    "",
    facts.businessName,
  ];
  return lines.join("\n");
}

/** `text` safe inside HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** The HTML body: the same content under the business's colours, the link as a button. */
export function dunningHtml(facts: DunningMailFacts): string {
  const { locale, colors } = facts;
  const es = locale === "es";
  const e = escapeHtml;
  const cell = (align: "left" | "right") => `style="padding:4px 8px;text-align:${align}"`;
  const rows = facts.invoices
    .map(
      (i) =>
        `<tr><td ${cell("left")}>${e(i.label)}</td><td ${cell("left")}>${e(mailDate(i.dueDate, locale))}</td>` +
        `<td ${cell("right")}>${e(mailMoney(i.amountDue, facts.currency, locale))}</td></tr>`,
    )
    .join("");
  const head = es ? ["Factura", "Vencimiento", "Por pagar"] : ["Invoice", "Due date", "Amount due"];
  const greeting = es
    ? `Hola${facts.customerName ? ` ${facts.customerName}` : ""}:`
    : `Hello${facts.customerName ? ` ${facts.customerName}` : ""},`;
  const intro = es
    ? `Según nuestros registros, estas facturas de ${facts.businessName} están vencidas:`
    : `According to our records, these invoices from ${facts.businessName} are overdue:`;
  const total = `${es ? "Total por pagar" : "Total due"}: ${mailMoney(facts.totalDue, facts.currency, locale)}`;
  const button = es ? "Pagar en línea" : "Pay online";
  const validity = es ? `El enlace funciona ${facts.linkDays} días.` : `The link works for ${facts.linkDays} days.`;
  const header = head.map((h, k) => `<th ${cell(k === 2 ? "right" : "left")}>${e(h)}</th>`).join("");
  const page = `margin:0;background:${colors.background};color:${colors.text};font-family:sans-serif`;
  const buttonStyle =
    `display:inline-block;padding:10px 16px;background:${colors.asset};color:${colors.onAsset};` +
    "text-decoration:none;border-radius:4px";
  return [
    `<!doctype html><html lang="${locale}"><body style="${page}">`,
    `<div style="max-width:600px;margin:0 auto;padding:24px">`,
    `<h1 style="font-size:20px">${e(facts.businessName)}</h1>`,
    `<p>${e(greeting)}</p><p>${e(intro)}</p>`,
    `<table style="border-collapse:collapse"><thead><tr>${header}</tr></thead><tbody>${rows}</tbody></table>`,
    `<p><strong>${e(total)}</strong></p>`,
    ...notices(facts).map((n) => `<p>${e(n)}</p>`),
    `<p><a href="${PORTAL_LINK_PLACEHOLDER}" style="${buttonStyle}">${e(button)}</a></p>`,
    `<p>${e(validity)}</p>`,
    `</div></body></html>`,
  ].join("\n");
}

/** The whole message. */
export function dunningMail(facts: DunningMailFacts): DunningMail {
  return { subject: dunningSubject(facts), text: dunningText(facts), html: dunningHtml(facts) };
}

/**
 * The portal address that opens `invoiceIds` ready to pay, from the portal link of a session key (domain/portal.ts
 * `portalLink`): one invoice opens its payment page (`#/invoice/<id>`), several open the list of those invoices
 * (`#/pay/<id>,<id>`).
 */
export function payLink(portalLink: string, invoiceIds: readonly string[]): string {
  if (invoiceIds.length === 1) return `${portalLink}#/invoice/${invoiceIds[0]}`;
  return `${portalLink}#/pay/${invoiceIds.join(",")}`;
}
