/**
 * The scalars serialize to what the answer's JSON carries (src/graphql/scalars.ts), so an operation run in process
 * (the REST adapter, rest/router.ts) reads the values /graphql's clients read.
 */
import { describe, expect, it } from "vitest";
import { DateTimeResolver as LibraryDateTime } from "graphql-scalars";
import { DateTimeResolver, JSONObjectResolver, jsonValue, utcInstant } from "../src/graphql/scalars.js";

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

describe("DateTime's quick path for the common UTC form (utcInstant)", () => {
  const library = (value: string): number | "refused" => {
    try {
      return (LibraryDateTime.parseValue(value) as Date).getTime();
    } catch {
      return "refused";
    }
  };
  const ours = (value: string): number | "refused" => {
    try {
      return (DateTimeResolver.parseValue(value) as Date).getTime();
    } catch {
      return "refused";
    }
  };

  it("reads what graphql-scalars reads, to the same instant, and leaves the rest to it", () => {
    const values: string[] = [];
    for (const year of ["0099", "0100", "1900", "1969", "2000", "2024", "2026", "2100", "9999"])
      for (const month of ["00", "01", "02", "04", "12", "13"])
        for (const day of ["00", "01", "28", "29", "30", "31", "32"])
          for (const time of ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "07:08:09"])
            for (const fraction of ["", ".000", ".5", ".123", ".999", ".1234"])
              for (const zone of ["Z", "z", "+00:00", "-03:00"])
                values.push(`${year}-${month}-${day}T${time}${fraction}${zone}`);
    values.push("2026-11-24t10:15:30Z", " 2026-11-24T10:15:30Z", "2026-11-24T10:15:30Z ", "2026-11-24 10:15:30Z", "");
    let quick = 0;
    for (const value of values) {
      expect(ours(value), value).toBe(library(value));
      if (utcInstant(value)) {
        quick++;
        expect(utcInstant(value)!.getTime(), value).toBe(library(value));
      }
    }
    expect(quick).toBeGreaterThan(1000); // the common form does take the quick path
    expect(utcInstant("2026-02-29T00:00:00Z")).toBeUndefined(); // not a leap year: graphql-scalars refuses it
    expect(utcInstant("2024-02-29T00:00:00.250Z")?.toISOString()).toBe("2024-02-29T00:00:00.250Z");
    expect(utcInstant("2026-11-24T10:15:30-03:00")).toBeUndefined(); // an offset: graphql-scalars reads it
    expect(DateTimeResolver.parseValue("2026-11-24T10:15:30-03:00")).toEqual(new Date("2026-11-24T13:15:30Z"));
  });
});
