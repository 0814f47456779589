/** Money: decimal parsing, rounding half away from zero to the currency unit, formatting. */
import { describe, it, expect } from "vitest";
import { Decimal, currencyScale, roundMoney, sum, toDecimal } from "../../src/domain/money.js";
import { formatAmount, formatMoney, formatQuantity } from "../../src/domain/format-money.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };
const CLF = { id: "CLF", rounded: false, decimals: 4 };

describe("toDecimal", () => {
  it("parses strings exactly", () => {
    expect(toDecimal("1234.5678901234567890").toString()).toBe("1234.567890123456789");
  });

  it("parses numbers through their shortest string form (no float noise)", () => {
    expect(toDecimal(0.1).toString()).toBe("0.1");
    expect(toDecimal(0.1).plus(toDecimal(0.2)).toString()).toBe("0.3");
  });

  it("returns a Decimal unchanged", () => {
    const d = new Decimal("2.5");
    expect(toDecimal(d)).toBe(d);
  });
});

describe("currencyScale", () => {
  it("is 0 for rounded currencies, else the ISO 4217 minor unit", () => {
    expect(currencyScale(CLP)).toBe(0);
    expect(currencyScale(USD)).toBe(2);
    expect(currencyScale(CLF)).toBe(4);
    expect(currencyScale({ id: "XXX", rounded: true, decimals: 2 })).toBe(0);
  });
});

describe("roundMoney: half away from zero", () => {
  it("CLP rounds to whole pesos", () => {
    expect(roundMoney("465.5", CLP).toString()).toBe("466");
    expect(roundMoney("446.5", CLP).toString()).toBe("447");
    expect(roundMoney("2.5", CLP).toString()).toBe("3"); // banker's rounding would give 2
    expect(roundMoney("465.49", CLP).toString()).toBe("465");
    expect(roundMoney("-1.5", CLP).toString()).toBe("-2");
    expect(roundMoney("-465.5", CLP).toString()).toBe("-466");
  });

  it("USD rounds to cents", () => {
    expect(roundMoney("0.125", USD).toString()).toBe("0.13");
    expect(roundMoney("-0.125", USD).toString()).toBe("-0.13");
    expect(roundMoney("1.425", USD).toString()).toBe("1.43");
    expect(roundMoney("0.124", USD).toString()).toBe("0.12");
    expect(roundMoney("7.5", USD).toString()).toBe("7.5");
  });

  it("CLF rounds to 4 decimals", () => {
    expect(roundMoney("1.23455", CLF).toString()).toBe("1.2346");
    expect(roundMoney("-1.23455", CLF).toString()).toBe("-1.2346");
    expect(roundMoney("1.23454", CLF).toString()).toBe("1.2345");
  });

  it("accepts numbers and Decimals", () => {
    expect(roundMoney(465.5, CLP).toString()).toBe("466");
    expect(roundMoney(new Decimal("0.005"), USD).toString()).toBe("0.01");
  });
});

describe("sum", () => {
  it("is 0 for no values", () => {
    expect(sum([]).toString()).toBe("0");
  });

  it("adds exactly", () => {
    expect(sum(["0.1", "0.2", "0.3"].map((v) => new Decimal(v))).toString()).toBe("0.6");
  });
});

describe("formatMoney", () => {
  it("CLP: code, thousands with dots, no decimals", () => {
    expect(formatMoney(2916, CLP)).toBe("CLP 2.916");
    expect(formatMoney(119000, CLP)).toBe("CLP 119.000");
    expect(formatMoney("1234567.5", CLP)).toBe("CLP 1.234.568");
    expect(formatMoney(0, CLP)).toBe("CLP 0");
  });

  it("USD: two decimals after a comma", () => {
    expect(formatMoney("1234.5", USD)).toBe("USD 1.234,50");
    expect(formatMoney("0.125", USD)).toBe("USD 0,13");
    expect(formatMoney(8.93, USD)).toBe("USD 8,93");
  });

  it("negative amounts keep the sign before the digits", () => {
    expect(formatMoney("-1234567.891", USD)).toBe("USD -1.234.567,89");
    expect(formatAmount("-2916", CLP)).toBe("-2.916");
  });

  it("CLF: four decimals", () => {
    expect(formatMoney("4.7601", CLF)).toBe("CLF 4,7601");
    expect(formatMoney("1000", CLF)).toBe("CLF 1.000,0000");
  });
});

describe("formatQuantity", () => {
  it("drops trailing zeros and uses a decimal comma", () => {
    expect(formatQuantity("2.50")).toBe("2,5");
    expect(formatQuantity(3)).toBe("3");
    expect(formatQuantity("1.1234564")).toBe("1,123456");
  });
});
