/** Reminder rules and the outbox's delivery schedule (src/domain/reminders.ts). */
import { describe, expect, it } from "vitest";
import { FieldErrorCollector, ValidationError } from "../../src/domain/errors.js";
import {
  BASE_BACKOFF_MS,
  MAX_BACKOFF_MS,
  MAX_DELIVERY_ATTEMPTS,
  MAX_RECIPIENTS,
  afterFailure,
  attachmentFileName,
  backoffMs,
  exactlyOneDocument,
  normalizeRecipients,
  requiredText,
} from "../../src/domain/reminders.js";

function fieldsOf(run: (errors: FieldErrorCollector) => void): Record<string, string[]> {
  const errors = new FieldErrorCollector();
  run(errors);
  try {
    errors.throwIfAny();
    return {};
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).fields ?? {};
  }
}

const addresses = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@cliente.cl`);

describe("recipients", () => {
  it("accepts 1 to 50 e-mail addresses, trimmed, dropping case-insensitive duplicates", () => {
    const errors = new FieldErrorCollector();
    expect(normalizeRecipients([" pagos@cliente.cl ", "PAGOS@cliente.cl", "ana@cliente.cl"], errors)).toEqual([
      "pagos@cliente.cl",
      "ana@cliente.cl",
    ]);
    expect(normalizeRecipients(addresses(MAX_RECIPIENTS), errors)).toHaveLength(50);
    // 51 entries of which two are the same address: 50 distinct, accepted
    expect(normalizeRecipients([...addresses(50), "USER0@cliente.cl"], errors)).toHaveLength(50);
    expect(errors.empty).toBe(true);
  });

  it("rejects none, more than 50, and each entry that is not an address (by index)", () => {
    expect(fieldsOf((e) => normalizeRecipients([], e))).toEqual({
      recipient: ["at least one e-mail address is required"],
    });
    expect(fieldsOf((e) => normalizeRecipients(null, e))).toEqual({
      recipient: ["at least one e-mail address is required"],
    });
    expect(fieldsOf((e) => normalizeRecipients(addresses(51), e))).toEqual({
      recipient: ["must have at most 50 addresses; got 51"],
    });
    expect(
      fieldsOf((e) =>
        normalizeRecipients(["ok@cliente.cl", "not-an-address", "", "a@b", "x@cliente.cl\nBcc: y@z.cl"], e),
      ),
    ).toEqual({
      "recipient.1": ["must be an e-mail address"],
      "recipient.2": ["must be an e-mail address"],
      "recipient.3": ["must be an e-mail address"],
      "recipient.4": ["must be an e-mail address"],
    });
  });
});

describe("exactly one related document", () => {
  it("returns the one given (empty strings and nulls are absent)", () => {
    const errors = new FieldErrorCollector();
    expect(exactlyOneDocument({ invoice: "inv_1" }, errors)).toEqual({ kind: "invoice", id: "inv_1" });
    expect(
      exactlyOneDocument({ invoice: "", credit_note: null, payment: " pay_1 ", order: undefined }, errors),
    ).toEqual({ kind: "payment", id: "pay_1" });
    expect(errors.empty).toBe(true);
  });

  it("none: every field is named; several: each given field is named", () => {
    const none = "one of invoice, credit_note, payment or order is required";
    expect(fieldsOf((e) => exactlyOneDocument({}, e))).toEqual({
      invoice: [none],
      credit_note: [none],
      payment: [none],
      order: [none],
    });
    expect(fieldsOf((e) => exactlyOneDocument({ invoice: "inv_1", order: "ord_1" }, e))).toEqual({
      invoice: ["only one related document is allowed; got invoice, order"],
      order: ["only one related document is allowed; got invoice, order"],
    });
  });
});

describe("subject and message", () => {
  it("are required, trimmed and bounded; a subject is one line", () => {
    const errors = new FieldErrorCollector();
    expect(requiredText("subject", "  Factura vencida ", 255, errors, { singleLine: true })).toBe("Factura vencida");
    expect(errors.empty).toBe(true);
    expect(fieldsOf((e) => requiredText("subject", "   ", 255, e))).toEqual({ subject: ["is required"] });
    expect(fieldsOf((e) => requiredText("message", null, 10, e))).toEqual({ message: ["is required"] });
    expect(fieldsOf((e) => requiredText("message", "x".repeat(11), 10, e))).toEqual({
      message: ["must have at most 10 characters"],
    });
    expect(fieldsOf((e) => requiredText("subject", "a\r\nBcc: x@y.cl", 255, e, { singleLine: true }))).toEqual({
      subject: ["must be a single line"],
    });
  });
});

describe("delivery schedule", () => {
  it("waits 1 min after the first failure, doubling, capped", () => {
    expect(BASE_BACKOFF_MS).toBe(60_000);
    expect([1, 2, 3, 4, 5, 6, 7].map(backoffMs)).toEqual([1, 2, 4, 8, 16, 32, 64].map((m) => m * 60_000));
    expect(backoffMs(20)).toBe(MAX_BACKOFF_MS);
  });

  it(`retries until ${MAX_DELIVERY_ATTEMPTS} attempts, then fails for good`, () => {
    const now = new Date("2026-11-22T10:00:00Z");
    expect(afterFailure(1, now)).toEqual({ status: "pending", nextAttemptAt: new Date("2026-11-22T10:01:00Z") });
    expect(afterFailure(3, now)).toEqual({ status: "pending", nextAttemptAt: new Date("2026-11-22T10:04:00Z") });
    expect(afterFailure(MAX_DELIVERY_ATTEMPTS - 1, now).status).toBe("pending");
    expect(afterFailure(MAX_DELIVERY_ATTEMPTS, now).status).toBe("failed");
    // the whole schedule before giving up: 1 + 2 + ... + 64 min = 127 min
    const total = Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, i) => backoffMs(i + 1)).reduce(
      (a, b) => a + b,
      0,
    );
    expect(total).toBe(127 * 60_000);
  });

  it("names attachments by kind, document type and number (drafts: draft)", () => {
    expect(attachmentFileName("invoice", "CL33", 12)).toBe("invoice-CL33-12.pdf");
    expect(attachmentFileName("credit_note", "CL61", 3)).toBe("credit-note-CL61-3.pdf");
    expect(attachmentFileName("order", "CL52", null)).toBe("order-draft.pdf");
  });
});
