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

/**
 * A date as dd-mm-yyyy (Spanish) or yyyy-mm-dd (English); "—" for none. A calendar date (yyyy-mm-dd: a
 * document's date, a due date) is printed as it is; an instant (ISO 8601 with a time: a key's revocation, an
 * event's creation) by its date in the reader's time zone, as DateTimeText prints its time, so an instant of
 * 00:30 UTC reads as the day before in Chile.
 */
export function formatDate(value: string | null | undefined, locale: Locale): string {
  if (!value) return "—";
  const [y, m, d] = (value.length > 10 ? localDate(new Date(value)) : value.slice(0, 10)).split("-");
  return locale === "es" ? `${d}-${m}-${y}` : `${y}-${m}-${d}`;
}

/** The yyyy-mm-dd date of `instant` in the reader's time zone. */
function localDate(instant: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${instant.getFullYear()}-${two(instant.getMonth() + 1)}-${two(instant.getDate())}`;
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
