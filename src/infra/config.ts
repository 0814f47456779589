/**
 * Configuration from environment variables (the README's configuration table lists them all).
 * Read once per process; tests pass their own values to `loadConfig`. The database
 * (`DATABASE_URL`, `BILLING_DATA_DIR`) is selected by `databaseTarget` in infra/driver-adapter.ts.
 */
export interface Config {
  /** TCP port of the HTTP server (0 = random free port). */
  port: number;
  host: string;
  logLevel: string;
  /** Absolute base URL used in `next`/`previous` links and file URLs; derived from the request when unset. */
  publicUrl?: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT === undefined || env.PORT === "" ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer between 0 and 65535, got ${env.PORT}`);
  }
  return {
    port,
    host: env.HOST || "0.0.0.0",
    logLevel: env.LOG_LEVEL || "info",
    publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/$/, "") : undefined,
  };
}
