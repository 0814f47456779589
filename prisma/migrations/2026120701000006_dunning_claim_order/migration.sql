-- Dunning attempts (docs/dunning.md "Attempts", docs/performance.md "Dunning attempts"): the worker claims the
-- active runs in the order of their next attempt, ORDER BY "nextAttemptAt", "id" LIMIT 50. With only
-- ("status", "nextAttemptAt") to read them by, PostgreSQL read and sorted every active run for each page of 50
-- (seconds per page at 100,000 runs, so a round grew with the square of the runs). A partial index of the active
-- runs in exactly that order lets a claim read the first due runs and stop.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE INDEX "DunningRun_active_next_attempt_idx" ON "DunningRun"("nextAttemptAt", "id") WHERE "status" = 'active';
