/**
 * The SQL path: the reads and writes that bypass Prisma's query engine, for measured CPU and
 * statement counts (docs/performance.md), and the one entry point of src/infra/sql/. No module
 * outside this folder imports another of its modules (test/architecture.test.ts), so every use of
 * the path is an import of this file. Where it starts, what it relies on and how to add a read:
 * docs/architecture.md "The fast SQL path".
 *
 * What bypasses Prisma:
 * - **Joined reads**: on the client createDatabase makes (`withJoinedReads`, a `SqlPathClient`), every
 *   `findUnique`, `findUniqueOrThrow`, `findFirst`, `findFirstOrThrow` and `findMany` whose selection
 *   has relations, from Pothos' Prisma plugin or from a service, and every `findMany` of rows by ids,
 *   is one SQL statement written here; what it does not translate is Prisma's own read. In a
 *   `directTransaction`, reads without relations too.
 * - **Hand-written statements**: `sqlRows` (a `Prisma.sql` template), `queryPrepared` (a
 *   `PreparedSql`) and `insertRows` (many rows in one INSERT).
 * - **Direct transactions**: `directTransaction`, whose statements above run on the transaction's
 *   own pg connection.
 * On PostgreSQL these go straight to pg (the pool, or a direct transaction's connection) as named
 * prepared statements; in a transaction of Prisma's own and on PGlite they go through the client's
 * raw queries, the same SQL.
 *
 * What it relies on, checked by test/integration/sql-fence.test.ts: @prisma/adapter-pg's
 * transaction keeps its pg connection in `client` (direct-transaction.ts) and names statements with
 * `statementNameGenerator`; decimal.js keeps a value in `d`, `e` and `s` (the lazy decimals,
 * row-decoding.ts); prisma/schema.prisma has no `@map` or `@@map`, since table and column names are
 * written as the Prisma model and field names.
 */

// The Prisma client wrapper: reads answered by one SQL statement (joined-reads.ts).
export { directQueryOf, withJoinedReads, withoutJoinedReads, type SqlPathClient } from "./joined-reads.js";
export { forSerialization } from "./row-decoding.js";

// Statements sent straight to pg, and the pg side of createDatabase's wiring (direct-query.ts).
export { directQueryOn, type DirectQuery } from "./direct-query.js";

// Transactions whose statements run on their own pg connection (direct-transaction.ts).
export { directTransaction, directTransactions } from "./direct-transaction.js";

// Hand-written statements and bulk inserts (prepared-sql.ts, insert-rows.ts).
export { preparedSql, queryPrepared, sqlRows, type PreparedSql } from "./prepared-sql.js";
export { insertRows, type InsertTable } from "./insert-rows.js";

// PrismaPg's statementNameGenerator: the SQL path's texts named when Prisma sends them (statement-names.ts).
export { preparedStatementName } from "./statement-names.js";
