// Prisma CLI configuration. Prisma 7 dropped the config's `engine`/`adapter` (the JS schema engine
// over a driver adapter): its `migrate`/`db` commands run a native schema engine, which the CLI
// downloads from outside the npm registry, and every command (even `generate`, which never runs
// it) first checks that it is there. The app applies migrations itself (src/infra/migrate.ts), so
// the CLI is pointed at a stand-in that exits with a message when run (docs/decisions.md,
// "Prisma 7"); a machine that has the real engine sets PRISMA_SCHEMA_ENGINE_BINARY itself.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "prisma/config";

const root = path.dirname(fileURLToPath(import.meta.url));
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(root, "scripts", "no-schema-engine.sh");

export default defineConfig({
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  // for the CLI's migrate/db commands only; the app connects through driver adapters
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://unused.invalid/set-DATABASE_URL" },
});
