/**
 * Command line: `npm run --silent cli -- <command>`.
 *   api-key create --organization "Acme SpA" --email ops@acme.cl --mode test
 *       prints {"organization":"org_...","key":"sk_test_..."} as its last line
 *   migrate     applies pending migrations
 *   billing run [--until yyyy-mm-dd] [--json] [--batch-size n] [--workers n]
 *       bills every due subscription (docs/billing-run.md); progress bar on stderr, summary on stdout
 *   sii send    uploads the queued DTEs to SII and polls sent envelopes once (docs/sii-sending.md);
 *               prints the round's report as JSON
 * Works with the server stopped on the embedded database, any time on PostgreSQL.
 */
import { Command } from "commander";
import { createDatabase, databaseTarget } from "./infra/database.js";
import { migrateDeploy } from "./infra/migrate.js";
import { createApiKey } from "./services/api-keys.js";
import { runBilling, type BillingRunSummary } from "./services/billing-run.js";
import { loadConfig } from "./infra/config.js";
import cliProgress from "cli-progress";
import { DomainError } from "./domain/errors.js";
import { withEmbeddedKey } from "./infra/secrets.js";
import { createLogger } from "./infra/logger.js";
import { sendDueSubmissions } from "./services/sii-sending.js";

const program = new Command().name("billing").description("Billing service command line");

program
  .command("migrate")
  .description("apply pending database migrations")
  .action(async () => {
    process.stderr.write(await migrateDeploy(databaseTarget()));
  });

const apiKey = program.command("api-key").description("manage API keys");
apiKey
  .command("create")
  .description("create an API key (and the organization when no organization has that name)")
  .requiredOption("--organization <name>", "organization name")
  .requiredOption("--email <email>", "e-mail of the key's user (written as `user` on documents)")
  .option("--mode <mode>", "test or live", "test")
  .action(async (options: { organization: string; email: string; mode: string }) => {
    const target = databaseTarget();
    await migrateDeploy(target);
    const database = await createDatabase(target);
    try {
      const created = await createApiKey(database.prisma, { organizationName: options.organization, email: options.email, mode: options.mode });
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } finally {
      await database.close();
    }
  });

const billing = program.command("billing").description("recurring billing");
billing
  .command("run")
  .description("bill every due subscription of every organization and mode once, then collect with saved cards")
  .option("--until <date>", "bill cycles starting on or before this day (yyyy-mm-dd); default: today in each organization's time zone")
  .option("--json", "print the summary as JSON (default: plain text)")
  .option("--batch-size <n>", "subscriptions per transaction", "100")
  .option("--workers <n>", "parallel claim loops (PostgreSQL; keep 1 on the embedded database)", "1")
  .option("--no-progress", "no progress bar")
  .action(async (options: { until?: string; json?: boolean; batchSize: string; workers: string; progress: boolean }) => {
    const target = databaseTarget();
    await migrateDeploy(target);
    const database = await createDatabase(target);
    const bar = options.progress ? new cliProgress.SingleBar({ stream: process.stderr, format: "billing [{bar}] {value}/{total} subscriptions | {eta_formatted} left", hideCursor: true }, cliProgress.Presets.shades_classic) : null;
    let started = false;
    let summary: BillingRunSummary;
    try {
      summary = await runBilling({
        prisma: database.prisma,
        settings: withEmbeddedKey(loadConfig().settings, target),
        until: options.until,
        batchSize: positive(options.batchSize, "--batch-size"),
        workers: positive(options.workers, "--workers"),
        onProgress: (done, total) => {
          if (!bar) return;
          if (!started) {
            bar.start(total, 0);
            started = true;
          }
          bar.setTotal(total);
          bar.update(done);
        },
      });
    } finally {
      if (started) bar?.stop();
      await database.close();
    }
    const { errors, ...counts } = summary;
    if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else {
      process.stdout.write(`${Object.entries(counts).map(([k, v]) => `${k}: ${v}`).join("\n")}\n`);
      for (const e of errors) process.stdout.write(`error: ${e}\n`);
    }
  });

function positive(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  return n;
}

const sii = program.command("sii").description("Chile's SII");
sii
  .command("send")
  .description("upload queued DTEs to SII and poll sent envelopes once (what the server's worker does on its interval)")
  .action(async () => {
    const config = loadConfig();
    const target = databaseTarget();
    await migrateDeploy(target);
    const database = await createDatabase(target);
    try {
      const report = await sendDueSubmissions({ prisma: database.prisma, logger: createLogger(config.logLevel), settings: withEmbeddedKey(config.settings, target) });
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } finally {
      await database.close();
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (e) {
  process.stderr.write(`${e instanceof DomainError ? `${e.message}` : (e as Error).stack}\n`);
  process.exit(1);
}
