/**
 * Events (docs/webhooks.md): the types a change writes, what an `*.updated` event's
 * `previous_attributes` hold, and which endpoints an event goes to. Pure rules; services/events.ts
 * writes the rows.
 */

/**
 * Every event type, with what it reports (docs/webhooks.md "Event types"). `data.object` is the
 * resource as the REST API prints it (its retrieve answer) at the moment of the change.
 */
export const EVENT_TYPES = {
  "customer.created": "a customer was created",
  "customer.updated": "a customer's fields changed (previous_attributes: their old values)",
  "invoice.created": "an invoice was created (a draft; the billing run's and test clocks' invoices too)",
  "invoice.updated": "a draft invoice was changed (previous_attributes: the old values)",
  "invoice.deleted": "a draft invoice was deleted (data.object: the invoice as it was)",
  "invoice.finalized": "an invoice was finalized: numbered and issued, it never changes again",
  "invoice.paid": "nothing is left due on a finalized invoice (payments and credit notes cover its total)",
  "invoice.payment_failed": "a charge of a payment of the invoice was declined",
  "invoice.marked_uncollectible":
    "a finalized invoice with something due was marked uncollectible (a later payment still counts)",
  "invoice.payment_overdue":
    "a finalized invoice's due date passed with something due (written once, by the dunning worker's sweep the " +
    "day after the due date)",
  "order.created": "an order (dispatch guide) was created",
  "order.updated": "a draft order was changed (previous_attributes: the old values)",
  "order.deleted": "a draft order was deleted (data.object: the order as it was)",
  "order.finalized": "an order was finalized",
  "credit_note.created": "a credit note (or debit note) was created",
  "credit_note.deleted": "a draft credit note was deleted (data.object: the credit note as it was)",
  "credit_note.finalized": "a credit note (or debit note) was finalized",
  "payment.created": "a payment was created",
  "payment.succeeded": "a payment's charge succeeded",
  "payment.failed": "a payment's charge was declined; the payment awaits another payment method",
  "payment.canceled": "a payment was canceled",
  "subscription.created": "a subscription was created",
  "subscription.updated":
    "a subscription changed: its plans, quantities or fields, a renewal (a new period), a scheduled change " +
    "(previous_attributes: the old values)",
  "subscription.past_due":
    "a subscription's latest cycle invoice became overdue or its renewal charge was declined: status past_due " +
    "(active again, with subscription.updated, once that invoice is paid or marked uncollectible)",
  "subscription.paused": "a subscription was paused",
  "subscription.resumed": "a paused subscription was resumed",
  "subscription.canceled": "a subscription was canceled (now, or at the end of its period when that came)",
  "dunning.attempt":
    "a dunning campaign made an attempt on a customer's overdue invoices (data.object: the dunning attempt, each " +
    "invoice's charge and what is still due)",
  "dunning.finished":
    "a customer's dunning run ended (data.object: its last attempt): everything paid (outcome paid), or the last " +
    "attempt was made and the campaign's final action applied (final_action)",
  "tax_document.accepted": "SII accepted a DTE (data.object: the invoice, order or credit note)",
  "tax_document.rejected": "SII rejected a DTE (data.object: the invoice, order or credit note)",
  "swap.received": "a supplier's DTEs were received (data.object: the swap)",
  "reminder.sent": "a reminder e-mail was delivered to the mail server",
  "reminder.failed": "a reminder e-mail could not be delivered and will not be retried",
  "webhook_endpoint.disabled":
    "a webhook endpoint was disabled: it answered 410 Gone, or every delivery failed for 5 days",
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** The event types, in the order above. */
export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/** How long events are kept, as the API's descriptions say it. */
export const EVENT_RETENTION_NOTE =
  "Events are kept EVENT_RETENTION_DAYS days (30 by default), then deleted with their webhook deliveries.";

/** An endpoint's `enabled_events` entry that matches every type. */
export const ALL_EVENTS = "*";

/** True when `name` is an event type. */
export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}

/** True when an endpoint with `enabledEvents` (types, or `*`) receives events of `type`. */
export function receivesEvent(enabledEvents: readonly string[], type: string): boolean {
  return enabledEvents.includes(ALL_EVENTS) || enabledEvents.includes(type);
}

/** The kinds of resource an event's `data.object` can be, named as REST names them. */
export type EventObjectKind =
  | "customer"
  | "invoice"
  | "order"
  | "credit_note"
  | "payment"
  | "subscription"
  | "swap"
  | "reminder"
  | "webhook_endpoint"
  | "dunning_attempt";

/** What each family of event types carries as `data.object`, by the part of the type before its dot. */
const OBJECT_KINDS_OF: Record<string, readonly EventObjectKind[]> = {
  customer: ["customer"],
  invoice: ["invoice"],
  order: ["order"],
  credit_note: ["credit_note"],
  payment: ["payment"],
  subscription: ["subscription"],
  swap: ["swap"],
  reminder: ["reminder"],
  webhook_endpoint: ["webhook_endpoint"],
  dunning: ["dunning_attempt"],
  // SII's verdict on a DTE: the document it was about
  tax_document: ["invoice", "order", "credit_note"],
};

/**
 * The kinds of resource an event of `type` carries as `data.object` (docs/webhooks.md "Event types"): one, or for
 * `tax_document.*` the three documents a DTE can be. Example: `invoice.paid` -> `["invoice"]`.
 */
export function eventObjectKinds(type: EventType): readonly EventObjectKind[] {
  const kinds = OBJECT_KINDS_OF[type.slice(0, type.indexOf("."))];
  if (!kinds) throw new Error(`event type ${type} has no object kind in OBJECT_KINDS_OF`);
  return kinds;
}

/** A JSON value as the REST API prints it (decimals kept as exact text by the printer). */
export type PrintedValue = unknown;

/**
 * `previous_attributes` of an `*.updated` event: each top-level field of `before` whose printed
 * value differs in `after`, with its value in `before` (a nested object or list whole, as Stripe
 * does). `isEqual` compares two printed values (JSON text comparison by the caller: exact decimals).
 * Empty when nothing changed.
 *
 * Worked example: before `{"id": "cus_1", "name": "A", "email": "a@x.cl"}`, after
 * `{"id": "cus_1", "name": "B", "email": "a@x.cl"}` -> `{"name": "A"}`.
 */
export function previousAttributes(
  before: Record<string, PrintedValue>,
  after: Record<string, PrintedValue>,
  isEqual: (a: PrintedValue, b: PrintedValue) => boolean,
): Record<string, PrintedValue> {
  const previous: Record<string, PrintedValue> = {};
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key) || !isEqual(before[key], after[key])) previous[key] = before[key];
  }
  return previous;
}
