/**
 * Command line: `npm run --silent cli -- <command>` (`node dist/cli.js <command>`).
 *   api-key create --organization "Acme SpA" --email ops@acme.cl --mode test [--expires yyyy-mm-dd]
 *       prints {"organization":"org_...","id":"key_...","key":"sk_test_...","expires_at":null} as its last line
 *   api-key list [--organization <name or id>] [--json]     api-key revoke <key id>   (src/cli/api-keys.ts)
 *   migrate [deploy]   applies pending migrations;  migrate status   lists applied and pending ones
 *   db copy --to <postgresql url>   copies the configured (embedded) database into an empty
 *       PostgreSQL database, migrated first (docs/moving-to-postgresql.md; src/cli/database.ts)
 *   billing run [--until yyyy-mm-dd] [--json] [--batch-size n] [--workers n]
 *       bills every due subscription (docs/billing-run.md); progress bar on stderr, summary on stdout
 *   sii send    uploads the queued DTEs to SII and polls sent envelopes once (docs/sii-sending.md);
 *               prints the round's report as JSON
 *   events listen --api-key sk_test_... [--url http://localhost:3000] [--events a.b,c.d] [--forward-to <url>]
 *       prints each event of the key's organization and mode as it commits, one JSON line each, and forwards it
 *       signed to a local URL (docs/webhooks.md "Local development: events listen"; src/cli/events.ts). It talks
 *       to the running server over HTTP, never to the database.
 * The commands that open the database work with the server stopped on the embedded database (beside
 * a running server they stop at once with a message naming the directory and the server's process),
 * any time on PostgreSQL.
 *
 * Only commander and Node's own modules load up front; each command imports what it needs, so
 * `--help` and `--version` answer at once.
 */
import fs from "node:fs";
import { Command } from "commander";
import { apiKeyCommands } from "./cli/api-keys.js";
import { databaseCommands } from "./cli/database.js";
import { eventsCommands } from "./cli/events.js";
import { openDatabase, settings } from "./cli/open.js";

const { version } = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const program = new Command()
  .name("billing")
  .description("Billing service command line")
  .version(version, "-V, --version", "print the version");

const migrateCommand = program.command("migrate").description("database migrations (prisma/migrations)");
migrateCommand
  .command("deploy", { isDefault: true })
  .description("apply pending migrations (what `npm start` does first)")
  .action(async () => {
    const { createDatabase, databaseTarget, migrate } = await import("./infra/database.js");
    const database = await createDatabase(databaseTarget());
    try {
      const report = await migrate(database);
      process.stderr.write(
        report.applied.length
          ? `applied ${report.applied.length} migration(s):\n${report.applied.map((n) => `  ${n}\n`).join("")}`
          : "the database is up to date\n",
      );
      for (const name of report.modified) process.stderr.write(`warning: ${name} changed after it was applied\n`);
    } finally {
      await database.close();
    }
  });
migrateCommand
  .command("status")
  .description("list applied and pending migrations; exit code 1 when some are pending or failed")
  .option("--json", "print the status as JSON")
  .action(async (options: { json?: boolean }) => {
    const { createDatabase, databaseTarget, migrationsOf } = await import("./infra/database.js");
    const database = await createDatabase(databaseTarget());
    try {
      const status = await migrationsOf(database);
      if (options.json) process.stdout.write(`${JSON.stringify(status)}\n`);
      else {
        const lines = [
          ...status.applied.map((n) => `applied   ${n}${status.modified.includes(n) ? "  (changed since)" : ""}`),
          ...status.failed.map((n) => `failed    ${n}`),
          ...status.pending.map((n) => `pending   ${n}`),
          ...status.unknown.map((n) => `unknown   ${n}  (applied, not in this build)`),
        ];
        process.stdout.write(
          `${lines.join("\n")}` +
            `\n${
              status.pending.length || status.failed.length
                ? `${status.pending.length} ` + `pending, ${status.failed.length} failed`
                : "the database is up to date"
            }\n`,
        );
      }
      if (status.pending.length || status.failed.length) process.exitCode = 1;
    } finally {
      await database.close();
    }
  });

program.addCommand(apiKeyCommands(openDatabase));
program.addCommand(databaseCommands(openDatabase));
program.addCommand(eventsCommands());

const billing = program.command("billing").description("recurring billing");
billing
  .command("run")
  .description("bill every due subscription of every organization and mode once, then collect with saved cards")
  .option(
    "--until <date>",
    "bill cycles starting on or before this day (yyyy-mm-dd); default: today in each organization's time zone",
  )
  .option("--json", "print the summary as JSON (default: plain text)")
  .option("--batch-size <n>", "subscriptions per transaction", "100")
  .option("--workers <n>", "parallel claim loops (PostgreSQL; keep 1 on the embedded database)", "1")
  .option("--no-progress", "no progress bar")
  .action(
    async (options: { until?: string; json?: boolean; batchSize: string; workers: string; progress: boolean }) => {
      const batchSize = positive(options.batchSize, "--batch-size");
      const workers = positive(options.workers, "--workers");
      const [{ startBillingRunThread }, { default: cliProgress }] = await Promise.all([
        import("./cli/billing-run.js"),
        import("cli-progress"),
      ]);
      // the run goes in a thread of its own with a bounded heap (cli/billing-run.ts)
      const thread = await startBillingRunThread();
      const bar = options.progress
        ? new cliProgress.SingleBar(
            {
              stream: process.stderr,
              format: "billing [{bar}] {value}/{total} subscriptions | {eta_formatted} left",
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          )
        : null;
      let started = false;
      let summary;
      try {
        ({ summary } = await thread.run({ until: options.until, batchSize, workers }, (done, total) => {
          if (!bar) return;
          if (!started) {
            bar.start(total, 0);
            started = true;
          }
          bar.setTotal(total);
          bar.update(done);
        }));
      } finally {
        if (started) bar?.stop();
      }
      const { errors, ...counts } = summary;
      if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
      else {
        process.stdout.write(
          `${Object.entries(counts)
            .map(([k, v]) => `${k}: ${v}`)
            .join("\n")}\n`,
        );
        for (const e of errors) process.stdout.write(`error: ${e}\n`);
      }
    },
  );

function positive(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} must be a positive integer, got ${value}`);
  return n;
}

/** A mistake in the command line: its message alone is printed. */
class UsageError extends Error {}

const sii = program.command("sii").description("Chile's SII");
sii
  .command("send")
  .description("upload queued DTEs to SII and poll sent envelopes once (what the server's worker does on its interval)")
  .action(async () => {
    const [{ sendDueSubmissions }, { createLogger }, { config, settings: siiSettings }] = await Promise.all([
      import("./services/sii-sending.js"),
      import("./infra/logger.js"),
      settings(),
    ]);
    const database = await openDatabase();
    try {
      const report = await sendDueSubmissions({
        prisma: database.prisma,
        logger: createLogger(config.logLevel, config.logFormat),
        settings: siiSettings,
      });
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } finally {
      await database.close();
    }
  });

/**
 * Errors whose message says it all (no stack trace): bad input, configuration, a busy data directory, a migration; and
 * system or database errors with a code.
 */
const EXPECTED = new Set(["DataDirInUseError", "ConfigError", "MigrationError", "UsageError"]);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  const [{ DomainError }, { errorMessage }] = await Promise.all([
    import("./domain/errors.js"),
    import("./infra/driver-adapter.js"),
  ]);
  const error = e as Error & { code?: string };
  const expected =
    e instanceof DomainError || e instanceof UsageError || EXPECTED.has(error.name) || typeof error.code === "string";
  const message = errorMessage(e);
  process.stderr.write(`${expected ? `error: ${message}` : `error: ${message}\n${error.stack ?? ""}`}\n`);
  process.exit(1);
}
