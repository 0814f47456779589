#!/bin/sh
# Stand-in for Prisma 7's native schema engine, which its CLI downloads from outside the npm
# registry at run time and cannot get here. `prisma generate` only checks that the file exists
# (PRISMA_SCHEMA_ENGINE_BINARY in package.json) and never runs it; the app applies migrations itself
# (src/infra/migrate.ts). A CLI command that does need the engine (prisma migrate/db) stops here.
echo "prisma: no native schema engine on this machine (docs/decisions.md, \"Prisma 7\"); migrations are applied by the app (src/infra/migrate.ts)" >&2
exit 1
