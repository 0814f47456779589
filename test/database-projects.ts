/**
 * Which integration files run on which database (vitest.config.ts; docs/development.md "Which database a test file
 * runs on"): the names of test/integration/<name>.test.ts. Every other integration file runs on PostgreSQL only.
 * test/database-projects.test.ts checks that every name is a file.
 */

/** Integration files (test/integration/<name>.test.ts) that check what differs between the databases: on both. */
export const EVERY_DATABASE = [
  // the data layer: statements sent, the hand-written SQL path, decimals, transactions, migrations, failures
  "statement-counts",
  "finalize-statements",
  "queries",
  "joined-reads",
  "direct-transaction",
  "sql-fence",
  "lazy-decimals",
  "narrow-selection",
  "reads-by-ids",
  "deep-pages",
  "usage-statements",
  "idempotency",
  "idempotency-transaction",
  "migrations",
  "database-failures",
  "usage-database-failures",
  "database-copy",
  // one connection in this process against a pool and LISTEN/NOTIFY: the live event stream
  "event-stream",
  // each database's processes: start, stop, SIGKILL and what the next start finds, the CLI beside a server
  "runtime",
  "shutdown",
  "idempotency-crash",
  "operator",
  // the dashboard's main journey in Chromium, which its issue asks of both databases: sign in, the charts' figures,
  // a customer found, an invoice's PDF, finalize, an API key revoked, a member invited, a viewer refused
  "dashboard-browser",
  "dashboard-admin",
];
/** Integration files that run on PGlite only: pages in headless Chromium, the embedded database's own processes. */
export const PGLITE_ONLY = [
  "graphiql",
  "reference-page",
  "portal-browser",
  "dashboard-actions",
  "dashboard-documents",
  "dashboard-settings",
  "dunning-email",
  "control-socket",
  "demo",
  "readme",
  "events-listen",
];
