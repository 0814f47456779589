-- Dunning attempts (docs/dunning.md "Attempts"): a customer whose overdue amount in a currency reaches
-- their campaign's threshold gets a run (DunningRun), and the run makes an attempt (DunningAttempt) every
-- daysBetweenAttempts days over all of that customer's overdue invoices in that currency, up to the
-- campaign's maxAttempts, then applies its final action.
-- At most one active run per customer and currency: a partial unique index, which the Prisma schema
-- cannot declare. Workers claim due runs by (status, nextAttemptAt) with a lease (leaseUntil) and a
-- fencing token (claimToken) that the attempt's transaction checks before it writes.
-- Each attempt is written once per run and number (unique key), with its events.
-- The worker reads a customer's overdue invoices (finalized, marked overdue by the sweep, not marked
-- uncollectible) by customer and currency: a partial index of those.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE INDEX "Invoice_dunning_overdue_idx" ON "Invoice"("customerId", "currencyId")
  WHERE "status" = 'finalized' AND "paymentOverdueAt" IS NOT NULL AND "markedUncollectibleAt" IS NULL;

CREATE TABLE "DunningRun" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "campaignId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL,
    "leaseUntil" TIMESTAMPTZ(3),
    "claimToken" TEXT,
    "hardDeclinedSourceIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "finalAction" TEXT,
    "endedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "DunningRun_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "DunningRun_status_nextAttemptAt_idx" ON "DunningRun"("status", "nextAttemptAt");
CREATE INDEX "DunningRun_customerId_idx" ON "DunningRun"("customerId");
CREATE INDEX "DunningRun_campaignId_idx" ON "DunningRun"("campaignId");
CREATE UNIQUE INDEX "DunningRun_one_active_per_customer_currency" ON "DunningRun"("customerId", "currencyId")
  WHERE "status" = 'active';

ALTER TABLE "DunningRun" ADD CONSTRAINT "DunningRun_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningRun" ADD CONSTRAINT "DunningRun_campaignId_fkey" FOREIGN KEY ("campaignId") REFERENCES "DunningCampaign"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningRun" ADD CONSTRAINT "DunningRun_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "DunningAttempt" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "runId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "campaignId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "invoices" JSONB NOT NULL DEFAULT '[]',
    "amountDue" DECIMAL(20,6) NOT NULL,
    "outcome" TEXT NOT NULL,
    "finalAction" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DunningAttempt_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "DunningAttempt_runId_number_key" ON "DunningAttempt"("runId", "number");
CREATE INDEX "DunningAttempt_organizationId_testMode_createdAt_id_idx" ON "DunningAttempt"("organizationId", "testMode", "createdAt", "id");
CREATE INDEX "DunningAttempt_customerId_idx" ON "DunningAttempt"("customerId");
CREATE INDEX "DunningAttempt_campaignId_idx" ON "DunningAttempt"("campaignId");

ALTER TABLE "DunningAttempt" ADD CONSTRAINT "DunningAttempt_runId_fkey" FOREIGN KEY ("runId") REFERENCES "DunningRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningAttempt" ADD CONSTRAINT "DunningAttempt_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningAttempt" ADD CONSTRAINT "DunningAttempt_campaignId_fkey" FOREIGN KEY ("campaignId") REFERENCES "DunningCampaign"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningAttempt" ADD CONSTRAINT "DunningAttempt_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
