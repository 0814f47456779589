/**
 * `db` commands of the command line (docs/moving-to-postgresql.md):
 *   db copy --to postgresql://user@host:5432/billing
 *       copies every row of the configured database (normally the embedded one) into the
 *       PostgreSQL database at the URL, after migrating it; prints one line per table
 *       (`<table> <rows>`) and `total <rows> rows in <n> tables` to stdout.
 * Errors (a URL that is not PostgreSQL, a non-empty target, migrations that differ) are thrown
 * with a one-line message for the caller to print and exit 1; the target is then unchanged
 * (its migrations aside). The modules are imported when the command runs.
 */
import { Command } from "commander";
import type { CommandContext } from "./context.js";

/** A mistake in the command line; `code` is a string so the command line prints the message alone. */
class DatabaseUsageError extends Error {
  readonly code = "usage";
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Checks that `url` is a PostgreSQL connection URL (`postgres://` or `postgresql://` with a host
 * and a database name); returns it unchanged, throws an Error with a one-line message otherwise.
 */
export function postgresUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUsageError(
      `--to must be a PostgreSQL URL such as postgresql://user@host:5432/billing, got ${JSON.stringify(url)}`,
    );
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    throw new DatabaseUsageError(
      `--to must be a PostgreSQL URL (postgresql://...), got the scheme ${parsed.protocol.replace(/:$/, "")}`,
    );
  }
  if (!parsed.hostname || parsed.pathname.length <= 1) {
    throw new DatabaseUsageError(
      `--to must name a host and a database (postgresql://user@host:5432/billing), got ${JSON.stringify(url)}`,
    );
  }
  return url;
}

/**
 * The `db` command in context `ctx` (cli/context.ts): `ctx.openDatabase` opens the configured
 * (source) database, migrated; it is closed when the command ends, also on errors. `ctx.out`
 * receives what the command prints (tests pass a buffer), `ctx.notes` which databases it copies.
 */
export function databaseCommands(ctx: Pick<CommandContext, "openDatabase" | "out" | "notes" | "database">): Command {
  const { out } = ctx;
  const command = new Command("db").description("database maintenance");
  command
    .command("copy")
    .description(
      "copy every row of the configured database (e.g. the embedded one) into an empty PostgreSQL database, " +
        "migrating it first",
    )
    .requiredOption(
      "--to <url>",
      "the target PostgreSQL database (postgresql://user:password@host:5432/name); must be empty",
    )
    .action(async (options: { to: string }) => {
      const url = postgresUrl(options.to);
      const [{ createDatabase, migrate }, { copyDatabase }, { describeDatabase }] = await Promise.all([
        import("../infra/database.js"),
        import("../infra/database-copy.js"),
        import("../infra/database-target.js"),
      ]);
      ctx.notes.write(
        `copying ${ctx.database} into ${describeDatabase({ kind: "postgres", url })} ` +
          `(the source is read as one snapshot; on the embedded database its other users wait meanwhile)\n`,
      );
      const source = await ctx.openDatabase();
      try {
        const target = await createDatabase({ kind: "postgres", url });
        try {
          await migrate(target);
          const report = await copyDatabase(source, target);
          // printed after the commit: nothing is listed for a copy that was rolled back
          for (const t of report.tables) out.write(`${t.table} ${t.rows}\n`);
          out.write(`total ${report.rows} rows in ${report.tables.length} tables\n`);
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
    });
  return command;
}
