/**
 * A joined read's rows decoded back into Prisma's values: the JSON PostgreSQL built (decimals as
 * text, times as epoch milliseconds, bytes as base64, big integers as text) into `Prisma.Decimal`,
 * `Date`, `Buffer` and `bigint`, nested relations included, hidden order columns taken off; and the
 * lazy decimals of reads whose rows are only serialized (`forSerialization`), which derive from
 * `Prisma.Decimal.prototype` and rely on decimal.js keeping a value in its `d`, `e` and `s` fields
 * (test/integration/sql-fence.test.ts).
 */
import { Prisma } from "../prisma/generated/client.js";

/** How to turn a parsed JSON row back into Prisma's values, per model and selection. */
export interface Converter {
  decimals: string[];
  dates: string[];
  bytes: string[];
  bigints: string[];
  relations: { name: string; convert: Converter; list: boolean }[];
  hidden: string[];
}

/**
 * Decimals that keep PostgreSQL's text until something reads their digits, for reads whose rows
 * are only serialized (`forSerialization`): a `Prisma.Decimal` (its prototype, so `instanceof`,
 * `Decimal.isDecimal` and every method work) whose `d`, `e` and `s` are parsed from the text on
 * first read, and whose `toFixed()` without arguments, what the Decimal scalar serializes with, is
 * the text without its trailing zeros: the same string, without parsing. A page of 50 invoices
 * made about 600 decimals it only printed.
 */
const LAZY_DECIMAL = Object.create(Prisma.Decimal.prototype) as Prisma.Decimal;
const TEXT = Symbol("decimalText");
type LazyDecimal = Prisma.Decimal & { [TEXT]: string };

function own(x: object, key: string, value: unknown) {
  Object.defineProperty(x, key, { value, writable: true, enumerable: true, configurable: true });
}

for (const key of ["d", "e", "s"] as const) {
  Object.defineProperty(LAZY_DECIMAL, key, {
    get(this: LazyDecimal) {
      const parsed = new Prisma.Decimal(this[TEXT]);
      own(this, "d", parsed.d);
      own(this, "e", parsed.e);
      own(this, "s", parsed.s);
      return parsed[key];
    },
    set(this: LazyDecimal, value: unknown) {
      own(this, key, value);
    },
    configurable: true,
  });
}

const parsedToFixed = Prisma.Decimal.prototype.toFixed;
Object.defineProperty(LAZY_DECIMAL, "toFixed", {
  value: function toFixed(this: LazyDecimal, ...args: unknown[]): string {
    if (args.length > 0) return (parsedToFixed as (...a: unknown[]) => string).apply(this, args);
    // PostgreSQL's numeric text has no exponent and no leading zeros: trailing zeros (and a bare
    // point) are all that toFixed() would drop
    const text = this[TEXT];
    if (!text.includes(".")) return text;
    let end = text.length;
    while (text.charCodeAt(end - 1) === 48 /* 0 */) end--;
    if (text.charCodeAt(end - 1) === 46 /* . */) end--;
    return text.slice(0, end);
  },
  writable: true,
  configurable: true,
});

function lazyDecimal(text: string): Prisma.Decimal {
  const decimal = Object.create(LAZY_DECIMAL) as LazyDecimal;
  decimal[TEXT] = text;
  return decimal;
}

/** Reads whose rows are only serialized (GraphQL connections): their decimals are lazy (LAZY_DECIMAL). */
export const serializedReads = new WeakSet<object>();

/**
 * Marks the arguments of a read whose rows are only serialized, not computed with (a GraphQL
 * connection's page): its joined read gives decimals that parse their digits only when read. They
 * are `Prisma.Decimal`s all the same; only their own keys differ (`toEqual` against Prisma's rows
 * would tell them apart). Returns `args`.
 */
export function forSerialization<A extends object>(args: A): A {
  serializedReads.add(args);
  return args;
}

/**
 * `row` (parsed JSON of a joined read, changed in place and returned) with Prisma's values, by `c`;
 * `lazy`: decimals as lazy decimals (a read for serialization).
 */
export function convertRow(row: Record<string, unknown>, c: Converter, lazy = false): Record<string, unknown> {
  for (const k of c.decimals)
    if (row[k] != null) row[k] = lazy ? lazyDecimal(row[k] as string) : new Prisma.Decimal(row[k] as string);
  for (const k of c.dates) if (row[k] != null) row[k] = new Date(row[k] as number);
  for (const k of c.bytes) if (row[k] != null) row[k] = Buffer.from(row[k] as string, "base64");
  for (const k of c.bigints) if (row[k] != null) row[k] = BigInt(row[k] as string);
  for (const r of c.relations) {
    const value = row[r.name];
    if (value == null) continue;
    if (r.list) for (const item of value as Record<string, unknown>[]) convertRow(item, r.convert, lazy);
    else convertRow(value as Record<string, unknown>, r.convert, lazy);
  }
  for (const k of c.hidden) delete row[k];
  return row;
}
