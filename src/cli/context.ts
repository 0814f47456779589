/**
 * Where a command of the command line runs, and what it may use there. The commands
 * (cli/program.ts) are written once against this context and run in two places:
 * - the command line's own process (cli/local.ts): it opens the configured database itself, the
 *   billing run goes in a thread of its own with a bounded heap;
 * - the running server (cli/serve.ts), when the embedded database is held by it: the command gets
 *   the server's open database and settings, and its output goes back over the control socket
 *   (infra/control-socket.ts) to the command line that asked (cli/remote.ts).
 */
import type { Database } from "../infra/database.js";
import type { AppSettings, Config } from "../infra/config.js";
import type { BillingRunSummary } from "../services/billing-run.js";
import type { ThreadRunOptions } from "./billing-run.js";

/** Where the commands print; process.stdout by default. */
export interface CommandOutput {
  write(text: string): unknown;
}

/** A progress display (a bar on a terminal): `update` after each step, `end` once. */
export interface ProgressDisplay {
  update(done: number, total: number): void;
  end(): void;
}

export interface CommandContext {
  /** what a command prints as its result (stdout): machine-readable where the command says so */
  out: CommandOutput;
  /** lines meant for a person (stderr): what was created, where, warnings */
  notes: CommandOutput;
  /**
   * Opens the database the commands work on, migrated unless `{ migrate: false }` (the migrate
   * commands); the command calls `close()` when done, also on errors (on the server's own database,
   * already migrated, close does nothing).
   */
  openDatabase(options?: { migrate?: boolean }): Promise<Database>;
  /** the configuration and the use cases' settings as the server uses them */
  settings(): Promise<{ config: Config; settings: AppSettings }>;
  /**
   * The database in words for a person (infra/database-target.ts describeDatabase), with how it
   * was reached: "the embedded database in /srv/billing/data, through the running server (process 4242)".
   */
  database: string;
  /** runs the billing run once (services/billing-run.ts) on this context's database */
  billingRun(options: ThreadRunOptions, onProgress?: (done: number, total: number) => void): Promise<BillingRunSummary>;
  /** a progress display on stderr (drawn on the command line's terminal), in cli-progress's `format` */
  progress(format: string): Promise<ProgressDisplay>;
  /** aborted when the process the command runs in is stopping (the server's SIGTERM) */
  signal?: AbortSignal;
  /** sets the command's exit code (it does not end anything) */
  setExitCode(code: number): void;
}
