-- Swap: our envelope number (CodEnvio, IdRespuesta of the answers) and an index for the imported filter
ALTER TABLE "Swap" ADD COLUMN "code" SERIAL NOT NULL;

CREATE UNIQUE INDEX "Swap_code_key" ON "Swap"("code");

CREATE INDEX "Swap_organizationId_testMode_imported_idx" ON "Swap"("organizationId", "testMode", "imported");

-- Purchase: the purchases list (newest first per organization and mode)
CREATE INDEX "Purchase_organizationId_testMode_createdAt_idx" ON "Purchase"("organizationId", "testMode", "createdAt");
