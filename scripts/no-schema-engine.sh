#!/bin/sh
# Stand-in for Prisma 7's native schema engine, which its CLI downloads from outside the npm
# registry at run time and cannot get here. prisma.config.ts points PRISMA_SCHEMA_ENGINE_BINARY
# here: `prisma generate` only checks that the file exists, `prisma version` asks its version; the
# app applies migrations itself (src/infra/migrate.ts). A CLI command that needs the engine
# (prisma migrate/db) stops with this message.
if [ "$1" = "--version" ]; then
  echo "schema-engine-cli none (stand-in: scripts/no-schema-engine.sh)"
  exit 0
fi
echo "prisma: no native schema engine on this machine (docs/decisions.md, \"Prisma 7\"); migrations are applied by the app (src/infra/migrate.ts)" >&2
exit 1
