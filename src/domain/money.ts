/**
 * Money arithmetic. Amounts are decimal.js values, never JS floats (docs/rest.md "Tenancy, ids, money").
 *
 * Rounding rule (docs/invoice-totals.md, SII/LibreDTE): to the currency's unit, whole units for
 * `rounded` currencies (CLP), else the currency's ISO 4217 minor unit (2 for USD/EUR, 4 for CLF),
 * half away from zero (1.5 -> 2, -1.5 -> -2, 465.5 -> 466). Banker's rounding is wrong here.
 */
import { Decimal } from "decimal.js";

export { Decimal };

/** The currency facts rounding needs (a Currency row satisfies it). */
export interface CurrencyUnit {
  id: string;
  /** true: whole units only (CLP) */
  rounded: boolean;
  /** ISO 4217 minor unit exponent (USD 2, CLF 4) */
  decimals: number;
}

export type DecimalInput = Decimal | string | number;

/** Parses a decimal from a string or a number (numbers go through their shortest string form). */
export function toDecimal(value: DecimalInput): Decimal {
  if (value instanceof Decimal) return value;
  return new Decimal(typeof value === "number" ? String(value) : value);
}

/** Decimal places amounts in `currency` are rounded to: 0 when rounded, else its minor unit. */
export function currencyScale(currency: CurrencyUnit): number {
  return currency.rounded ? 0 : currency.decimals;
}

/** round(x) of docs/invoice-totals.md: to the currency's unit, half away from zero. */
export function roundMoney(value: DecimalInput, currency: CurrencyUnit): Decimal {
  return toDecimal(value).toDecimalPlaces(currencyScale(currency), Decimal.ROUND_HALF_UP);
}

/** Sum of decimals (0 for none). */
export function sum(values: Iterable<Decimal>): Decimal {
  let total = new Decimal(0);
  for (const v of values) total = total.plus(v);
  return total;
}
