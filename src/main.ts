/**
 * `npm start` (`node dist/main.js`): the billing service in one process.
 *
 * Start, in this order, each failure one log line and exit code 1:
 * 1. configuration (infra/config.ts): a bad variable is named with the reason;
 * 2. the HTTP port is bound (a port in use is reported before the database is touched); until the
 *    service is ready every request, /healthz included, gets 503 `starting` with Retry-After;
 * 3. the database is opened (the embedded one locked for this process, infra/data-dir-lock.ts)
 *    and pending migrations applied in process (infra/migrate.ts);
 * 4. the app answers: /graphql, /v1, /healthz, /readyz, /metrics, and its interval workers run, as
 *    SERVICE_ROLE says (docs/scaling.md "Roles": `api` runs no worker, `worker` answers only the probes);
 *    on the embedded database the control socket `<BILLING_DATA_DIR>/control.sock` takes the
 *    command line's commands (cli/serve.ts; docs/operations.md "The command line beside a running
 *    server"), a stale socket file of a killed server replaced;
 * 5. with no organization in the database yet, one log line gives the command that creates the
 *    first API key (firstStartHints).
 *
 * Stop: SIGTERM or SIGINT stops accepting connections (HTTP and the control socket, whose file is
 * removed), ends the live event streams (GraphQL subscriptions: each gets a `service_unavailable`
 * error), asks the interval workers to stop between items, finishes requests and commands in flight
 * (within SHUTDOWN_GRACE_SECONDS less `closeReserveMs`, then their connections are closed; a billing
 * run through the socket ends after its batch in progress), closes the database and exits 0. Once
 * SHUTDOWN_GRACE_SECONDS have passed it exits 0 whatever is still pending, logging what that is
 * (claims of an unfinished round are left to their lease). A second signal exits at once with code
 * 1. Logs are JSON lines (pino) from the first; before exiting, the lines not yet written are given
 * LOG_FLUSH_MS to reach stdout, then dropped (a full pipe nobody reads must not hold the exit).
 */
import fs from "node:fs";
import type http from "node:http";
import { ConfigError, loadConfig, type AppSettings, type Config } from "./infra/config.js";
import { createLogger, flushLogs } from "./infra/logger.js";
import { databaseTarget, errorMessage, type DatabaseTarget } from "./infra/driver-adapter.js";
import type { Database } from "./infra/database.js";
import { DataDirInUseError } from "./infra/data-dir-lock.js";
import { dataDirOf } from "./infra/database-target.js";
import { controlSocketPath, listenControlSocket, type ControlServer } from "./infra/control-socket.js";
import { MigrationError } from "./infra/migrate.js";
import { limitHeapGrowth } from "./infra/heap.js";
import { withEmbeddedKey } from "./infra/secrets.js";
import type { App } from "./server.js";
import { createHttpServer, drainHttpServer, listen } from "./http-server.js";

/**
 * Before exiting, the log lines not yet written get this long to reach stdout (ms); the rest is dropped
 * (infra/logger.ts flushLogs).
 */
const LOG_FLUSH_MS = 500;
/** The same after a second signal, which exits at once (ms). */
const LOG_FLUSH_AT_ONCE_MS = 100;

/**
 * Of the grace period of `graceMs`, what is kept for closing after the requests in flight (the
 * workers' rounds, the event stream, the database): 1 s, or a quarter of a grace period under 4 s (ms).
 */
function closeReserveMs(graceMs: number): number {
  return Math.min(1_000, graceMs / 4);
}

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  const logger = createLogger("info", process.env.LOG_FORMAT === "pretty" ? "pretty" : "json");
  if (e instanceof ConfigError) logger.fatal({ variable: e.variable }, `invalid configuration: ${e.message}`);
  else logger.fatal({ reason: (e as Error).message }, "invalid configuration");
  process.exit(1);
}
const logger = createLogger(config.logLevel, config.logFormat);
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (error) => {
    logger.fatal({ err: error }, event);
    void exit(1);
  });
}

/**
 * Exits with `code` once the log lines still waiting are written to stdout, or after `flushMs`
 * without them (stdout may be a pipe its reader no longer reads: pino's own flush at exit would wait
 * for it forever).
 */
async function exit(code: number, flushMs: number = LOG_FLUSH_MS): Promise<never> {
  await flushLogs(logger, flushMs);
  process.exit(code);
}

// the app's modules (GraphQL schema, Yoga, services: over a second) load while the port is bound
// and the database opens
const serverModule = import("./server.js");
const databaseModule = import("./infra/database.js");
serverModule.catch(() => undefined); // awaited below; a load error is reported there

const target = databaseTarget();
let app: App | null = null;
let database: Database | null = null;
let control: ControlServer | null = null;
let server: http.Server;
let url: string;

function fail(message: string, fields: Record<string, unknown>): never {
  logger.fatal(fields, message);
  process.exit(1);
}

/** The database as a log field: the embedded directory, or the PostgreSQL URL without its password. */
function describe(t: DatabaseTarget): string {
  if (t.kind === "pglite") return `embedded ${t.dir ?? "(in memory)"}`;
  try {
    const u = new URL(t.url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgresql";
  }
}

const startup = (async () => {
  await bindPort();
  warnOfListenThroughPooler();
  await openDatabase();
  await startApp();
  await firstStartHints(database!);
})();

/**
 * Binds the HTTP port (`server`, `url`), answering 503 `starting` with Retry-After until the app is made; exits 1
 * with one log line when the port is in use, may not be used by this user or cannot be listened on.
 */
async function bindPort(): Promise<void> {
  server = createHttpServer({
    handle: async (request) =>
      app
        ? app.handle(request)
        : Response.json(
            { error: { code: "service_unavailable", message: "The service is starting; retry in a moment." } },
            { status: 503, headers: { "retry-after": "1" } },
          ),
  });
  try {
    url = await listen(server, config.port, config.host);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "EADDRINUSE"
        ? "is already in use"
        : code === "EACCES"
          ? "may not be used by this user"
          : `cannot be listened on: ${errorMessage(e)}`;
    fail(`port ${config.port} on ${config.host} ${why}`, { port: config.port, host: config.host, code });
  }
}

/** Warns when PostgreSQL's LISTEN would go through a pooler in transaction mode, which delivers no notification. */
function warnOfListenThroughPooler(): void {
  // a pooler in transaction mode (what DATABASE_PREPARED_STATEMENTS=false is for) takes a LISTEN and delivers nothing
  if (target.kind === "postgres" && target.preparedStatements === false && !target.listenUrl)
    logger.warn(
      { variable: "DATABASE_LISTEN_URL" },
      "DATABASE_PREPARED_STATEMENTS=false without DATABASE_LISTEN_URL: through a pooler in transaction mode " +
        "LISTEN gets no notification (live event streams stay silent, webhooks wait for their poll); set " +
        "DATABASE_LISTEN_URL to PostgreSQL itself (docs/scaling.md)",
    );
}

/**
 * Opens the database (`database`) and applies its pending migrations, logging what it applied; on a failure closes
 * the port and the database and exits 1 with one log line (a data directory in use, a migration, any other).
 */
async function openDatabase(): Promise<void> {
  const { createDatabase, migrate } = await databaseModule;
  logger.info({ database: describe(target) }, "opening database");
  try {
    database = await createDatabase(target);
    const report = await migrate(database);
    if (report.applied.length)
      logger.info({ applied: report.applied, ms: Math.round(report.ms) }, "migrations applied");
    else logger.info({ ms: Math.round(report.ms) }, "database schema up to date");
    if (report.modified.length)
      logger.warn(
        { modified: report.modified },
        "applied migrations changed since they were applied (the schema may differ from prisma/migrations)",
      );
  } catch (e) {
    server.close();
    await database?.close().catch(() => undefined);
    if (e instanceof DataDirInUseError) fail(e.message, { dir: e.dir, pid: e.owner.pid });
    if (e instanceof MigrationError) fail(e.message, { migration: e.migration });
    fail(`cannot open the database: ${errorMessage(e)}`, {
      database: describe(target),
      code: (e as { code?: string }).code,
    });
  }
}

/**
 * Makes the app (`app`), which from then on answers the requests and runs the workers its role has; on the embedded
 * database listens on the control socket (`control`); limits the heap's growth; logs `billing service listening`.
 */
async function startApp(): Promise<void> {
  const { createApp } = await serverModule;
  // the embedded database keeps its certificate encryption key next to its data (docs/sii-setup.md)
  const settings = withEmbeddedKey(config.settings, target);
  app = createApp({
    database: database!,
    logger,
    role: config.role,
    publicUrl: config.publicUrl,
    settings,
    billingRunIntervalMs: config.billingRunIntervalSeconds * 1000,
    dunningIntervalMs: config.dunningIntervalSeconds * 1000,
    analyticsDrainIntervalMs: config.analyticsDrainIntervalSeconds * 1000,
    siiIntervalMs: config.siiSendIntervalMs,
  });
  const dataDir = dataDirOf(target);
  if (dataDir) control = await listenForCommands(dataDir, database!, settings);
  // the heap's headroom under sustained work (infra/heap.ts), once started: V8 reads it at each full
  // collection, and set before start-up it made 3 more of them while the heap first grows (7 against
  // 4, start-up 0.3-0.5 s longer)
  const heapGrowingPercent = limitHeapGrowth(config.heapGrowingPercent);
  logger.info(
    {
      url,
      role: config.role,
      ...(config.role === "worker" ? {} : { graphql: `${url}/graphql`, rest: `${url}/v1` }),
      ...(control ? { controlSocket: control.file } : {}),
      startupMs: Math.round(performance.now()),
      heapGrowingPercent,
    },
    "billing service listening",
  );
}

/**
 * The control socket in `dataDir` (infra/control-socket.ts) running the command line's commands in
 * this process (cli/serve.ts); null, with a warning, when it cannot listen (the service still serves
 * HTTP; the command line then cannot work beside it).
 */
async function listenForCommands(dataDir: string, db: Database, settings: AppSettings): Promise<ControlServer | null> {
  const file = controlSocketPath(dataDir);
  try {
    const { commandHandler } = await import("./cli/serve.js");
    const { version } = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    return await listenControlSocket(file, commandHandler({ database: db, config, settings, logger, version }));
  } catch (e) {
    logger.warn(
      { controlSocket: file, reason: errorMessage(e) },
      "cannot listen on the control socket: the command line cannot run its commands beside this server",
    );
    return null;
  }
}

/**
 * What a new user does next, logged once at start while the database has no organization: the
 * command that creates the first organization and its API key (docs/operations.md "First start"),
 * to type in the directory the server was started from. On the embedded database with
 * BILLING_DATA_DIR set, the command carries it (absolute); on PostgreSQL the command line needs the
 * server's DATABASE_URL, which is not logged (it may hold a password): the line says so.
 */
async function firstStartHints(db: Database): Promise<void> {
  const organizations = await db.prisma.organization.count({ take: 1 }).catch(() => null);
  if (organizations !== 0) return;
  const dataDir = dataDirOf(target);
  const prefix = dataDir && process.env.BILLING_DATA_DIR ? `BILLING_DATA_DIR=${shellWord(dataDir)} ` : "";
  const command =
    `${prefix}npm run --silent cli -- api-key create --organization "Your Company SpA" --email you@example.com ` +
    "--mode test";
  const postgres = target.kind === "postgres" ? " (with this server's DATABASE_URL set)" : "";
  // the dashboard's first-admin invitation link, once there is a dashboard, is logged here beside the command
  logger.info(
    { command },
    `no organization yet: create the first organization and its API key with: ${command}${postgres}`,
  );
}

/** `word` as one shell word: as it is when it has only safe characters, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

let stopping = false;
/**
 * The shutdown on SIGTERM or SIGINT (docs/operations.md "Start and stop"), bounded by
 * SHUTDOWN_GRACE_SECONDS: a timer exits 0 at the end of the grace period whatever is still pending,
 * naming it in a warning.
 */
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) {
    logger.warn({ signal }, "second signal: exiting now");
    await exit(1, LOG_FLUSH_AT_ONCE_MS);
  }
  stopping = true;
  const started = performance.now();
  const graceMs = config.shutdownGraceSeconds * 1000;
  // what the shutdown still waits for, named in the warning if the grace period ends first
  const pending = new Set<string>(["start"]);
  // kept referenced: it is the bound, whatever the shutdown waits for (and whatever keeps the event loop busy)
  setTimeout(() => {
    logger.warn(
      { ms: graceMs, pending: [...pending] },
      "shutdown grace period over: exiting with work still pending (claims of unfinished rounds are left to their " +
        "lease)",
    );
    void exit(0);
  }, graceMs);
  await startup.catch(() => undefined);
  pending.delete("start");
  logger.info({ signal, graceMs }, "shutting down: no new connections, finishing requests in flight");
  // open live event streams end now (their clients subscribe again elsewhere or later), not at the grace period
  app?.endStreams();
  const drainMs = Math.max(0, graceMs - closeReserveMs(graceMs) - (performance.now() - started));
  const track = <T>(name: string, work: Promise<T>): Promise<T> => {
    pending.add(name);
    return work.finally(() => pending.delete(name));
  };
  // the workers finish the item they are on while the requests finish; commands run for the command
  // line are part of the drain (a billing run ends after its batch in progress)
  const [drained, commandsDone] = await Promise.all([
    track("requests in flight", drainHttpServer(server, drainMs)),
    control ? track("commands in flight", control.close(drainMs)) : Promise.resolve(true),
    app ? track("worker rounds", app.stopWorkers()) : Promise.resolve(),
  ]);
  if (!drained)
    logger.warn(
      { ms: Math.round(drainMs) },
      "requests still in flight after the grace period; their connections were closed",
    );
  if (!commandsDone)
    logger.warn(
      { ms: Math.round(drainMs) },
      "commands still running after the grace period; their connections were closed",
    );
  await track("closing the app", app?.close() ?? Promise.resolve());
  await track("closing the database", database?.close() ?? Promise.resolve());
  logger.info({ ms: Math.round(performance.now() - started) }, "stopped");
  await exit(0);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void shutdown(signal));

await startup.catch((e) => fail("start failed", { err: e }));
