/**
 * Prisma client factory over the driver adapters of driver-adapter.ts (PGlite by default,
 * PostgreSQL when `DATABASE_URL` is set; docs/decisions.md "Operations").
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./prisma/generated/client.js";
import { databaseTarget, nameAsTextPool, openPGlite, pgliteAdapter, type DatabaseTarget } from "./driver-adapter.js";

export { databaseTarget, type DatabaseTarget } from "./driver-adapter.js";

/** Interactive transactions may queue behind row locks (numbering) or PGlite's single connection. */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 15_000 };

export interface Database {
  prisma: PrismaClient;
  target: DatabaseTarget;
  close(): Promise<void>;
}

/** Creates the Prisma client for `target`; `close()` releases the pool or the PGlite instance. */
export async function createDatabase(target: DatabaseTarget = databaseTarget()): Promise<Database> {
  if (target.kind === "postgres") {
    const pool = nameAsTextPool({ connectionString: target.url, max: 10 });
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: TRANSACTION_OPTIONS });
    return {
      prisma,
      target,
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
