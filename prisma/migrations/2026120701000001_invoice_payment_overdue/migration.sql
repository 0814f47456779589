-- Overdue invoices (docs/dunning.md "Overdue invoices"): the dunning worker's sweep looks once at each
-- finalized invoice whose due date has passed. overdueCheckedAt says it did, paymentOverdueAt that it
-- found an amount due and wrote the invoice.payment_overdue event.
-- The sweep reads the finalized invoices not yet swept by due date: a partial index, which the Prisma
-- schema cannot declare, keeps that set small (an invoice leaves it once swept).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "Invoice" ADD COLUMN "overdueCheckedAt" TIMESTAMPTZ(3);
ALTER TABLE "Invoice" ADD COLUMN "paymentOverdueAt" TIMESTAMPTZ(3);
CREATE INDEX "Invoice_overdue_sweep_idx" ON "Invoice"("dueDate", "id")
  WHERE "status" = 'finalized' AND "overdueCheckedAt" IS NULL AND "dueDate" IS NOT NULL;
