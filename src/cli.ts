/**
 * Command line: `npm run --silent cli -- <command>`.
 *   api-key create --organization "Acme SpA" --email ops@acme.cl --mode test
 *       prints {"organization":"org_...","key":"sk_test_..."} as its last line
 *   migrate     applies pending migrations
 *   sii send    uploads the queued DTEs to SII and polls sent envelopes once (docs/sii-sending.md);
 *               prints the round's report as JSON
 * Works with the server stopped on the embedded database, any time on PostgreSQL.
 */
import { Command } from "commander";
import { createDatabase, databaseTarget } from "./infra/database.js";
import { migrateDeploy } from "./infra/migrate.js";
import { createApiKey } from "./services/api-keys.js";
import { DomainError } from "./domain/errors.js";
import path from "node:path";
import { loadConfig } from "./infra/config.js";
import { ensureKeyFile } from "./infra/secrets.js";
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

const sii = program.command("sii").description("Chile's SII");
sii
  .command("send")
  .description("upload queued DTEs to SII and poll sent envelopes once (what the server's worker does on its interval)")
  .action(async () => {
    const config = loadConfig();
    const target = databaseTarget();
    if (!config.settings.certificateEncryptionKey && target.kind === "pglite" && target.dir) config.settings.certificateEncryptionKey = ensureKeyFile(path.dirname(target.dir));
    await migrateDeploy(target);
    const database = await createDatabase(target);
    try {
      const report = await sendDueSubmissions({ prisma: database.prisma, logger: createLogger(config.logLevel), settings: config.settings });
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
