/**
 * pino logger; one JSON line per event (README "Configuration": LOG_LEVEL, LOG_FORMAT), from the
 * first line a process writes. `LOG_FORMAT=pretty` writes colored lines for people through
 * pino-pretty instead (in process, no worker thread).
 *
 * JSON lines are written to stdout asynchronously (pino's SonicBoom destination): while stdout is a
 * pipe nobody reads (a supervisor or a test that stopped reading), lines wait in memory and the
 * service keeps answering. pino writes what waits synchronously when the process exits, retrying
 * for as long as the pipe stays full: an exit would then never end. A process that exits calls
 * `flushLogs` first, which writes what it can within a bound and drops the rest.
 */
import { createRequire } from "node:module";
import { pino, type Logger } from "pino";

export type { Logger };

const require = createRequire(import.meta.url);

/** A logger at `level` (pino levels, or `silent`) writing `format` (`json` or `pretty`) to stdout. */
export function createLogger(
  level: string = process.env.LOG_LEVEL || "info",
  format: string = process.env.LOG_FORMAT || "json",
): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === "pretty") {
    const pretty = require("pino-pretty") as (options: object) => NodeJS.WritableStream;
    return pino(options, pretty({ sync: true, translateTime: "SYS:standard" }));
  }
  const output = pino.destination({ dest: 1, sync: false });
  const logger = pino(options, output);
  outputs.set(logger, output);
  return logger;
}

/** The asynchronous stdout destination of each JSON logger createLogger made. */
const outputs = new WeakMap<Logger, ReturnType<typeof pino.destination>>();

/**
 * Writes the lines `logger` (one createLogger made) still holds to stdout, waiting at most `ms`
 * milliseconds; lines stdout has not taken by then are dropped, so that exiting right after does
 * not wait for a reader that stopped reading. Resolves true when every line was written. Call it
 * just before `process.exit`: lines logged afterwards are dropped. A pretty logger writes
 * synchronously and has nothing waiting: true at once.
 */
export function flushLogs(logger: Logger, ms: number): Promise<boolean> {
  const output = outputs.get(logger);
  if (!output) return Promise.resolve(true);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (written: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // what is left, and any later line, is dropped, and pino's exit handler finds nothing to write
      // synchronously (what pino itself does to its destination when stdout's reader is gone, EPIPE)
      output.write = () => true;
      output.flushSync = () => undefined;
      resolve(written);
    };
    const timer = setTimeout(() => settle(false), ms);
    // the destination says `drain` once it has written everything it holds; an empty write makes it
    // say so even when it holds nothing (flush() does not wait: it returns at once when lines are
    // written as they come)
    output.once("drain", () => settle(true));
    try {
      output.write("");
    } catch {
      settle(false);
    }
  });
}
