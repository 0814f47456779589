/**
 * Human formatting of amounts for printed documents: the currency code, thousands separated by
 * "." and decimals by "," (Chilean convention), to the currency's scale. `CLP 2.916`, `USD 1.234,50`.
 */
import { currencyScale, roundMoney, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

export function formatAmount(value: DecimalInput, currency: CurrencyUnit): string {
  const fixed = roundMoney(toDecimal(value), currency).toFixed(currencyScale(currency));
  const [int, frac] = fixed.replace("-", "").split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return `${fixed.startsWith("-") ? "-" : ""}${grouped}${frac ? `,${frac}` : ""}`;
}

export function formatMoney(value: DecimalInput, currency: CurrencyUnit): string {
  return `${currency.id} ${formatAmount(value, currency)}`;
}

/** Quantities: up to 6 decimals, trailing zeros dropped, "," as decimal separator. */
export function formatQuantity(value: DecimalInput): string {
  return toDecimal(value).toDecimalPlaces(6).toString().replace(".", ",");
}
