/**
 * Document totals (docs/invoice-totals.md).
 * Every example of docs/invoice-totals.md is one test here, under the same name.
 */
import { describe, it, expect } from "vitest";
import {
  computeDocumentTotals,
  validateTotalsInput,
  type DocumentTotals,
  type TotalsInput,
} from "../../src/domain/totals.js";
import { validationErrorOf } from "../helpers/errors.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };
const CLF = { id: "CLF", rounded: false, decimals: 4 };

/** CL33 (factura electrónica): 19 %, net prices, CLP. */
const CL33 = { taxPercent: 19, hasTaxes: true, pricesIncludeTax: false, currency: CLP } as const;
/** CL34 (factura exenta): no taxes. */
const CL34 = { taxPercent: 0, hasTaxes: false, pricesIncludeTax: false, currency: CLP } as const;
/** CL39 (boleta electrónica): 19 % included in the line prices. */
const CL39 = { taxPercent: 19, hasTaxes: true, pricesIncludeTax: true, currency: CLP } as const;

/** The document-level figures as strings, for exact comparison. */
function figures(t: DocumentTotals) {
  return {
    amount: t.amount.toString(),
    exempt: t.exempt.toString(),
    subtotal: t.subtotal.toString(),
    discount: t.discountAmount.toString(),
    tax: t.tax.toString(),
    total: t.total.toString(),
  };
}

/** Per-line figures as strings: [gross, discount, total, exempt]. */
function lineFigures(t: DocumentTotals) {
  return t.lines.map((l) => [l.gross.toString(), l.discountAmount.toString(), l.total.toString(), l.exempt]);
}

describe("computeDocumentTotals: worked examples (docs/invoice-totals.md)", () => {
  it("worked example: CL33 2 x 1000 + 1 x 500 with 10 % line discount", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [
        { quantity: 2, amount: 1000 },
        { quantity: 1, amount: 500, discount: 10, discountScheme: "%" },
      ],
    });
    expect(lineFigures(t)).toEqual([
      ["2000", "0", "2000", false],
      ["500", "50", "450", false],
    ]);
    expect(figures(t)).toEqual({
      amount: "2450",
      exempt: "0",
      subtotal: "2450",
      discount: "0",
      tax: "466",
      total: "2916",
    });
    expect(t.taxPercent.toString()).toBe("19");
  });

  it("SII F60T33: 20 x 4500 + 1 x 5000 + 5 x 1000", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [
        { quantity: 20, amount: 4500 },
        { quantity: 1, amount: 5000 },
        { quantity: 5, amount: 1000 },
      ],
    });
    expect(figures(t)).toEqual({
      amount: "100000",
      exempt: "0",
      subtotal: "100000",
      discount: "0",
      tax: "19000",
      total: "119000",
    });
  });

  it("half case: 1 x 2350 gives tax 447 (half away from zero, not banker's 446)", () => {
    const t = computeDocumentTotals({ ...CL33, lines: [{ quantity: 1, amount: 2350 }] });
    expect(figures(t)).toEqual({
      amount: "2350",
      exempt: "0",
      subtotal: "2350",
      discount: "0",
      tax: "447",
      total: "2797",
    });
  });

  it("decimals: 2.5 x 1234.5 with 12.5 % line discount", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [{ quantity: "2.5", amount: "1234.5", discount: "12.5", discountScheme: "%" }],
    });
    // 3086.25 -> 3086; 3086 x 12.5 % = 385.75 -> 386; 2700 x 19 % = 513
    expect(lineFigures(t)).toEqual([["3086", "386", "2700", false]]);
    expect(figures(t)).toEqual({
      amount: "2700",
      exempt: "0",
      subtotal: "2700",
      discount: "0",
      tax: "513",
      total: "3213",
    });
  });

  it("boleta CL39: gross 680 with tax included", () => {
    const t = computeDocumentTotals({ ...CL39, lines: [{ quantity: 1, amount: 680 }] });
    // 680 / 1.19 = 571.43 -> 571; tax = 680 - 571 = 109 (round(571 x 0.19) = 108 would lose a peso)
    expect(figures(t)).toEqual({
      amount: "571",
      exempt: "0",
      subtotal: "571",
      discount: "0",
      tax: "109",
      total: "680",
    });
  });

  it("mixed document: taxable and exempt lines", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [
        { quantity: 1, amount: 10000 },
        { quantity: 1, amount: 5000, exempt: true },
      ],
    });
    expect(lineFigures(t)).toEqual([
      ["10000", "0", "10000", false],
      ["5000", "0", "5000", true],
    ]);
    expect(figures(t)).toEqual({
      amount: "10000",
      exempt: "5000",
      subtotal: "15000",
      discount: "0",
      tax: "1900",
      total: "16900",
    });
  });

  it("document % discount applies to taxable lines only", () => {
    const t = computeDocumentTotals({
      ...CL33,
      discount: 10,
      discountScheme: "%",
      lines: [
        { quantity: 1, amount: 10000 },
        { quantity: 1, amount: 5000, exempt: true },
      ],
    });
    // 10 % of the taxable 10000 only; the exempt 5000 is untouched
    expect(figures(t)).toEqual({
      amount: "9000",
      exempt: "5000",
      subtotal: "14000",
      discount: "1000",
      tax: "1710",
      total: "15710",
    });
  });

  it("$ discounts: 100 off a 3 x 1000 line and 400 off the document", () => {
    const t = computeDocumentTotals({
      ...CL33,
      discount: 400,
      discountScheme: "$",
      lines: [{ quantity: 3, amount: 1000, discount: 100, discountScheme: "$" }],
    });
    expect(lineFigures(t)).toEqual([["3000", "100", "2900", false]]);
    expect(figures(t)).toEqual({
      amount: "2500",
      exempt: "0",
      subtotal: "2500",
      discount: "400",
      tax: "475",
      total: "2975",
    });
  });

  it("USD: 3 x 2.50, tax 1.425 rounds to 1.43", () => {
    const t = computeDocumentTotals({ ...CL33, currency: USD, lines: [{ quantity: 3, amount: "2.50" }] });
    expect(figures(t)).toEqual({
      amount: "7.5",
      exempt: "0",
      subtotal: "7.5",
      discount: "0",
      tax: "1.43",
      total: "8.93",
    });
  });

  it("USD: 1 x 0.125 and 2 x 4.99 with 15 % off, each step to the cent", () => {
    const t = computeDocumentTotals({
      ...CL33,
      currency: USD,
      lines: [
        { quantity: 1, amount: "0.125" },
        { quantity: 2, amount: "4.99", discount: 15, discountScheme: "%" },
      ],
    });
    // 0.125 -> 0.13; 9.98 x 15 % = 1.497 -> 1.50; 8.61 x 19 % = 1.6359 -> 1.64
    expect(lineFigures(t)).toEqual([
      ["0.13", "0", "0.13", false],
      ["9.98", "1.5", "8.48", false],
    ]);
    expect(figures(t)).toEqual({
      amount: "8.61",
      exempt: "0",
      subtotal: "8.61",
      discount: "0",
      tax: "1.64",
      total: "10.25",
    });
  });

  it("CLF: 3 x 1.33335 rounds to 4 decimals", () => {
    const t = computeDocumentTotals({ ...CL33, currency: CLF, lines: [{ quantity: 3, amount: "1.33335" }] });
    // 4.00005 -> 4.0001; 4.0001 x 19 % = 0.760019 -> 0.76
    expect(figures(t)).toEqual({
      amount: "4.0001",
      exempt: "0",
      subtotal: "4.0001",
      discount: "0",
      tax: "0.76",
      total: "4.7601",
    });
  });

  it("exempt document type CL34: every line exempt, tax 0", () => {
    const t = computeDocumentTotals({
      ...CL34,
      lines: [
        { quantity: 2, amount: 1500 },
        { quantity: 1, amount: 1000, exempt: false },
      ],
    });
    expect(lineFigures(t)).toEqual([
      ["3000", "0", "3000", true],
      ["1000", "0", "1000", true],
    ]);
    expect(figures(t)).toEqual({
      amount: "0",
      exempt: "4000",
      subtotal: "4000",
      discount: "0",
      tax: "0",
      total: "4000",
    });
    expect(t.taxPercent.toString()).toBe("0");
  });

  it("boleta CL39 with a 10 % document discount and an exempt line", () => {
    const t = computeDocumentTotals({
      ...CL39,
      discount: 10,
      discountScheme: "%",
      lines: [
        { quantity: 1, amount: 680 },
        { quantity: 1, amount: 1000, exempt: true },
      ],
    });
    // taxable gross 680 - 68 = 612; 612 / 1.19 = 514.29 -> 514; tax 612 - 514 = 98
    expect(figures(t)).toEqual({
      amount: "514",
      exempt: "1000",
      subtotal: "1514",
      discount: "68",
      tax: "98",
      total: "1612",
    });
  });
});

describe("computeDocumentTotals: rules", () => {
  it("hasTaxes false ignores the tax percent passed in", () => {
    const t = computeDocumentTotals({ ...CL34, taxPercent: 19, lines: [{ quantity: 1, amount: 1000 }] });
    expect(figures(t)).toEqual({
      amount: "0",
      exempt: "1000",
      subtotal: "1000",
      discount: "0",
      tax: "0",
      total: "1000",
    });
    expect(t.taxPercent.toString()).toBe("0");
  });

  it("document % discount on an all-exempt document discounts nothing", () => {
    const t = computeDocumentTotals({
      ...CL34,
      discount: 10,
      discountScheme: "%",
      lines: [{ quantity: 1, amount: 1000 }],
    });
    expect(figures(t)).toEqual({
      amount: "0",
      exempt: "1000",
      subtotal: "1000",
      discount: "0",
      tax: "0",
      total: "1000",
    });
  });

  it("the discount scheme defaults to %", () => {
    const t = computeDocumentTotals({ ...CL33, discount: 10, lines: [{ quantity: 1, amount: 1000, discount: 5 }] });
    // line 1000 - 50 = 950; document 95; amount 855; tax 162.45 -> 162
    expect(lineFigures(t)).toEqual([["1000", "50", "950", false]]);
    expect(figures(t)).toEqual({
      amount: "855",
      exempt: "0",
      subtotal: "855",
      discount: "95",
      tax: "162",
      total: "1017",
    });
  });

  it("line gross rounds half away from zero in CLP (1 x 0.5 -> 1, 3 x 0.5 -> 2)", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [
        { quantity: 1, amount: "0.5" },
        { quantity: 3, amount: "0.5" },
      ],
    });
    expect(lineFigures(t)).toEqual([
      ["1", "0", "1", false],
      ["2", "0", "2", false],
    ]);
  });

  it("a $ discount is rounded to the currency unit", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [{ quantity: 1, amount: 1000, discount: "99.5", discountScheme: "$" }],
    });
    expect(lineFigures(t)).toEqual([["1000", "100", "900", false]]);
  });

  it("a 100 % discount is allowed and gives 0", () => {
    const t = computeDocumentTotals({ ...CL33, discount: 100, lines: [{ quantity: 2, amount: 1000 }] });
    expect(figures(t)).toEqual({ amount: "0", exempt: "0", subtotal: "0", discount: "2000", tax: "0", total: "0" });
  });

  it("a $ discount equal to the line is allowed", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [{ quantity: 1, amount: 500, discount: 500, discountScheme: "$" }],
    });
    expect(lineFigures(t)).toEqual([["500", "500", "0", false]]);
    expect(t.total.toString()).toBe("0");
  });

  it("no lines gives zero totals (drafts may be empty)", () => {
    const t = computeDocumentTotals({ ...CL33, lines: [] });
    expect(t.lines).toEqual([]);
    expect(figures(t)).toEqual({ amount: "0", exempt: "0", subtotal: "0", discount: "0", tax: "0", total: "0" });
  });

  it("accepts Decimal-like strings, numbers and mixed inputs alike", () => {
    const a = computeDocumentTotals({ ...CL33, lines: [{ quantity: "2", amount: "1000" }] });
    const b = computeDocumentTotals({ ...CL33, taxPercent: "19", lines: [{ quantity: 2, amount: 1000 }] });
    expect(figures(a)).toEqual(figures(b));
  });

  it("is pure: the same input gives the same totals and is not mutated", () => {
    const input: TotalsInput = { ...CL33, discount: 5, lines: [{ quantity: 2, amount: 1000, discount: 10 }] };
    const copy = structuredClone(input);
    expect(figures(computeDocumentTotals(input))).toEqual(figures(computeDocumentTotals(input)));
    expect(input).toEqual(copy);
  });
});

describe("computeDocumentTotals: validation (400 validation_error)", () => {
  it(
    "allowCredits (subscription prorations): a negative unit amount nets against the other lines, without a " +
      "discount, never below zero",
    () => {
      const credited = computeDocumentTotals({
        ...CL33,
        allowCredits: true,
        lines: [
          { quantity: 3, amount: 10000 },
          { quantity: 1, amount: -6667 },
        ],
      });
      expect([credited.amount.toFixed(), credited.tax.toFixed(), credited.total.toFixed()]).toEqual([
        "23333",
        "4433",
        "27766",
      ]);
      expect(credited.lines[1].total.toFixed()).toBe("-6667");
      expect(
        validationErrorOf(() =>
          computeDocumentTotals({ ...CL33, allowCredits: true, lines: [{ quantity: 1, amount: -5, discount: 10 }] }),
        ).fields,
      ).toEqual({
        "lines.0.discount": ["a credit line takes no discount"],
      });
      expect(
        validationErrorOf(() =>
          computeDocumentTotals({
            ...CL33,
            allowCredits: true,
            lines: [
              { quantity: 1, amount: 100 },
              { quantity: 1, amount: -101 },
            ],
          }),
        ).fields,
      ).toEqual({
        lines: ["credits and the discount exceed the taxable amount"],
      });
    },
  );

  it("negative quantity -> lines.0.quantity", () => {
    const error = validationErrorOf(() => computeDocumentTotals({ ...CL33, lines: [{ quantity: -1, amount: 1000 }] }));
    expect(error.code).toBe("validation_error");
    expect(error.status).toBe(400);
    expect(Object.keys(error.fields ?? {})).toEqual(["lines.0.quantity"]);
    expect(error.fields?.["lines.0.quantity"]).toEqual(["must not be negative"]);
  });

  it("negative amount -> lines.N.amount, with every offending line named", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({
        ...CL33,
        lines: [
          { quantity: 1, amount: 1000 },
          { quantity: -2, amount: -5 },
        ],
      }),
    );
    expect(Object.keys(error.fields ?? {}).sort()).toEqual(["lines.1.amount", "lines.1.quantity"]);
  });

  it("% line discount over 100 -> lines.N.discount", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({
        ...CL33,
        lines: [
          { quantity: 1, amount: 1000 },
          { quantity: 1, amount: 1000, discount: "100.01", discountScheme: "%" },
        ],
      }),
    );
    expect(error.fields).toEqual({ "lines.1.discount": ["a % discount must be at most 100"] });
  });

  it("% document discount over 100 -> discount", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({ ...CL33, discount: 101, discountScheme: "%", lines: [{ quantity: 1, amount: 1000 }] }),
    );
    expect(error.fields).toEqual({ discount: ["a % discount must be at most 100"] });
  });

  it("negative discounts -> lines.N.discount and discount", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({
        ...CL33,
        discount: -1,
        lines: [{ quantity: 1, amount: 1000, discount: -5, discountScheme: "$" }],
      }),
    );
    expect(error.fields).toEqual({ "lines.0.discount": ["must not be negative"], discount: ["must not be negative"] });
  });

  it("$ line discount larger than the line -> lines.N.discount", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({ ...CL33, lines: [{ quantity: 1, amount: 500, discount: 501, discountScheme: "$" }] }),
    );
    expect(error.fields?.["lines.0.discount"]).toEqual(["the discount exceeds the line amount"]);
  });

  // Fails against the current code: validateTotalsInput also blames `discount` (the document
  // discount, not sent here) because the over-discounted line makes the taxable net negative.
  it("$ line discount larger than the line does not blame the document discount", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({ ...CL33, lines: [{ quantity: 1, amount: 500, discount: 501, discountScheme: "$" }] }),
    );
    expect(error.fields).toEqual({ "lines.0.discount": ["the discount exceeds the line amount"] });
  });

  it("$ line discount larger than an exempt line -> lines.N.discount only", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({
        ...CL33,
        lines: [{ quantity: 1, amount: 500, discount: 600, discountScheme: "$", exempt: true }],
      }),
    );
    expect(error.fields).toEqual({ "lines.0.discount": ["the discount exceeds the line amount"] });
  });

  it("$ document discount larger than the taxable lines -> discount", () => {
    const error = validationErrorOf(() =>
      computeDocumentTotals({
        ...CL33,
        discount: 1001,
        discountScheme: "$",
        lines: [
          { quantity: 1, amount: 1000 },
          { quantity: 1, amount: 5000, exempt: true },
        ],
      }),
    );
    expect(error.fields).toEqual({ discount: ["the discount exceeds the taxable amount"] });
  });

  it("validateTotalsInput passes valid input", () => {
    expect(() => validateTotalsInput({ ...CL33, lines: [{ quantity: 1, amount: 1000, discount: 100 }] })).not.toThrow();
  });
});

describe("computeDocumentTotals: per-line tax (printed on order and credit note lines)", () => {
  const lineTaxes = (t: DocumentTotals) => t.lines.map((l) => [l.taxPercent.toString(), l.tax?.toString() ?? null]);

  it("CL33: each taxable line's own 19 %, exempt lines null; the document tax is taken on the sum", () => {
    const t = computeDocumentTotals({
      ...CL33,
      lines: [
        { quantity: 1, amount: 2350 },
        { quantity: 1, amount: 2350 },
        { quantity: 1, amount: 500, exempt: true },
      ],
    });
    // 2350 x 0.19 = 446.5 -> 447 per line, but 4700 x 0.19 = 893 for the document
    expect(lineTaxes(t)).toEqual([
      ["19", "447"],
      ["19", "447"],
      ["0", null],
    ]);
    expect(t.tax.toString()).toBe("893");
  });

  it("tax-included prices: the tax inside the line (680 -> 109)", () => {
    const t = computeDocumentTotals({ ...CL39, lines: [{ quantity: 1, amount: 680 }] });
    expect(lineTaxes(t)).toEqual([["19", "109"]]);
  });

  it("document types without taxes: every line null at 0 %", () => {
    const t = computeDocumentTotals({ ...CL34, lines: [{ quantity: 1, amount: 1000 }] });
    expect(lineTaxes(t)).toEqual([["0", null]]);
  });
});
