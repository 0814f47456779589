/** Export code tables and settings (src/domain/sii-exports.ts); the header's examples. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ADUANA_COUNTRY_CODES,
  SII_CURRENCY_NAMES,
  exchangeRateProblem,
  exportSettingsOf,
  pesoAmounts,
  resolveExport,
} from "../../src/domain/sii-exports.js";

describe("SII export codes", () => {
  it("every currency name is one of SII's TipMonType values (SiiTypes_v10.xsd)", () => {
    const xsd = readFileSync(new URL("../../schema/sii/SiiTypes_v10.xsd", import.meta.url), "latin1");
    const names = [...xsd.matchAll(/<xs:enumeration value="([A-Z ]+)"\/>/g)].map((m) => m[1]);
    for (const name of Object.values(SII_CURRENCY_NAMES)) expect(names).toContain(name);
    expect(SII_CURRENCY_NAMES.USD).toBe("DOLAR USA");
    expect(SII_CURRENCY_NAMES.CLP).toBe("PESO CL");
  });

  it("Aduana's country codes: Chile 997, USA 225, Argentina 224", () => {
    expect(ADUANA_COUNTRY_CODES).toMatchObject({ CL: 997, US: 225, AR: 224, BR: 220, CN: 336 });
  });

  it("reads fiscal_settings.export, naming each bad key", () => {
    expect(exportSettingsOf({ export: { sale_clause: "FOB", exchange_rate: "950.25" } })).toEqual({
      settings: { sale_clause: "FOB", exchange_rate: "950.25" },
      problems: [],
    });
    expect(exportSettingsOf({})).toEqual({ settings: {}, problems: [] });
    expect(exportSettingsOf(null)).toEqual({ settings: {}, problems: [] });
    const bad = exportSettingsOf({ export: { sale_clause: "XYZ", destination_country: "us", foo: 1 } });
    expect(bad.settings).toEqual({ destination_country: "US" });
    expect(bad.problems.map((p) => p.field)).toEqual([
      "fiscal_settings.export.sale_clause",
      "fiscal_settings.export.foo",
    ]);
    expect(bad.problems[0].message).toMatch(/^unknown sale clause XYZ; one of CIF, CFR, EXW/);
    expect(exportSettingsOf({ export: "FOB" }).problems).toEqual([
      { field: "fiscal_settings.export", message: "must be an object" },
    ]);
  });

  it("exchange rate: Dec6_4Type", () => {
    expect(exchangeRateProblem("950.25")).toBeNull();
    expect(exchangeRateProblem("0")).toBe("must be greater than 0");
    expect(exchangeRateProblem("1.23456")).toBe("must have at most 4 decimals");
    expect(exchangeRateProblem("1000000")).toBe("must be at most 999999.9999");
    expect(exchangeRateProblem("abc")).toBe("must be a decimal number of pesos per unit");
  });

  it("peso amounts round half away from zero: USD 1234.50 at 950.25 → 1173084", () => {
    expect(pesoAmounts("1234.50", "1234.50", "950.25").total.toString()).toBe("1173084");
  });

  it("resolves the codes with defaults: header example", () => {
    expect(
      resolveExport({
        currencyId: "USD",
        settings: { sale_clause: "FOB" },
        customerCountry: "US",
        customerTaxId: "12-3456789",
      }),
    ).toEqual({
      currencyName: "DOLAR USA",
      exchangeRate: undefined,
      paymentForm: 1,
      saleModality: 1,
      saleClause: 5,
      transportWay: undefined,
      loadingPort: undefined,
      unloadingPort: undefined,
      receiverCountry: 225,
      destinationCountry: 225,
      foreignId: "12-3456789",
      nationality: 225,
    });
    expect(() =>
      resolveExport({ currencyId: "XAU", settings: {}, customerCountry: null, customerTaxId: null }),
    ).toThrow(/no currency name for XAU/);
  });
});
