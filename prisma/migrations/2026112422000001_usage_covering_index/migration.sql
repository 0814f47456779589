-- The usage aggregation the upcoming-invoice preview runs in SQL (services/upcoming-invoice.ts
-- usageAggregates: sum and max of a line's unbilled records in a period, its latest record) reads
-- the index only: the index on ("subscriptionLineId", "dateTime", "createdAt") now also carries
-- "quantity" and "invoiceId" (INCLUDE), so a period of millions of records is an index-only range
-- scan instead of a scan of the table. Same name and key columns as prisma/schema.prisma's
-- @@index (Prisma's schema has no INCLUDE), so the billing run's reads use it as before.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

DROP INDEX "Usage_subscriptionLineId_dateTime_createdAt_idx";

CREATE INDEX "Usage_subscriptionLineId_dateTime_createdAt_idx" ON "Usage"("subscriptionLineId", "dateTime", "createdAt") INCLUDE ("quantity", "invoiceId");
