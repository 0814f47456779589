/** pino logger; one JSON line per event (README "Configuration": LOG_LEVEL). */
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL || "info"): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}
