/**
 * Configuration (src/infra/config.ts): every variable of the README's table is checked at start;
 * a bad value is a ConfigError naming the variable, the reason and the value.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/infra/config.js";
import { databaseTarget } from "../src/infra/database-target.js";

function error(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("no error");
}

describe("loadConfig", () => {
  it("defaults for an empty environment; empty values count as unset", () => {
    const config = loadConfig({ PORT: "", LOG_LEVEL: "" });
    expect(config).toMatchObject({
      port: 3000,
      host: "0.0.0.0",
      logLevel: "info",
      logFormat: "json",
      billingRunIntervalSeconds: 0,
      dunningIntervalSeconds: 3600,
      analyticsDrainIntervalSeconds: 10,
      siiSendIntervalMs: 60_000,
      shutdownGraceSeconds: 10,
      heapGrowingPercent: 50,
      publicUrl: undefined,
    });
    expect(config.settings).toMatchObject({
      mailFrom: "billing@localhost",
      sessionTtlSeconds: 3600,
      paymentGateways: ["test", "redirect"],
      smtpUrl: undefined,
    });
  });

  it("reads every variable", () => {
    const config = loadConfig({
      PORT: "8080",
      HOST: "127.0.0.1",
      PUBLIC_URL: "https://billing.example.cl/",
      LOG_LEVEL: "warn",
      LOG_FORMAT: "pretty",
      SMTP_URL: "smtp://u:p@mail:587",
      MAIL_FROM: "Facturación <billing@acme.cl>",
      SESSION_TTL_SECONDS: "600",
      BILLING_RUN_INTERVAL_SECONDS: "300",
      DUNNING_INTERVAL_SECONDS: "0",
      ANALYTICS_DRAIN_INTERVAL_SECONDS: "2",
      SII_SEND_INTERVAL_SECONDS: "0",
      SHUTDOWN_GRACE_SECONDS: "3",
      HEAP_GROWING_PERCENT: "30",
      PAYMENT_GATEWAYS: "test",
      DATABASE_URL: "postgresql://u@db:5432/billing",
      SII_CERTIFICATION_URL: "http://127.0.0.1:9000/",
    });
    expect(config).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      publicUrl: "https://billing.example.cl",
      logLevel: "warn",
      logFormat: "pretty",
      billingRunIntervalSeconds: 300,
      dunningIntervalSeconds: 0,
      analyticsDrainIntervalSeconds: 2,
      siiSendIntervalMs: 0,
      shutdownGraceSeconds: 3,
      heapGrowingPercent: 30,
    });
    expect(config.settings).toMatchObject({
      smtpUrl: "smtp://u:p@mail:587",
      mailFrom: "Facturación <billing@acme.cl>",
      sessionTtlSeconds: 600,
      paymentGateways: ["test"],
    });
    expect(config.settings.sii.certificationUrl).toBe("http://127.0.0.1:9000");
  });

  it("reads the limits (docs/limits.md): defaults, values, and a METRICS_TOKEN never echoed", () => {
    expect(loadConfig({}).settings).toMatchObject({
      rateLimitRequests: 100,
      rateLimitWindowSeconds: 1,
      rateLimitBurst: 200,
      authFailureLimit: 20,
      authFailureWindowSeconds: 300,
      rateLimitStore: "database",
      trustProxy: false,
      corsOrigins: [],
      metricsToken: undefined,
      graphqlTimeBudgetMs: 10_000,
      apiKeyCacheTtlSeconds: 30,
    });
    const config = loadConfig({
      RATE_LIMIT_REQUESTS: "0",
      RATE_LIMIT_WINDOW_SECONDS: "60",
      RATE_LIMIT_BURST: "5",
      AUTH_FAILURE_LIMIT: "3",
      AUTH_FAILURE_WINDOW_SECONDS: "900",
      RATE_LIMIT_STORE: "memory",
      TRUST_PROXY: "true",
      CORS_ORIGINS: "https://app.example.com, http://localhost:5173",
      METRICS_TOKEN: "0123456789abcdef0123",
      GRAPHQL_TIME_BUDGET_MS: "2500",
      API_KEY_CACHE_TTL_SECONDS: "0",
    });
    expect(config.settings).toMatchObject({
      rateLimitRequests: 0,
      rateLimitWindowSeconds: 60,
      rateLimitBurst: 5,
      authFailureLimit: 3,
      authFailureWindowSeconds: 900,
      rateLimitStore: "memory",
      trustProxy: true,
      corsOrigins: ["https://app.example.com", "http://localhost:5173"],
      metricsToken: "0123456789abcdef0123",
      graphqlTimeBudgetMs: 2500,
      apiKeyCacheTtlSeconds: 0,
    });
    expect(error({ API_KEY_CACHE_TTL_SECONDS: "-1" }).variable).toBe("API_KEY_CACHE_TTL_SECONDS");
    expect(error({ CORS_ORIGINS: "https://app.example.com/path" }).variable).toBe("CORS_ORIGINS");
    expect(error({ TRUST_PROXY: "yes" }).message).toBe('TRUST_PROXY: must be true or false (got "yes")');
    expect(error({ RATE_LIMIT_WINDOW_SECONDS: "0" }).variable).toBe("RATE_LIMIT_WINDOW_SECONDS");
    expect(error({ RATE_LIMIT_STORE: "redis" }).message).toBe(
      'RATE_LIMIT_STORE: must be one of database, memory (got "redis")',
    );
    const token = error({ METRICS_TOKEN: "short secret" });
    expect(token.variable).toBe("METRICS_TOKEN");
    expect(token.message).not.toContain("short secret");
  });

  it("a bad value names the variable, the reason and the value", () => {
    expect(error({ PORT: "70000" }).message).toBe('PORT: must be an integer between 0 and 65535 (got "70000")');
    expect(error({ PORT: "3000.5" }).variable).toBe("PORT");
    expect(error({ LOG_LEVEL: "verbose" }).message).toBe(
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    );
    expect(error({ LOG_FORMAT: "xml" }).variable).toBe("LOG_FORMAT");
    expect(error({ DATABASE_URL: "mysql://db/billing" }).message).toMatch(/^DATABASE_URL: must be a PostgreSQL URL/);
    expect(error({ PUBLIC_URL: "billing.example.cl" }).variable).toBe("PUBLIC_URL");
    expect(error({ SMTP_URL: "mail.example.com" }).variable).toBe("SMTP_URL");
    expect(error({ MAIL_FROM: "not an address" }).variable).toBe("MAIL_FROM");
    expect(error({ SESSION_TTL_SECONDS: "0" }).variable).toBe("SESSION_TTL_SECONDS");
    expect(error({ BILLING_RUN_INTERVAL_SECONDS: "-5" }).variable).toBe("BILLING_RUN_INTERVAL_SECONDS");
    expect(error({ DUNNING_INTERVAL_SECONDS: "1.5" }).variable).toBe("DUNNING_INTERVAL_SECONDS");
    expect(error({ SHUTDOWN_GRACE_SECONDS: "0" }).message).toBe(
      'SHUTDOWN_GRACE_SECONDS: must be a whole number of seconds between 1 and 3600 (got "0")',
    );
    expect(error({ PAYMENT_GATEWAYS: "test,stripe" }).message).toBe(
      'PAYMENT_GATEWAYS: must be a comma-separated list of test, redirect (got "test,stripe")',
    );
    expect(error({ SII_PRODUCTION_URL: "palena.sii.cl" }).variable).toBe("SII_PRODUCTION_URL");
    const key = error({ CERTIFICATE_ENCRYPTION_KEY: "c2hvcnQ=" });
    expect(key.message).toBe("CERTIFICATE_ENCRYPTION_KEY: must be 32 bytes in base64 (openssl rand -base64 32)");
    expect(key.message).not.toContain("c2hvcnQ"); // a secret is never echoed
  });

  it("SERVICE_ROLE (docs/scaling.md): all by default; api and worker on PostgreSQL only, else refused", () => {
    expect(loadConfig({}).role).toBe("all");
    const postgres = { DATABASE_URL: "postgresql://u@db:5432/billing" };
    expect(loadConfig({ ...postgres, SERVICE_ROLE: "api" }).role).toBe("api");
    expect(loadConfig({ ...postgres, SERVICE_ROLE: "worker" }).role).toBe("worker");
    expect(loadConfig({ SERVICE_ROLE: "all" }).role).toBe("all");
    expect(error({ ...postgres, SERVICE_ROLE: "web" }).message).toBe(
      'SERVICE_ROLE: must be one of all, api, worker (got "web")',
    );
    for (const role of ["api", "worker"]) {
      const refused = error({ SERVICE_ROLE: role, BILLING_DATA_DIR: "/srv/billing" });
      expect(refused.variable).toBe("SERVICE_ROLE");
      expect(refused.message).toBe(
        `SERVICE_ROLE: ${role} needs PostgreSQL (DATABASE_URL): on the embedded database one process owns the data ` +
          `directory, so it runs HTTP and every worker (SERVICE_ROLE=all, the default) (got "${role}")`,
      );
    }
  });

  it("the PostgreSQL connection variables: checked by loadConfig, read by databaseTarget", () => {
    const env = {
      DATABASE_URL: "postgresql://billing@pgbouncer:6432/billing",
      DATABASE_LISTEN_URL: "postgresql://billing@db:5432/billing",
      DATABASE_POOL_SIZE: "4",
      DATABASE_PREPARED_STATEMENTS: "false",
    };
    expect(() => loadConfig(env)).not.toThrow();
    expect(databaseTarget(env)).toEqual({
      kind: "postgres",
      url: "postgresql://billing@pgbouncer:6432/billing",
      listenUrl: "postgresql://billing@db:5432/billing",
      poolSize: 4,
      preparedStatements: false,
    });
    expect(databaseTarget({ DATABASE_URL: env.DATABASE_URL })).toEqual({ kind: "postgres", url: env.DATABASE_URL });
    expect(error({ ...env, DATABASE_POOL_SIZE: "0" }).message).toBe(
      'DATABASE_POOL_SIZE: must be a whole number of connections between 1 and 1000 (got "0")',
    );
    expect(error({ ...env, DATABASE_PREPARED_STATEMENTS: "off" }).variable).toBe("DATABASE_PREPARED_STATEMENTS");
    expect(error({ ...env, DATABASE_LISTEN_URL: "db:5432" }).variable).toBe("DATABASE_LISTEN_URL");
  });
});
