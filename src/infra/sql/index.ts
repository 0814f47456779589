/**
 * The SQL path: the reads and writes that bypass Prisma's query engine (docs/architecture.md "The
 * fast SQL path"). The one entry point of src/infra/sql/: no module outside this folder imports
 * another of its modules (test/architecture.test.ts).
 */
export { directQueryOf, withJoinedReads, withoutJoinedReads } from "./joined-reads.js";
export { forSerialization } from "./row-decoding.js";
export { directQueryOn, type DirectQuery } from "./direct-query.js";
export { directTransaction, directTransactions } from "./direct-transaction.js";
export { preparedSql, queryPrepared, sqlRows, type PreparedSql } from "./prepared-sql.js";
export { insertRows, type InsertTable } from "./insert-rows.js";
export { preparedStatementName } from "./statement-names.js";
