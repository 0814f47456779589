-- Pending invoice items keep the order they were stored in (docs/proration.md): a change's credit before its charge
ALTER TABLE "PendingInvoiceItem" ADD COLUMN "position" INTEGER NOT NULL DEFAULT 0;
