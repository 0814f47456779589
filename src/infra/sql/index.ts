/**
 * The SQL path: the reads and writes that bypass Prisma's query engine (docs/architecture.md "The
 * fast SQL path"). The one entry point of src/infra/sql/: no module outside this folder imports
 * another of its modules (test/architecture.test.ts).
 */
export {
  directQueryOf,
  forSerialization,
  withJoinedReads,
  withoutJoinedReads,
  type DirectQuery,
} from "./joined-reads.js";
export { directTransaction, directTransactions } from "./direct-transaction.js";
export { preparedSql, queryPrepared, sqlRows, type PreparedSql } from "./prepared-sql.js";
export { insertRows, type InsertTable } from "./insert-rows.js";
export { preparedStatementName, preparedStatementNames } from "./statement-names.js";
