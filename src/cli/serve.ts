/**
 * The running server's side of the command line (docs/operations.md "The command line beside a
 * running server"): main.ts listens on the control socket (infra/control-socket.ts) with this
 * handler once the app is up. Each request is the command line's arguments; the server runs the
 * same command (cli/program.ts) against its own open database, settings and logger, and streams
 * the command's stdout, stderr and progress back, then its exit code. A usage mistake or `--help`
 * is answered, never an exit of the server. The billing run runs in the server's process (as its
 * interval worker does) and ends after its batch in progress when the server stops.
 */
import type { Database } from "../infra/database.js";
import type { AppSettings, Config } from "../infra/config.js";
import type { Logger } from "../infra/logger.js";
import type { ControlHandler } from "../infra/control-socket.js";
import { describeDatabase } from "../infra/database-target.js";
import type { CommandContext } from "./context.js";
import { buildProgram, commandFailure, containProgram } from "./program.js";

export interface ServedCommandsOptions {
  /** the server's open, migrated database; commands never close it */
  database: Database;
  config: Config;
  /** the use cases' settings as the server's app has them (the embedded key file included) */
  settings: AppSettings;
  logger: Logger;
  /** the server's package version; a command line of another version is refused */
  version: string;
}

/**
 * The control socket's handler: runs one command line request in the server. Logs one line per
 * command (its first two words, never its arguments: a `db copy --to` URL may hold a password),
 * with the exit code and duration.
 */
export function commandHandler(options: ServedCommandsOptions): ControlHandler {
  const { database, config, settings, logger, version } = options;
  const described = `${describeDatabase(database.target)}, through the running server (process ${process.pid})`;
  return async (request, channel, signal) => {
    const started = performance.now();
    const command = request.argv
      .filter((a) => !a.startsWith("-"))
      .slice(0, 2)
      .join(" ");
    if (request.version !== version) {
      channel.send({
        err:
          `error: the running server is version ${version} and this command line is version ${request.version}; ` +
          `run the server's build of the command line, or stop the server and run this one\n`,
      });
      return 1;
    }
    let code = 0;
    const ctx: CommandContext = {
      out: { write: (text) => channel.send({ out: text }) },
      notes: { write: (text) => channel.send({ err: text }) },
      openDatabase: async () => ({ ...database, close: async () => undefined }),
      settings: async () => ({ config, settings }),
      database: described,
      async billingRun(runOptions, onProgress) {
        const { runBilling } = await import("../services/billing-run.js");
        return runBilling({ prisma: database.prisma, settings, ...runOptions, onProgress, signal });
      },
      progress: async (format) => ({
        update: (done, total) => channel.send({ progress: [done, total], format }),
        end: () => channel.send({ progressEnd: true }),
      }),
      signal,
      setExitCode: (c) => (code = c),
    };
    const program = buildProgram(ctx, version);
    containProgram(
      program,
      (text) => channel.send({ out: text }),
      (text) => channel.send({ err: text }),
    );
    try {
      await program.parseAsync(request.argv, { from: "user" });
    } catch (e) {
      const failure = await commandFailure(e);
      if (failure.text) channel.send({ err: failure.text });
      code = failure.code;
    }
    logger.info(
      { command, exitCode: code, ms: Math.round(performance.now() - started), clientGone: channel.closed || undefined },
      "command run for the command line",
    );
    return code;
  };
}
