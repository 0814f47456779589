/**
 * `npm run bench:pages` (docs/performance.md "Deep pages"): what a deep page and a `totalCount`
 * cost through the service's GraphQL, on PostgreSQL.
 *
 * 1. Creates a fresh database `bench_pages_<pid>` on postgresql://postgres@127.0.0.1:5432 (or
 *    BENCH_POSTGRES_URL's server), migrates it, and seeds with SQL (generate_series) one
 *    organization with 1,000 customers and BENCH_PAGE_ROWS invoices (default 100,000): one a
 *    minute from 2025-01-01, every 10th a draft, every 5th a CL34 (the rest CL33), customers in
 *    turn. VACUUM ANALYZE.
 * 2. Runs the app in this process (createApp's `handle`, no HTTP: the figures are the service's
 *    own work) and measures, interleaved, BENCH_RUNS rounds (default 15) after 3 warm-up rounds:
 *    the first page of 100 invoices, the 1,000th page by `offset` (page numbers, what existed
 *    before keyset cursors: the baseline of this run) and the 1,000th page by cursor (`after` the
 *    cursor of the 99,900th invoice). Prints the medians and each deep page's ratio to the first.
 * 3. Adds invoices up to BENCH_COUNT_ROWS (default 1,000,000), VACUUM ANALYZE, and for each filter
 *    people use (none, status, customer, document type, a month and a year of `created`, and two
 *    combinations) measures, interleaved, `totalCount` alone (exact), `count` alone (capped at its
 *    default limit of 10,000), the first page of 100, and the 1,000th page by cursor where the
 *    filter has that many pages.
 * 4. Prints EXPLAIN (ANALYZE, BUFFERS) of each statement measured (the plan's nodes and its
 *    execution time; the whole plan with BENCH_VERBOSE=1), captured from the app's own SQL, and of
 *    the 1,000th page's keyset WHERE written by hand with and without the bound on its first
 *    column (src/graphql/pagination.ts keyset), at the same cursor.
 * 5. Drops the database (kept with BENCH_KEEP=1).
 *
 * Figures go to stdout only; they never enter a test.
 */
import os from "node:os";
import pg from "pg";
import { createDatabase, migrateTarget } from "../src/infra/database.js";
import { createLogger } from "../src/infra/logger.js";
import { createApiKey } from "../src/services/api-keys.js";
import { createApp } from "../src/server.js";

const PAGE_ROWS = Number(process.env.BENCH_PAGE_ROWS ?? 100_000);
const COUNT_ROWS = Number(process.env.BENCH_COUNT_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const COUNT_RUNS = Number(process.env.BENCH_COUNT_RUNS ?? 7);
const VERBOSE = process.env.BENCH_VERBOSE === "1";
const PAGE = 100;
const DEEP = 1000;
const CUSTOMERS = 1000;
const server = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const name = `bench_pages_${process.pid}`;
const url = new URL(server);
url.pathname = `/${name}`;
const target = { kind: "postgres" as const, url: url.toString() };

/** SQL of the statements the app sends while `capturing` (for EXPLAIN). */
let capturing: { sql: string; args: readonly unknown[] }[] | null = null;

/** Inserts invoices `from`..`to` (1-based sequence numbers) of the organization, with SQL. */
async function seedInvoices(client: pg.Client, organizationId: string, from: number, to: number) {
  const CHUNK = 250_000;
  for (let lo = from; lo <= to; lo += CHUNK) {
    const hi = Math.min(to, lo + CHUNK - 1);
    await client.query(
      `INSERT INTO "Invoice" ("id", "organizationId", "testMode", "customerId", "documentTypeId", "currencyId",
        "number", "date", "dueDate",
         "amount", "tax", "taxPercent", "subtotal", "total", "status", "userEmail", "finalizedAt", "createdAt",
         "updatedAt")
       SELECT 'inv_bench' || lpad(g::text, 8, '0'), $1, true, 'cus_bench' || lpad((g % ${CUSTOMERS})::text, 4, '0'),
              CASE WHEN g % 5 = 1 THEN 'CL34' ELSE 'CL33' END, 'CLP',
              CASE WHEN g % 10 = 0 THEN NULL ELSE g END,
              (t AT TIME ZONE 'UTC')::date, (t AT TIME ZONE 'UTC')::date + 30,
              3600, 684, 19, 3600, 4284,
              CASE WHEN g % 10 = 0 THEN 'draft' ELSE 'finalized' END, 'bench@example.cl',
              CASE WHEN g % 10 = 0 THEN NULL ELSE t END, t, t
       FROM generate_series($2::int, $3::int) AS g,
       LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + g * interval '1 minute' AS t) AS at`,
      [organizationId, lo, hi],
    );
  }
}

const PAGE_QUERY = `query BenchPage($first: Int, $after: String, $offset: Int, $where: InvoiceWhere) {
  invoices(first: $first, after: $after, offset: $offset, where: $where) {
    edges { node { id number date status total customer { id name } } }
    pageInfo { endCursor hasNextPage }
  }
}`;
const COUNT_QUERY = `query BenchCount($where: InvoiceWhere) { invoices(first: 0, where: $where) { totalCount } }`;
const CAPPED_QUERY =
  `query BenchCapped($where: InvoiceWhere) { invoices(first: 0, where: $where) { count { count ` + `precision } } }`;

type Where = Record<string, unknown>;

/** Filters people use; `rows` is how many of the seeded invoices match at COUNT_ROWS (computed below). */
const FILTERS: { label: string; where: Where }[] = [
  { label: "none", where: {} },
  { label: "status = draft", where: { status: { equals: "draft" } } },
  { label: "status = finalized", where: { status: { equals: "finalized" } } },
  { label: "customer", where: { customer: { equals: "cus_bench0007" } } },
  { label: "document = CL34", where: { document: { equals: "CL34" } } },
  {
    label: "created: one month",
    where: { created: { gte: "2026-03-01T00:00:00.000Z", lte: "2026-03-31T23:59:59.999Z" } },
  },
  {
    label: "created: one year",
    where: { created: { gte: "2025-01-01T00:00:00.000Z", lte: "2025-12-31T23:59:59.999Z" } },
  },
  {
    label: "status = finalized, created: one month",
    where: {
      status: { equals: "finalized" },
      created: { gte: "2026-03-01T00:00:00.000Z", lte: "2026-03-31T23:59:59.999Z" },
    },
  },
  {
    label: "customer, status = finalized",
    where: { customer: { equals: "cus_bench0007" }, status: { equals: "finalized" } },
  },
  {
    label: "document = CL34, status = finalized",
    where: { document: { equals: "CL34" }, status: { equals: "finalized" } },
  },
];

async function main() {
  console.log(
    `machine: ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} (start)`,
  );
  await admin(`CREATE DATABASE "${name}"`);
  const explainClient = new pg.Client({ connectionString: target.url });
  try {
    await migrateTarget(target);
    const database = await createDatabase(target, {
      onStatement: (sql, args) => capturing?.push({ sql, args: args ?? [] }),
    });
    await explainClient.connect();
    const app = createApp({
      database,
      logger: createLogger("silent"),
      settings: { rateLimitRequests: 0, graphqlTimeBudgetMs: 60_000 },
      outboxIntervalMs: 3_600_000,
    });
    try {
      const { key, organization } = await createApiKey(database.prisma, {
        organizationName: "Bench pages",
        email: "bench@example.cl",
        mode: "test",
      });
      await explainClient.query(
        `INSERT INTO "Customer" ("id", "organizationId", "testMode", "name", "countryId", "taxId", "createdAt",
          "updatedAt")
         SELECT 'cus_bench' || lpad(i::text, 4, '0'), $1, true, 'Cliente ' || i, 'CL', '76042235-5', now(), now()
         FROM generate_series(0, ${CUSTOMERS - 1}) AS i`,
        [organization],
      );
      let t = performance.now();
      await seedInvoices(explainClient, organization, 1, PAGE_ROWS);
      await explainClient.query(`VACUUM ANALYZE`);
      console.log(
        `seeded ${PAGE_ROWS.toLocaleString("en")} invoices in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );

      const graphql = async (query: string, variables: Record<string, unknown>) => {
        const response = await app.handle(
          new Request("http://bench.local/graphql", {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
            body: JSON.stringify({ query, variables }),
          }),
        );
        const body = (await response.json()) as { data?: any; errors?: unknown[] };
        if (response.status !== 200 || body.errors)
          throw new Error(`GraphQL ${response.status}: ${JSON.stringify(body.errors)}`);
        return body.data;
      };
      const timed = async (query: string, variables: Record<string, unknown>) => {
        const start = performance.now();
        const data = await graphql(query, variables);
        return { ms: performance.now() - start, data };
      };
      /** The invoice statements one request sends, run again under EXPLAIN (ANALYZE, BUFFERS). */
      const explain = async (query: string, variables: Record<string, unknown>) => {
        capturing = [];
        await graphql(query, variables);
        const statements = capturing.filter(
          (s) =>
            /FROM "public"\."Invoice"/.test(s.sql) && !/"InvoiceLine"|"Payment"/.test(s.sql.split("FROM")[1] ?? ""),
        );
        capturing = null;
        const out: string[] = [];
        for (const statement of statements) {
          const { rows } = await explainClient.query(
            `EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`,
            statement.args as unknown[],
          );
          const lines = rows.map((r) => r["QUERY PLAN"] as string);
          const kind = /count\(/i.test(statement.sql)
            ? /LIMIT/i.test(statement.sql)
              ? "count(limit)"
              : "count"
            : "page";
          const nodes = lines
            .filter(
              (l) =>
                /(Scan|Sort|Limit|Aggregate|Gather|Nested Loop|Hash)/.test(l) &&
                !/^\s*(Sort Key|Sort Method|Buffers|Heap Fetches|Full-sort Groups|Pre-sorted Groups)/.test(l),
            )
            .map((l) =>
              l
                .trim()
                .replace(/^->\s*/, "")
                .replace(/\s*\(cost=.*$/, ""),
            );
          const time = lines.find((l) => l.startsWith("Execution Time"));
          out.push(`    ${kind}: ${nodes.join(" <- ")}; ${time}`);
          if (VERBOSE) out.push(`      SQL: ${statement.sql}`, ...lines.map((l) => `      ${l}`));
        }
        return out.join("\n");
      };

      // --- deep pages on PAGE_ROWS invoices
      const deepOffset = (DEEP - 1) * PAGE;
      const before = await graphql(PAGE_QUERY, { first: PAGE, offset: deepOffset - PAGE });
      const deepCursor = before.invoices.pageInfo.endCursor as string;
      const byOffset = await graphql(PAGE_QUERY, { first: PAGE, offset: deepOffset });
      const byCursor = await graphql(PAGE_QUERY, { first: PAGE, after: deepCursor });
      const idsOf = (data: any) => data.invoices.edges.map((e: any) => e.node.id).join(",");
      if (idsOf(byOffset) !== idsOf(byCursor) || byCursor.invoices.edges.length !== PAGE)
        throw new Error("the 1,000th page by cursor differs from the one by offset");

      const variants = [
        { label: `first page (first: ${PAGE})`, variables: { first: PAGE } },
        {
          label: `page ${DEEP} by offset (offset: ${deepOffset.toLocaleString("en")}), before`,
          variables: { first: PAGE, offset: deepOffset },
        },
        { label: `page ${DEEP} by cursor (after), after`, variables: { first: PAGE, after: deepCursor } },
      ];
      const times = variants.map(() => [] as number[]);
      for (let round = 0; round < RUNS + 3; round++) {
        for (const [i, v] of variants.entries()) {
          const { ms: took } = await timed(PAGE_QUERY, v.variables);
          if (round >= 3) times[i]!.push(took);
        }
      }
      console.log(
        `\n## Pages of ${PAGE} on ${PAGE_ROWS.toLocaleString("en")} invoices (median of ${RUNS}, interleaved; load ` +
          `average ${os.loadavg()[0]!.toFixed(2)})`,
      );
      const first = median(times[0]!);
      for (const [i, v] of variants.entries()) {
        const m = median(times[i]!);
        console.log(`${v.label.padEnd(52)} ${ms(m).padStart(10)}  ratio to the first page ${(m / first).toFixed(2)}`);
      }
      console.log("plans:");
      for (const v of variants) console.log(`  ${v.label}\n${await explain(PAGE_QUERY, v.variables)}`);

      // --- totalCount and filtered pages on COUNT_ROWS invoices
      if (COUNT_ROWS > PAGE_ROWS) {
        t = performance.now();
        await seedInvoices(explainClient, organization, PAGE_ROWS + 1, COUNT_ROWS);
        await explainClient.query(`VACUUM ANALYZE`);
        console.log(
          `\nseeded invoices up to ${COUNT_ROWS.toLocaleString("en")} ` +
            `in ${((performance.now() - t) / 1000).toFixed(1)} s`,
        );
      }
      const total = COUNT_ROWS > PAGE_ROWS ? COUNT_ROWS : PAGE_ROWS;
      console.log(
        `\n## totalCount and pages of ${PAGE} by filter on ${total.toLocaleString("en")} invoices (median ` +
          `of ${COUNT_RUNS}, interleaved)`,
      );
      const rows: { label: string; count: number; cursor: string | null }[] = [];
      for (const f of FILTERS) {
        const count = (await graphql(COUNT_QUERY, { where: f.where })).invoices.totalCount as number;
        const deepReachable = count >= DEEP * PAGE;
        const cursor = deepReachable
          ? ((await graphql(PAGE_QUERY, { first: PAGE, offset: deepOffset - PAGE, where: f.where })).invoices.pageInfo
              .endCursor as string)
          : null;
        rows.push({ label: f.label, count, cursor });
      }
      const countTimes = FILTERS.map(() => [] as number[]);
      const cappedTimes = FILTERS.map(() => [] as number[]);
      const capped: string[] = [];
      const firstTimes = FILTERS.map(() => [] as number[]);
      const deepTimes = FILTERS.map(() => [] as number[]);
      for (let round = 0; round < COUNT_RUNS + 1; round++) {
        for (const [i, f] of FILTERS.entries()) {
          const c = await timed(COUNT_QUERY, { where: f.where });
          const k = await timed(CAPPED_QUERY, { where: f.where });
          if (round === 0)
            capped.push(`${k.data.invoices.count.count.toLocaleString("en")} ${k.data.invoices.count.precision}`);
          const p = await timed(PAGE_QUERY, { first: PAGE, where: f.where });
          const d = rows[i]!.cursor
            ? await timed(PAGE_QUERY, { first: PAGE, after: rows[i]!.cursor, where: f.where })
            : null;
          if (round === 0) continue;
          countTimes[i]!.push(c.ms);
          cappedTimes[i]!.push(k.ms);
          firstTimes[i]!.push(p.ms);
          if (d) deepTimes[i]!.push(d.ms);
        }
      }
      console.log(
        `load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")}`,
      );
      console.log(
        `${"filter".padEnd(42)} ${"rows".padStart(9)} ${"totalCount".padStart(11)} ${"count".padStart(11)}` +
          ` ${"count answers".padStart(17)} ${"first page".padStart(11)} ${`page ${DEEP}`.padStart(11)}`,
      );
      for (const [i, f] of FILTERS.entries()) {
        const deep = deepTimes[i]!.length ? ms(median(deepTimes[i]!)) : "-";
        console.log(
          `${f.label.padEnd(42)} ${rows[i]!.count.toLocaleString("en").padStart(9)}` +
            ` ${ms(median(countTimes[i]!)).padStart(11)} ${ms(median(cappedTimes[i]!)).padStart(11)}` +
            ` ${capped[i]!.padStart(17)} ${ms(median(firstTimes[i]!)).padStart(11)} ${deep.padStart(11)}`,
        );
      }
      console.log("plans (EXPLAIN ANALYZE of the statements the app sent):");
      for (const [i, f] of FILTERS.entries()) {
        console.log(`  ${f.label}`);
        console.log(await explain(COUNT_QUERY, { where: f.where }));
        console.log(
          (await explain(CAPPED_QUERY, { where: f.where }))
            .split("\n")
            .filter((l) => l.includes("count(limit)"))
            .join("\n"),
        );
        console.log(await explain(PAGE_QUERY, { first: PAGE, where: f.where }));
        if (rows[i]!.cursor)
          console.log(
            (await explain(PAGE_QUERY, { first: PAGE, after: rows[i]!.cursor, where: f.where })).replace(
              "page:",
              "page 1000:",
            ),
          );
      }
      // the keyset WHERE without the bound on its first column (what the pages sent before it), at the same cursor, by
      // hand
      const deepAll = rows[0]!.cursor;
      if (deepAll) {
        const [createdAt, id] = (
          JSON.parse(Buffer.from(deepAll, "base64url").toString("utf8")) as { k: [string, string] }
        ).k;
        const select = `SELECT "id" FROM "Invoice" WHERE "organizationId" = $1 AND "testMode" = true AND `;
        const tail = ` ORDER BY "createdAt" DESC, "id" DESC LIMIT 102`;
        console.log(`  the 1,000th page's WHERE by hand, with and without the bound on createdAt (EXPLAIN ANALYZE):`);
        for (const [label, where] of [
          [
            "with    (createdAt <= x AND (createdAt < x OR (createdAt = x AND id < y)))",
            `"createdAt" <= $2 AND ("createdAt" < $2 OR ("createdAt" = $2 AND "id" < $3))`,
          ],
          [
            "without (createdAt < x OR (createdAt = x AND id < y))",
            `("createdAt" < $2 OR ("createdAt" = $2 AND "id" < $3))`,
          ],
        ] as const) {
          const { rows: plan } = await explainClient.query(`EXPLAIN (ANALYZE, BUFFERS) ${select}${where}${tail}`, [
            organization,
            createdAt,
            id,
          ]);
          const lines = plan.map((r) => r["QUERY PLAN"] as string);
          const nodes = lines
            .filter(
              (l) =>
                /(Scan|Sort|Limit)/.test(l) &&
                !/^\s*(Sort Key|Sort Method|Buffers|Heap Fetches|Full-sort Groups|Pre-sorted Groups)/.test(l),
            )
            .map((l) =>
              l
                .trim()
                .replace(/^->\s*/, "")
                .replace(/\s*\(cost=.*$/, ""),
            );
          console.log(`    ${label}: ${nodes.join(" <- ")}; ${lines.find((l) => l.startsWith("Execution Time"))}`);
          if (VERBOSE) console.log(lines.map((l) => `      ${l}`).join("\n"));
        }
      }
      console.log(
        `\nmachine: load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")} (end)`,
      );
    } finally {
      await app.close();
      await database.close();
    }
  } finally {
    await explainClient.end().catch(() => undefined);
    if (process.env.BENCH_KEEP === "1") console.log(`kept database ${target.url}`);
    else await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

await main();
