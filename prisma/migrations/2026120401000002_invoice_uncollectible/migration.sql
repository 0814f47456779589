-- An invoice's payment state (docs/dunning.md "Invoice payment state"): when a finalized invoice with
-- something due was marked uncollectible. Null: never. Its payment_status is computed from it and the
-- invoice's balance (a later payment still counts: paid once nothing is due).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "Invoice" ADD COLUMN "markedUncollectibleAt" TIMESTAMPTZ(3);
