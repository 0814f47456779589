/**
 * Hot statements written by hand, sent without Prisma's raw-query layer (docs/performance.md "After:
 * usage records straight to the pool"). A `PreparedSql` is a fixed SQL text with positional
 * parameters (`$1`, `$2`, ...) and a name derived from the text. On PostgreSQL, outside a
 * transaction, `queryPrepared` runs it on the pg pool as a named prepared statement (parsed and
 * planned once per connection, then only bound and executed), as the joined reads do
 * (joined-reads.ts `DirectQuery`); the statement is still reported to `onStatement` and a failure
 * is still classified by database-errors.ts. In a transaction of direct-transaction.ts
 * `directTransaction` it runs the same way on that transaction's connection. In other transactions,
 * and on PGlite, it goes through the client's `$queryRawUnsafe` as before (on the transaction's
 * connection; PrismaPg names it too). `sqlRows` does the same for a `Prisma.sql` statement.
 */
import { Prisma } from "../prisma/generated/client.js";
import { namePreparedStatement, preparedStatementNames } from "./statement-names.js";
import { directQueryOf } from "./joined-reads.js";

/** The mark of a PreparedSql made by `preparedSql` (a type only: no such property exists). */
declare const REGISTERED: unique symbol;

/**
 * A hand-written statement of the SQL path: a fixed SQL text with positional parameters and its
 * prepared statement name, which `queryPrepared` sends straight to pg on PostgreSQL, outside
 * Prisma. Made only by `preparedSql` (the mark), so its name is always registered.
 */
export interface PreparedSql {
  readonly text: string;
  /** `ps_` and 20 hex digits of the text's SHA-1: one text, one name */
  readonly name: string;
  readonly [REGISTERED]: true;
}

/**
 * `text` as a PreparedSql, its name registered in driver-adapter.ts `preparedStatementNames` (so the
 * pool path and PrismaPg's `statementNameGenerator` both send it named). Call it once per text, at
 * module load: the names are kept for the life of the process.
 */
export function preparedSql(text: string): PreparedSql {
  return { text, name: namePreparedStatement(text, "ps") } as PreparedSql;
}

interface RawClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/**
 * The rows of `statement` run with `values` (pg's types: a `timestamptz` is a Date, a `numeric` is
 * best cast to text in the SQL). `client` is the request's Prisma client: the app's own (PostgreSQL:
 * the pool, named prepared statement) or a transaction's (its connection, through Prisma).
 */
export async function queryPrepared<T>(client: object, statement: PreparedSql, values: unknown[]): Promise<T[]> {
  const direct = directQueryOf(client);
  if (direct) return (await direct(statement.text, values)) as unknown as T[];
  return (client as RawClient).$queryRawUnsafe<T[]>(statement.text, ...values);
}

interface TemplateClient {
  $queryRaw<T = unknown>(query: Prisma.Sql): Promise<T>;
}

/** A `Prisma.sql` value as pg should send it: decimals as their plain digits, bigints as text, Dates as ISO. */
function pgValue(value: unknown): unknown {
  if (value instanceof Prisma.Decimal) return value.toFixed();
  if (typeof value === "bigint") return value.toString();
  // an instant in UTC, as Prisma sends it (pg would write the process's local offset)
  if (value instanceof Date) return value.toISOString();
  return value;
}

/** Texts `sqlRows` was asked to prepare, at most MAX_PREPARED_TEMPLATES (later ones go unnamed). */
const preparedTemplates = new Set<string>();
const MAX_PREPARED_TEMPLATES = 100;

/** Registers `text` as a named prepared statement (driver-adapter.ts preparedStatementNames), within the bound. */
function prepareTemplate(text: string): void {
  if (preparedStatementNames.has(text) || preparedTemplates.size >= MAX_PREPARED_TEMPLATES) return;
  preparedTemplates.add(text);
  namePreparedStatement(text, "ps");
}

/**
 * The rows of `statement` (a `Prisma.sql` template) on `client`: straight on the driver when the
 * client has a direct query (the app's PostgreSQL pool, or a `directTransaction`'s connection),
 * else through `$queryRaw`. The two parse some types apart, so the SQL must select only columns both
 * give alike: text, integer (`int4`), boolean, `timestamptz` (a Date), JSON; a `numeric`, `int8` or
 * `date` column cast to text. A Prisma.Decimal value is sent as its plain digits (`toFixed()`),
 * never as a float. For statements whose rows are not needed (INSERT, UPDATE), the promise still
 * resolves to the (empty) rows. `prepared`: the text is fixed (lists passed as array parameters,
 * not spread into it), so it is sent as a named prepared statement on PostgreSQL, parsed and
 * planned once per connection (at most MAX_PREPARED_TEMPLATES texts per process are named).
 */
export async function sqlRows<T>(
  client: object,
  statement: Prisma.Sql,
  options: { prepared?: boolean } = {},
): Promise<T[]> {
  if (options.prepared) prepareTemplate(statement.text);
  const direct = directQueryOf(client);
  if (direct) return (await direct(statement.text, statement.values.map(pgValue))) as unknown as T[];
  return (client as TemplateClient).$queryRaw<T[]>(statement);
}
