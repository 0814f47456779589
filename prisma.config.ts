// Prisma CLI configuration: the JS schema engine with the same driver adapter the app uses, so
// `prisma migrate deploy/status/diff` run from the npm packages alone (docs/decisions.md, "Prisma 6.19, not 7").
import path from "node:path";
import { defineConfig } from "prisma/config";
import { createDriverAdapter } from "./src/infra/driver-adapter.js";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  adapter: async () => createDriverAdapter(),
});
