-- Payments: a payment may be tried again after a decline, so its charges are numbered attempts,
-- the database itself refuses a second active (pending or succeeded) charge of one payment.
DROP INDEX "PaymentCharge_paymentId_key";
ALTER TABLE "PaymentCharge" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "PaymentCharge" ADD COLUMN "sourceId" TEXT;
ALTER TABLE "PaymentCharge" ADD COLUMN "amount" DECIMAL(20,6) NOT NULL DEFAULT 0;
ALTER TABLE "PaymentCharge" ADD COLUMN "currencyId" TEXT NOT NULL DEFAULT 'CLP';
ALTER TABLE "PaymentCharge" ADD COLUMN "failureMessage" TEXT;
ALTER TABLE "PaymentCharge" ALTER COLUMN "attempt" DROP DEFAULT;
ALTER TABLE "PaymentCharge" ALTER COLUMN "amount" DROP DEFAULT;
ALTER TABLE "PaymentCharge" ALTER COLUMN "currencyId" DROP DEFAULT;
CREATE UNIQUE INDEX "PaymentCharge_paymentId_attempt_key" ON "PaymentCharge"("paymentId", "attempt");
CREATE INDEX "PaymentCharge_sourceId_idx" ON "PaymentCharge"("sourceId");
ALTER TABLE "PaymentCharge" ADD CONSTRAINT "PaymentCharge_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE SET NULL ON UPDATE CASCADE;
-- not expressible in schema.prisma: at most one pending or succeeded charge per payment
CREATE UNIQUE INDEX "PaymentCharge_one_active_per_payment" ON "PaymentCharge"("paymentId") WHERE "status" IN ('pending', 'succeeded');

-- The hosted test checkout of redirect sources is reached with a secret token, stored hashed.
ALTER TABLE "Source" ADD COLUMN "checkoutTokenHash" TEXT;
CREATE UNIQUE INDEX "Source_checkoutTokenHash_key" ON "Source"("checkoutTokenHash");
