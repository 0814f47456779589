/** Credit note rules (src/domain/credit-notes.ts); the worked example of its header is the first test. */
import { describe, expect, it } from "vitest";
import {
  amountLeftToCredit,
  assertCreditFits,
  creditNoteTaxRules,
  noteEffect,
  referenceCodeProblem,
} from "../../src/domain/credit-notes.js";
import { validationErrorOf } from "../helpers/errors.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };

describe("amount left to credit", () => {
  it("worked example: 2916 with a 1190 note leaves 1726; 1726 fits, 1727 does not", () => {
    expect(amountLeftToCredit(2916, [1190]).toString()).toBe("1726");
    expect(() =>
      assertCreditFits({
        invoiceId: "inv_1",
        invoiceTotal: 2916,
        creditNoteTotals: [1190],
        creditNoteTotal: 1726,
        currency: CLP,
      }),
    ).not.toThrow();
    const error = validationErrorOf(() =>
      assertCreditFits({
        invoiceId: "inv_1",
        invoiceTotal: 2916,
        creditNoteTotals: [1190],
        creditNoteTotal: 1727,
        currency: CLP,
      }),
    );
    expect(error.fields).toEqual({
      total: [
        "1727 CLP exceeds what is left to credit on invoice inv_1: 1726 CLP (invoice total 2916 CLP, already " +
          "credited 1190 CLP)",
      ],
    });
  });

  it("no credit notes: the whole invoice can be credited, and not a peso more", () => {
    expect(amountLeftToCredit("2916", []).toString()).toBe("2916");
    expect(() =>
      assertCreditFits({
        invoiceId: "inv_1",
        invoiceTotal: 2916,
        creditNoteTotals: [],
        creditNoteTotal: 2917,
        currency: CLP,
      }),
    ).toThrow(/left to credit on invoice inv_1: 2916 CLP/);
  });

  it("exact decimals in USD: 100.10 - 33.37 - 33.37 leaves 33.36", () => {
    expect(amountLeftToCredit("100.10", ["33.37", "33.37"]).toString()).toBe("33.36");
    expect(() =>
      assertCreditFits({
        invoiceId: "inv_2",
        invoiceTotal: "100.10",
        creditNoteTotals: ["33.37", "33.37"],
        creditNoteTotal: "33.37",
        currency: USD,
      }),
    ).toThrow(/33.37 USD exceeds .* 33.36 USD/);
  });

  it("worked example: a finalized debit note of 595 raises what can be credited to 1726 + 595 = 2321", () => {
    expect(amountLeftToCredit(2916, [1190], [595]).toString()).toBe("2321");
    expect(() =>
      assertCreditFits({
        invoiceId: "inv_1",
        invoiceTotal: 2916,
        creditNoteTotals: [1190],
        debitNoteTotals: [595],
        creditNoteTotal: 2321,
        currency: CLP,
      }),
    ).not.toThrow();
    const error = validationErrorOf(() =>
      assertCreditFits({
        invoiceId: "inv_1",
        invoiceTotal: 2916,
        creditNoteTotals: [1190],
        debitNoteTotals: [595],
        creditNoteTotal: 2322,
        currency: CLP,
      }),
    );
    expect(error.fields).toEqual({
      total: [
        "2322 CLP exceeds what is left to credit on invoice inv_1: 2321 CLP (invoice total 2916 CLP, debit notes 595 " +
          "CLP, already credited 1190 CLP)",
      ],
    });
  });

  it("a fully credited invoice leaves 0 and refuses anything above 0", () => {
    const error = validationErrorOf(() =>
      assertCreditFits({
        invoiceId: "inv_3",
        invoiceTotal: 1000,
        creditNoteTotals: [1000],
        creditNoteTotal: 1,
        currency: CLP,
      }),
    );
    expect(error.fields?.total?.[0]).toContain("inv_3: 0 CLP");
    expect(() =>
      assertCreditFits({
        invoiceId: "inv_3",
        invoiceTotal: 1000,
        creditNoteTotals: [1000],
        creditNoteTotal: 0,
        currency: CLP,
      }),
    ).not.toThrow();
  });
});

describe("note effect", () => {
  it("61 and 112 credit, 56 and 111 debit, an invoice type is no note", () => {
    expect(noteEffect({ isNote: true, isCreditNote: true })).toBe("credit");
    expect(noteEffect({ isNote: true, isCreditNote: false })).toBe("debit");
    expect(noteEffect({ isNote: false, isCreditNote: false })).toBeNull();
  });
});

describe("credit note tax rules follow the invoice", () => {
  const CL61 = { hasTaxes: true };
  const CL112 = { hasTaxes: false };

  it("a note on a factura (CL33): the invoice's 19 %, net prices", () => {
    const rules = creditNoteTaxRules(CL61, { hasTaxes: true, pricesIncludeTax: false }, "19");
    expect({ ...rules, taxPercent: rules.taxPercent.toString() }).toEqual({
      taxPercent: "19",
      hasTaxes: true,
      pricesIncludeTax: false,
    });
  });

  it("a note on a boleta (CL39): prices include tax as on the boleta", () => {
    expect(creditNoteTaxRules(CL61, { hasTaxes: true, pricesIncludeTax: true }, 19).pricesIncludeTax).toBe(true);
  });

  it("a note on a factura exenta (CL34), or an export note (CL112): no tax", () => {
    for (const [note, invoice] of [
      [CL61, { hasTaxes: false, pricesIncludeTax: false }],
      [CL112, { hasTaxes: true, pricesIncludeTax: false }],
    ] as const) {
      const rules = creditNoteTaxRules(note, invoice, 19);
      expect({ ...rules, taxPercent: rules.taxPercent.toString() }).toEqual({
        taxPercent: "0",
        hasTaxes: false,
        pricesIncludeTax: false,
      });
    }
  });
});

describe("reference codes (SII CodRef)", () => {
  const base = { invoiceTotal: 2916, currency: CLP };
  it("worked example: 1 cancels only with the whole invoice total; 2 only with total 0; 3 with any amount", () => {
    expect(referenceCodeProblem({ ...base, code: 1, effect: "credit", total: 2916 })).toBeNull();
    expect(referenceCodeProblem({ ...base, code: 1, effect: "credit", total: 1190 })).toBe(
      "a cancelling credit note credits the whole invoice total 2916 CLP, not 1190 CLP",
    );
    expect(referenceCodeProblem({ ...base, code: 2, effect: "credit", total: 0 })).toBeNull();
    expect(referenceCodeProblem({ ...base, code: 2, effect: "debit", total: "0" })).toBeNull();
    expect(referenceCodeProblem({ ...base, code: 2, effect: "credit", total: 1190 })).toBe(
      "a text correction (2) changes no amount: its total must be 0, not 1190 CLP",
    );
    expect(referenceCodeProblem({ ...base, code: 3, effect: "credit", total: 1190 })).toBeNull();
    expect(referenceCodeProblem({ ...base, code: 3, effect: "debit", total: 99999 })).toBeNull();
  });
  it("a debit note does not cancel; codes other than 1, 2, 3 are refused", () => {
    expect(referenceCodeProblem({ ...base, code: 1, effect: "debit", total: 2916 })).toBe(
      "1 (cancels) is for credit notes; a debit note corrects amounts (3) or text (2)",
    );
    for (const code of [0, 4, -1])
      expect(referenceCodeProblem({ ...base, code, effect: "credit", total: 1 })).toBe(
        "must be 1 (cancels), 2 (corrects text) or 3 (corrects amounts)",
      );
  });
});
