/**
 * pino logger; one JSON line per event (README "Configuration": LOG_LEVEL, LOG_FORMAT), from the
 * first line a process writes. `LOG_FORMAT=pretty` writes colored lines for people through
 * pino-pretty instead (in process, no worker thread).
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
  return pino(options);
}
