-- The dunning runs and attempts under the schema's two rules (test/integration/organization-ids.test.ts and
-- deep-pages.test.ts): organizationId under a foreign key to the organization (deleting an organization deletes
-- them), and an index whose leading columns are each foreign key's columns (the currency's too).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "DunningRun" ADD CONSTRAINT "DunningRun_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DunningAttempt" ADD CONSTRAINT "DunningAttempt_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "DunningRun_organizationId_testMode_idx" ON "DunningRun"("organizationId", "testMode");
CREATE INDEX "DunningRun_currencyId_idx" ON "DunningRun"("currencyId");
CREATE INDEX "DunningAttempt_currencyId_idx" ON "DunningAttempt"("currencyId");
