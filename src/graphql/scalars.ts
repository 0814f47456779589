/**
 * Scalars. Decimal travels as a string (exact, docs/rest.md "Tenancy, ids, money"); Date is `yyyy-mm-dd`;
 * DateTime and JSONObject come from graphql-scalars, with descriptions of their formats here.
 */
import { GraphQLError, GraphQLScalarType, Kind, type GraphQLScalarTypeConfig } from "graphql";
import { DateTimeResolver as BaseDateTime, JSONObjectResolver as BaseJSONObject } from "graphql-scalars";
import { Decimal } from "decimal.js";
import { isIsoDate, isoDate } from "../domain/formats.js";
import { decimalRangeProblem, MAX_DECIMAL, quote } from "../domain/input-limits.js";

const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

/**
 * A scalar input refused with the reason its field reports (errors.ts `maskError`: `{"amount": ["must be a
 * decimal number"]}`, REST and GraphQL alike); the message stays GraphQL's own.
 */
export class InputReasonError extends GraphQLError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** A scalar of `config` whose refused input values carry `reason`. */
function withReason(config: GraphQLScalarTypeConfig<unknown, unknown>, reason: string): GraphQLScalarType {
  return new GraphQLScalarType({
    ...config,
    parseValue: (value) => {
      try {
        return config.parseValue!(value);
      } catch (e) {
        const message = e instanceof GraphQLError ? e.message : `Expected type "${config.name}". ${String(e)}`;
        throw new InputReasonError(message, reason);
      }
    },
  });
}

/**
 * A Decimal input: a decimal string or a finite number, within the range of the `Decimal(20,6)`
 * columns (domain/input-limits.ts MAX_DECIMAL); the error names the largest allowed value.
 */
function parseDecimal(value: unknown): string {
  const text = typeof value === "number" && Number.isFinite(value) ? new Decimal(value).toFixed() : value;
  if (typeof text !== "string" || text.length > 100 || !DECIMAL_TEXT.test(text.trim())) {
    const shown = typeof value === "string" ? quote(value) : typeof value === "number" ? String(value) : typeof value;
    throw new InputReasonError(
      `Decimal must be a number or a decimal string like "1234.50", got ${shown}`,
      "must be a decimal number",
    );
  }
  const decimal = new Decimal(text.trim());
  const problem = decimalRangeProblem(decimal);
  if (problem) throw new InputReasonError(`Decimal ${problem}, got ${quote(text.trim(), 40)}`, problem);
  return decimal.toFixed();
}

/** Exact decimal number, serialized as a string without exponent ("2916", "0.19"). */
export const DecimalScalar = new GraphQLScalarType<string, string>({
  name: "Decimal",
  description:
    `Exact decimal number as a string, e.g. "2916" or "1234.5" (never a float, so no rounding on the ` +
    `way). Money is in units of the currency the field names or the document's currency, not cents (CLP has no ` +
    `decimals: "2916"; USD "12.50"); percents are 0-100 ("19" is 19%); quantities are units of the product. Outputs ` +
    `have no exponent and no trailing zeros. Inputs accept strings or numbers, at most ${MAX_DECIMAL} in magnitude ` +
    `(the Decimal(20,6) columns keep 6 decimals); anything else is a validation_error naming the field.`,
  serialize: (value) => {
    if (value === null || value === undefined) return value as never;
    // a Decimal (Prisma's, a decimal.js fork, or decimal.js's) prints itself without being read again (the same
    // text): a page of 50 invoices serializes about 600 of them
    if (Decimal.isDecimal(value)) return value.toFixed();
    return new Decimal(String(value)).toFixed();
  },
  parseValue: parseDecimal,
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return parseDecimal(ast.value);
    throw new GraphQLError("Decimal must be a string or number literal");
  },
});

function parseDate(value: unknown): string {
  if (typeof value !== "string" || !isIsoDate(value)) {
    throw new InputReasonError(
      `Date must be a calendar date yyyy-mm-dd, got ${JSON.stringify(value)}`,
      "must be a date yyyy-mm-dd",
    );
  }
  return value;
}

/** Calendar date `yyyy-mm-dd` (no time zone); stored in @db.Date columns. */
export const DateScalar = new GraphQLScalarType<string, string>({
  name: "Date",
  description:
    'Calendar date `yyyy-mm-dd` (ISO 8601, no time and no time zone), e.g. "2026-11-24": a document\'s date or due ' +
    "date, read in the organization's time zone. Another form is a validation_error naming the field.",
  serialize: (value) => (value instanceof Date ? isoDate(value) : parseDate(value)),
  parseValue: parseDate,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError("Date must be a string yyyy-mm-dd");
    return parseDate(ast.value);
  },
});

/**
 * `value` as JSON carries it, by JSON.stringify's rules: `toJSON()` applied (a Date is its ISO string, a
 * Decimal its text), properties that are undefined (or functions) left out, such list items and non-finite
 * numbers null. The same object when it is plain JSON already; a copy where something changed.
 */
export function jsonValue(given: unknown): unknown {
  // toJSON is called once per value, as JSON.stringify does (not again on what it returned)
  const withToJson = given as { toJSON?: () => unknown } | null | undefined;
  const value = typeof withToJson?.toJSON === "function" ? withToJson.toJSON() : given;
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") throw new TypeError("Do not know how to serialize a BigInt");
  if (typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item, i) => {
      const json = jsonValue(item) ?? null;
      if (json !== item) (copy ??= value.slice())[i] = json;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    const json = jsonValue(item);
    if (json === item) continue;
    copy ??= { ...value };
    if (json === undefined) delete copy[key];
    else copy[key] = json;
  }
  return copy ?? value;
}

/** The common form of an instant sent: UTC (`Z`), to the second or the millisecond, e.g. `2026-11-24T10:15:30.123Z`. */
const UTC_INSTANT = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{3}))?Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The instant of `value` when it has the common UTC form (UTC_INSTANT) and names a real calendar
 * date and time (no 24:00, no leap second, years from 0100), else undefined: then graphql-scalars
 * decides, as for every other form. A subset of what graphql-scalars accepts, read to the same
 * `Date` (test/scalars.test.ts compares them), without its upper-casing, three regular
 * expressions and two string parses: a batch of 1,000 usage records parses 1,000 instants.
 */
export function utcInstant(value: unknown): Date | undefined {
  if (typeof value !== "string" || value.length > 24) return undefined;
  const m = UTC_INSTANT.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [+m[1], +m[2], +m[3], +m[4], +m[5], +m[6]];
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1] + (leap ? 1 : 0))
    return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, m[7] === undefined ? 0 : +m[7]));
}

/**
 * An instant (graphql-scalars' DateTime, with this service's description), serialized as the ISO string the
 * answer carries: graphql-scalars hands back a `Date` and leaves the string to JSON.stringify, so an operation run
 * in process (the REST adapter, rest/router.ts) would read a `Date` where /graphql's clients read a string.
 * A variable in the common UTC form is read by `utcInstant`; every other value by graphql-scalars.
 */
const baseDateTime = BaseDateTime.toConfig();
export const DateTimeResolver = withReason(
  {
    ...baseDateTime,
    parseValue: (value) => utcInstant(value) ?? baseDateTime.parseValue!(value),
    description:
      "An instant, ISO 8601 / RFC 3339 with a time zone: outputs are UTC with milliseconds, e.g. " +
      '"2026-11-24T10:15:30.000Z"; inputs need an offset ("Z" or "-03:00"). Another form is a validation_error ' +
      "naming the field.",
    serialize: (value) => (baseDateTime.serialize!(value) as Date).toISOString(),
  },
  "must be an ISO 8601 timestamp with an offset",
);

/**
 * A JSON object (graphql-scalars' JSONObject, with this service's description), serialized as the JSON the answer
 * carries (`jsonValue`: a Date inside is its ISO string), so an operation run in process reads what /graphql sends.
 */
const baseJSONObject = BaseJSONObject.toConfig();
export const JSONObjectResolver = withReason(
  {
    ...baseJSONObject,
    description:
      'A JSON object (ECMA-404), e.g. metadata `{"order": "A-12"}`: keys are strings; the field\'s description ' +
      "says which values it takes. A list or a scalar is a validation_error naming the field.",
    serialize: (value) => jsonValue(baseJSONObject.serialize!(value)),
  },
  "must be a JSON object",
);
