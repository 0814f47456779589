/**
 * The command line's commands, written once against a context (cli/context.ts) so the same
 * command runs in the command line's own process (cli/local.ts) or inside the running server
 * (cli/serve.ts). The entry point (src/cli.ts, cli/run.ts) chooses where. Each command imports
 * what it needs when it runs, so building the tree stays cheap and `--help` answers at once.
 */
import { Command, CommanderError } from "commander";
import { apiKeyCommands } from "./api-keys.js";
import { memberCommands } from "./members.js";
import { databaseCommands } from "./database.js";
import { eventsCommands } from "./events.js";
import type { CommandContext } from "./context.js";

/** A mistake in the command line: its message alone is printed. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The format of the dunning run's progress display. */
const DUNNING_PROGRESS = "dunning [{bar}] {value}/{total} invoices past their due date | {eta_formatted} left";

/** The format of the billing run's progress display. */
const BILLING_PROGRESS = "billing [{bar}] {value}/{total} subscriptions | {eta_formatted} left";

/**
 * The whole command tree (`billing ...`) in context `ctx`, named and versioned as the package. The groups are
 * registered in the order `--help` lists them: migrate, api-key, member, database, events, billing, dunning, sii.
 */
export function buildProgram(ctx: CommandContext, version: string): Command {
  const program = new Command()
    .name("billing")
    .description("Billing service command line")
    .version(version, "-V, --version", "print the version");
  addMigrateCommands(program, ctx);
  program.addCommand(apiKeyCommands(ctx));
  program.addCommand(memberCommands(ctx));
  program.addCommand(databaseCommands(ctx));
  // an HTTP client of the running server (cli/run.ts keeps it in the command line's own process)
  program.addCommand(eventsCommands(ctx.out, ctx.notes));
  addBillingCommands(program, ctx);
  addDunningCommands(program, ctx);
  addSiiCommands(program, ctx);
  return program;
}

/**
 * `migrate deploy` (the default) and `migrate status` on `program`. Deploy notes on `ctx.notes` what it applied and
 * warns of applied migrations changed since; status prints on `ctx.out` a line per migration (or JSON with
 * `--json`) and sets exit code 1 when some are pending or failed.
 */
function addMigrateCommands(program: Command, ctx: CommandContext): void {
  const migrateCommand = program.command("migrate").description("database migrations (prisma/migrations)");
  migrateCommand
    .command("deploy", { isDefault: true })
    .description("apply pending migrations (what `npm start` does first)")
    .action(() => migrateDeploy(ctx));
  migrateCommand
    .command("status")
    .description("list applied and pending migrations; exit code 1 when some are pending or failed")
    .option("--json", "print the status as JSON")
    .action((options: { json?: boolean }) => migrateStatus(ctx, options));
}

/** `migrate deploy`: applies the pending migrations to `ctx`'s database and says which (on `ctx.notes`). */
async function migrateDeploy(ctx: CommandContext): Promise<void> {
  const { migrate } = await import("../infra/database.js");
  const database = await ctx.openDatabase({ migrate: false });
  try {
    const report = await migrate(database);
    ctx.notes.write(
      report.applied.length
        ? `applied ${report.applied.length} migration(s) to ${ctx.database}:\n` +
            report.applied.map((n) => `  ${n}\n`).join("")
        : `${ctx.database} is up to date\n`,
    );
    for (const name of report.modified) ctx.notes.write(`warning: ${name} changed after it was applied\n`);
  } finally {
    await database.close();
  }
}

/**
 * `migrate status`: each migration applied, failed, pending or unknown to this build, one a line (or the status as
 * JSON), then a summary line; exit code 1 when some are pending or failed.
 */
async function migrateStatus(ctx: CommandContext, options: { json?: boolean }): Promise<void> {
  const { migrationsOf } = await import("../infra/database.js");
  const database = await ctx.openDatabase({ migrate: false });
  try {
    const status = await migrationsOf(database);
    if (options.json) ctx.out.write(`${JSON.stringify(status)}\n`);
    else {
      const lines = [
        ...status.applied.map((n) => `applied   ${n}${status.modified.includes(n) ? "  (changed since)" : ""}`),
        ...status.failed.map((n) => `failed    ${n}`),
        ...status.pending.map((n) => `pending   ${n}`),
        ...status.unknown.map((n) => `unknown   ${n}  (applied, not in this build)`),
      ];
      ctx.out.write(
        `${lines.join("\n")}\n${
          status.pending.length || status.failed.length
            ? `${status.pending.length} pending, ${status.failed.length} failed`
            : "the database is up to date"
        }\n`,
      );
    }
    if (status.pending.length || status.failed.length) ctx.setExitCode(1);
  } finally {
    await database.close();
  }
}

/** The options of `billing run` as commander gives them (numbers still text; `progress` false with --no-progress). */
interface BillingRunOptions {
  until?: string;
  json?: boolean;
  batchSize: string;
  workers: string;
  progress: boolean;
}

/** `billing run` on `program`: the billing run once (docs/billing-run.md). */
function addBillingCommands(program: Command, ctx: CommandContext): void {
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
    .action((options: BillingRunOptions) => billingRun(ctx, options));
}

/**
 * `billing run`: the run with a progress bar on the terminal (unless --no-progress), then its summary's counts on
 * `ctx.out`, one `name: n` a line and one `error: ...` line per error (or the summary as JSON). UsageError for a
 * --batch-size or --workers that is not a positive integer.
 */
async function billingRun(ctx: CommandContext, options: BillingRunOptions): Promise<void> {
  const batchSize = positive(options.batchSize, "--batch-size");
  const workers = positive(options.workers, "--workers");
  ctx.notes.write(`billing run on ${ctx.database}\n`);
  const display = options.progress ? await ctx.progress(BILLING_PROGRESS) : null;
  let summary;
  try {
    summary = await ctx.billingRun(
      { until: options.until, batchSize, workers },
      display ? (done, total) => display.update(done, total) : undefined,
    );
  } finally {
    display?.end();
  }
  const { errors, ...counts } = summary;
  if (options.json) ctx.out.write(`${JSON.stringify(summary)}\n`);
  else {
    ctx.out.write(
      `${Object.entries(counts)
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n")}\n`,
    );
    for (const e of errors) ctx.out.write(`error: ${e}\n`);
  }
  if (ctx.signal?.aborted)
    ctx.notes.write(
      "the server is stopping: the run ended after its batch in progress; run it again to bill the rest\n",
    );
}

/** The options of `dunning run` as commander gives them (`progress` false with --no-progress). */
interface DunningRunOptions {
  until?: string;
  json?: boolean;
  progress: boolean;
}

/** `dunning run` on `program`: the dunning worker's round once (docs/dunning.md). */
function addDunningCommands(program: Command, ctx: CommandContext): void {
  const dunning = program.command("dunning").description("recovering overdue invoices (docs/dunning.md)");
  dunning
    .command("run")
    .description(
      "run the dunning worker's round once: sweep the invoices past their due date (invoice.payment_overdue), then " +
        "make the campaigns' due attempts",
    )
    .option(
      "--until <date>",
      "take this day (yyyy-mm-dd) as today: invoices due before it are swept, attempts due by its start (00:00 UTC) " +
        "are made; default: today in each organization's time zone (a test clock's customers at its time)",
    )
    .option("--json", "print the summary as JSON (default: plain text)")
    .option("--no-progress", "no progress bar")
    .action((options: DunningRunOptions) => dunningRun(ctx, options));
}

/**
 * `dunning run`: the round with a progress bar of its sweep (unless --no-progress), events printed as they are
 * written, then its summary on `ctx.out`, one `name: n` a line (or JSON). The first step that failed (a bad
 * --until, the database) is thrown; a run's own errors are noted on `ctx.notes`.
 */
async function dunningRun(ctx: CommandContext, options: DunningRunOptions): Promise<void> {
  const [{ runDunningRound }, { settings }] = await Promise.all([
    import("../services/dunning-round.js"),
    ctx.settings(),
    // the sweep writes events (docs/webhooks.md)
    import("./open.js").then((open) => open.installEventPrinting()),
  ]);
  ctx.notes.write(`dunning run on ${ctx.database}\n`);
  const display = options.progress ? await ctx.progress(DUNNING_PROGRESS) : null;
  const database = await ctx.openDatabase();
  try {
    const { summary: all, failures } = await runDunningRound({
      prisma: database.prisma,
      settings,
      now: () => new Date(),
      until: options.until,
      signal: ctx.signal,
      onSweepProgress: display ? (done, total) => display.update(done, total) : undefined,
      // e-mails wait in the outbox for the server's worker when SMTP_URL is set, else they are kept
      sendsMail: !!settings.smtpUrl,
      onError: (run, err) => ctx.notes.write(`dunning run ${run}: ${err instanceof Error ? err.message : err}\n`),
    });
    display?.end();
    // a step that failed (a bad --until, the database) fails the command, as it did before the round was shared
    if (failures.length) throw failures[0].error;
    ctx.out.write(
      options.json
        ? `${JSON.stringify(all)}\n`
        : Object.entries(all)
            .map(([name, n]) => `${name}: ${n}\n`)
            .join(""),
    );
  } finally {
    display?.end();
    await database.close();
  }
}

/** `sii send` on `program`: the SII worker's round once (docs/sii-sending.md). */
function addSiiCommands(program: Command, ctx: CommandContext): void {
  const sii = program.command("sii").description("Chile's SII");
  sii
    .command("send")
    .description(
      "upload queued DTEs to SII and poll sent envelopes once (what the server's worker does on its interval)",
    )
    .action(() => siiSend(ctx));
}

/** `sii send`: uploads the queued DTEs and polls the sent envelopes once; prints the round's report as JSON. */
async function siiSend(ctx: CommandContext): Promise<void> {
  const [{ sendDueSubmissions }, { createLogger }, { config, settings }] = await Promise.all([
    import("../services/sii-sending.js"),
    import("../infra/logger.js"),
    ctx.settings(),
    // SII's verdicts write events (docs/webhooks.md)
    import("./open.js").then((open) => open.installEventPrinting()),
  ]);
  ctx.notes.write(`sending the queued DTEs of ${ctx.database}\n`);
  const database = await ctx.openDatabase();
  try {
    const report = await sendDueSubmissions({
      prisma: database.prisma,
      logger: createLogger(config.logLevel, config.logFormat),
      settings,
    });
    ctx.out.write(`${JSON.stringify(report)}\n`);
  } finally {
    await database.close();
  }
}

/** `value` of option `name` as a positive integer; UsageError when it is not one. */
function positive(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} must be a positive integer, got ${value}`);
  return n;
}

/**
 * Errors whose message says it all (no stack trace): bad input, configuration, a busy data directory, a migration; and
 * system or database errors with a code.
 */
const EXPECTED = new Set(["DataDirInUseError", "ConfigError", "MigrationError", "UsageError"]);

/**
 * What the command line prints for an error a command threw (`error: <message>`, with the stack
 * trace only for an unexpected error), and its exit code: commander's own for a usage mistake or
 * `--help` (already printed by commander), else 1.
 */
export async function commandFailure(e: unknown): Promise<{ text: string; code: number }> {
  if (e instanceof CommanderError) return { text: "", code: e.exitCode };
  const [{ DomainError }, { errorMessage }] = await Promise.all([
    import("../domain/errors.js"),
    import("../infra/driver-adapter.js"),
  ]);
  const error = e as Error & { code?: string };
  const expected =
    e instanceof DomainError || e instanceof UsageError || EXPECTED.has(error.name) || typeof error.code === "string";
  const message = errorMessage(e);
  return { text: `${expected ? `error: ${message}` : `error: ${message}\n${error.stack ?? ""}`}\n`, code: 1 };
}

/**
 * Makes `program` and every subcommand throw instead of exiting the process (a usage mistake,
 * `--help`), and print help and usage errors to `out` and `err`: how the server runs a command
 * (cli/serve.ts), whose process must never exit because of one.
 */
export function containProgram(program: Command, out: (text: string) => void, err: (text: string) => void): void {
  const visit = (command: Command) => {
    command.exitOverride();
    command.configureOutput({ writeOut: out, writeErr: err });
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
