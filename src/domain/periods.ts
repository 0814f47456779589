/**
 * Calendar periods in an organization's time zone (customer aggregations, docs/rest.md; the current
 * period is the calendar month, default zone America/Santiago).
 */
import { todayIn } from "./formats.js";

/** `[start, end)` as `yyyy-mm-dd` dates: the calendar month containing `now` in `timeZone`. */
export function calendarMonth(timeZone: string, now: Date): { start: string; end: string } {
  const [year, month] = todayIn(timeZone, now).split("-").map(Number);
  const next = month === 12 ? { year: year + 1, month: 1 } : { year, month: month + 1 };
  const pad = (n: number) => String(n).padStart(2, "0");
  return { start: `${year}-${pad(month)}-01`, end: `${next.year}-${pad(next.month)}-01` };
}
