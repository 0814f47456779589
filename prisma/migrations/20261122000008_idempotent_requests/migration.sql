-- Idempotency-Key: the stored answer of a POST, replayed when the same key comes again
ALTER TABLE "IdempotencyKey" ADD COLUMN "requestHash" TEXT NOT NULL DEFAULT '';
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseStatus" INTEGER;
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseBody" TEXT;
ALTER TABLE "IdempotencyKey" ALTER COLUMN "requestHash" DROP DEFAULT;
CREATE INDEX "IdempotencyKey_createdAt_idx" ON "IdempotencyKey"("createdAt");
