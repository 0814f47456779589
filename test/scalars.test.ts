/**
 * The scalars serialize to what the answer's JSON carries (src/graphql/scalars.ts), so an operation run in process
 * (the REST adapter, rest/router.ts) reads the values /graphql's clients read.
 */
import { describe, expect, it } from "vitest";
import { DateTimeResolver, JSONObjectResolver, jsonValue } from "../src/graphql/scalars.js";

describe("scalars serialize to JSON's values", () => {
  it("DateTime: the ISO string, from a Date or a string", () => {
    expect(DateTimeResolver.serialize(new Date(Date.UTC(2026, 10, 24, 10, 15, 30)))).toBe("2026-11-24T10:15:30.000Z");
    expect(DateTimeResolver.serialize("2026-11-24T07:15:30-03:00")).toBe("2026-11-24T10:15:30.000Z");
  });

  it("JSONObject: JSON.stringify's rules, the same object when it is plain JSON already", () => {
    const plain = { order: "A-12", lines: [1, "x", null, { ok: true }] };
    expect(JSONObjectResolver.serialize(plain)).toBe(plain);
    const odd = {
      requested: new Date(0),
      gone: undefined,
      fn: () => 1,
      nan: NaN,
      list: [undefined, new Date(1), () => 2, Infinity],
      nested: { toJSON: () => ({ at: new Date(2) }) },
    };
    expect(JSONObjectResolver.serialize(odd)).toEqual(JSON.parse(JSON.stringify(odd)));
    expect(odd.requested).toBeInstanceOf(Date); // the value itself is not changed
    expect(() => jsonValue({ big: 1n })).toThrow(TypeError);
  });
});

describe("Decimal serializes", () => {
  it("a Decimal by itself and anything else read as one, both without exponent or trailing zeros", async () => {
    const { DecimalScalar } = await import("../src/graphql/scalars.js");
    const { Decimal: PrismaDecimal } = await import("@prisma/client-runtime-utils");
    const { Decimal } = await import("decimal.js");
    for (const text of ["4284", "600.000000", "0.000001", "1e-7", "-0.5", "-0", "99999999999999.999999", "1E+21"]) {
      const expected = new Decimal(text).toFixed();
      expect([
        DecimalScalar.serialize(new PrismaDecimal(text)),
        DecimalScalar.serialize(new Decimal(text)),
        DecimalScalar.serialize(text),
      ]).toEqual([expected, expected, expected]);
    }
  });
});
