-- The billing run claims due subscriptions oldest first, ORDER BY "nextBilling", "id" LIMIT n FOR
-- UPDATE SKIP LOCKED (services/billing-run/claim.ts). With the index on (status, nextBilling) alone,
-- every claim read and sorted all the due subscriptions to return the first n (docs/performance.md
-- "After: the database's share"). With the id in the index the claim reads the
-- first n in order and stops. It serves what the old index served, which it replaces.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

DROP INDEX "Subscription_status_nextBilling_idx";

CREATE INDEX "Subscription_status_nextBilling_id_idx" ON "Subscription"("status", "nextBilling", "id");
