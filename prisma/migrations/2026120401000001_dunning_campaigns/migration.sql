-- Dunning campaigns (docs/dunning.md): how the service recovers what customers owe after the due date.
-- A campaign's code is unique per organization and mode, and at most one campaign per organization and
-- mode is the default (appliedToOrganization), by a partial unique index that the schema cannot say.
-- Thresholds are child rows (one per currency) under the foreign key (campaignId, organizationId).
-- Customers name their campaign (null: the default) and may be excluded from dunning. A campaign that
-- customers name cannot be deleted (the service answers 409, the foreign key is NO ACTION, checked at
-- the end of a statement so an organization's cascade still deletes both).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE TABLE "DunningCampaign" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "description" TEXT,
    "daysBetweenAttempts" INTEGER NOT NULL,
    "maxAttempts" INTEGER NOT NULL,
    "retryCard" BOOLEAN NOT NULL DEFAULT true,
    "sendEmail" BOOLEAN NOT NULL DEFAULT true,
    "bccEmails" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "finalAction" TEXT NOT NULL DEFAULT 'none',
    "appliedToOrganization" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "DunningCampaign_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "DunningCampaign_organizationId_testMode_code_key" ON "DunningCampaign"("organizationId", "testMode", "code");
CREATE UNIQUE INDEX "DunningCampaign_id_organizationId_key" ON "DunningCampaign"("id", "organizationId");
CREATE INDEX "DunningCampaign_organizationId_testMode_createdAt_id_idx" ON "DunningCampaign"("organizationId", "testMode", "createdAt", "id");
CREATE UNIQUE INDEX "DunningCampaign_one_default_per_organization" ON "DunningCampaign"("organizationId", "testMode") WHERE "appliedToOrganization";

ALTER TABLE "DunningCampaign" ADD CONSTRAINT "DunningCampaign_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "DunningCampaignThreshold" (
    "campaignId" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "DunningCampaignThreshold_pkey" PRIMARY KEY ("campaignId", "organizationId", "currencyId")
);

CREATE INDEX "DunningCampaignThreshold_currencyId_idx" ON "DunningCampaignThreshold"("currencyId");

ALTER TABLE "DunningCampaignThreshold" ADD CONSTRAINT "DunningCampaignThreshold_campaignId_organizationId_fkey" FOREIGN KEY ("campaignId", "organizationId") REFERENCES "DunningCampaign"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningCampaignThreshold" ADD CONSTRAINT "DunningCampaignThreshold_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "Customer" ADD COLUMN "dunningCampaignId" TEXT;
ALTER TABLE "Customer" ADD COLUMN "excludeFromDunning" BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX "Customer_dunningCampaignId_idx" ON "Customer"("dunningCampaignId");
ALTER TABLE "Customer" ADD CONSTRAINT "Customer_dunningCampaignId_fkey" FOREIGN KEY ("dunningCampaignId") REFERENCES "DunningCampaign"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
