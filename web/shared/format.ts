/** Formatting shared by both frontends: amounts and dates in Spanish or English, and the reader's language. */
export type Locale = "es" | "en";

/**
 * An amount (a decimal string from the API, never converted to a float) in `currency` with its
 * `decimals`: grouped thousands and the locale's decimal mark, e.g. "CLP 11.900" or "USD 1,234.50".
 */
export function formatMoney(value: string, currency: string, decimals: number, locale: Locale): string {
  const negative = value.startsWith("-");
  const [whole, fraction = ""] = value.replace(/^[-+]/, "").split(".");
  const group = locale === "es" ? "." : ",";
  const mark = locale === "es" ? "," : ".";
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  const digits = decimals > 0 ? mark + (fraction + "0".repeat(decimals)).slice(0, decimals) : "";
  return `${negative ? "-" : ""}${currency} ${grouped}${digits}`;
}

/** A yyyy-mm-dd date (or a date-time's date) as dd-mm-yyyy (Spanish) or yyyy-mm-dd (English); "—" for none. */
export function formatDate(value: string | null | undefined, locale: Locale): string {
  if (!value) return "—";
  const [y, m, d] = value.slice(0, 10).split("-");
  return locale === "es" ? `${d}-${m}-${y}` : `${y}-${m}-${d}`;
}

/** True when a decimal string is zero (compared as text, never as a float). */
export const isZero = (value: string) => /^[-+]?[0.]*$/.test(value);

/** The language the reader chose before (saved under `key`), else the browser's: Spanish or English. */
export function savedLocale(key: string): Locale | null {
  const saved = localStorage.getItem(key);
  return saved === "es" || saved === "en" ? saved : null;
}

export function browserLocale(): Locale {
  return navigator.language.startsWith("es") ? "es" : "en";
}
