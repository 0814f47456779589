/**
 * Copies the rows of one database into another of the same schema: the way from the embedded
 * database (PGlite) to PostgreSQL (docs/moving-to-postgresql.md, `db copy --to <url>`).
 *
 * How:
 * - both sides must be at the same migrations (`migrationStatus`): nothing pending or failed on
 *   either side, the same applied list;
 * - every table of the `public` schema except `_prisma_migrations` (the target keeps its own
 *   bookkeeping, written by its own migrations) is copied, parents before children (topological
 *   order of the foreign keys from pg_constraint; none of them is deferrable, so order is the only
 *   way). A self-referencing table (Currency's conversion) is inserted in one statement: PostgreSQL
 *   checks foreign keys at the end of the statement, so the rows' order does not matter there;
 * - rows travel in batches (500 rows, 50 for tables with a bytea column) as JSON text, never
 *   parsed in JavaScript: `row_to_json` on the source (through a cursor of one REPEATABLE READ
 *   READ ONLY transaction, so the copy is one snapshot) and
 *   `json_populate_recordset` on the target. numeric (money), bytea (hex), timestamptz (ISO 8601
 *   with offset), jsonb, arrays, enums and booleans arrive exactly as they were;
 * - the sequences of the schema (Swap's `code`) are set to the source's values;
 * - the target's own triggers (revenue analytics' marks of changed customers) are off while the rows go in
 *   (`ALTER TABLE ... DISABLE TRIGGER USER`, undone before the commit, so the change never shows outside the
 *   transaction; foreign keys stay checked): the marks and sums copied are the source's, not new ones;
 * - on the target everything is ONE transaction: a failure anywhere leaves the target as it was.
 *
 * Tables seeded by the migrations (reference data: countries, currencies, states, document types)
 * are not empty in a freshly migrated target. They are recognised by migrating an in-memory PGlite
 * database: the target's seeded tables must hold exactly what the migrations insert (anything else
 * means the target is in use, and the copy is refused), and in the copy's transaction their rows
 * are replaced by the source's, so the result is the source, reference data included (an operator's
 * change to a reference row is carried over; nothing is duplicated).
 */
import { openPGlite } from "./driver-adapter.js";
import { pgliteSession, type Database } from "./database.js";
import { applyMigrations, migrationStatus, type MigrationStatus, type SqlSession } from "./migrate.js";

/** Rows fetched from the source and inserted into the target per statement. */
const BATCH_ROWS = 500;
/** The same for tables with a bytea column (stored PDFs, certificates), to bound memory. */
const BATCH_ROWS_WITH_BYTES = 50;

/** One copied table. */
export interface CopiedTable {
  /** table name in the `public` schema */
  table: string;
  /** rows copied into the target */
  rows: number;
  /** true for a table the migrations seed (its target rows were replaced by the source's) */
  seeded: boolean;
}

/** What `copyDatabase` did. */
export interface CopyReport {
  /** every table copied, in the order it was copied (parents first) */
  tables: CopiedTable[];
  /** sum of the tables' rows */
  rows: number;
  /** milliseconds the copy took */
  ms: number;
}

/**
 * A copy refused or failed for a reason the operator can fix (migrations, a non-empty target, a
 * schema mismatch). `code` is a string, so the command line prints the message alone.
 */
export class DatabaseCopyError extends Error {
  readonly code = "database_copy_refused";
  constructor(message: string) {
    super(message);
    this.name = "DatabaseCopyError";
  }
}

interface TableInfo {
  name: string;
  /** columns written on insert (generated columns excluded), in table order */
  columns: string[];
  /** primary key columns in key order (empty when the table has none) */
  key: string[];
  /** true when a column is bytea */
  bytes: boolean;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Base tables of `public` (without `_prisma_migrations`), their insertable columns and primary keys. */
async function tablesOf(session: SqlSession): Promise<Map<string, TableInfo>> {
  const columns = await session.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> '_prisma_migrations'
      AND c.is_generated = 'NEVER'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const keys = await session.query<{ table_name: string; column_name: string }>(
    `SELECT cl.relname AS table_name, a.attname AS column_name
       FROM pg_index i
       JOIN pg_class cl ON cl.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = cl.relnamespace
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
       JOIN pg_attribute a ON a.attrelid = cl.oid AND a.attnum = k.attnum
      WHERE i.indisprimary AND n.nspname = 'public'
      ORDER BY cl.relname, k.position`,
  );
  const tables = new Map<string, TableInfo>();
  for (const c of columns) {
    const table = tables.get(c.table_name) ?? { name: c.table_name, columns: [], key: [], bytes: false };
    table.columns.push(c.column_name);
    if (c.data_type === "bytea") table.bytes = true;
    tables.set(c.table_name, table);
  }
  for (const k of keys) tables.get(k.table_name)?.key.push(k.column_name);
  return tables;
}

/** Foreign keys of `public`: child -> parents (self-references included). */
async function foreignKeys(session: SqlSession): Promise<{ child: string; parent: string; deferrable: boolean }[]> {
  return session.query(
    `SELECT c.relname AS child, p.relname AS parent, con.condeferrable AS deferrable
       FROM pg_constraint con
       JOIN pg_class c ON c.oid = con.conrelid
       JOIN pg_class p ON p.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = con.connamespace
      WHERE con.contype = 'f' AND n.nspname = 'public'`,
  );
}

/**
 * `tables` ordered parents first (Kahn's algorithm, ties by name so the order is stable).
 * Self-references are left out of the ordering (handled by inserting such a table in one
 * statement). Throws DatabaseCopyError on a cycle between different tables (none in this schema).
 */
export function insertionOrder(tables: string[], edges: { child: string; parent: string }[]): string[] {
  const known = new Set(tables);
  const parents = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const e of edges) {
    if (e.child !== e.parent && known.has(e.child) && known.has(e.parent)) parents.get(e.child)!.add(e.parent);
  }
  const order: string[] = [];
  const placed = new Set<string>();
  while (order.length < tables.length) {
    const ready = tables.filter((t) => !placed.has(t) && [...parents.get(t)!].every((p) => placed.has(p))).sort();
    if (!ready.length) {
      const rest = tables.filter((t) => !placed.has(t)).sort();
      throw new DatabaseCopyError(
        `the foreign keys between ${rest.join(", ")} form a cycle; this copy only orders tables and cannot insert them`,
      );
    }
    for (const t of ready) {
      order.push(t);
      placed.add(t);
    }
  }
  return order;
}

/** md5 of the table's rows as ordered JSON text (same session settings on both sides: UTC, hex). */
async function tableDigest(session: SqlSession, table: TableInfo): Promise<{ rows: number; md5: string }> {
  const order = table.key.length ? table.key : table.columns;
  const [row] = await session.query<{ rows: number; md5: string }>(
    `SELECT count(*)::int AS rows, md5(coalesce(string_agg(row_to_json(t)::text, E'\\n' ORDER ` +
      `BY ${order.map((c) => `t.${quote(c)}`).join(", ")}), '')) AS md5 FROM ${quote(table.name)} t`,
  );
  return row;
}

let seededOnce: Promise<Map<string, { rows: number; md5: string }>> | undefined;

/** What the migrations insert: table -> digest (computed once per process: the migrations are this build's). */
function seededByMigrations(): Promise<Map<string, { rows: number; md5: string }>> {
  seededOnce ??= seedDigests().catch((e) => {
    seededOnce = undefined;
    throw e;
  });
  return seededOnce;
}

/** Migrates an in-memory PGlite database and digests its non-empty tables. */
async function seedDigests(): Promise<Map<string, { rows: number; md5: string }>> {
  const pglite = await openPGlite();
  try {
    const session = pgliteSession(pglite);
    await applyMigrations(session);
    await session.exec(`SET TimeZone = 'UTC'; SET bytea_output = 'hex'`);
    const seeded = new Map<string, { rows: number; md5: string }>();
    for (const table of (await tablesOf(session)).values()) {
      const digest = await tableDigest(session, table);
      if (digest.rows > 0) seeded.set(table.name, digest);
    }
    return seeded;
  } finally {
    await pglite.close();
  }
}

function checkMigrations(side: "source" | "target", status: MigrationStatus): void {
  const fix =
    side === "source"
      ? "migrate it first (`npm run --silent cli -- migrate` with the same configuration)"
      : "migrate it first (`DATABASE_URL=<target> npm run --silent cli -- migrate`; `db copy` migrates its " +
        "target itself)";
  if (status.failed.length)
    throw new DatabaseCopyError(`the ${side} database has a failed migration (${status.failed[0]}); resolve it first`);
  if (status.pending.length)
    throw new DatabaseCopyError(
      `the ${side} database has ${status.pending.length} pending migration(s) (first: ${status.pending[0]}); ${fix}`,
    );
  if (status.unknown.length)
    throw new DatabaseCopyError(
      `the ${side} database has migrations this build does not know (${status.unknown.join(", ")}); use the build ` +
        `that applied them`,
    );
}

/**
 * Copies every row of every table of `source`'s `public` schema (except `_prisma_migrations`) into
 * `target`, in one transaction on the target; the source is only read (one snapshot,
 * `Database.readSnapshot`, so it may be a running server's embedded database).
 *
 * Preconditions, each refused with a DatabaseCopyError naming what to do:
 * - both databases are fully migrated to the same migrations (the message says which side to migrate);
 * - both have the same tables and columns;
 * - the target holds no rows except what its migrations seeded (the first non-empty table is named).
 *
 * `options.onTable(table, rows)` is called after each table is inserted (before the commit).
 * Returns the tables in copy order with their row counts. Database errors during the copy (e.g. a
 * constraint violation) are rethrown as they are, after the target's transaction is rolled back.
 */
export async function copyDatabase(
  source: Database,
  target: Database,
  options: { onTable?: (table: string, rows: number) => void } = {},
): Promise<CopyReport> {
  const started = performance.now();
  const [sourceStatus, targetStatus] = [
    await source.session((s) => migrationStatus(s)),
    await target.session((s) => migrationStatus(s)),
  ];
  checkMigrations("source", sourceStatus);
  checkMigrations("target", targetStatus);
  if (sourceStatus.applied.join() !== targetStatus.applied.join()) {
    throw new DatabaseCopyError(
      `the source and the target are at different migrations (source: ${sourceStatus.applied.at(-1)}, ` +
        `target: ${targetStatus.applied.at(-1)}); migrate the older one`,
    );
  }
  const seeded = await seededByMigrations();

  // the source is read as one snapshot (Database.readSnapshot: on PGlite its one connection is held meanwhile)
  return source.readSnapshot(async (src) => {
    await src.exec(`SET LOCAL TimeZone = 'UTC'; SET LOCAL bytea_output = 'hex'; SET LOCAL IntervalStyle = 'postgres'`);
    return target.session(async (dst) => {
      await dst.exec(`BEGIN; SET LOCAL TimeZone = 'UTC'; SET LOCAL bytea_output = 'hex'`);
      try {
        const report = await copyIn(src, dst, seeded, options.onTable);
        await dst.exec("COMMIT");
        return { ...report, ms: performance.now() - started };
      } catch (e) {
        await dst.exec("ROLLBACK").catch(() => undefined);
        throw e;
      }
    });
  });
}

/** The tables of a copy's source, keyed by name, as tablesOf reads them. */
type Tables = Awaited<ReturnType<typeof tablesOf>>;

/**
 * Copies every table of `src` into `dst` (both inside their transactions): the same tables and columns on both
 * (else DatabaseCopyError), the target as its migrations left it, its seeded reference data replaced, the tables in
 * foreign-key order with their user triggers off, then the sequences.
 */
async function copyIn(
  src: SqlSession,
  dst: SqlSession,
  seeded: Map<string, { rows: number; md5: string }>,
  onTable?: (table: string, rows: number) => void,
): Promise<Omit<CopyReport, "ms">> {
  const [sourceTables, targetTables] = [await tablesOf(src), await tablesOf(dst)];
  checkSameTables(sourceTables, targetTables);
  const edges = await foreignKeys(src);
  const order = insertionOrder([...sourceTables.keys()], edges);
  const selfReferencing = new Set(edges.filter((e) => e.child === e.parent).map((e) => e.child));
  await checkTargetAsMigrated(dst, order, targetTables, seeded);
  // replace the seeded reference data, children first
  for (const name of [...order].reverse()) {
    if (seeded.has(name)) await dst.exec(`DELETE FROM ${quote(name)}`);
  }
  // the target's triggers would mark every copied customer again (module comment); on again before the commit
  for (const name of order) await dst.exec(`ALTER TABLE ${quote(name)} DISABLE TRIGGER USER`);
  const tables: CopiedTable[] = [];
  for (const name of order) {
    const table = sourceTables.get(name)!;
    const rows = await copyTable({ src, dst }, name, table, `copy_${tables.length}`, selfReferencing.has(name));
    tables.push({ table: name, rows, seeded: seeded.has(name) });
    onTable?.(name, rows);
  }
  for (const name of order) await dst.exec(`ALTER TABLE ${quote(name)} ENABLE TRIGGER USER`);
  await copySequences(src, dst);
  return { tables, rows: tables.reduce((sum, t) => sum + t.rows, 0) };
}

/** DatabaseCopyError unless the source and the target have the same tables with the same columns in the same order. */
function checkSameTables(sourceTables: Tables, targetTables: Tables): void {
  for (const [name, table] of sourceTables) {
    const other = targetTables.get(name);
    if (!other) throw new DatabaseCopyError(`table ${name} of the source does not exist in the target`);
    if (other.columns.join() !== table.columns.join())
      throw new DatabaseCopyError(
        `table ${name} has different columns in the source (${table.columns.join(", ")}) and the target ` +
          `(${other.columns.join(", ")})`,
      );
  }
  for (const name of targetTables.keys()) {
    if (!sourceTables.has(name))
      throw new DatabaseCopyError(`table ${name} of the target does not exist in the source`);
  }
}

/**
 * DatabaseCopyError unless the target is as its migrations left it: no rows in the other tables (checked first, the
 * clearer message), and the seeded tables exactly as the migrations seed them.
 */
async function checkTargetAsMigrated(
  dst: SqlSession,
  order: string[],
  targetTables: Tables,
  seeded: Map<string, { rows: number; md5: string }>,
): Promise<void> {
  for (const name of order.filter((t) => !seeded.has(t))) {
    const [{ rows }] = await dst.query<{ rows: number }>(`SELECT count(*)::int AS rows FROM ${quote(name)}`);
    if (rows > 0)
      throw new DatabaseCopyError(
        `the target database is not empty: table ${name} has ${rows} row(s); copy into a new, empty database`,
      );
  }
  for (const name of order.filter((t) => seeded.has(t))) {
    const digest = await tableDigest(dst, targetTables.get(name)!);
    if (seeded.get(name)!.md5 !== digest.md5)
      throw new DatabaseCopyError(
        `the target database is not empty: table ${name} differs from the reference data its migrations insert; copy ` +
          `into a new, empty database`,
      );
  }
}

/**
 * Copies table `name` through a cursor of the source (`cursor`, in key order) in batches of rows as JSON; a
 * self-referencing table goes in one statement (its foreign keys checked at its end). Returns the rows copied.
 */
async function copyTable(
  { src, dst }: { src: SqlSession; dst: SqlSession },
  name: string,
  table: Tables extends Map<string, infer T> ? T : never,
  cursor: string,
  selfReferencing: boolean,
): Promise<number> {
  const sortKey = table.key.length ? table.key : table.columns;
  const columns = table.columns.map(quote).join(", ");
  await src.exec(
    `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM ${quote(name)} t ORDER ` +
      `BY ${sortKey.map((c) => `t.${quote(c)}`).join(", ")}`,
  );
  const fetch = selfReferencing ? "ALL" : String(table.bytes ? BATCH_ROWS_WITH_BYTES : BATCH_ROWS);
  let rows = 0;
  for (;;) {
    const batch = await src.query<{ j: string }>(`FETCH ${fetch} FROM ${cursor}`);
    if (!batch.length) break;
    await dst.query(
      `INSERT INTO ${quote(name)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${quote(name)}` +
        `, $1::json)`,
      [`[${batch.map((r) => r.j).join(",")}]`],
    );
    rows += batch.length;
    if (fetch === "ALL") break;
  }
  await src.exec(`CLOSE ${cursor}`);
  return rows;
}

/** The target's sequences (serial columns) continue where the source's are. */
async function copySequences(src: SqlSession, dst: SqlSession): Promise<void> {
  const sequences = await src.query<{ name: string; last_value: string | null; start_value: string }>(
    `SELECT sequencename AS name, last_value::text AS last_value, start_value::text AS start_value FROM pg_sequences ` +
      `WHERE schemaname = 'public'`,
  );
  for (const s of sequences) {
    await dst.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [
      `public.${quote(s.name)}`,
      s.last_value ?? s.start_value,
      s.last_value !== null,
    ]);
  }
}
