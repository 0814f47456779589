-- Past-due subscriptions (docs/dunning.md "Past-due subscriptions"): the billing run renews active and
-- past_due subscriptions alike, so its claim reads "status" IN ('active', 'past_due') ORDER BY
-- "nextBilling", "id" (services/billing-run/claim.ts). The index on (status, nextBilling, id) gives that
-- order for one status only: with two, every claim would read and sort all the due subscriptions. A
-- partial index on (nextBilling, id) over the two billed statuses, which the Prisma schema cannot
-- declare, gives it again, and replaces the old one (nothing else reads subscriptions by status first).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

DROP INDEX "Subscription_status_nextBilling_id_idx";

CREATE INDEX "Subscription_billed_nextBilling_id_idx" ON "Subscription"("nextBilling", "id")
  WHERE "status" IN ('active', 'past_due');
