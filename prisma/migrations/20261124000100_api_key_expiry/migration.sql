-- API keys: an optional expiry (the key answers 401 from this instant on)
ALTER TABLE "ApiKey" ADD COLUMN "expiresAt" TIMESTAMPTZ(3);

-- /metrics reads these at scrape time (src/services/metrics.ts). Partial indexes over the finalized
-- documents only (not expressible in schema.prisma), so each GROUP BY is an index-only scan.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.
CREATE INDEX "Invoice_finalized_documentTypeId_testMode_idx" ON "Invoice"("documentTypeId", "testMode") WHERE "finalizedAt" IS NOT NULL;
CREATE INDEX "Order_finalized_documentTypeId_testMode_idx" ON "Order"("documentTypeId", "testMode") WHERE "finalizedAt" IS NOT NULL;
CREATE INDEX "CreditNote_finalized_documentTypeId_testMode_idx" ON "CreditNote"("documentTypeId", "testMode") WHERE "finalizedAt" IS NOT NULL;

-- charge attempts by outcome
CREATE INDEX "PaymentCharge_status_gateway_idx" ON "PaymentCharge"("status", "gateway");
