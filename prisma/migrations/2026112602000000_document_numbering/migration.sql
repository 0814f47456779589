-- Which series a finalized document's number belongs to (docs/sii-setup.md "Numbering before
-- enrollment"): "sii_folio", a folio SII authorized in a CAF (the document carries a signed DTE),
-- or "internal", the organization's own series of its document type (DocumentCounter), used by
-- document types no tax agency issues and by regulated types issued before the organization was
-- set up with SII. Null on drafts.
-- Existing documents keep their numbers: a finalized document with an issued DTE (its "taxAgency"
-- names the agency) is a folio, every other numbered document is internal. Nothing is renumbered.
-- The unique key of a number gains the series, so an internal number and a folio of the same
-- type never collide (the first CAF of an organization may start at folio 1 whatever internal
-- numbers exist).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "Invoice" ADD COLUMN "numbering" TEXT;
ALTER TABLE "Order" ADD COLUMN "numbering" TEXT;
ALTER TABLE "CreditNote" ADD COLUMN "numbering" TEXT;

UPDATE "Invoice" SET "numbering" = CASE WHEN ("taxAgency"->>'agency') IS NOT NULL THEN 'sii_folio' ELSE 'internal' END WHERE "number" IS NOT NULL;
UPDATE "Order" SET "numbering" = CASE WHEN ("taxAgency"->>'agency') IS NOT NULL THEN 'sii_folio' ELSE 'internal' END WHERE "number" IS NOT NULL;
UPDATE "CreditNote" SET "numbering" = CASE WHEN ("taxAgency"->>'agency') IS NOT NULL THEN 'sii_folio' ELSE 'internal' END WHERE "number" IS NOT NULL;

DROP INDEX "Invoice_organizationId_testMode_documentTypeId_number_key";
DROP INDEX "Order_organizationId_testMode_documentTypeId_number_key";
DROP INDEX "CreditNote_organizationId_testMode_documentTypeId_number_key";

CREATE UNIQUE INDEX "Invoice_organizationId_testMode_documentTypeId_numbering_number_key" ON "Invoice"("organizationId", "testMode", "documentTypeId", "numbering", "number");
CREATE UNIQUE INDEX "Order_organizationId_testMode_documentTypeId_numbering_number_key" ON "Order"("organizationId", "testMode", "documentTypeId", "numbering", "number");
CREATE UNIQUE INDEX "CreditNote_organizationId_testMode_documentTypeId_numbering_number_key" ON "CreditNote"("organizationId", "testMode", "documentTypeId", "numbering", "number");
