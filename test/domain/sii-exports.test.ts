/** Export code tables and settings (src/domain/sii-exports.ts); the header's examples. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ADUANA_COUNTRY_CODES,
  ADUANA_PACKAGE_TYPES,
  ADUANA_UNITS,
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

  it("packages and weights: codes from Aduana's tables, numbers kept as decimal text", () => {
    const read = exportSettingsOf({
      export: {
        tare: 150,
        tare_unit: "kn",
        gross_weight: "1250.50",
        gross_weight_unit: "KN",
        net_weight: 1100,
        net_weight_unit: "KN",
        total_items: "2",
        total_packages: 3,
        packages: [
          { type: "caja de carton", quantity: 2, marks: "ACME-1/2", container_id: "MSCU1234567", seal: "SL-998" },
          { type: "PALLETS", quantity: "1", seal_issuer: "Aduana" },
        ],
        freight: "120.50",
        insurance: 15.1234,
      },
    });
    expect(read.problems).toEqual([]);
    expect(read.settings).toEqual({
      tare: "150",
      tare_unit: "KN",
      gross_weight: "1250.5",
      gross_weight_unit: "KN",
      net_weight: "1100",
      net_weight_unit: "KN",
      total_items: "2",
      total_packages: "3",
      packages: [
        { type: "CAJA DE CARTON", quantity: "2", marks: "ACME-1/2", container_id: "MSCU1234567", seal: "SL-998" },
        { type: "PALLETS", quantity: "1", seal_issuer: "Aduana" },
      ],
      freight: "120.5",
      insurance: "15.1234",
    });
    const resolved = resolveExport({
      currencyId: "USD",
      settings: read.settings,
      customerCountry: "US",
      customerTaxId: null,
    });
    expect(resolved).toMatchObject({
      tare: "150",
      tareUnit: 6,
      grossWeight: "1250.5",
      grossWeightUnit: 6,
      netWeight: "1100",
      netWeightUnit: 6,
      totalItems: "2",
      totalPackages: "3",
      packages: [
        { type: 22, quantity: "2", marks: "ACME-1/2", containerId: "MSCU1234567", seal: "SL-998" },
        { type: 80, quantity: "1", sealIssuer: "Aduana" },
      ],
      freight: "120.5",
      insurance: "15.1234",
    });
    expect(ADUANA_UNITS).toMatchObject({ TMB: 1, KN: 6, LT: 9, U: 10, "S.U.M": 99 });
    expect(ADUANA_PACKAGE_TYPES).toMatchObject({ "CAJA DE CARTON": 22, CONT20: 73, PALLETS: 80, "S/EMBALAR": 99 });
  });

  it("packages and weights: each bad value is a problem on its key", () => {
    const bad = exportSettingsOf({
      export: {
        tare: "1.5",
        gross_weight: "1.234",
        gross_weight_unit: "KG",
        net_weight_unit: "KN",
        total_items: 0,
        total_packages: "1234567890123456789",
        freight: "-3",
        insurance: "0.00001",
        packages: [{ quantity: 2 }, { type: "BOX", quantity: "2.5", marks: "x".repeat(256), colour: "red" }],
      },
    });
    const byField = Object.fromEntries(bad.problems.map((p) => [p.field.replace("fiscal_settings.export.", ""), p]));
    expect(Object.keys(byField).sort()).toEqual([
      "freight",
      "gross_weight",
      "gross_weight_unit",
      "insurance",
      "net_weight",
      "packages.0.type",
      "packages.1.colour",
      "packages.1.marks",
      "packages.1.quantity",
      "packages.1.type",
      "tare",
      "tare_unit",
      "total_items",
      "total_packages",
    ]);
    expect(byField.tare.message).toBe("must be a whole number greater than 0");
    expect(byField.tare_unit.message).toBe("is required with tare");
    expect(byField.gross_weight.message).toBe("must have at most 2 decimals");
    expect(byField.gross_weight_unit.message).toMatch(/^unknown gross weight unit KG; one of TMB, QMB/);
    expect(byField.net_weight.message).toBe("is required with net_weight_unit");
    expect(byField.total_packages.message).toBe("must have at most 18 digits");
    expect(byField.freight.message).toBe("must be greater than 0");
    expect(byField.insurance.message).toBe("must have at most 4 decimals");
    expect(byField["packages.0.type"].message).toBe("is required (CodTpoBultos)");
    expect(byField["packages.1.type"].message).toMatch(/^unknown package type BOX; one of POLVO/);
    expect(byField["packages.1.marks"].message).toBe("must be at most 255 characters");
    expect(
      exportSettingsOf({ export: { packages: Array.from({ length: 11 }, () => ({ type: "SACO" })) } }).problems,
    ).toEqual([{ field: "fiscal_settings.export.packages", message: "must have at most 10 packages (TipoBultos)" }]);
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
