-- Pending invoice items of subscriptions: prorations and carried credits (docs/proration.md)
CREATE TABLE "PendingInvoiceItem" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "quantity" DECIMAL(20,6) NOT NULL DEFAULT 1,
    "amount" DECIMAL(20,6) NOT NULL,
    "exempt" BOOLEAN NOT NULL DEFAULT false,
    "periodStart" DATE NOT NULL,
    "periodEnd" DATE NOT NULL,
    "invoiceId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PendingInvoiceItem_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "PendingInvoiceItem_subscriptionId_invoiceId_idx" ON "PendingInvoiceItem"("subscriptionId", "invoiceId");
CREATE INDEX "PendingInvoiceItem_organizationId_testMode_createdAt_idx" ON "PendingInvoiceItem"("organizationId", "testMode", "createdAt");
CREATE INDEX "PendingInvoiceItem_invoiceId_idx" ON "PendingInvoiceItem"("invoiceId");

ALTER TABLE "PendingInvoiceItem" ADD CONSTRAINT "PendingInvoiceItem_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PendingInvoiceItem" ADD CONSTRAINT "PendingInvoiceItem_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "Subscription"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PendingInvoiceItem" ADD CONSTRAINT "PendingInvoiceItem_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;
