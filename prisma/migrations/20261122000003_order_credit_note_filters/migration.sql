-- Indexes for the list filters of orders (shippingType) and credit notes (status) within a tenant.
CREATE INDEX "Order_organizationId_testMode_shippingType_idx" ON "Order"("organizationId", "testMode", "shippingType");
CREATE INDEX "CreditNote_organizationId_testMode_status_idx" ON "CreditNote"("organizationId", "testMode", "status");
