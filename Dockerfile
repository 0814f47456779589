# syntax=docker/dockerfile:1
# Billing service image: build stage compiles TypeScript to dist/, runtime stage holds only what
# `node dist/main.js` needs. Build: docker build -t billing-service .
# Run: docker run -p 3000:3000 -v billing-data:/app/data billing-service  (embedded database)
#  or: docker compose up                                             (PostgreSQL, compose.yaml)

# --- build: all dependencies, generated code, dist/ ---------------------------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
# .npmrc keeps dependencies' install scripts off (docs/decisions.md "Operations")
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY . .
# prisma generate + graphql-codegen + tsc -p tsconfig.build.json -> dist/ (dist/main.js, dist/cli.js)
RUN npm run build

# --- runtime: production dependencies, dist/, migrations, SII schemas ---------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    BILLING_DATA_DIR=/app/data
WORKDIR /app
# the same files test/integration/production-install.test.ts installs from (the tested path)
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# `npm start` works too (scripts/run.mjs runs dist/ as it is when there are no sources)
COPY scripts/run.mjs scripts/build-state.mjs ./scripts/
COPY --from=build /app/dist ./dist
# applied in process at start
COPY prisma/migrations ./prisma/migrations
# SII XSDs, read at run time
COPY schema/sii ./schema/sii
# the embedded database (PGlite) when DATABASE_URL is not set; writable by the non-root user
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
# no curl in slim images: node's own fetch
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself, not npm: SIGTERM reaches the server, which drains and exits 0
CMD ["node", "dist/main.js"]
