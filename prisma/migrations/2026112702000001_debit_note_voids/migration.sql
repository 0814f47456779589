-- A debit note may void a credit note (SII: a 56 referencing a 61 with CodRef 1, docs/orders-and-credit-notes.md
-- "Debit notes that void a credit note"): the debit note names the credit note it voids.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "CreditNote" ADD COLUMN "voidsCreditNoteId" TEXT;
ALTER TABLE "CreditNote" ADD CONSTRAINT "CreditNote_voidsCreditNoteId_fkey" FOREIGN KEY ("voidsCreditNoteId") REFERENCES "CreditNote"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "CreditNote_voidsCreditNoteId_idx" ON "CreditNote"("voidsCreditNoteId");
