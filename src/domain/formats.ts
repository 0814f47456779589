/** Format checks shared by the use cases (zod's well-tested validators). */
import { z } from "zod";

const email = z.email();
const url = z.url({ protocol: /^https?$/ });

/** RFC 5322-ish e-mail address as zod accepts it. */
export function isEmailAddress(value: string): boolean {
  return email.safeParse(value).success;
}

/** Absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  return url.safeParse(value).success;
}

/** The calendar date `yyyy-mm-dd` of a @db.Date value (stored at UTC midnight). */
export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** `yyyy-mm-dd` that is a real calendar date. */
export function isIsoDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && isoDate(date) === value;
}

/** Today's calendar date (`yyyy-mm-dd`) in `timeZone` (IANA name). */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
}
