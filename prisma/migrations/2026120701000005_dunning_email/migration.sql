-- The dunning e-mail (docs/dunning.md "The e-mail"): an outbox message can carry blind copies, an HTML body, the
-- customer whose portal pay link is made when it is sent, and the invoices whose PDFs it attaches. A dunning attempt
-- says what became of its e-mail (rows written before the e-mail existed sent none: off).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "OutboxMessage" ADD COLUMN "bcc" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "OutboxMessage" ADD COLUMN "html" TEXT;
ALTER TABLE "OutboxMessage" ADD COLUMN "customerId" TEXT;
ALTER TABLE "OutboxMessage" ADD COLUMN "invoiceIds" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
CREATE INDEX "OutboxMessage_customerId_idx" ON "OutboxMessage"("customerId");
ALTER TABLE "OutboxMessage" ADD CONSTRAINT "OutboxMessage_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "DunningAttempt" ADD COLUMN "email" TEXT NOT NULL DEFAULT 'off';
