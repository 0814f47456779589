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
  /** What the use cases read at run time (mail, sessions, payments); passed to createApp. */
  settings: AppSettings;
  /** BILLING_RUN_INTERVAL_SECONDS: run the billing run inside the server every so many seconds; 0 (default): never (use the CLI or cron) */
  billingRunIntervalSeconds: number;
}

/** Run-time settings of the use cases; every field has a default so tests and scripts can omit them. */
export interface AppSettings {
  /** SMTP server URL (`smtp://user:pass@host:587`); unset: mail is kept in the outbox and logged */
  smtpUrl?: string;
  /** From address of outgoing mail */
  mailFrom: string;
  /** Lifetime of a customer session, in seconds */
  sessionTtlSeconds: number;
  /** Enabled payment gateways by name (infra/gateways); the built-in ones work with test keys only */
  paymentGateways: string[];
}

export const DEFAULT_SETTINGS: AppSettings = { mailFrom: "billing@localhost", sessionTtlSeconds: 3600, paymentGateways: ["test", "redirect"] };

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT === undefined || env.PORT === "" ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer between 0 and 65535, got ${env.PORT}`);
  }
  const sessionTtlSeconds = env.SESSION_TTL_SECONDS ? Number(env.SESSION_TTL_SECONDS) : DEFAULT_SETTINGS.sessionTtlSeconds;
  if (!Number.isInteger(sessionTtlSeconds) || sessionTtlSeconds < 1) {
    throw new Error(`SESSION_TTL_SECONDS must be a positive integer, got ${env.SESSION_TTL_SECONDS}`);
  }
  const billingRunIntervalSeconds = env.BILLING_RUN_INTERVAL_SECONDS ? Number(env.BILLING_RUN_INTERVAL_SECONDS) : 0;
  if (!Number.isInteger(billingRunIntervalSeconds) || billingRunIntervalSeconds < 0) {
    throw new Error(`BILLING_RUN_INTERVAL_SECONDS must be a non-negative integer, got ${env.BILLING_RUN_INTERVAL_SECONDS}`);
  }
  return {
    port,
    billingRunIntervalSeconds,
    host: env.HOST || "0.0.0.0",
    logLevel: env.LOG_LEVEL || "info",
    publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/$/, "") : undefined,
    settings: {
      smtpUrl: env.SMTP_URL || undefined,
      mailFrom: env.MAIL_FROM || DEFAULT_SETTINGS.mailFrom,
      sessionTtlSeconds,
      paymentGateways: env.PAYMENT_GATEWAYS
        ? env.PAYMENT_GATEWAYS.split(",").map((g) => g.trim()).filter(Boolean)
        : DEFAULT_SETTINGS.paymentGateways,
    },
  };
}
