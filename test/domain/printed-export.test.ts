/** An export document's printed customs rows (src/domain/printed-export.ts). */
import { describe, expect, it } from "vitest";
import { aduanaKey, printedExport, printedNumber } from "../../src/domain/printed-export.js";
import { printedLabels } from "../../src/domain/printed-labels.js";
import { ADUANA_PORTS, ADUANA_UNITS } from "../../src/domain/sii-exports.js";

const USD = { id: "USD", rounded: false, decimals: 2 };

describe("printed export data", () => {
  it("numbers with '.' thousands and ',' decimals, no trailing zeros; codes back to their keys", () => {
    expect(printedNumber("1250.50")).toBe("1.250,5");
    expect(printedNumber("1234567")).toBe("1.234.567");
    expect(printedNumber("0.75")).toBe("0,75");
    expect(aduanaKey(ADUANA_PORTS, 906)).toBe("San Antonio");
    expect(aduanaKey(ADUANA_UNITS, 6)).toBe("KN");
    expect(aduanaKey(ADUANA_UNITS, 55)).toBeNull();
  });

  it("Spanish: each code with its name, amounts in the currency, rows without a value left out", () => {
    const rows = printedExport(
      {
        currencyName: "DOLAR USA",
        saleModality: 3,
        saleClause: 1,
        saleClauseTotal: "1000",
        transportWay: 4,
        destinationCountry: 224,
        netWeight: "12.5",
        netWeightUnit: 6,
        packages: [{ type: 62, quantity: "4", seal: "S-1", sealIssuer: "Naviera" }],
        insurance: "3.5",
        foreignId: "30-12345678-9",
        nationality: 224,
      },
      printedLabels("es"),
      "es",
      USD,
    );
    expect(rows.customs).toEqual([
      ["Modalidad de venta", "En consignación libre (3)"],
      ["Cláusula de venta", "CIF (1)"],
      ["Total cláusula de venta", "USD 1.000,00"],
      ["Vía de transporte", "Aérea (4)"],
      ["Peso neto", "12,5 KN (6)"],
      ["Bultos", "4 × SACO (62), sello S-1 (Naviera)"],
      ["Seguro", "USD 3,50"],
      ["País de destino", "Argentina (224)"],
      ["Tipo de moneda", "DOLAR USA"],
    ]);
    expect(rows.receiver).toEqual([
      ["ID extranjero", "30-12345678-9"],
      ["Nacionalidad", "Argentina (224)"],
    ]);
  });

  it("English labels and country names; an unknown code prints as the code", () => {
    const rows = printedExport(
      {
        currencyName: "EURO",
        transportWay: 1,
        receiverCountry: 563,
        unloadingPort: 9999,
        exchangeRate: "1020.5",
        pesoTotal: "1020500",
      },
      printedLabels("en"),
      "en",
      { id: "EUR", rounded: false, decimals: 2 },
    );
    expect(rows.customs).toEqual([
      ["Transport", "Sea, river and lake (1)"],
      ["Port of unloading", "9999"],
      ["Receiver's country", "Germany (563)"],
      ["Currency (SII)", "EURO"],
      ["Exchange rate", "1.020,5"],
      ["Total in pesos", "CLP 1.020.500"],
    ]);
    expect(rows.receiver).toEqual([]);
  });
});
