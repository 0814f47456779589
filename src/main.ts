/**
 * `npm start`: applies pending migrations, then serves /graphql, /v1, /healthz, /readyz and
 * /metrics on PORT (default 3000). PGlite under ./data unless DATABASE_URL is set.
 */
import { loadConfig } from "./infra/config.js";
import { createDatabase, databaseTarget } from "./infra/database.js";
import { createLogger } from "./infra/logger.js";
import { migrateDeploy } from "./infra/migrate.js";
import { createApp, createHttpServer, listen } from "./server.js";

const config = loadConfig();
const logger = createLogger(config.logLevel);
const target = databaseTarget();

logger.info({ database: target.kind === "postgres" ? "postgresql" : `pglite ${target.dir}` }, "applying migrations");
await migrateDeploy(target);
const database = await createDatabase(target);
const app = createApp({ database, logger, publicUrl: config.publicUrl, settings: config.settings, billingRunIntervalMs: config.billingRunIntervalSeconds * 1000 });
const server = createHttpServer(app);
const url = await listen(server, config.port, config.host);
logger.info({ url, graphql: `${url}/graphql`, rest: `${url}/v1` }, "billing service listening");

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    server.close(() => void app.close().finally(() => database.close().finally(() => process.exit(0))));
    setTimeout(() => process.exit(1), 10_000).unref();
  });
}
