/**
 * The fence of the SQL path (src/infra/sql/, docs/architecture.md "The fast SQL path"): what its code
 * relies on outside itself, checked against the real dependencies, so that an upgrade or a schema
 * change that breaks it fails here, saying what and why, instead of somewhere in a billing run or a
 * page of invoices (or not at all: direct-transaction.ts quietly falls back to Prisma when it cannot
 * find the transaction's connection):
 *
 * - @prisma/adapter-pg (PostgreSQL): a transaction keeps its pg connection in `client`, which
 *   direct-transaction.ts sends the direct statements on, and has the `queryRaw`, `executeRaw`,
 *   `commit` and `rollback` it watches to refuse statements once the transaction ends; the adapter
 *   names statements with `statementNameGenerator`; pg's client keeps its prepared statements in
 *   `connection.parsedStatements`, which the pool reads to bound them (infra/driver-adapter.ts).
 * - decimal.js, under the lazy decimals of reads for serialization (row-decoding.ts): a value lives
 *   in its own `d`, `e` and `s`, and the prototype's `constructor` is the class; and the lazy
 *   decimals are in effect (digits parsed on first use, the same values).
 * - prisma/schema.prisma: no `@map` or `@@map`, since the path writes table and column names as the
 *   Prisma model and field names.
 *
 * Each check is a function that lists what is wrong, run over the real thing (nothing) and over a
 * made-up one that breaks it (what it must find). On both databases: the adapter-pg checks run on
 * PostgreSQL; the lazy decimals come through pg there and through Prisma's raw query on PGlite.
 */
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { nameAsTextPool } from "../../src/infra/driver-adapter.js";
import { forSerialization, preparedSql, preparedStatementName } from "../../src/infra/sql/index.js";
import { Prisma } from "../../src/infra/prisma/generated/client.js";

const SCHEMA = path.resolve(import.meta.dirname, "../../prisma/schema.prisma");

/**
 * Each `@map(...)` or `@@map(...)` attribute of a Prisma schema, as `line N: <the line>`; comments and
 * string literals are skipped, and so is an index's `map:` argument (it names the index, not a column).
 */
function schemaMaps(schema: string): string[] {
  return schema.split("\n").flatMap((line, i) => {
    const code = line.replace(/"(?:[^"\\]|\\.)*"|\/\/.*$/g, (m) => (m.startsWith('"') ? '""' : ""));
    return /@@?map\s*\(/.test(code) ? [`line ${i + 1}: ${line.trim()}`] : [];
  });
}

/**
 * What an adapter's transaction lacks of what direct-transaction.ts uses: the pg connection in
 * `client` (with `query`), and the methods through which Prisma ends it.
 */
function transactionShape(tx: unknown): string[] {
  const t = (tx ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  const client = t.client as { query?: unknown } | undefined;
  if (typeof client !== "object" || client === null) problems.push("no `client`: the pg connection it runs on");
  else if (typeof client.query !== "function") problems.push("`client.query` is not a function");
  for (const method of ["queryRaw", "executeRaw", "commit", "rollback"])
    if (typeof t[method] !== "function") problems.push(`no \`${method}\` method`);
  return problems;
}

/** What a pg client lacks of what infra/driver-adapter.ts `boundPreparedStatements` reads. */
function connectionShape(client: unknown): string[] {
  const connection = (client as { connection?: { parsedStatements?: unknown } } | null)?.connection;
  if (typeof connection !== "object" || connection === null) return ["no `connection`"];
  const parsed = connection.parsedStatements;
  return typeof parsed === "object" && parsed !== null ? [] : ["no `connection.parsedStatements` object"];
}

/** What a decimal class lacks of what the lazy decimals (infra/sql/row-decoding.ts) rely on. */
function decimalShape(Decimal: new (value: string) => object): string[] {
  const problems: string[] = [];
  const value = new Decimal("-12.50");
  for (const key of ["d", "e", "s"])
    if (!Object.hasOwn(value, key))
      problems.push(`a value has no own \`${key}\` (the digits' fields it defines lazily)`);
  if (!Object.hasOwn(Decimal.prototype, "constructor") || Decimal.prototype.constructor !== Decimal)
    problems.push(
      "the prototype's `constructor` is not the class (a lazy decimal's methods find their settings there)",
    );
  if (typeof (Decimal.prototype as { toFixed?: unknown }).toFixed !== "function")
    problems.push("no `toFixed` on the prototype (the lazy decimal's own calls it with arguments)");
  return problems;
}

describe("the checks themselves find what they look for", () => {
  it("@map and @@map in a made-up schema, not an index's map: nor comments and strings", () => {
    const schema = [
      "model Invoice {",
      '  id         String @id @default("@map(x)")',
      '  customerId String @map("customer_id")',
      '  /// a field once had @map("x")',
      '  name       String // @map("n")',
      '  @@index([customerId], map: "Invoice_customerId_idx")',
      '  @@map("invoices")',
      "}",
      'enum Status { draft @map("DRAFT") }',
    ].join("\n");
    expect(schemaMaps(schema)).toEqual([
      'line 3: customerId String @map("customer_id")',
      'line 7: @@map("invoices")',
      'line 9: enum Status { draft @map("DRAFT") }',
    ]);
  });

  it("a transaction without a pg connection or the methods Prisma ends it with", () => {
    expect(transactionShape({ queryRaw() {}, commit() {} })).toEqual([
      "no `client`: the pg connection it runs on",
      "no `executeRaw` method",
      "no `rollback` method",
    ]);
    expect(transactionShape({ client: { execute() {} } })).toContain("`client.query` is not a function");
    expect(connectionShape({ query() {} })).toEqual(["no `connection`"]);
    expect(connectionShape({ connection: {} })).toEqual(["no `connection.parsedStatements` object"]);
  });

  it("a decimal class that keeps its digits elsewhere", () => {
    class Sealed {
      #text: string;
      constructor(text: string) {
        this.#text = text;
      }
      toFixed() {
        return this.#text;
      }
    }
    expect(decimalShape(Sealed)).toEqual([
      "a value has no own `d` (the digits' fields it defines lazily)",
      "a value has no own `e` (the digits' fields it defines lazily)",
      "a value has no own `s` (the digits' fields it defines lazily)",
    ]);
  });
});

describe("the SQL path's dependencies", () => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const clone = await cloneTemplate(inject("template"));
    drop = clone.drop;
    database = await createDatabase(clone.target);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("prisma/schema.prisma has no @map or @@map", () => {
    expect(
      schemaMaps(fs.readFileSync(SCHEMA, "utf8")),
      "the SQL path (src/infra/sql/: joined reads, sqlRows, insertRows) writes table and column names as the " +
        "Prisma model and field names; with a @map or @@map they differ, and its statements name tables or " +
        "columns that do not exist. Teach the path the mapped names (read-sql.ts, insert-rows.ts) first",
    ).toEqual([]);
  });

  it("decimal.js keeps a value where the lazy decimals define it", () => {
    expect(
      decimalShape(Prisma.Decimal),
      "infra/sql/row-decoding.ts LAZY_DECIMAL derives from Prisma.Decimal.prototype and defines `d`, `e` " +
        "and `s` as getters that parse the text on first use; a decimal.js that stores its value otherwise " +
        "breaks every decimal of a GraphQL page",
    ).toEqual([]);
  });

  it("a read for serialization gives lazy decimals: digits parsed on first use, the same values", async () => {
    const args = () => ({ where: { id: { in: ["CL"] } } });
    const [plain] = await database.prisma.country.findMany(args());
    const [lazy] = await database.prisma.country.findMany(forSerialization(args()));
    const [parsed, value] = [plain!.taxPercent, lazy!.taxPercent];
    expect(Object.hasOwn(parsed, "d")).toBe(true);
    // the patch in effect: a Prisma.Decimal whose digits are not parsed yet
    expect(value).toBeInstanceOf(Prisma.Decimal);
    expect(Object.getPrototypeOf(value)).not.toBe(Prisma.Decimal.prototype);
    expect(Object.hasOwn(value, "d")).toBe(false);
    expect(value.toFixed()).toBe(parsed.toFixed());
    expect(Object.hasOwn(value, "d")).toBe(false);
    expect(value.plus("0.5").toFixed(2)).toBe(parsed.plus("0.5").toFixed(2));
    expect({ d: value.d, e: value.e, s: value.s }).toEqual({ d: parsed.d, e: parsed.e, s: parsed.s });
    expect(Object.hasOwn(value, "d")).toBe(true);
  });

  it.skipIf(TEST_DB !== "postgres")(
    "PostgreSQL: adapter-pg's transaction keeps its pg connection in `client`, and names statements",
    async () => {
      const url = database.target.kind === "postgres" ? database.target.url : "";
      // the pool and adapter options createDatabase gives PrismaPg
      const pool = nameAsTextPool({ connectionString: url, max: 1 });
      const factory = new PrismaPg(pool, {
        statementNameGenerator: preparedStatementName as (query: { sql: string }) => string,
      });
      const adapter = (await factory.connect()) as unknown as Record<string, unknown>;
      try {
        expect(typeof adapter.startTransaction, "directTransactions wraps the adapter's startTransaction").toBe(
          "function",
        );
        const tx = (await (adapter.startTransaction as () => Promise<unknown>).call(adapter)) as Record<
          string,
          unknown
        > & {
          client: pg.PoolClient;
          queryRaw(query: object): Promise<{ rows: unknown[][] }>;
          executeRaw(query: object): Promise<number>;
          rollback(): Promise<void>;
        };
        try {
          expect(
            transactionShape(tx),
            "infra/sql/direct-transaction.ts takes @prisma/adapter-pg's PgTransaction.client (a private field) " +
              "to run the direct statements on the transaction's connection, and wraps these methods",
          ).toEqual([]);
          expect(tx.client).toBeInstanceOf(pg.Client);
          // the transaction's own connection, inside its transaction: a setting local to the transaction,
          // set on `client`, is seen by the adapter's query
          await tx.client.query("SELECT set_config('sql_fence.mark', 'direct', true)");
          const seen = await tx.queryRaw({
            sql: "SELECT current_setting('sql_fence.mark', true) AS mark",
            args: [],
            argTypes: [],
          });
          expect(seen.rows).toEqual([["direct"]]);
          // statementNameGenerator: a registered text goes out named, and pg keeps it where the pool looks
          const statement = preparedSql("SELECT 'sql-fence' AS probe");
          await tx.queryRaw({ sql: statement.text, args: [], argTypes: [] });
          const prepared = await tx.client.query<{ name: string }>("SELECT name FROM pg_prepared_statements");
          expect(prepared.rows.map((r) => r.name)).toContain(statement.name);
          expect(
            connectionShape(tx.client),
            "infra/driver-adapter.ts boundPreparedStatements reads pg's private connection.parsedStatements",
          ).toEqual([]);
          expect(
            (tx.client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection
              .parsedStatements[statement.name],
          ).toBe(statement.text);
        } finally {
          await tx.executeRaw({ sql: "ROLLBACK", args: [], argTypes: [] });
          await tx.rollback();
        }
      } finally {
        await (adapter.dispose as () => Promise<void>).call(adapter);
        await pool.end();
      }
    },
  );
});
