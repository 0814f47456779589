import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { addFieldError, FieldErrorCollector, ValidationError, type FieldErrors } from "../../src/domain/errors.js";
import {
  boundFieldErrors,
  boundMessage,
  checkJsonValue,
  checkNoteLength,
  decimalRangeProblem,
  DEFAULT_TEXT_LIMIT,
  jsonDepthProblem,
  MAX_DECIMAL,
  MAX_JSON_DEPTH,
  MAX_NOTE_LENGTH,
  quote,
  TEXT_LIMITS,
  textLimit,
  textProblem,
} from "../../src/domain/input-limits.js";

describe("decimal range (Decimal(20,6) columns)", () => {
  it("accepts up to 99999999999999.999999 either sign and refuses 10^14 naming the largest value", () => {
    expect(decimalRangeProblem("99999999999999.999999")).toBeNull();
    expect(decimalRangeProblem("-99999999999999.999999")).toBeNull();
    expect(decimalRangeProblem("0.0000001")).toBeNull();
    expect(decimalRangeProblem("100000000000000")).toContain(`the largest allowed value is ${MAX_DECIMAL}`);
    expect(decimalRangeProblem("-1e300")).toContain(MAX_DECIMAL);
    expect(decimalRangeProblem("abc")).toBe("must be a decimal number");
  });
});

describe("text", () => {
  it("refuses NUL, unpaired surrogates and text over the limit (counted in code points)", () => {
    expect(textProblem("a\u0000b")).toMatch(/NUL/);
    expect(textProblem("a\ud800b")).toMatch(/surrogate/);
    expect(textProblem("\udc00")).toMatch(/surrogate/);
    expect(textProblem("😀 ok")).toBeNull(); // a pair is fine
    expect(textProblem("x".repeat(DEFAULT_TEXT_LIMIT))).toBeNull();
    expect(textProblem("x".repeat(DEFAULT_TEXT_LIMIT + 1))).toBe(`must have at most ${DEFAULT_TEXT_LIMIT} characters`);
    expect(textProblem("😀".repeat(DEFAULT_TEXT_LIMIT))).toBeNull(); // 2000 UTF-16 units, 1000 characters
    expect(textProblem("x".repeat(5000), null)).toBeNull();
  });

  it("limits by field with a default; the table is the one in docs/input-limits.md", () => {
    expect(textLimit("CustomerInput.name")).toBe(DEFAULT_TEXT_LIMIT);
    expect(textLimit("InvoiceInput.note")).toBe(5_000);
    expect(textLimit("constructor")).toBe(DEFAULT_TEXT_LIMIT);
    // Prettier pads the table's cells; compare with the padding collapsed.
    const doc = fs.readFileSync(new URL("../../docs/input-limits.md", import.meta.url), "utf8").replace(/ {2,}/g, " ");
    expect(doc).toContain(`| (any other text field) | ${DEFAULT_TEXT_LIMIT.toLocaleString("en")} |`);
    for (const [key, limit] of Object.entries(TEXT_LIMITS))
      expect(doc).toContain(`| \`${key}\` | ${limit.toLocaleString("en")} |`);
  });
});

describe("note length (invoices, credit notes, subscriptions)", () => {
  it("accepts 5000 characters and refuses 5001 on the given field; the input guard uses the same limit", () => {
    const errors = new FieldErrorCollector();
    checkNoteLength(errors, "note", "a".repeat(5000));
    checkNoteLength(errors, "note", null);
    expect(() => errors.throwIfAny()).not.toThrow();
    checkNoteLength(errors, "internal_note", "a".repeat(5001));
    expect(() => errors.throwIfAny()).toThrow(ValidationError);
    try {
      errors.throwIfAny();
    } catch (e) {
      expect((e as ValidationError).fields).toEqual({ internal_note: ["must have at most 5000 characters"] });
    }
    expect([
      MAX_NOTE_LENGTH,
      textLimit("InvoiceInput.note"),
      textLimit("CreditNoteInput.internalNote"),
      textLimit("SubscriptionInput.note"),
    ]).toEqual([5000, 5000, 5000, 5000]);
  });
});

describe("JSON structure", () => {
  it("finds the depth of JSON text without parsing, ignoring brackets inside strings", () => {
    expect(jsonDepthProblem("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonDepthProblem("[".repeat(MAX_JSON_DEPTH + 1))).toMatch(/levels deep/);
    expect(jsonDepthProblem(JSON.stringify({ a: "[[[[".repeat(100), b: '\\"[[[' }))).toBeNull();
    expect(jsonDepthProblem("[".repeat(1_000_000))).toMatch(/levels deep/);
  });

  it("checks every string and key of a parsed value by path, without recursion", () => {
    const errors: FieldErrors = {};
    checkJsonValue({ name: "a\u0000", lines: [{ ["k\ud800"]: 1 }, { d: "x".repeat(20) }] }, "", errors, (path) =>
      path === "lines.1.d" ? 10 : null,
    );
    expect(errors).toEqual({
      name: [expect.stringMatching(/NUL/)],
      "lines.0.k\ud800": [expect.stringMatching(/^key .*surrogate/)],
      "lines.1.d": ["must have at most 10 characters"],
    });
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const deepErrors: FieldErrors = {};
    checkJsonValue({ metadata: deep }, "", deepErrors);
    expect(Object.values(deepErrors).flat()).toEqual([expect.stringMatching(/levels deep/)]);
    const wide: FieldErrors = {};
    checkJsonValue({ m: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i])) }, "", wide);
    expect(wide).toEqual({ m: ["must have at most 1000 keys"] });
  });
});

describe("bounded messages", () => {
  it("quotes at most 200 characters of input and says how long it was", () => {
    expect(quote("abc")).toBe('"abc"');
    expect(quote("x".repeat(300))).toBe(`"${"x".repeat(200)}…" (300 characters)`);
    const message =
      `Variable "$input" got invalid value "${"y".repeat(4_900_000)}" at "input.name"; String cannot ` + `represent`;
    const bounded = boundMessage(message);
    expect(bounded).toBe(
      `Variable "$input" got invalid value "${"y".repeat(200)}…" (4900000 characters) at "input.name"; String cannot ` +
        `represent`,
    );
    expect(boundMessage("z".repeat(5000)).length).toBeLessThan(1100);
    const fields = boundFieldErrors({ ["k".repeat(1000)]: ["unknown field"], amount: [`got "${"9".repeat(900)}"`] });
    expect(JSON.stringify(fields).length).toBeLessThan(600);
  });
});

describe("FieldErrorCollector and addFieldError", () => {
  it("never throws for paths named like Object.prototype keys, and keeps them as own fields", () => {
    const c = new FieldErrorCollector();
    for (const path of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "lines.0.constructor"])
      c.add(path, "bad");
    c.add("constructor", "again");
    let error: ValidationError | undefined;
    try {
      c.throwIfAny();
    } catch (e) {
      error = e as ValidationError;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(Object.keys(error!.fields!)).toEqual([
      "constructor",
      "__proto__",
      "toString",
      "hasOwnProperty",
      "valueOf",
      "lines.0.constructor",
    ]);
    expect(error!.fields!.constructor).toEqual(["bad", "again"]);
    expect(JSON.parse(JSON.stringify(error!.fields)).__proto__).toEqual(["bad"]);
    const plain: FieldErrors = {};
    addFieldError(plain, "__proto__", "x");
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
  });
});
