/**
 * Filter inputs shared by list fields, and their Prisma translation. REST's `field=`,
 * `field__in=`, `__exact`, `__contains`, `__icontains`, `__gte`, `__lte` map onto them
 * (src/rest/filters.ts).
 */
import type { EnumRef } from "@pothos/core";
import { builder } from "./builder.js";
import { dateColumn } from "../domain/formats.js";

type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

export interface StringFilterValue {
  equals?: string | null;
  in?: string[] | null;
  contains?: string | null;
  icontains?: string | null;
}

export const StringFilter = builder.inputType("StringFilter", {
  description:
    "Text filter; every given operator must match (an empty filter matches everything). Matching is exact unless the " +
    "operator says otherwise.",
  fields: (t) => ({
    equals: t.string({ description: "exact match (REST `field=` and `field__exact=`)" }),
    in: t.stringList({ description: "one of (REST `field__in=a,b`)" }),
    contains: t.string({ description: "substring, case-sensitive (REST `__contains`)" }),
    icontains: t.string({ description: "substring, case-insensitive (REST `__icontains`)" }),
  }),
});

export interface DateTimeFilterValue {
  equals?: Date | null;
  gte?: Date | null;
  lte?: Date | null;
  gt?: Date | null;
  lt?: Date | null;
}

export const DateTimeFilter = builder.inputType("DateTimeFilter", {
  description:
    "Time filter on an instant; every given operator must match (gte and lte include the bound, gt and lt do not). " +
    "REST's date-only values (`yyyy-mm-dd`) cover that whole UTC day: `__gt` is after it, `__lt` before it.",
  fields: (t) => ({
    equals: t.field({ type: "DateTime", description: "exactly this instant (to the millisecond)" }),
    gte: t.field({ type: "DateTime", description: "at or after (REST `__gte`)" }),
    lte: t.field({ type: "DateTime", description: "at or before (REST `__lte`)" }),
    gt: t.field({ type: "DateTime", description: "strictly after (REST `__gt`)" }),
    lt: t.field({ type: "DateTime", description: "strictly before (REST `__lt`)" }),
  }),
});

export interface DateFilterValue {
  equals?: string | null;
  gte?: string | null;
  lte?: string | null;
}

export const DateFilter = builder.inputType("DateFilter", {
  description:
    "Filter on a calendar date (yyyy-mm-dd, no time or zone); bounds are inclusive and every given operator must " +
    "match.",
  fields: (t) => ({
    equals: t.field({ type: "Date", description: "exactly this date (REST `field=` and `field__exact=`)" }),
    gte: t.field({ type: "Date", description: "on or after (REST `__gte`)" }),
    lte: t.field({ type: "Date", description: "on or before (REST `__lte`)" }),
  }),
});

export interface IntFilterValue {
  equals?: number | null;
  in?: number[] | null;
}

export const IntFilter = builder.inputType("IntFilter", {
  description: "Filter on a whole number; every given operator must match (an empty filter matches everything).",
  fields: (t) => ({
    equals: t.int({ description: "exactly this number (REST `field=` and `field__exact=`)" }),
    in: t.intList({ description: "one of (REST `field__in=1,2,3`)" }),
  }),
});

export interface EnumFilterValue<T extends string> {
  equals?: T | null;
  in?: T[] | null;
}

/**
 * A filter input over a closed set (`<Enum>Filter { equals, in }`), for a field whose output is the
 * GraphQL enum `values` (docs/graphql.md "Enums"). REST's `field=` and `field__in=` map onto it;
 * text operators do not apply to a closed set.
 */
export function enumFilter<T extends string>(values: EnumRef<BuilderTypes, T, T>, enumName: string) {
  return builder.inputType(`${enumName}Filter`, {
    description:
      `Filter over the ${enumName} values; every given operator must match (an empty filter matches ` + `everything).`,
    fields: (t) => ({
      equals: t.field({ type: values, description: "exact match (REST `field=` and `field__exact=`)" }),
      in: t.field({ type: [values], description: "one of (REST `field__in=a,b`)" }),
    }),
  });
}

/** `{ field: <prisma filter> }` list for an enum filter on `field` (internal values). */
export function enumConditions<T extends string>(field: string, filter: EnumFilterValue<T> | null | undefined) {
  if (!filter) return [];
  const where: Record<string, unknown> = {};
  if (filter.equals != null) where.equals = filter.equals;
  if (filter.in != null) where.in = filter.in;
  return Object.keys(where).length ? [{ [field]: where }] : [];
}

/** Prisma `where` fragment of a StringFilter (undefined when empty). */
export function stringWhere(filter: StringFilterValue | null | undefined, { uppercase = false } = {}) {
  if (!filter) return undefined;
  const norm = (v: string) => (uppercase ? v.toUpperCase() : v);
  const where: Record<string, unknown> = {};
  if (filter.equals != null) where.equals = norm(filter.equals);
  if (filter.in != null) where.in = filter.in.map(norm);
  const and: Record<string, unknown>[] = [];
  if (filter.contains != null) and.push({ contains: filter.contains });
  if (filter.icontains != null) and.push({ contains: filter.icontains, mode: "insensitive" });
  if (and.length === 1) Object.assign(where, and[0]);
  return { where: Object.keys(where).length ? where : undefined, extra: and.length > 1 ? and : [] };
}

/** `{ field: <prisma filter> }` list (AND-ed) for a StringFilter on `field`. */
export function stringConditions(
  field: string,
  filter: StringFilterValue | null | undefined,
  options?: { uppercase?: boolean },
) {
  const built = stringWhere(filter, options);
  if (!built) return [];
  const conditions: Record<string, unknown>[] = [];
  if (built.where) conditions.push({ [field]: built.where });
  for (const extra of built.extra) conditions.push({ [field]: extra });
  return conditions;
}

export function dateTimeConditions(field: string, filter: DateTimeFilterValue | null | undefined) {
  if (!filter) return [];
  const where: Record<string, Date> = {};
  if (filter.equals) where.equals = filter.equals;
  if (filter.gte) where.gte = filter.gte;
  if (filter.lte) where.lte = filter.lte;
  if (filter.gt) where.gt = filter.gt;
  if (filter.lt) where.lt = filter.lt;
  return Object.keys(where).length ? [{ [field]: where }] : [];
}

/** `{ field: <prisma filter> }` list for a DateFilter on the `@db.Date` column `field` (each date at UTC midnight). */
export function dateConditions(field: string, filter: DateFilterValue | null | undefined) {
  if (!filter) return [];
  const where: Record<string, Date> = {};
  if (filter.equals != null) where.equals = dateColumn(filter.equals);
  if (filter.gte != null) where.gte = dateColumn(filter.gte);
  if (filter.lte != null) where.lte = dateColumn(filter.lte);
  return Object.keys(where).length ? [{ [field]: where }] : [];
}

/** `{ field: <prisma filter> }` list for an IntFilter on `field`. */
export function intConditions(field: string, filter: IntFilterValue | null | undefined) {
  if (!filter) return [];
  const where: Record<string, unknown> = {};
  if (filter.equals != null) where.equals = filter.equals;
  if (filter.in != null) where.in = filter.in;
  return Object.keys(where).length ? [{ [field]: where }] : [];
}
