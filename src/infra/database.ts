/**
 * Prisma client factory over the driver adapters of driver-adapter.ts (PGlite by default,
 * PostgreSQL when `DATABASE_URL` is set; DESIGN.md "Fixed choices").
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./prisma/generated/client.js";
import { databaseTarget, nameAsTextPool, openPGlite, pgliteAdapter, type DatabaseTarget } from "./driver-adapter.js";

export { databaseTarget, type DatabaseTarget } from "./driver-adapter.js";

/** Interactive transactions may queue behind row locks (numbering) or PGlite's single connection. */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 15_000 };

/**
 * PostgreSQL pool options. A connection attempt (or a wait for a free client of a full pool) fails
 * after CONNECT_TIMEOUT_MS instead of hanging on an unreachable server; TCP keep-alive finds dead
 * sockets; pg-pool discards a client whose connection errored, so the pool recovers by itself
 * when the server is back. No query_timeout: billing runs and reports may legitimately run long
 * (the readiness probe bounds its own query, server.ts).
 */
const POOL_OPTIONS = { max: 10, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 10_000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 };

export interface DatabasePool {
  /** clients open (idle and in use) */
  total(): number;
  /** open clients not in use */
  idle(): number;
  /** requests queued for a client */
  waiting(): number;
}

export interface Database {
  prisma: PrismaClient;
  target: DatabaseTarget;
  /** the connection pool's counts (PostgreSQL only; PGlite is one in-process connection) */
  pool?: DatabasePool;
  close(): Promise<void>;
}

/** Creates the Prisma client for `target`; `close()` releases the pool or the PGlite instance. */
export async function createDatabase(target: DatabaseTarget = databaseTarget()): Promise<Database> {
  if (target.kind === "postgres") {
    const pool = nameAsTextPool({ connectionString: target.url, ...POOL_OPTIONS });
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: TRANSACTION_OPTIONS });
    return {
      prisma,
      target,
      pool: { total: () => pool.totalCount, idle: () => pool.idleCount, waiting: () => pool.waitingCount },
      async close() {
        await prisma.$disconnect();
        await pool.end().catch(() => undefined);
      },
    };
  }
  const pglite = await openPGlite(target.dir);
  const prisma = new PrismaClient({ adapter: pgliteAdapter(pglite), transactionOptions: TRANSACTION_OPTIONS });
  return {
    prisma,
    target,
    async close() {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}
