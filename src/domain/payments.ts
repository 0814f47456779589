/**
 * Payments (spec "Payment", "Payment (status)", "Limits"): the status machine and the limits of a
 * new payment. Pure; services/payments.ts applies them under row locks.
 *
 * Status moves (the spec names the states and leaves the moves open; these are ours):
 *
 * | from \ event            | attach_source           | start_charge | succeed   | decline                 | cancel   |
 * |-------------------------|-------------------------|--------------|-----------|-------------------------|----------|
 * | requires_payment_method | requires_payment_method | processing   | -         | -                       | canceled |
 * | processing              | -                       | -            | succeeded | requires_payment_method | canceled |
 * | succeeded               | -                       | -            | -         | -                       | -        |
 * | canceled                | -                       | -            | -         | -                       | -        |
 *
 * A processing payment can be canceled only while the customer is at a redirect checkout.
 *
 * - attach_source: authorize with a single-use source (paid later through the pay operation);
 * - start_charge: authorize with a reusable source (charged at once), or pay with a single-use
 *   source (the customer is sent to the gateway's checkout);
 * - succeed / decline: the gateway's answer; a decline keeps its reason on the payment;
 * - cancel: DELETE; a succeeded payment cannot be canceled (409), nor one whose charge is being
 *   answered by the gateway right now.
 * Any other move is a 409 `invalid_state`.
 */
import { FieldErrorCollector, InvalidStateError } from "./errors.js";
import { currencyScale, Decimal, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

export const PAYMENT_STATUSES = ["requires_payment_method", "processing", "succeeded", "canceled"] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export type PaymentEvent = "attach_source" | "start_charge" | "succeed" | "decline" | "cancel";

export const PAYMENT_MOVES: Record<PaymentStatus, Partial<Record<PaymentEvent, PaymentStatus>>> = {
  requires_payment_method: { attach_source: "requires_payment_method", start_charge: "processing", cancel: "canceled" },
  processing: { succeed: "succeeded", decline: "requires_payment_method", cancel: "canceled" },
  succeeded: {},
  canceled: {},
};

const WHY_NOT: Partial<Record<PaymentStatus, string>> = {
  succeeded: "it has succeeded",
  canceled: "it is canceled",
  processing: "a charge is in progress",
};

/**
 * The status after `event`, or InvalidStateError (409). `chargeInFlight`: the gateway is
 * answering a charge right now (a direct card charge), so the payment cannot be canceled until
 * it has answered; a redirect charge waiting for the customer can be canceled.
 */
export function paymentTransition(status: string, event: PaymentEvent, { chargeInFlight = false } = {}): PaymentStatus {
  const next = PAYMENT_MOVES[status as PaymentStatus]?.[event];
  if (!next || (event === "cancel" && status === "processing" && chargeInFlight)) {
    const action = {
      attach_source: "attach a source to",
      start_charge: "charge",
      succeed: "settle",
      decline: "decline",
      cancel: "cancel",
    }[event];
    throw new InvalidStateError(
      `Cannot ${action} a payment that ` +
        `is ${status}${WHY_NOT[status as PaymentStatus] ? `: ${WHY_NOT[status as PaymentStatus]}` : ""}`,
    );
  }
  return next;
}

/** Spec "Limits": a payment description has at most 256 characters. */
export const MAX_DESCRIPTION_LENGTH = 256;

/**
 * Checks the limits of a new payment (spec "Limits"), adding field errors:
 * `amount` positive and expressible in the currency (whole units for CLP, cents for USD);
 * `date` not before `today` (the organization's today); `description` at most 256 characters;
 * `currency` chargeable (`isChargeable`; CLF and the other reference currencies are not).
 */
export function checkPaymentLimits(
  input: { amount: DecimalInput | null | undefined; date: string; description?: string | null },
  currency: (CurrencyUnit & { isChargeable: boolean }) | null,
  today: string,
  errors: FieldErrorCollector,
): void {
  if (input.amount === null || input.amount === undefined) errors.add("amount", "is required");
  else {
    const amount = toDecimal(input.amount);
    if (!amount.isPositive() || amount.isZero()) errors.add("amount", "must be positive");
    else if (currency && amount.decimalPlaces() > currencyScale(currency)) {
      errors.add(
        "amount",
        currency.rounded
          ? `${currency.id} amounts are whole units`
          : `${currency.id} amounts have at most ${currencyScale(currency)} decimals`,
      );
    }
  }
  if (input.date < today) errors.add("date", `must not be before today (${today})`);
  if (input.description && input.description.length > MAX_DESCRIPTION_LENGTH) {
    errors.add("description", `must have at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  if (currency && !currency.isChargeable)
    errors.add("currency", `${currency.id} cannot be charged; chargeable currencies have is_chargeable true`);
}

/**
 * What is still to pay on an invoice: its total plus finalized debit notes minus finalized credit
 * notes minus succeeded payments, never below 0 (decimals in the invoice currency). Worked
 * example: total 2916, a finalized credit note of 1190 and a payment of 1000 -> 726 due; a further
 * payment of 726 settles it; a debit note of 595 then makes 595 due again.
 */
export function invoiceAmountDue(balance: {
  total: DecimalInput;
  credited: DecimalInput;
  debited: DecimalInput;
  paid: DecimalInput;
}): Decimal {
  const owed = toDecimal(balance.total).plus(toDecimal(balance.debited));
  return Decimal.max(owed.minus(toDecimal(balance.credited)).minus(toDecimal(balance.paid)), 0);
}

/**
 * An invoice's amounts from its documents (decimal strings in the invoice currency, plain digits): `paid` the sum of
 * `payments` (its succeeded payments), `credited` and `debited` the sums of `creditNotes` and `debitNotes` (its
 * finalized credit and debit notes), `due` invoiceAmountDue of them. Choosing which documents count is the caller's
 * (services/invoice-balances.ts sums the same in SQL for a batch). Worked example: total 2916, payments [1000],
 * credit notes [1190], no debit notes -> paid 1000, credited 1190, debited 0, due 726.
 */
export function invoiceAmounts(documents: {
  total: DecimalInput;
  payments: readonly DecimalInput[];
  creditNotes: readonly DecimalInput[];
  debitNotes: readonly DecimalInput[];
}): { paid: string; credited: string; debited: string; due: string } {
  const sum = (amounts: readonly DecimalInput[]) =>
    amounts.reduce<Decimal>((total, amount) => total.plus(toDecimal(amount)), new Decimal(0));
  const paid = sum(documents.payments);
  const credited = sum(documents.creditNotes);
  const debited = sum(documents.debitNotes);
  const due = invoiceAmountDue({ total: documents.total, credited, debited, paid });
  return { paid: paid.toFixed(), credited: credited.toFixed(), debited: debited.toFixed(), due: due.toFixed() };
}

/** An invoice's payment state (docs/dunning.md "Invoice payment state"; REST `payment_status`). */
export const INVOICE_PAYMENT_STATUSES = ["unpaid", "partially_paid", "paid", "uncollectible"] as const;
export type InvoicePaymentStatus = (typeof INVOICE_PAYMENT_STATUSES)[number];

/**
 * The payment state of an invoice, in this order:
 *
 * 1. a draft is `unpaid` (nothing can be paid on a draft, whatever its total);
 * 2. nothing due (`due` 0: payments and credit notes cover it, or its total is 0) is `paid`, even after it was
 *    marked uncollectible: a later payment still counts;
 * 3. marked uncollectible with something due is `uncollectible`;
 * 4. something paid (`paid` > 0) and something due is `partially_paid`;
 * 5. else `unpaid` (a credit note that lowers what is due is no payment).
 *
 * Worked examples (CLP): total 2916 finalized, nothing paid -> unpaid; 1000 paid (1916 due) -> partially_paid;
 * then marked uncollectible -> uncollectible; then 1916 paid (0 due) -> paid. A credit note of 2916 and no
 * payment -> paid (nothing is due); a credit note of 1000 and no payment -> unpaid.
 */
export function invoicePaymentStatus(invoice: {
  status: string;
  due: DecimalInput;
  paid: DecimalInput;
  markedUncollectible: boolean;
}): InvoicePaymentStatus {
  if (invoice.status === "draft") return "unpaid";
  if (!toDecimal(invoice.due).greaterThan(0)) return "paid";
  if (invoice.markedUncollectible) return "uncollectible";
  return toDecimal(invoice.paid).greaterThan(0) ? "partially_paid" : "unpaid";
}

/**
 * Marking an invoice uncollectible (REST `POST /v1/invoices/{id}/mark_uncollectible/`): allowed for a finalized
 * invoice with something due that is not marked yet; InvalidStateError (409) otherwise, saying why.
 */
export function assertMarkableUncollectible(invoice: {
  id: string;
  status: string;
  due: DecimalInput;
  markedUncollectible: boolean;
}): void {
  if (invoice.status !== "finalized")
    throw new InvalidStateError(
      `Invoice ${invoice.id} is ${invoice.status}: only a finalized invoice can be marked uncollectible`,
    );
  if (!toDecimal(invoice.due).greaterThan(0))
    throw new InvalidStateError(`Invoice ${invoice.id} has nothing due: it cannot be marked uncollectible`);
  if (invoice.markedUncollectible) throw new InvalidStateError(`Invoice ${invoice.id} is marked uncollectible already`);
}

/**
 * `text` with every hosted checkout token replaced by `chk_[redacted]` (request logs print paths; the token is a
 * secret).
 */
export function redactCheckoutTokens(text: string): string {
  return text.replace(/\bchk_[0-9A-Za-z]+/g, "chk_[redacted]");
}

/** A declined charge's source, as settling the charge sees it. */
export interface DeclinedSource {
  usage: string;
  /** null when the source belongs to no customer */
  customerId: string | null;
  /** charges of the source before this one, in any status */
  earlierCharges: number;
}

/**
 * Whether a declined charge's source is removed from its customer (detached and `failed`): a reusable source of a
 * customer whose first charge this was, when the caller asked for it (payInvoice, the customer portal's "new card").
 * A card that never worked is not kept, as a card whose set-up failed is never attached; a card that was charged
 * before stays, decline or not (docs/payments.md "A declined new card").
 */
export function forgetsDeclinedSource(source: DeclinedSource, forgetNewCardOnDecline: boolean): boolean {
  return (
    forgetNewCardOnDecline && source.usage === "reusable" && source.customerId !== null && source.earlierCharges === 0
  );
}
