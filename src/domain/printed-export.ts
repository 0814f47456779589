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

/** A printed row: label and value; rows without a value (undefined or "") are left out. */
type PrintedRow = [string, string | undefined];

/** How an export's codes and amounts print in the document's language and currency. */
interface ExportFormat {
  /** "name (code)", or the code alone when the name is unknown */
  named: (name: string | null | undefined, code: number) => string;
  /** an Aduana country code by its region name in the language (Intl, from its ISO code) */
  country: (code: number) => string;
  /** " name (code)" of an Aduana unit code after a weight, "" without a unit */
  unit: (code: number | undefined) => string;
  /** an amount in the document's currency ("USD 1.226,10") */
  money: (value: string) => string;
}

function exportFormat(locale: PrintLocale, currency: CurrencyUnit): ExportFormat {
  const regions = new Intl.DisplayNames([locale], { type: "region" });
  const named = (name: string | null | undefined, code: number) => (name ? `${name} (${code})` : String(code));
  return {
    named,
    country: (code) => {
      const iso = aduanaKey(ADUANA_COUNTRY_CODES, code);
      return named(iso ? regions.of(iso) : null, code);
    },
    unit: (code) => (code === undefined ? "" : ` ${named(aduanaKey(ADUANA_UNITS, code), code)}`),
    money: (value) => formatMoney(value, currency),
  };
}

/** `f(value)`, or undefined when the value is. */
function ifGiven<T>(value: T | undefined, f: (v: T) => string): string | undefined {
  return value === undefined ? undefined : f(value);
}

/** The sale and route rows, in the order of the DTE's Aduana: modality, clause and its total, transport way, ports. */
function saleRows(exp: PrintableExport, l: PrintedLabels, f: ExportFormat): PrintedRow[] {
  return [
    [l.saleModality, ifGiven(exp.saleModality, (code) => f.named(l.saleModalities[code], code))],
    [l.saleClause, ifGiven(exp.saleClause, (code) => f.named(aduanaKey(ADUANA_SALE_CLAUSES, code), code))],
    [l.saleClauseTotal, ifGiven(exp.saleClauseTotal, f.money)],
    [l.transportWay, ifGiven(exp.transportWay, (code) => f.named(l.transportWays[code], code))],
    [l.loadingPort, ifGiven(exp.loadingPort, (code) => f.named(aduanaKey(ADUANA_PORTS, code), code))],
    [l.unloadingPort, ifGiven(exp.unloadingPort, (code) => f.named(aduanaKey(ADUANA_PORTS, code), code))],
  ];
}

/** One `TipoBultos` as printed: "quantity × type (code)", then its marks, container and seal (with its issuer). */
function packageRow(
  p: NonNullable<PrintableExport["packages"]>[number],
  l: PrintedLabels,
  f: ExportFormat,
): PrintedRow {
  return [
    l.packages,
    [
      (p.quantity === undefined ? "" : `${printedNumber(p.quantity)} × `) +
        f.named(aduanaKey(ADUANA_PACKAGE_TYPES, p.type), p.type),
      p.marks && `${l.marks} ${p.marks}`,
      p.containerId && `${l.container} ${p.containerId}`,
      p.seal && `${l.seal} ${p.seal}${p.sealIssuer ? ` (${p.sealIssuer})` : ""}`,
    ]
      .filter(Boolean)
      .join(", "),
  ];
}

/** The cargo rows: tare and weights with their units, item and package counts, then each package. */
function cargoRows(exp: PrintableExport, l: PrintedLabels, f: ExportFormat): PrintedRow[] {
  return [
    [l.tare, ifGiven(exp.tare, (v) => `${printedNumber(v)}${f.unit(exp.tareUnit)}`)],
    [l.grossWeight, ifGiven(exp.grossWeight, (v) => `${printedNumber(v)}${f.unit(exp.grossWeightUnit)}`)],
    [l.netWeight, ifGiven(exp.netWeight, (v) => `${printedNumber(v)}${f.unit(exp.netWeightUnit)}`)],
    [l.totalItems, ifGiven(exp.totalItems, printedNumber)],
    [l.totalPackages, ifGiven(exp.totalPackages, printedNumber)],
    ...(exp.packages ?? []).map((p) => packageRow(p, l, f)),
  ];
}

/**
 * The value rows: freight and insurance (document currency), receiver and destination countries,
 * the export payment form, the currency's name, the exchange rate and the total in pesos (CLP).
 */
function valueRows(exp: PrintableExport, l: PrintedLabels, f: ExportFormat): PrintedRow[] {
  return [
    [l.freight, ifGiven(exp.freight, f.money)],
    [l.insurance, ifGiven(exp.insurance, f.money)],
    [l.receiverCountry, ifGiven(exp.receiverCountry, f.country)],
    [l.destinationCountry, ifGiven(exp.destinationCountry, f.country)],
    [l.exportPaymentForm, ifGiven(exp.paymentForm, (code) => f.named(aduanaKey(ADUANA_PAYMENT_FORMS, code), code))],
    [l.currencyName, exp.currencyName],
    [l.exchangeRate, ifGiven(exp.exchangeRate, printedNumber)],
    [l.pesoTotal, ifGiven(exp.pesoTotal, (v) => formatMoney(v, CLP))],
  ];
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
  const f = exportFormat(locale, currency);
  const rows = [...saleRows(exp, l, f), ...cargoRows(exp, l, f), ...valueRows(exp, l, f)];
  const receiver: PrintedRow[] = [
    [l.foreignId, exp.foreignId],
    [l.nationality, ifGiven(exp.nationality, f.country)],
  ];
  const present = (r: PrintedRow): r is [string, string] => r[1] !== undefined && r[1] !== "";
  return { customs: rows.filter(present), receiver: receiver.filter(present) };
}
