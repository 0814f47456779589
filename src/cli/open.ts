/**
 * What the command line's commands open: the configured database (migrated) and the settings as
 * the server would use them. Shared by cli/local.ts and the billing run's thread
 * (cli/billing-run-thread.ts). The modules are imported when called.
 */
import type { Database } from "../infra/database.js";

/**
 * Opens the configured database and applies pending migrations (silently: the CLI's stdout is for
 * results), unless `options.migrate` is false.
 */
export async function openDatabase(options: { migrate?: boolean } = {}): Promise<Database> {
  const { createDatabase, databaseTarget, migrate } = await import("../infra/database.js");
  const database = await createDatabase(databaseTarget());
  if (options.migrate === false) return database;
  try {
    await migrate(database);
  } catch (e) {
    await database.close();
    throw e;
  }
  return database;
}

/** Settings as the server would use them (configuration validated, the embedded key file). */
export async function settings() {
  const [{ loadConfig }, { withEmbeddedKey }, { databaseTarget }] = await Promise.all([
    import("../infra/config.js"),
    import("../infra/secrets.js"),
    import("../infra/database-target.js"),
  ]);
  const config = loadConfig();
  return { config, settings: withEmbeddedKey(config.settings, databaseTarget()) };
}

/**
 * Lets the use cases a command runs write their events (services/events.ts): installs the REST
 * adapter's printing of event objects, as the server does. For the commands that change billing
 * state (the billing run, SII sending); it loads the GraphQL schema, so others leave it out.
 */
export async function installEventPrinting(): Promise<void> {
  const [{ installEventPrinter }, { restEventPrinter }] = await Promise.all([
    import("../services/events.js"),
    import("../rest/event-objects.js"),
  ]);
  installEventPrinter(restEventPrinter);
}
