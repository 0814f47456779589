/**
 * Configuration from environment variables (the README's configuration table lists them all),
 * validated at start by one zod schema: a bad value is a ConfigError naming the variable and the
 * reason, which main.ts prints as one log line before exiting with code 1. Read once per process;
 * tests pass their own values to `loadConfig`. The database (`DATABASE_URL`, `BILLING_DATA_DIR`)
 * is selected by `databaseTarget` in infra/driver-adapter.ts; `loadConfig` checks their form.
 */
import { z } from "zod";
import { parseEncryptionKey } from "./secrets.js";
import { GATEWAY_NAMES } from "./gateways/index.js";
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from "../domain/webhooks.js";

export interface Config {
  /** TCP port of the HTTP server (0 = random free port). */
  port: number;
  host: string;
  logLevel: LogLevel;
  /** `json` (default): one JSON object per line; `pretty`: colored lines for people (pino-pretty) */
  logFormat: LogFormat;
  /** Absolute base URL used in `next`/`previous` links and file URLs; derived from the request when unset. */
  publicUrl?: string;
  /**
   * How often the server's SII worker sends queued DTEs and polls SII (ms; SII_SEND_INTERVAL_SECONDS, default 60; 0:
   * off)
   */
  siiSendIntervalMs: number;
  /** What the use cases read at run time (mail, sessions, payments); passed to createApp. */
  settings: AppSettings;
  /**
   * BILLING_RUN_INTERVAL_SECONDS: run the billing run inside the server every so many seconds; 0 (default): never (use
   * the CLI or cron)
   */
  billingRunIntervalSeconds: number;
  /**
   * DUNNING_INTERVAL_SECONDS (default 3600; 0: off): how often the server's dunning worker runs (docs/dunning.md
   * "The worker"): the overdue sweep that writes `invoice.payment_overdue`
   */
  dunningIntervalSeconds: number;
  /**
   * ANALYTICS_DRAIN_INTERVAL_SECONDS (default 10; 0: off): how often the server drains revenue analytics' dirty
   * customers into the maintained aggregates (docs/analytics.md "How it is computed"); readers drain what is left
   */
  analyticsDrainIntervalSeconds: number;
  /**
   * SHUTDOWN_GRACE_SECONDS (default 10): after SIGTERM or SIGINT, how long requests in flight, the command line's
   * commands and worker rounds may take to finish before the process exits 0 anyway (main.ts)
   */
  shutdownGraceSeconds: number;
  /**
   * HEAP_GROWING_PERCENT (default 50; 0: V8's own factor): how far the JavaScript heap may grow past its live
   * size before a full garbage collection, in percent (infra/heap.ts; docs/operations.md "Memory").
   */
  heapGrowingPercent: number;
  /**
   * SERVICE_ROLE (default `all`): what this process runs (docs/scaling.md "Roles"): `all` HTTP and every background
   * worker; `api` HTTP only; `worker` every background worker, with HTTP only for /healthz, /readyz and /metrics.
   * `api` and `worker` need PostgreSQL (DATABASE_URL).
   */
  role: ServiceRole;
}

/** What one process runs (SERVICE_ROLE; docs/scaling.md "Roles"). */
export const SERVICE_ROLES = ["all", "api", "worker"] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number];

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
  /**
   * Per-API-key rate limit (docs/limits.md "Rate limits"), a token bucket of rate-limiter-flexible:
   * `rateLimitRequests` requests per `rateLimitWindowSeconds` (RATE_LIMIT_REQUESTS, default 100;
   * RATE_LIMIT_WINDOW_SECONDS, default 1), plus `rateLimitBurst` extra requests a key may spend
   * above that rate, refilled over a minute (RATE_LIMIT_BURST, default 200). 0 requests: no limit.
   * Over it: 429 `rate_limited` with `Retry-After`.
   */
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  rateLimitBurst: number;
  /**
   * Failed authentications (a 401 to a request that carried an `Authorization` header) allowed per
   * client address per `authFailureWindowSeconds` (AUTH_FAILURE_LIMIT, default 20;
   * AUTH_FAILURE_WINDOW_SECONDS, default 300); past it every /v1 and /graphql request from that
   * address answers 429 `rate_limited` until the window ends. 0: no limit.
   */
  authFailureLimit: number;
  authFailureWindowSeconds: number;
  /**
   * RATE_LIMIT_STORE: where both limits count (infra/rate-limit.ts; docs/limits.md "Where the counts live").
   * `database` (default): on PostgreSQL in its RateLimit table, shared by every process (one statement per counted
   * request), on the embedded database in memory (it has one process); `memory`: in each process's memory, each
   * process counting on its own.
   */
  rateLimitStore: RateLimitStore;
  /**
   * TRUST_PROXY (default false): the client address is the last entry of `X-Forwarded-For` (what
   * the proxy in front saw) instead of the socket's peer. Set it only behind a proxy that appends it.
   */
  trustProxy: boolean;
  /** CORS_ORIGINS: origins allowed to call /graphql and /v1 from a browser (exact `scheme://host[:port]`); empty (default): CORS off */
  corsOrigins: string[];
  /**
   * METRICS_TOKEN: bearer token for /metrics and the detail of /readyz. Unset (default): /metrics
   * answers 404 and /readyz only says ready or not.
   */
  metricsToken?: string;
  /**
   * GRAPHQL_TIME_BUDGET_MS: a query operation still resolving after this long is ended with `request_timeout` (default
   * 10000)
   */
  graphqlTimeBudgetMs: number;
  /**
   * API_KEY_CACHE_TTL_SECONDS: how long a request's API key, once read, is served from this
   * process's memory (services/api-key-cache.ts; default 30, 0: read on every request). A key
   * revoked in any process stops at once (its notification), an expired one at its expiry; only a
   * change made in the database by hand waits for this time.
   */
  apiKeyCacheTtlSeconds: number;
  /** webhook delivery (docs/webhooks.md "Delivery") */
  webhooks: WebhookSettings;
  /** EVENT_RETENTION_DAYS: events older than this many days are deleted (default 30) */
  eventRetentionDays: number;
  /**
   * DUNNING_LINK_DAYS (default 7): how many days the portal link of a dunning e-mail works, from when the message is
   * sent (docs/dunning.md "The e-mail")
   */
  dunningLinkDays: number;
  /**
   * PUBLIC_URL (without a trailing slash): the base of the links that background work prints (an event's file
   * URLs when no request made it); unset: such links start at the path (`/v1/files/...`)
   */
  publicUrl?: string;
}

/** RATE_LIMIT_STORE's values (AppSettings.rateLimitStore). */
export const RATE_LIMIT_STORES = ["database", "memory"] as const;
export type RateLimitStore = (typeof RATE_LIMIT_STORES)[number];

/** How webhook messages are delivered (docs/webhooks.md). */
export interface WebhookSettings {
  /** WEBHOOK_TIMEOUT_SECONDS in ms (default 15 s): an attempt without a 2xx by then failed */
  timeoutMs: number;
  /** WEBHOOK_RETRY_SCHEDULE in ms: the wait before each retry (default 5s,5m,30m,2h,5h,10h,10h) */
  retrySchedule: number[];
  /**
   * WEBHOOK_ALLOW_PRIVATE_NETWORKS (default false): live endpoints may point to loopback, private and
   * link-local addresses (self-hosted deployments delivering to internal services)
   */
  allowPrivateNetworks: boolean;
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

export const DEFAULT_SETTINGS: AppSettings = {
  mailFrom: "billing@localhost",
  sessionTtlSeconds: 3600,
  paymentGateways: ["test", "redirect"],
  sii: DEFAULT_SII_HOSTS,
  rateLimitRequests: 100,
  rateLimitWindowSeconds: 1,
  rateLimitBurst: 200,
  authFailureLimit: 20,
  authFailureWindowSeconds: 300,
  rateLimitStore: "database",
  trustProxy: false,
  corsOrigins: [],
  graphqlTimeBudgetMs: 10_000,
  apiKeyCacheTtlSeconds: 30,
  webhooks: {
    timeoutMs: 15_000,
    retrySchedule: parseRetrySchedule(DEFAULT_RETRY_SCHEDULE),
    allowPrivateNetworks: false,
  },
  eventRetentionDays: 30,
  dunningLinkDays: 7,
};

const SII_HOST_VARIABLES: Record<keyof SiiHosts, string> = {
  certificationUrl: "SII_CERTIFICATION_URL",
  productionUrl: "SII_PRODUCTION_URL",
  boletaCertificationUrl: "SII_BOLETA_CERTIFICATION_URL",
  boletaCertificationUploadUrl: "SII_BOLETA_CERTIFICATION_UPLOAD_URL",
  boletaProductionUrl: "SII_BOLETA_PRODUCTION_URL",
  boletaProductionUploadUrl: "SII_BOLETA_PRODUCTION_UPLOAD_URL",
};

/** pino levels LOG_LEVEL accepts. */
/** ANALYTICS_DRAIN_INTERVAL_SECONDS when unset (docs/analytics.md "How it is computed"). */
export const DEFAULT_ANALYTICS_DRAIN_INTERVAL_SECONDS = 10;

/** DUNNING_INTERVAL_SECONDS when unset: the dunning worker runs hourly (docs/dunning.md "The worker"). */
export const DEFAULT_DUNNING_INTERVAL_SECONDS = 3_600;

/**
 * HEAP_GROWING_PERCENT's default: a full collection once the heap is 1.5 times its live size. Measured
 * (docs/operations.md "Memory"): a webhook backlog's peak RSS 1.08 times the idle RSS, against 1.25-1.32
 * with V8's own factor, for 0.05 ms more of garbage collection per POST /v1/invoices/.
 */
export const DEFAULT_HEAP_GROWING_PERCENT = 50;

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** A configuration variable with a bad value; `message` is `VARIABLE: reason (got "value")`. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly reason: string,
    value: string | undefined,
  ) {
    super(
      `${variable}: ${reason}` +
        (value === undefined ? "" : ` (got ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value)})`),
    );
    this.name = "ConfigError";
  }
}

/** Unset and empty are the same: the default applies. */
const unset = (v: unknown) => (v === "" ? undefined : v);
const integer = (min: number, max: number, what: string) =>
  z.preprocess(
    unset,
    z.string().regex(/^\d+$/, what).transform(Number).pipe(z.number().int().min(min, what).max(max, what)).optional(),
  );
const url = (protocols: string[], what: string) =>
  z.preprocess(
    unset,
    z
      .string()
      .refine((v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      }, what)
      .optional(),
  );
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess(unset, z.enum(values, { error: `must be one of ${values.join(", ")}` }).optional());

/** Every variable of the README's configuration (its table, and SII's hosts below it), with its rule. */
const ENV_SCHEMA = z.object({
  PORT: integer(0, 65535, "must be an integer between 0 and 65535"),
  HOST: z.preprocess(
    unset,
    z
      .string()
      .regex(/^[^\s/]+$/, "must be a host name or an IP address")
      .optional(),
  ),
  DATABASE_URL: url(
    ["postgres:", "postgresql:"],
    "must be a PostgreSQL URL (postgresql://user:password@host:5432/database)",
  ),
  BILLING_DATA_DIR: z.preprocess(unset, z.string().optional()),
  // read by infra/database-target.ts (databaseTarget); checked here (docs/scaling.md "Through PgBouncer")
  DATABASE_POOL_SIZE: integer(1, 1_000, "must be a whole number of connections between 1 and 1000"),
  DATABASE_PREPARED_STATEMENTS: z.preprocess(
    unset,
    z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).optional(),
  ),
  DATABASE_LISTEN_URL: url(
    ["postgres:", "postgresql:"],
    "must be a PostgreSQL URL (postgresql://user:password@host:5432/database)",
  ),
  SERVICE_ROLE: oneOf(SERVICE_ROLES),
  PUBLIC_URL: url(["http:", "https:"], "must be an absolute http(s) URL"),
  LOG_LEVEL: oneOf(LOG_LEVELS),
  LOG_FORMAT: oneOf(LOG_FORMATS),
  SMTP_URL: url(["smtp:", "smtps:"], "must be an smtp:// or smtps:// URL"),
  MAIL_FROM: z.preprocess(
    unset,
    z
      .string()
      .regex(/^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, "must be an e-mail address or `Name <address>`")
      .optional(),
  ),
  SESSION_TTL_SECONDS: integer(1, 31_536_000, "must be a whole number of seconds between 1 and 31536000"),
  BILLING_RUN_INTERVAL_SECONDS: integer(0, 31_536_000, "must be a whole number of seconds (0: off)"),
  DUNNING_INTERVAL_SECONDS: integer(0, 31_536_000, "must be a whole number of seconds (0: off)"),
  ANALYTICS_DRAIN_INTERVAL_SECONDS: integer(0, 31_536_000, "must be a whole number of seconds (0: off)"),
  SII_SEND_INTERVAL_SECONDS: integer(0, 31_536_000, "must be a whole number of seconds (0: off)"),
  SHUTDOWN_GRACE_SECONDS: integer(1, 3_600, "must be a whole number of seconds between 1 and 3600"),
  HEAP_GROWING_PERCENT: integer(0, 1_000, "must be a whole number of percent between 0 and 1000 (0: V8's own)"),
  PAYMENT_GATEWAYS: z.preprocess(
    unset,
    z
      .string()
      .transform((v) =>
        v
          .split(",")
          .map((g) => g.trim())
          .filter(Boolean),
      )
      .refine(
        (names) => names.every((n) => GATEWAY_NAMES.includes(n)),
        `must be a comma-separated list of ${GATEWAY_NAMES.join(", ")}`,
      )
      .optional(),
  ),
  CERTIFICATE_ENCRYPTION_KEY: z.preprocess(unset, z.string().optional()),
  RATE_LIMIT_REQUESTS: integer(0, 1_000_000, "must be a whole number of requests (0: no limit)"),
  RATE_LIMIT_WINDOW_SECONDS: integer(1, 86_400, "must be a whole number of seconds between 1 and 86400"),
  RATE_LIMIT_BURST: integer(0, 1_000_000, "must be a whole number of requests"),
  AUTH_FAILURE_LIMIT: integer(0, 1_000_000, "must be a whole number of attempts (0: no limit)"),
  AUTH_FAILURE_WINDOW_SECONDS: integer(1, 86_400, "must be a whole number of seconds between 1 and 86400"),
  RATE_LIMIT_STORE: oneOf(RATE_LIMIT_STORES),
  TRUST_PROXY: z.preprocess(unset, z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).optional()),
  CORS_ORIGINS: z.preprocess(
    unset,
    z
      .string()
      .transform((v) =>
        v
          .split(",")
          .map((o) => o.trim())
          .filter(Boolean),
      )
      .refine(
        (origins) => origins.every((o) => /^https?:\/\/[^/\s]+$/.test(o)),
        "must be a comma-separated list of origins like https://app.example.com (scheme and host, no path)",
      )
      .optional(),
  ),
  METRICS_TOKEN: z.preprocess(unset, z.string().optional()),
  GRAPHQL_TIME_BUDGET_MS: integer(1, 600_000, "must be a whole number of milliseconds between 1 and 600000"),
  API_KEY_CACHE_TTL_SECONDS: integer(0, 3_600, "must be a whole number of seconds between 0 and 3600 (0: no cache)"),
  WEBHOOK_TIMEOUT_SECONDS: integer(1, 120, "must be a whole number of seconds between 1 and 120"),
  WEBHOOK_RETRY_SCHEDULE: z.preprocess(
    unset,
    z
      .string()
      .transform((v, ctx) => {
        try {
          return parseRetrySchedule(v);
        } catch (e) {
          ctx.addIssue({ code: "custom", message: (e as Error).message });
          return z.NEVER;
        }
      })
      .optional(),
  ),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: z.preprocess(
    unset,
    z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).optional(),
  ),
  EVENT_RETENTION_DAYS: integer(1, 3_650, "must be a whole number of days between 1 and 3650"),
  DUNNING_LINK_DAYS: integer(1, 90, "must be a whole number of days between 1 and 90"),
  ...(Object.fromEntries(
    Object.values(SII_HOST_VARIABLES).map((v) => [v, url(["http:", "https:"], "must be an absolute http(s) URL")]),
  ) as Record<string, ReturnType<typeof url>>),
});

/** The names of every variable the service reads at start (README "Configuration" names each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ENV_SCHEMA.shape);

/**
 * Reads and validates the configuration from `env`. Throws ConfigError for the first bad variable
 * (in the order of the README's table).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parsedEnv(env);
  const certificateEncryptionKey = encryptionKeyOf(e);
  checkMetricsToken(e);
  const role = roleOf(e, env);
  return {
    port: e.PORT ?? 3000,
    host: e.HOST ?? "0.0.0.0",
    logLevel: e.LOG_LEVEL ?? "info",
    logFormat: e.LOG_FORMAT ?? "json",
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ""),
    billingRunIntervalSeconds: e.BILLING_RUN_INTERVAL_SECONDS ?? 0,
    dunningIntervalSeconds: e.DUNNING_INTERVAL_SECONDS ?? DEFAULT_DUNNING_INTERVAL_SECONDS,
    analyticsDrainIntervalSeconds: e.ANALYTICS_DRAIN_INTERVAL_SECONDS ?? DEFAULT_ANALYTICS_DRAIN_INTERVAL_SECONDS,
    siiSendIntervalMs: (e.SII_SEND_INTERVAL_SECONDS ?? 60) * 1000,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS ?? 10,
    heapGrowingPercent: e.HEAP_GROWING_PERCENT ?? DEFAULT_HEAP_GROWING_PERCENT,
    role,
    settings: appSettingsOf(e, certificateEncryptionKey),
  };
}

/** The variables as ENV_SCHEMA parses them, with the SII host variables by name. */
type ParsedEnv = z.infer<typeof ENV_SCHEMA> & Record<string, string | undefined>;

/** `env` parsed by ENV_SCHEMA; ConfigError naming the first bad variable, its reason and its value. */
function parsedEnv(env: NodeJS.ProcessEnv): ParsedEnv {
  const parsed = ENV_SCHEMA.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue.path[0]);
    throw new ConfigError(variable, issue.message, env[variable]);
  }
  return parsed.data as ParsedEnv;
}

/** CERTIFICATE_ENCRYPTION_KEY's 32 bytes, or undefined when unset; ConfigError (the value never echoed) when bad. */
function encryptionKeyOf(e: ParsedEnv): Buffer | undefined {
  if (!e.CERTIFICATE_ENCRYPTION_KEY) return undefined;
  try {
    return parseEncryptionKey(e.CERTIFICATE_ENCRYPTION_KEY);
  } catch {
    throw new ConfigError(
      "CERTIFICATE_ENCRYPTION_KEY",
      "must be 32 bytes in base64 (openssl rand -base64 32)",
      undefined,
    );
  }
}

/** ConfigError when METRICS_TOKEN is set but shorter than 16 printable characters or has spaces. */
function checkMetricsToken(e: ParsedEnv): void {
  // a secret is never echoed: the error names the rule only
  if (e.METRICS_TOKEN !== undefined && !/^[\x21-\x7e]{16,}$/.test(e.METRICS_TOKEN)) {
    throw new ConfigError(
      "METRICS_TOKEN",
      "must be at least 16 printable characters without spaces (openssl rand -hex 32)",
      undefined,
    );
  }
}

/** SERVICE_ROLE (default `all`); ConfigError for `api` or `worker` on the embedded database (no DATABASE_URL). */
function roleOf(e: ParsedEnv, env: NodeJS.ProcessEnv): ServiceRole {
  const role = e.SERVICE_ROLE ?? "all";
  // one process owns an embedded database's directory (infra/data-dir-lock.ts): it must run HTTP and the workers both
  if (role !== "all" && !e.DATABASE_URL) {
    throw new ConfigError(
      "SERVICE_ROLE",
      `${role} needs PostgreSQL (DATABASE_URL): on the embedded database one process owns the data directory, so it ` +
        "runs HTTP and every worker (SERVICE_ROLE=all, the default)",
      env.SERVICE_ROLE,
    );
  }
  return role;
}

/** SII's hosts: each variable set, else SII's own (DEFAULT_SII_HOSTS), without a trailing slash. */
function siiHostsOf(e: ParsedEnv): SiiHosts {
  const sii = { ...DEFAULT_SII_HOSTS };
  for (const [key, variable] of Object.entries(SII_HOST_VARIABLES) as [keyof SiiHosts, string][]) {
    sii[key] = (e[variable] || DEFAULT_SII_HOSTS[key]).replace(/\/+$/, "");
  }
  return sii;
}

/** The settings the app's parts read (AppSettings), each variable set or its default (DEFAULT_SETTINGS). */
function appSettingsOf(e: ParsedEnv, certificateEncryptionKey: Buffer | undefined): AppSettings {
  return {
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? DEFAULT_SETTINGS.mailFrom,
    sessionTtlSeconds: e.SESSION_TTL_SECONDS ?? DEFAULT_SETTINGS.sessionTtlSeconds,
    paymentGateways: e.PAYMENT_GATEWAYS ?? DEFAULT_SETTINGS.paymentGateways,
    sii: siiHostsOf(e),
    certificateEncryptionKey,
    rateLimitRequests: e.RATE_LIMIT_REQUESTS ?? DEFAULT_SETTINGS.rateLimitRequests,
    rateLimitWindowSeconds: e.RATE_LIMIT_WINDOW_SECONDS ?? DEFAULT_SETTINGS.rateLimitWindowSeconds,
    rateLimitBurst: e.RATE_LIMIT_BURST ?? DEFAULT_SETTINGS.rateLimitBurst,
    authFailureLimit: e.AUTH_FAILURE_LIMIT ?? DEFAULT_SETTINGS.authFailureLimit,
    authFailureWindowSeconds: e.AUTH_FAILURE_WINDOW_SECONDS ?? DEFAULT_SETTINGS.authFailureWindowSeconds,
    rateLimitStore: e.RATE_LIMIT_STORE ?? DEFAULT_SETTINGS.rateLimitStore,
    trustProxy: e.TRUST_PROXY === "true" || e.TRUST_PROXY === "1",
    corsOrigins: e.CORS_ORIGINS ?? DEFAULT_SETTINGS.corsOrigins,
    metricsToken: e.METRICS_TOKEN,
    graphqlTimeBudgetMs: e.GRAPHQL_TIME_BUDGET_MS ?? DEFAULT_SETTINGS.graphqlTimeBudgetMs,
    apiKeyCacheTtlSeconds: e.API_KEY_CACHE_TTL_SECONDS ?? DEFAULT_SETTINGS.apiKeyCacheTtlSeconds,
    webhooks: {
      timeoutMs: (e.WEBHOOK_TIMEOUT_SECONDS ?? DEFAULT_SETTINGS.webhooks.timeoutMs / 1000) * 1000,
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_SETTINGS.webhooks.retrySchedule,
      allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS === "true" || e.WEBHOOK_ALLOW_PRIVATE_NETWORKS === "1",
    },
    eventRetentionDays: e.EVENT_RETENTION_DAYS ?? DEFAULT_SETTINGS.eventRetentionDays,
    dunningLinkDays: e.DUNNING_LINK_DAYS ?? DEFAULT_SETTINGS.dunningLinkDays,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ""),
  };
}
