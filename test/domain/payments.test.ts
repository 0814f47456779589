/** Payment status moves and limits (src/domain/payments.ts): every cell of the table is a test. */
import { describe, expect, it } from "vitest";
import { FieldErrorCollector, InvalidStateError } from "../../src/domain/errors.js";
import {
  PAYMENT_MOVES,
  PAYMENT_STATUSES,
  checkPaymentLimits,
  assertMarkableUncollectible,
  forgetsDeclinedSource,
  invoiceAmountDue,
  invoiceAmounts,
  invoicePaymentStatus,
  paymentTransition,
  redactCheckoutTokens,
  type PaymentEvent,
} from "../../src/domain/payments.js";
import { validationErrorOf } from "../helpers/errors.js";

const EVENTS: PaymentEvent[] = ["attach_source", "start_charge", "succeed", "decline", "cancel"];

const EXPECTED: Record<string, Record<PaymentEvent, string | null>> = {
  requires_payment_method: {
    attach_source: "requires_payment_method",
    start_charge: "processing",
    succeed: null,
    decline: null,
    cancel: "canceled",
  },
  processing: {
    attach_source: null,
    start_charge: null,
    succeed: "succeeded",
    decline: "requires_payment_method",
    cancel: "canceled",
  },
  succeeded: { attach_source: null, start_charge: null, succeed: null, decline: null, cancel: null },
  canceled: { attach_source: null, start_charge: null, succeed: null, decline: null, cancel: null },
};

describe("payment status moves", () => {
  for (const status of PAYMENT_STATUSES) {
    for (const event of EVENTS) {
      const next = EXPECTED[status][event];
      it(`${status} --${event}--> ${next ?? "409"}`, () => {
        if (next) expect(paymentTransition(status, event)).toBe(next);
        else expect(() => paymentTransition(status, event)).toThrow(InvalidStateError);
      });
    }
  }

  it("the table has no move the tests do not list", () => {
    for (const status of PAYMENT_STATUSES) {
      expect(Object.entries(PAYMENT_MOVES[status])).toEqual(
        Object.entries(EXPECTED[status]).filter(([, v]) => v !== null),
      );
    }
  });

  it("a processing payment whose charge the gateway is answering cannot be canceled", () => {
    expect(() => paymentTransition("processing", "cancel", { chargeInFlight: true })).toThrow(
      "Cannot cancel a payment that is processing: a charge is in progress",
    );
    expect(paymentTransition("processing", "cancel", { chargeInFlight: false })).toBe("canceled");
  });

  it("says why a succeeded payment cannot be canceled", () => {
    expect(() => paymentTransition("succeeded", "cancel")).toThrow(
      "Cannot cancel a payment that is succeeded: it has succeeded",
    );
  });
});

describe("payment limits (spec Limits)", () => {
  const CLP = { id: "CLP", rounded: true, decimals: 0, isChargeable: true };
  const USD = { id: "USD", rounded: false, decimals: 2, isChargeable: true };
  const CLF = { id: "CLF", rounded: false, decimals: 4, isChargeable: false };
  const fieldsOf = (input: Parameters<typeof checkPaymentLimits>[0], currency = CLP, today = "2026-11-22") => {
    const errors = new FieldErrorCollector();
    checkPaymentLimits(input, currency, today, errors);
    if (errors.empty) return {};
    return validationErrorOf(() => errors.throwIfAny()).fields;
  };

  it("accepts a positive amount dated today with a 256-character description", () => {
    expect(fieldsOf({ amount: "2916", date: "2026-11-22", description: "x".repeat(256) })).toEqual({});
    expect(fieldsOf({ amount: "10.50", date: "2026-12-01" }, USD)).toEqual({});
  });

  it("refuses each limit on its own", () => {
    expect(fieldsOf({ amount: "0", date: "2026-11-22" })).toEqual({ amount: ["must be positive"] });
    expect(fieldsOf({ amount: "-5", date: "2026-11-22" })).toEqual({ amount: ["must be positive"] });
    expect(fieldsOf({ amount: null, date: "2026-11-22" })).toEqual({ amount: ["is required"] });
    expect(fieldsOf({ amount: "10.5", date: "2026-11-22" })).toEqual({ amount: ["CLP amounts are whole units"] });
    expect(fieldsOf({ amount: "10.505", date: "2026-11-22" }, USD)).toEqual({
      amount: ["USD amounts have at most 2 decimals"],
    });
    expect(fieldsOf({ amount: "100", date: "2026-11-21" })).toEqual({
      date: ["must not be before today (2026-11-22)"],
    });
    expect(fieldsOf({ amount: "100", date: "2026-11-22", description: "x".repeat(257) })).toEqual({
      description: ["must have at most 256 characters"],
    });
    expect(fieldsOf({ amount: "1", date: "2026-11-22" }, CLF)).toEqual({
      currency: ["CLF cannot be charged; chargeable currencies have is_chargeable true"],
    });
  });
});

describe("invoice amount due", () => {
  it("worked example: 2916 - 1190 credited - 1000 paid = 726", () => {
    expect(invoiceAmountDue({ total: 2916, credited: 1190, debited: 0, paid: 1000 }).toString()).toBe("726");
    expect(invoiceAmountDue({ total: 2916, credited: 1190, debited: 0, paid: 1726 }).toString()).toBe("0");
  });
  it("a finalized debit note of 595 on the settled invoice makes 595 due again", () => {
    expect(invoiceAmountDue({ total: 2916, credited: 1190, debited: 595, paid: 1726 }).toString()).toBe("595");
  });
  it("never goes below zero", () => {
    expect(invoiceAmountDue({ total: "7.50", credited: "0", debited: "0", paid: "8" }).toString()).toBe("0");
  });
});

describe("invoiceAmounts", () => {
  it("sums the documents and applies invoiceAmountDue: the worked example, then a debit note", () => {
    const example = { total: "2916", payments: ["1000"], creditNotes: ["1190"], debitNotes: [] };
    expect(invoiceAmounts(example)).toEqual({ paid: "1000", credited: "1190", debited: "0", due: "726" });
    expect(invoiceAmounts({ ...example, payments: ["1000", "726"], debitNotes: ["595"] })).toEqual({
      paid: "1726",
      credited: "1190",
      debited: "595",
      due: "595",
    });
  });
  it("exact decimals, plain digits, nothing due below zero; no documents: the whole total due", () => {
    expect(invoiceAmounts({ total: "10.25", payments: ["0.1", "0.2"], creditNotes: [], debitNotes: [] })).toEqual({
      paid: "0.3",
      credited: "0",
      debited: "0",
      due: "9.95",
    });
    expect(invoiceAmounts({ total: "7.50", payments: ["8.000000"], creditNotes: [], debitNotes: [] }).due).toBe("0");
    expect(invoiceAmounts({ total: "714.000000", payments: [], creditNotes: [], debitNotes: [] })).toEqual({
      paid: "0",
      credited: "0",
      debited: "0",
      due: "714",
    });
  });
});

describe("redactCheckoutTokens", () => {
  it("hides the checkout token of a path and leaves other ids alone", () => {
    expect(redactCheckoutTokens("/checkout/chk_0123456789abcdefABCDEF0123456789")).toBe("/checkout/chk_[redacted]");
    expect(redactCheckoutTokens("/v1/payments/pay_abc/pay/")).toBe("/v1/payments/pay_abc/pay/");
  });
});

describe("forgetsDeclinedSource", () => {
  const card = { usage: "reusable", customerId: "cus_1", earlierCharges: 0 };
  it("forgets a customer's reusable card declined on its first charge, when asked (payInvoice)", () => {
    expect(forgetsDeclinedSource(card, true)).toBe(true);
  });
  it("keeps a card charged before, a card of no customer, a single-use source, and any card when not asked", () => {
    expect(forgetsDeclinedSource({ ...card, earlierCharges: 1 }, true)).toBe(false);
    expect(forgetsDeclinedSource({ ...card, customerId: null }, true)).toBe(false);
    expect(forgetsDeclinedSource({ ...card, usage: "single_use" }, true)).toBe(false);
    expect(forgetsDeclinedSource(card, false)).toBe(false);
  });
});

describe("invoicePaymentStatus (docs/dunning.md's worked example, CLP, total 2916)", () => {
  const finalized = { status: "finalized", markedUncollectible: false };
  const due = (paid: number, credited = 0) => invoiceAmountDue({ total: 2916, credited, debited: 0, paid }).toFixed();
  it("draft, finalized, a payment of 1000, marked uncollectible, then the rest paid", () => {
    expect(invoicePaymentStatus({ status: "draft", due: "2916", paid: "0", markedUncollectible: false })).toBe(
      "unpaid",
    );
    expect(invoicePaymentStatus({ ...finalized, due: due(0), paid: "0" })).toBe("unpaid");
    expect(invoicePaymentStatus({ ...finalized, due: due(1000), paid: "1000" })).toBe("partially_paid");
    const marked = { ...finalized, markedUncollectible: true };
    expect(invoicePaymentStatus({ ...marked, due: due(1000), paid: "1000" })).toBe("uncollectible");
    expect(invoicePaymentStatus({ ...marked, due: due(0), paid: "0" })).toBe("uncollectible");
    // a later payment still counts
    expect(due(2916)).toBe("0");
    expect(invoicePaymentStatus({ ...marked, due: due(2916), paid: "2916" })).toBe("paid");
  });
  it("credit notes lower what is due but are no payment; nothing due is paid, a zero total too", () => {
    expect(invoicePaymentStatus({ ...finalized, due: due(0, 2916), paid: "0" })).toBe("paid");
    expect(invoicePaymentStatus({ ...finalized, due: due(0, 1000), paid: "0" })).toBe("unpaid");
    expect(invoicePaymentStatus({ ...finalized, due: due(500, 1000), paid: "500" })).toBe("partially_paid");
    expect(invoicePaymentStatus({ ...finalized, due: "0", paid: "0" })).toBe("paid");
    // a draft is unpaid whatever its total
    expect(invoicePaymentStatus({ status: "draft", due: "0", paid: "0", markedUncollectible: false })).toBe("unpaid");
  });
  it("exact decimals: a cent due is not paid", () => {
    expect(invoicePaymentStatus({ ...finalized, due: "0.01", paid: "99.99" })).toBe("partially_paid");
  });
});

describe("assertMarkableUncollectible", () => {
  const invoice = { id: "inv_1", status: "finalized", due: "1916", markedUncollectible: false };
  it("a finalized invoice with something due, not marked yet: allowed", () => {
    expect(() => assertMarkableUncollectible(invoice)).not.toThrow();
  });
  it("a draft, nothing due, or marked already: 409 saying why", () => {
    const refused = (changes: Partial<typeof invoice>) => {
      try {
        assertMarkableUncollectible({ ...invoice, ...changes });
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidStateError);
        return (e as Error).message;
      }
      throw new Error("expected a refusal");
    };
    expect(refused({ status: "draft" })).toContain("only a finalized invoice");
    expect(refused({ due: "0" })).toContain("nothing due");
    expect(refused({ markedUncollectible: true })).toContain("already");
  });
});
