-- Every row of an organization carries its organization's id (docs/scaling.md "Beyond one
-- PostgreSQL"): the rows that had it only through their parent get it too, copied from the parent,
-- and their foreign key to the parent becomes (parent id, organizationId) -> parent (id,
-- organizationId), so a child row is always of its parent's organization. Each parent gets the
-- unique key (id, organizationId) those foreign keys reference, and each child's index for its
-- foreign key leads with the two columns. PaymentCharge's unique attempt number per payment and
-- WebhookMessage's primary key take organizationId in the same way (it adds nothing to them: it is
-- the parent's). WebhookAttempt had the column without a foreign key and gets one.
-- InvoiceLine's new foreign key is DEFERRABLE INITIALLY IMMEDIATE as the one it replaces (migration
-- 2026113001000001_deferrable_invoice_references: the billing run writes a batch's lines first).
-- test/integration/organization-ids.test.ts keeps every table but the global ones this way.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

-- Invoice lines
CREATE UNIQUE INDEX "Invoice_id_organizationId_key" ON "Invoice"("id", "organizationId");
ALTER TABLE "InvoiceLine" ADD COLUMN "organizationId" TEXT;
UPDATE "InvoiceLine" l SET "organizationId" = p."organizationId" FROM "Invoice" p WHERE p."id" = l."invoiceId";
ALTER TABLE "InvoiceLine" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "InvoiceLine" DROP CONSTRAINT "InvoiceLine_invoiceId_fkey";
DROP INDEX "InvoiceLine_invoiceId_position_idx";
CREATE INDEX "InvoiceLine_invoiceId_organizationId_position_idx" ON "InvoiceLine"("invoiceId", "organizationId", "position");
ALTER TABLE "InvoiceLine" ADD CONSTRAINT "InvoiceLine_invoiceId_organizationId_fkey" FOREIGN KEY ("invoiceId", "organizationId")
  REFERENCES "Invoice"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE DEFERRABLE INITIALLY IMMEDIATE;

-- Order lines
CREATE UNIQUE INDEX "Order_id_organizationId_key" ON "Order"("id", "organizationId");
ALTER TABLE "OrderLine" ADD COLUMN "organizationId" TEXT;
UPDATE "OrderLine" l SET "organizationId" = p."organizationId" FROM "Order" p WHERE p."id" = l."orderId";
ALTER TABLE "OrderLine" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "OrderLine" DROP CONSTRAINT "OrderLine_orderId_fkey";
DROP INDEX "OrderLine_orderId_position_idx";
CREATE INDEX "OrderLine_orderId_organizationId_position_idx" ON "OrderLine"("orderId", "organizationId", "position");
ALTER TABLE "OrderLine" ADD CONSTRAINT "OrderLine_orderId_organizationId_fkey" FOREIGN KEY ("orderId", "organizationId")
  REFERENCES "Order"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;

-- Credit note lines
CREATE UNIQUE INDEX "CreditNote_id_organizationId_key" ON "CreditNote"("id", "organizationId");
ALTER TABLE "CreditNoteLine" ADD COLUMN "organizationId" TEXT;
UPDATE "CreditNoteLine" l SET "organizationId" = p."organizationId" FROM "CreditNote" p WHERE p."id" = l."creditNoteId";
ALTER TABLE "CreditNoteLine" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "CreditNoteLine" DROP CONSTRAINT "CreditNoteLine_creditNoteId_fkey";
DROP INDEX "CreditNoteLine_creditNoteId_position_idx";
CREATE INDEX "CreditNoteLine_creditNoteId_organizationId_position_idx" ON "CreditNoteLine"("creditNoteId", "organizationId", "position");
ALTER TABLE "CreditNoteLine" ADD CONSTRAINT "CreditNoteLine_creditNoteId_organizationId_fkey"
  FOREIGN KEY ("creditNoteId", "organizationId") REFERENCES "CreditNote"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;

-- Payment charges
CREATE UNIQUE INDEX "Payment_id_organizationId_key" ON "Payment"("id", "organizationId");
ALTER TABLE "PaymentCharge" ADD COLUMN "organizationId" TEXT;
UPDATE "PaymentCharge" c SET "organizationId" = p."organizationId" FROM "Payment" p WHERE p."id" = c."paymentId";
ALTER TABLE "PaymentCharge" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "PaymentCharge" DROP CONSTRAINT "PaymentCharge_paymentId_fkey";
DROP INDEX "PaymentCharge_paymentId_attempt_key";
CREATE UNIQUE INDEX "PaymentCharge_paymentId_organizationId_attempt_key" ON "PaymentCharge"("paymentId", "organizationId", "attempt");
ALTER TABLE "PaymentCharge" ADD CONSTRAINT "PaymentCharge_paymentId_organizationId_fkey" FOREIGN KEY ("paymentId", "organizationId")
  REFERENCES "Payment"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;

-- Subscription lines and addons
CREATE UNIQUE INDEX "Subscription_id_organizationId_key" ON "Subscription"("id", "organizationId");
ALTER TABLE "SubscriptionLine" ADD COLUMN "organizationId" TEXT;
UPDATE "SubscriptionLine" l SET "organizationId" = p."organizationId" FROM "Subscription" p WHERE p."id" = l."subscriptionId";
ALTER TABLE "SubscriptionLine" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "SubscriptionLine" DROP CONSTRAINT "SubscriptionLine_subscriptionId_fkey";
DROP INDEX "SubscriptionLine_subscriptionId_idx";
CREATE INDEX "SubscriptionLine_subscriptionId_organizationId_idx" ON "SubscriptionLine"("subscriptionId", "organizationId");
ALTER TABLE "SubscriptionLine" ADD CONSTRAINT "SubscriptionLine_subscriptionId_organizationId_fkey"
  FOREIGN KEY ("subscriptionId", "organizationId") REFERENCES "Subscription"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SubscriptionAddon" ADD COLUMN "organizationId" TEXT;
UPDATE "SubscriptionAddon" a SET "organizationId" = p."organizationId" FROM "Subscription" p WHERE p."id" = a."subscriptionId";
ALTER TABLE "SubscriptionAddon" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "SubscriptionAddon" DROP CONSTRAINT "SubscriptionAddon_subscriptionId_fkey";
DROP INDEX "SubscriptionAddon_subscriptionId_idx";
CREATE INDEX "SubscriptionAddon_subscriptionId_organizationId_idx" ON "SubscriptionAddon"("subscriptionId", "organizationId");
ALTER TABLE "SubscriptionAddon" ADD CONSTRAINT "SubscriptionAddon_subscriptionId_organizationId_fkey"
  FOREIGN KEY ("subscriptionId", "organizationId") REFERENCES "Subscription"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;

-- Webhook messages and attempts: by their event
CREATE UNIQUE INDEX "Event_id_organizationId_key" ON "Event"("id", "organizationId");
ALTER TABLE "WebhookMessage" ADD COLUMN "organizationId" TEXT;
UPDATE "WebhookMessage" m SET "organizationId" = p."organizationId" FROM "Event" p WHERE p."id" = m."eventId";
ALTER TABLE "WebhookMessage" ALTER COLUMN "organizationId" SET NOT NULL;
ALTER TABLE "WebhookMessage" DROP CONSTRAINT "WebhookMessage_eventId_fkey";
ALTER TABLE "WebhookMessage" DROP CONSTRAINT "WebhookMessage_pkey";
ALTER TABLE "WebhookMessage" ADD CONSTRAINT "WebhookMessage_pkey" PRIMARY KEY ("eventId", "organizationId", "endpointId");
ALTER TABLE "WebhookMessage" ADD CONSTRAINT "WebhookMessage_eventId_organizationId_fkey" FOREIGN KEY ("eventId", "organizationId")
  REFERENCES "Event"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "WebhookAttempt" DROP CONSTRAINT "WebhookAttempt_eventId_fkey";
DROP INDEX "WebhookAttempt_eventId_idx";
CREATE INDEX "WebhookAttempt_eventId_organizationId_idx" ON "WebhookAttempt"("eventId", "organizationId");
ALTER TABLE "WebhookAttempt" ADD CONSTRAINT "WebhookAttempt_eventId_organizationId_fkey" FOREIGN KEY ("eventId", "organizationId")
  REFERENCES "Event"("id", "organizationId") ON DELETE CASCADE ON UPDATE CASCADE;
