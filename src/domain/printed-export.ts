/**
 * The export data of a printed export document (110, 111, 112; docs/sii-dte.md "Export
 * documents"): the customs block ("Datos de exportación") and the receiver's foreign tax id, in
 * the document's language, from the codes its DTE carries (infra/taxagency/sii/dte-parties.ts
 * dteExport) or, before it is issued, from its settings (sii-exports.ts resolveExport). Each code
 * prints with its name from the tables of sii-exports.ts and printed-labels.ts and the code itself
 * in parentheses ("Vía de transporte: Marítima, fluvial y lacustre (1)"); a country by its name in
 * the language (Intl, from its ISO code). Pure.
 */
import { formatMoney } from "./format-money.js";
import { toDecimal, type CurrencyUnit } from "./money.js";
import type { PrintedLabels, PrintLocale } from "./printed-labels.js";
import {
  ADUANA_COUNTRY_CODES,
  ADUANA_PACKAGE_TYPES,
  ADUANA_PAYMENT_FORMS,
  ADUANA_PORTS,
  ADUANA_SALE_CLAUSES,
  ADUANA_UNITS,
  type ResolvedExport,
} from "./sii-exports.js";

/** An export DTE's data as printed: its codes (ResolvedExport), plus the totals the DTE states. */
export type PrintableExport = Omit<ResolvedExport, "paymentForm" | "saleModality"> & {
  paymentForm?: number;
  saleModality?: number;
  /** `TotClauVenta`, in the document's currency */
  saleClauseTotal?: string;
  /** `OtraMoneda/MntTotOtrMnda`, whole pesos */
  pesoTotal?: string;
};

const CLP: CurrencyUnit = { id: "CLP", rounded: true, decimals: 0 };

/** The key of `code` in `table` ("San Antonio" for 906), or null. */
export function aduanaKey(table: Readonly<Record<string, number>>, code: number): string | null {
  return Object.entries(table).find(([, value]) => value === code)?.[0] ?? null;
}

/** A decimal as printed: "." thousands, "," decimals, no trailing zeros ("1250.50" → "1.250,5"). */
export function printedNumber(value: string): string {
  const [int, frac] = toDecimal(value).toFixed().split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return frac ? `${grouped},${frac}` : grouped;
}

/**
 * The printed rows of `exp`: `customs` (the export block, in the order of the DTE's Aduana) and
 * `receiver` (after the receiver's rows: foreign tax id, nationality). `currency` is the
 * document's. Example (es): { saleClause: 5, saleClauseTotal: "1226.1" } with USD →
 * customs [["Cláusula de venta", "FOB (5)"], ["Total cláusula de venta", "USD 1.226,10"], …].
 */
export function printedExport(
  exp: PrintableExport,
  l: PrintedLabels,
  locale: PrintLocale,
  currency: CurrencyUnit,
): { customs: [string, string][]; receiver: [string, string][] } {
  const regions = new Intl.DisplayNames([locale], { type: "region" });
  const named = (name: string | null | undefined, code: number) => (name ? `${name} (${code})` : String(code));
  const country = (code: number) => {
    const iso = aduanaKey(ADUANA_COUNTRY_CODES, code);
    return named(iso ? regions.of(iso) : null, code);
  };
  const unit = (code: number | undefined) =>
    code === undefined ? "" : ` ${named(aduanaKey(ADUANA_UNITS, code), code)}`;
  const money = (value: string) => formatMoney(value, currency);
  const rows: [string, string | undefined][] = [
    [
      l.saleModality,
      exp.saleModality === undefined ? undefined : named(l.saleModalities[exp.saleModality], exp.saleModality),
    ],
    [
      l.saleClause,
      exp.saleClause === undefined ? undefined : named(aduanaKey(ADUANA_SALE_CLAUSES, exp.saleClause), exp.saleClause),
    ],
    [l.saleClauseTotal, exp.saleClauseTotal === undefined ? undefined : money(exp.saleClauseTotal)],
    [
      l.transportWay,
      exp.transportWay === undefined ? undefined : named(l.transportWays[exp.transportWay], exp.transportWay),
    ],
    [
      l.loadingPort,
      exp.loadingPort === undefined ? undefined : named(aduanaKey(ADUANA_PORTS, exp.loadingPort), exp.loadingPort),
    ],
    [
      l.unloadingPort,
      exp.unloadingPort === undefined
        ? undefined
        : named(aduanaKey(ADUANA_PORTS, exp.unloadingPort), exp.unloadingPort),
    ],
    [l.tare, exp.tare === undefined ? undefined : `${printedNumber(exp.tare)}${unit(exp.tareUnit)}`],
    [
      l.grossWeight,
      exp.grossWeight === undefined ? undefined : `${printedNumber(exp.grossWeight)}${unit(exp.grossWeightUnit)}`,
    ],
    [
      l.netWeight,
      exp.netWeight === undefined ? undefined : `${printedNumber(exp.netWeight)}${unit(exp.netWeightUnit)}`,
    ],
    [l.totalItems, exp.totalItems === undefined ? undefined : printedNumber(exp.totalItems)],
    [l.totalPackages, exp.totalPackages === undefined ? undefined : printedNumber(exp.totalPackages)],
    ...(exp.packages ?? []).map((p): [string, string] => [
      l.packages,
      [
        (p.quantity === undefined ? "" : `${printedNumber(p.quantity)} × `) +
          named(aduanaKey(ADUANA_PACKAGE_TYPES, p.type), p.type),
        p.marks && `${l.marks} ${p.marks}`,
        p.containerId && `${l.container} ${p.containerId}`,
        p.seal && `${l.seal} ${p.seal}${p.sealIssuer ? ` (${p.sealIssuer})` : ""}`,
      ]
        .filter(Boolean)
        .join(", "),
    ]),
    [l.freight, exp.freight === undefined ? undefined : money(exp.freight)],
    [l.insurance, exp.insurance === undefined ? undefined : money(exp.insurance)],
    [l.receiverCountry, exp.receiverCountry === undefined ? undefined : country(exp.receiverCountry)],
    [l.destinationCountry, exp.destinationCountry === undefined ? undefined : country(exp.destinationCountry)],
    [
      l.exportPaymentForm,
      exp.paymentForm === undefined
        ? undefined
        : named(aduanaKey(ADUANA_PAYMENT_FORMS, exp.paymentForm), exp.paymentForm),
    ],
    [l.currencyName, exp.currencyName],
    [l.exchangeRate, exp.exchangeRate === undefined ? undefined : printedNumber(exp.exchangeRate)],
    [l.pesoTotal, exp.pesoTotal === undefined ? undefined : formatMoney(exp.pesoTotal, CLP)],
  ];
  const receiver: [string, string | undefined][] = [
    [l.foreignId, exp.foreignId],
    [l.nationality, exp.nationality === undefined ? undefined : country(exp.nationality)],
  ];
  const present = (r: [string, string | undefined]): r is [string, string] => r[1] !== undefined && r[1] !== "";
  return { customs: rows.filter(present), receiver: receiver.filter(present) };
}
