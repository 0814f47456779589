/**
 * Three projects: `unit` (pure domain rules, and the SII DTE library in test/sii checked with xmllint and xmlsec1),
 * and the integration suite on `pglite` and on `postgres` (TEST_DATABASE_URL, default
 * postgresql://postgres@127.0.0.1:5432/test). Each integration test file gets its own database cloned from a migrated
 * template.
 *
 * Which file runs on which database (docs/development.md "Which database a test file runs on"). PGlite is PostgreSQL
 * compiled to WebAssembly: the same parser, planner and executor, so a statement means the same on both. What differs
 * is around the statements: the driver adapter (pglite-prisma-adapter or @prisma/adapter-pg) and the hand-written SQL
 * path beside Prisma (infra/sql/joined-reads.ts, prepared-sql.ts, direct-transaction.ts), one connection inside this
 * process against a pool and other processes (claims, locks, LISTEN/NOTIFY), how failures arrive, and the embedded
 * database's own life (its data directory and lock, crashes, the control socket). The files that check those run on
 * both (`EVERY_DATABASE`, with the dashboard's main journey in Chromium); the other pages in headless Chromium and
 * the embedded database's own processes run on PGlite, the database `npm start` opens for a new user (`PGLITE_ONLY`); every other file checks the API's behaviour, the same SQL
 * on either, and runs once, on PostgreSQL, the production database. `TEST_EVERY_DATABASE=1` (`npm run
 * test:every-database`) runs every file on both, as the suite did until it outgrew CI's 12 minutes on two cores.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { EVERY_DATABASE, PGLITE_ONLY } from "./test/database-projects.js";

// Temporary folders in RAM where the machine has one (/dev/shm): each integration test file on PGlite
// copies the migrated template (42 MB in 1,300 files; 0.7-0.9 s on this machine's disk, 0.1 s in
// RAM), and PGlite's writes and the child processes' data directories do not wait for the disk.
// TMPDIR is what os.tmpdir() and the children read; one folder per run, removed when vitest exits.
// An explicit TMPDIR is kept.
if (!process.env.TMPDIR && fs.existsSync("/dev/shm")) {
  const runDir = fs.mkdtempSync(path.join("/dev/shm", "billing-tests-"));
  // like /tmp: PgBouncer, which the scaling tests start as `nobody` when run as root, writes in a folder of its own here
  fs.chmodSync(runDir, 0o1777);
  process.env.TMPDIR = runDir;
  process.once("exit", () => fs.rmSync(runDir, { recursive: true, force: true }));
}

// One graphql instance: Node loads dependencies' `graphql` as CommonJS (index.js), so the code
// under test must too, or GraphQLError/GraphQLScalarType `instanceof` checks fail across copies.
const graphqlEntry = createRequire(import.meta.url).resolve("graphql");

const files = (names: string[]) => names.map((name) => `test/integration/${name}.test.ts`);
const everyFileOnBoth = process.env.TEST_EVERY_DATABASE === "1";

const integration = (name: "pglite" | "postgres") => ({
  extends: true as const,
  test: {
    name,
    include:
      name === "pglite" && !everyFileOnBoth
        ? files([...EVERY_DATABASE, ...PGLITE_ONLY])
        : ["test/integration/**/*.test.ts", "test/services/**/*.test.ts"],
    exclude:
      name === "postgres" && !everyFileOnBoth
        ? [...configDefaults.exclude, ...files(PGLITE_ONLY)]
        : configDefaults.exclude,
    globalSetup: ["test/helpers/global-setup.ts"],
    env: { TEST_DB: name },
    pool: "forks" as const,
    // expect.poll's default of 1 s is shorter than a page's first render (Chromium, the portal's first GraphQL
    // request) on a loaded 2-core machine: waits end as soon as their condition holds, so a longer limit costs
    // nothing when it does
    expect: { poll: { timeout: 10_000 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  test: {
    maxWorkers: 2,
    minWorkers: 1,
    // a worker keeps its modules from one test file to the next: the app (GraphQL schema, Prisma
    // client, Yoga) is imported once per worker instead of once per file; each integration file
    // still gets its own database and server (test/helpers/server.ts)
    isolate: false,
    projects: [
      {
        extends: true as const,
        test: {
          name: "unit",
          include: ["test/domain/**/*.test.ts", "test/sii/**/*.test.ts", "test/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      integration("pglite"),
      integration("postgres"),
    ],
  },
});
