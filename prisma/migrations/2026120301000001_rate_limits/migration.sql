-- The rate limits' counts shared by every process on PostgreSQL (src/infra/rate-limit.ts; docs/limits.md "Where
-- the counts live"): one row per bucket (an API key's requests, its burst, a client address's failed
-- authentications), in rate-limiter-flexible's RateLimiterPostgres layout, which writes and reads it: `key` the
-- bucket (`<limiter>:<bucket>`), `points` spent in the window, `expire` the window's end (ms since the epoch).
-- UNLOGGED: a write is not in the WAL, so a request's count costs no WAL flush at commit; after a crash of
-- PostgreSQL the table is empty (every count starts over) and standbys do not have it (a failover starts the
-- counts over too). Rows whose window ended over an hour ago are deleted by the service every 5 minutes.
CREATE UNLOGGED TABLE "RateLimit" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,

    CONSTRAINT "RateLimit_pkey" PRIMARY KEY ("key")
);
