/**
 * Statements sent straight to the driver, outside Prisma: on PostgreSQL the app's pg pool (outside
 * any transaction) or a direct transaction's pg connection (direct-transaction.ts). The statement
 * is reported as Prisma's are (createDatabase's `onStatement`) and sent as a named prepared
 * statement when its text has a name (statement-names.ts); a failure is pg's error, classified by
 * infra/database-errors.ts like any other.
 */
import type pg from "pg";
import { preparedStatementNames } from "./statement-names.js";

/**
 * Runs a statement outside Prisma, straight on the driver: `sql` with its parameter `values` (pg's
 * conversions), resolving to its rows as pg parses them (a joined read's: column `r`, the row as JSON
 * or its text). createDatabase gives one for PostgreSQL: on the pg pool (the statement named as
 * prepared when it has a name), and, for a transaction of direct-transaction.ts `directTransaction`,
 * on that transaction's connection. Other transactions' reads go through their Prisma client.
 */
export type DirectQuery = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * The DirectQuery over `queryable` (the pg pool, or one pg connection): each statement first given to
 * `onStatement` (statements counted by tests), then sent as pg's `{ name, text, values }`, `name`
 * being the text's prepared statement name or undefined (unnamed); resolves to pg's rows.
 */
export function directQueryOn(
  queryable: pg.Pool | pg.PoolClient,
  onStatement?: (sql: string, values: unknown[]) => void,
): DirectQuery {
  return async (sql, values) => {
    onStatement?.(sql, values);
    const result = await queryable.query<Record<string, unknown>>({
      name: preparedStatementNames.get(sql),
      text: sql,
      values,
    });
    return result.rows;
  };
}
