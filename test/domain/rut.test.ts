/** RUT check digit and normal form (docs/sii-dte.md "Sources"). */
import { describe, it, expect } from "vitest";
import { normalizeRut, rutCheckDigit } from "../../src/domain/rut.js";

describe("rutCheckDigit", () => {
  it("computes the worked examples of chile-dte.md section 7", () => {
    expect(rutCheckDigit("76042235")).toBe("5");
    expect(rutCheckDigit("60803000")).toBe("K"); // r = 10 -> K (SII's own RUT)
    expect(rutCheckDigit("77879240")).toBe("0"); // r = 11 -> 0
  });

  it("restarts the factor at 2 after 7 (bodies longer than 6 digits)", () => {
    // 8x2 + 7x3 + 6x4 + 5x5 + 4x6 + 3x7 + 2x2 + 1x3 = 138; 138 mod 11 = 6; 11 - 6 = 5
    expect(rutCheckDigit("12345678")).toBe("5");
    expect(rutCheckDigit("1")).toBe("9"); // 1 x 2 = 2; 11 - 2 = 9
  });
});

describe("normalizeRut", () => {
  it("accepts the valid examples in normal form", () => {
    expect(normalizeRut("76042235-5")).toBe("76042235-5");
    expect(normalizeRut("60803000-K")).toBe("60803000-K");
    expect(normalizeRut("77879240-0")).toBe("77879240-0");
  });

  it("normalizes the display form with dots", () => {
    expect(normalizeRut("76.042.235-5")).toBe("76042235-5");
    expect(normalizeRut("60.803.000-K")).toBe("60803000-K");
  });

  it("normalizes the compact form without hyphen", () => {
    expect(normalizeRut("760422355")).toBe("76042235-5");
    expect(normalizeRut("60803000K")).toBe("60803000-K");
  });

  it("uppercases a lowercase k", () => {
    expect(normalizeRut("60803000-k")).toBe("60803000-K");
    expect(normalizeRut("60.803.000-k")).toBe("60803000-K");
    expect(normalizeRut("60803000k")).toBe("60803000-K");
  });

  it("ignores surrounding and inner whitespace", () => {
    expect(normalizeRut(" 76042235-5 ")).toBe("76042235-5");
  });

  it("accepts short bodies", () => {
    expect(normalizeRut("1-9")).toBe("1-9");
  });

  it("returns null for a wrong check digit", () => {
    expect(normalizeRut("76042235-4")).toBeNull();
    expect(normalizeRut("76.042.235-K")).toBeNull();
    expect(normalizeRut("60803000-0")).toBeNull();
    expect(normalizeRut("77879240-K")).toBeNull();
  });

  it("returns null for text that is not a RUT", () => {
    expect(normalizeRut("")).toBeNull();
    expect(normalizeRut("-5")).toBeNull();
    expect(normalizeRut("abc")).toBeNull();
    expect(normalizeRut("76042235-X")).toBeNull();
    expect(normalizeRut("76,042,235-5")).toBeNull();
    expect(normalizeRut("123456789-0")).toBeNull(); // body longer than 8 digits
    expect(normalizeRut("76042235--5")).toBeNull();
  });
});
