-- Idempotency key of a usage record (issue 17 "Usage ingestion at scale"): "transactionId" (Lago's
-- transaction_id), optional, unique per organization and mode. The unique index is partial (rows
-- without a key take no index entry), so a batch insert with ON CONFLICT DO NOTHING counts a
-- retried record once, also when two batches race. Not in prisma/schema.prisma (Prisma 6 has no
-- partial indexes), like "PaymentCharge_one_active_per_payment".
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "Usage" ADD COLUMN "transactionId" TEXT;

CREATE UNIQUE INDEX "Usage_organizationId_testMode_transactionId_key" ON "Usage"("organizationId", "testMode", "transactionId") WHERE "transactionId" IS NOT NULL;

-- The usage the billing run and the preview read (services/upcoming-invoice.ts loadCycleData): a
-- line's records from a date on (the range on the first two columns), and for last_ever a line's
-- latest record before a date, ordered by "dateTime" then "createdAt" (a backward scan, LIMIT 1
-- per line). The new index serves both, so it replaces the two-column one.
CREATE INDEX "Usage_subscriptionLineId_dateTime_createdAt_idx" ON "Usage"("subscriptionLineId", "dateTime", "createdAt");

DROP INDEX "Usage_subscriptionLineId_dateTime_idx";
