/**
 * The context of a command run in the command line's own process (cli/context.ts): it opens the
 * configured database itself (infra/database.ts; on the embedded database that takes the data
 * directory's lock), reads the configuration from its own environment, and runs the billing run
 * in a thread of its own with a bounded heap (cli/billing-run.ts). Output goes to `io` (the
 * process's stdout and stderr by default).
 */
import { describeDatabase, databaseTarget } from "../infra/database-target.js";
import type { CommandContext, CommandOutput } from "./context.js";
import { openDatabase, settings } from "./open.js";

/** The local context; `exitCode` receives what a command sets (the entry point exits with it). */
export function localContext(
  exitCode: (code: number) => void,
  io: { out: CommandOutput; notes: CommandOutput } = { out: process.stdout, notes: process.stderr },
): CommandContext {
  return {
    out: io.out,
    notes: io.notes,
    openDatabase: (options) => openDatabase(options),
    settings,
    database: describeDatabase(databaseTarget()),
    async billingRun(options, onProgress) {
      const { startBillingRunThread } = await import("./billing-run.js");
      // the run goes in a thread of its own with a bounded heap (cli/billing-run.ts)
      const thread = await startBillingRunThread();
      return (await thread.run(options, onProgress)).summary;
    },
    progress: async (format) => (await import("./progress.js")).progressBar(format),
    setExitCode: exitCode,
  };
}
