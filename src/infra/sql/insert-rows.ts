/**
 * Many rows inserted with one statement and one parameter (docs/performance.md "After: the billing
 * run's statements straight to pg" and "Dunning attempts"): the rows as one JSON array, typed by the
 * table's own row type (`json_populate_recordset`), sent through prepared-sql.ts `sqlRows` (on
 * PostgreSQL in a direct-transaction.ts `directTransaction`, straight on the transaction's
 * connection). Much cheaper for the process than the Prisma client's `createMany`, which serializes
 * and checks every value of every row.
 */
import { Prisma } from "../prisma/generated/client.js";
import { sqlRows } from "./prepared-sql.js";

/** The tables rows are inserted into this way (their names are written into the SQL as they are). */
export type InsertTable = "Invoice" | "InvoiceLine" | "Payment" | "PaymentCharge" | "DunningAttempt" | "OutboxMessage";

/**
 * Inserts `rows` (all with the same keys: column names; the other columns take their database
 * defaults) into `table` with one statement on `client` (a Prisma client or transaction client). A
 * row's values as JSON gives them: text, numbers and decimals as strings (exact), booleans, Dates
 * (ISO instants; a `date` column takes an ISO instant's day), arrays (for `text[]` columns) and
 * objects (for `jsonb` columns). Columns a Prisma `@updatedAt` or `@default(now())` fills must be
 * given (the database's own default, where there is one, is the transaction's start). `computed`:
 * columns whose value SQL gives from the row (`r`), the same for every row or looked up, sent once
 * rather than in each row. The statement text depends only on the table and columns, so it is sent
 * as a named prepared statement.
 */
export async function insertRows(
  client: object,
  table: InsertTable,
  rows: readonly Record<string, unknown>[],
  computed: Record<string, Prisma.Sql> = {},
): Promise<void> {
  if (rows.length === 0) return;
  const names = Object.keys(rows[0]).map((c) => `"${c}"`);
  const extra = Object.keys(computed).map((c) => `"${c}"`);
  // Dates serialize as ISO instants (Date.prototype.toJSON), decimals as their digits (Decimal.prototype.toJSON)
  const json = JSON.stringify(rows);
  await sqlRows(
    client,
    Prisma.sql`INSERT INTO ${Prisma.raw(`"${table}"`)} (${Prisma.raw([...names, ...extra].join(", "))})
      SELECT ${Prisma.join([...names.map((n) => Prisma.raw(`r.${n}`)), ...Object.values(computed)])}
      FROM json_populate_recordset(NULL::${Prisma.raw(`"${table}"`)}, ${json}::json) r`,
    // the same few texts every time (the columns of each kind of row)
    { prepared: true },
  );
}
