/** Format checks shared by the use cases (zod's well-tested validators). */
import { BoundedMemo } from "./bounded-memo.js";
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

/** isoDate's answers by UTC midnight in epoch ms. */
const isoDates = new BoundedMemo<number, string>(10_000);
const DAY_MS = 86_400_000;

/**
 * The calendar date `yyyy-mm-dd` of a @db.Date value (stored at UTC midnight), or of any instant (its
 * UTC date). Throws RangeError for an invalid Date, as `toISOString` does. The billing run asks it
 * for the same few dates many times per subscription, so the dates of UTC midnights are memoized.
 */
export function isoDate(date: Date): string {
  const time = date.getTime();
  if (time % DAY_MS !== 0) return date.toISOString().slice(0, 10);
  return isoDates.get(time, () => date.toISOString().slice(0, 10));
}

/** `yyyy-mm-dd` that is a real calendar date. */
export function isIsoDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && isoDate(date) === value;
}

/**
 * One Intl.DateTimeFormat per time zone and use, made on first use: constructing one costs far
 * more than formatting with it (it was most of the billing run's CPU). Bounded by the IANA zone
 * names (an unknown name throws in the constructor and is not kept).
 */
function formatterCache(
  options: Intl.DateTimeFormatOptions,
  locale: string,
): (timeZone: string) => Intl.DateTimeFormat {
  const cache = new Map<string, Intl.DateTimeFormat>();
  return (timeZone) => {
    let format = cache.get(timeZone);
    if (!format) {
      format = new Intl.DateTimeFormat(locale, { ...options, timeZone });
      cache.set(timeZone, format);
    }
    return format;
  };
}
const dayFormat = formatterCache({ year: "numeric", month: "2-digit", day: "2-digit" }, "en-CA");
const offsetFormat = formatterCache({ timeZoneName: "longOffset" }, "en-US");

/** Today's calendar date (`yyyy-mm-dd`) in `timeZone` (IANA name). */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  return dayFormat(timeZone).format(now);
}

/** zonedMidnight's instants (epoch ms) by `timeZone` and date. */
const midnights = new BoundedMemo<string, number>(10_000);

/**
 * The instant local midnight starts `date` (`yyyy-mm-dd`) in `timeZone`: 2026-11-01 in
 * America/Santiago (UTC-3 in November) is 2026-11-01T03:00:00Z. Used to compare timestamps with
 * calendar periods of an organization. Remembered per zone and date (the billing run asks for the
 * same few dates for every subscription).
 */
export function zonedMidnight(date: string, timeZone: string): Date {
  return new Date(midnights.get(`${timeZone} ${date}`, () => localMidnight(date, timeZone)));
}

/** zonedMidnight's instant in epoch ms, computed. */
function localMidnight(date: string, timeZone: string): number {
  const offsetAt = (instant: number) => {
    const name =
      offsetFormat(timeZone)
        .formatToParts(new Date(instant))
        .find((p) => p.type === "timeZoneName")?.value ?? "GMT";
    const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
    return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
  };
  const utcMidnight = Date.parse(`${date}T00:00:00Z`);
  const instant = utcMidnight - offsetAt(utcMidnight);
  return utcMidnight - offsetAt(instant); // the offset may change between the two (DST)
}

/** `yyyy-mm-dd` -> Date at UTC midnight (how @db.Date columns are written). */
export function dateColumn(value: string): Date {
  return new Date(`${value}T00:00:00.000Z`);
}

/** A stored `@db.Date` as `yyyy-mm-dd`, null stays null. */
export function storedDate(d: Date | null | undefined): string | null {
  return d ? isoDate(d) : null;
}
