/** DTE format rules (src/domain/dte-rules.ts; docs/sii-dte.md). */
import { describe, it, expect } from "vitest";
import {
  cafLastUsableDate,
  dteTypeName,
  siiAmount,
  siiDate,
  siiDecimal,
  siiRut,
  siiText,
  siiTimestamp,
} from "../../src/domain/dte-rules.js";

describe("siiText", () => {
  it("cuts to the maximum length and trims", () => {
    expect(siiText("  Parlantes Multimedia 180W.  ", 80)).toBe("Parlantes Multimedia 180W.");
    expect(siiText("a".repeat(100), 80)).toBe("a".repeat(80));
    expect(siiText("EMPRESA DE SERVICIOS INFORMATICOS Y ASESORIAS LIMITADA", 40)).toBe(
      "EMPRESA DE SERVICIOS INFORMATICOS Y ASES",
    );
    expect(siiText("Servicio de implementación — fase 1", 20)).toBe("Servicio de implemen");
  });

  it("keeps Spanish characters and inner spaces, NFC-normalizes", () => {
    expect(siiText("Compañía Ñandú Ltda.", 100)).toBe("Compañía Ñandú Ltda.");
    expect(siiText("EMPRESA  LTDA", 100)).toBe("EMPRESA  LTDA"); // SII's example keeps the double space
    expect(siiText("Pin\u0303a", 10)).toBe("Piña");
  });

  it("replaces characters outside ISO-8859-1 and drops control characters", () => {
    expect(siiText("“Plan” – 10 € …", 80)).toBe('"Plan" - 10 EUR ...');
    expect(siiText("a\u0000b\u0085c 日本", 80)).toBe("abc ??");
  });

  it("gives undefined for empty text", () => {
    expect(siiText("   ", 10)).toBeUndefined();
    expect(siiText(undefined, 10)).toBeUndefined();
    expect(siiText(null, 10)).toBeUndefined();
  });
});

describe("formats", () => {
  it("RUT in XML form", () => {
    expect(siiRut("76.042.235-5", "rut")).toBe("76042235-5");
    expect(siiRut("60803000-k", "rut")).toBe("60803000-K");
    expect(() => siiRut("76042235-4", "emitter.rut")).toThrow(/emitter.rut: is not a valid RUT/);
  });

  it("dates yyyy-mm-dd between 2000 and 2050", () => {
    expect(siiDate("2026-02-28", "d")).toBe("2026-02-28");
    expect(() => siiDate("2026-02-30", "d")).toThrow(/yyyy-mm-dd/);
    expect(() => siiDate("20/11/2026", "d")).toThrow(/yyyy-mm-dd/);
    expect(() => siiDate("2051-01-01", "d")).toThrow(/between/);
  });

  it("time stamps in Chilean local time, no zone", () => {
    // January: Chile summer time (UTC-3); July: standard time (UTC-4)
    expect(siiTimestamp(new Date("2026-01-15T12:00:00Z"))).toBe("2026-01-15T09:00:00");
    expect(siiTimestamp(new Date("2026-07-15T12:00:00Z"))).toBe("2026-07-15T08:00:00");
    expect(siiTimestamp(new Date("2026-07-15T02:30:05Z"))).toBe("2026-07-14T22:30:05");
    expect(siiTimestamp("2003-10-13T09:33:20")).toBe("2003-10-13T09:33:20");
    expect(() => siiTimestamp("2003-10-13 09:33:20")).toThrow(/yyyy-mm-ddThh:mm:ss/);
  });

  it("amounts are whole pesos; quantities keep up to 6 decimals without trailing zeros", () => {
    expect(siiAmount("119000", "t")).toBe("119000");
    expect(() => siiAmount("465.5", "tax")).toThrow(/whole/);
    expect(siiDecimal("2.50", 6)).toBe("2.5");
    expect(siiDecimal("1234.5", 6)).toBe("1234.5");
    expect(siiDecimal("19", 2)).toBe("19");
    expect(siiDecimal("0.0000005", 6)).toBe("0.000001");
  });
});

describe("cafLastUsableDate", () => {
  it("6 calendar months from FA for 33, 43, 46, 56, 61", () => {
    expect(cafLastUsableDate(33, "2026-01-15")).toBe("2026-07-14");
    expect(cafLastUsableDate(61, "2026-08-31")).toBe("2027-02-27"); // Feb has no 31st: 6 months end on the 28th
    expect(cafLastUsableDate(56, "2026-12-01")).toBe("2027-05-31");
  });

  it("no expiry for the other types", () => {
    expect(cafLastUsableDate(34, "2026-01-15")).toBeNull();
    expect(cafLastUsableDate(52, "2026-01-15")).toBeNull();
  });
});

describe("DTE type names", () => {
  it("names each type this service issues as SII does, and another code by its number", () => {
    expect(dteTypeName(33)).toBe("Factura electrónica");
    expect(dteTypeName(52)).toBe("Guía de despacho electrónica");
    expect(dteTypeName(112)).toBe("Nota de crédito de exportación electrónica");
    expect(dteTypeName(46)).toBe("DTE tipo 46");
  });
});
