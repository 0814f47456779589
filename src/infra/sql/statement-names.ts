/**
 * Prepared statement names of the SQL path: a statement named on a PostgreSQL connection is parsed
 * and planned there once, then only bound and executed (pg's `{ name, text, values }`). The joined
 * reads (`jr_...`, joined-reads.ts) and the hand-written statements (`ps_...`, prepared-sql.ts)
 * register their texts here; the pool path (direct-query.ts) and PrismaPg's
 * `statementNameGenerator` (`preparedStatementName`, given by infra/database.ts) look each text up.
 * PGlite ignores names. How many statements one connection keeps prepared is bounded by the pool
 * (infra/driver-adapter.ts `MAX_PREPARED_PER_CONNECTION`).
 */
import { createHash } from "node:crypto";

/**
 * SQL texts to send as named prepared statements on PostgreSQL, with their names. Filled by
 * `namePreparedStatement`; a text is removed only when the joined reads drop the last plan that
 * sends it (joined-reads.ts `cachedPlan`).
 */
export const preparedStatementNames = new Map<string, string>();

/**
 * Registers `sql` in preparedStatementNames and returns its name: `prefix`, `_` and 20 hex digits of
 * the text's SHA-1, so one text always has one name (`jr_...` joined reads, `ps_...` hand-written).
 */
export function namePreparedStatement(sql: string, prefix: "jr" | "ps"): string {
  const name = `${prefix}_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`;
  preparedStatementNames.set(sql, name);
  return name;
}

/**
 * The prepared statement name of a driver adapter query's SQL, if it has one (preparedStatementNames):
 * PrismaPg's `statementNameGenerator`, so a registered text Prisma sends (a `$queryRaw` of a
 * prepared-sql.ts statement in a transaction of Prisma's own) is named too.
 */
export const preparedStatementName = (query: { sql: string }): string | undefined =>
  preparedStatementNames.get(query.sql);
