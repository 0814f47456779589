-- Credit notes (61, 112) apart from debit notes (56, 111): the credit note API accepts only these.
ALTER TABLE "DocumentType" ADD COLUMN "isCreditNote" BOOLEAN NOT NULL DEFAULT false;
UPDATE "DocumentType" SET "isCreditNote" = true WHERE "id" IN ('CL61', 'CL112');
