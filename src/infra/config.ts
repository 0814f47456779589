/**
 * Configuration from environment variables (the README's configuration table lists them all).
 * Read once per process; tests pass their own values to `loadConfig`. The database
 * (`DATABASE_URL`, `BILLING_DATA_DIR`) is selected by `databaseTarget` in infra/driver-adapter.ts.
 */
import { parseEncryptionKey } from "./secrets.js";

export interface Config {
  /** TCP port of the HTTP server (0 = random free port). */
  port: number;
  host: string;
  logLevel: string;
  /** Absolute base URL used in `next`/`previous` links and file URLs; derived from the request when unset. */
  publicUrl?: string;
  /** How often the server's SII worker sends queued DTEs and polls SII (ms; SII_SEND_INTERVAL_SECONDS, default 60; 0: off) */
  siiSendIntervalMs: number;
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
  /** SII hosts (docs/sii-sending.md): certification for test mode, production for live mode */
  sii: SiiHosts;
  /**
   * AES-256-GCM key (32 bytes) sealing certificates and CAF private keys at rest (infra/secrets.ts):
   * `CERTIFICATE_ENCRYPTION_KEY` (base64); on the embedded database main.ts falls back to a key
   * file generated in the data dir. Unset: uploading or signing is a 409 naming the variable.
   */
  certificateEncryptionKey?: Buffer;
}

/**
 * Base URLs of SII's services (docs/sii-sending.md "Hosts"): DTEs go to SII_CERTIFICATION_URL /
 * SII_PRODUCTION_URL; boletas to SII's boleta REST API, SII_BOLETA_CERTIFICATION_URL /
 * SII_BOLETA_PRODUCTION_URL (seed, token, status) and SII_BOLETA_CERTIFICATION_UPLOAD_URL /
 * SII_BOLETA_PRODUCTION_UPLOAD_URL (upload). Certification serves test mode, production live mode.
 */
export interface SiiHosts {
  /** test mode: SII's certification environment, default https://maullin.sii.cl */
  certificationUrl: string;
  /** live mode: SII's production environment, default https://palena.sii.cl */
  productionUrl: string;
  /** boletas, test mode: default https://apicert.sii.cl/recursos/v1 */
  boletaCertificationUrl: string;
  /** boleta uploads, test mode: default https://pangal.sii.cl/recursos/v1 */
  boletaCertificationUploadUrl: string;
  /** boletas, live mode: default https://api.sii.cl/recursos/v1 */
  boletaProductionUrl: string;
  /** boleta uploads, live mode: default https://rahue.sii.cl/recursos/v1 */
  boletaProductionUploadUrl: string;
}

export const DEFAULT_SII_HOSTS: SiiHosts = {
  certificationUrl: "https://maullin.sii.cl",
  productionUrl: "https://palena.sii.cl",
  boletaCertificationUrl: "https://apicert.sii.cl/recursos/v1",
  boletaCertificationUploadUrl: "https://pangal.sii.cl/recursos/v1",
  boletaProductionUrl: "https://api.sii.cl/recursos/v1",
  boletaProductionUploadUrl: "https://rahue.sii.cl/recursos/v1",
};

export const DEFAULT_SETTINGS: AppSettings = { mailFrom: "billing@localhost", sessionTtlSeconds: 3600, paymentGateways: ["test", "redirect"], sii: DEFAULT_SII_HOSTS };

const SII_HOST_VARIABLES: Record<keyof SiiHosts, string> = {
  certificationUrl: "SII_CERTIFICATION_URL",
  productionUrl: "SII_PRODUCTION_URL",
  boletaCertificationUrl: "SII_BOLETA_CERTIFICATION_URL",
  boletaCertificationUploadUrl: "SII_BOLETA_CERTIFICATION_UPLOAD_URL",
  boletaProductionUrl: "SII_BOLETA_PRODUCTION_URL",
  boletaProductionUploadUrl: "SII_BOLETA_PRODUCTION_UPLOAD_URL",
};

/** SII hosts from the environment (trailing slashes dropped), defaults from DEFAULT_SII_HOSTS. */
function siiHosts(env: NodeJS.ProcessEnv): SiiHosts {
  const hosts = { ...DEFAULT_SII_HOSTS };
  for (const [key, variable] of Object.entries(SII_HOST_VARIABLES) as [keyof SiiHosts, string][]) {
    hosts[key] = (env[variable] || DEFAULT_SII_HOSTS[key]).replace(/\/+$/, "");
  }
  return hosts;
}

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
  const siiSendSeconds = env.SII_SEND_INTERVAL_SECONDS === undefined || env.SII_SEND_INTERVAL_SECONDS === "" ? 60 : Number(env.SII_SEND_INTERVAL_SECONDS);
  if (!Number.isInteger(siiSendSeconds) || siiSendSeconds < 0) {
    throw new Error(`SII_SEND_INTERVAL_SECONDS must be a non-negative integer, got ${env.SII_SEND_INTERVAL_SECONDS}`);
  }
  return {
    port,
    billingRunIntervalSeconds,
    siiSendIntervalMs: siiSendSeconds * 1000,
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
      sii: siiHosts(env),
      certificateEncryptionKey: env.CERTIFICATE_ENCRYPTION_KEY ? parseEncryptionKey(env.CERTIFICATE_ENCRYPTION_KEY) : undefined,
    },
  };
}
