-- Lists of invoices, orders and credit notes are newest first, and documents created at the same
-- instant (the cycles one billing run or test clock advance bills) by number, highest first, a
-- draft (no number) before them, then by id: ORDER BY "createdAt" DESC, "number" DESC NULLS FIRST,
-- "id" DESC (src/graphql/pagination.ts documentConnection). Each list index gains "number" between
-- "createdAt" and "id", so a page (after a cursor too) is still one backward index range scan
-- with no sort, read backward as the order's NULLS FIRST. Each replaces the index it extends.
-- New: the REST lists' filters "number" (exact or in) and "date" (a range) on every document, and
-- their indexes. A credit note's customer filter goes through its invoice (Invoice customer index,
-- then "CreditNote_invoiceId_status_idx"). Names over PostgreSQL's 63 characters are given shorter
-- (and mapped in prisma/schema.prisma).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

-- Invoice: no filter or created, status, customer, document type, and number (date has its index)
DROP INDEX "Invoice_organizationId_testMode_createdAt_id_idx";
CREATE INDEX "Invoice_organizationId_testMode_createdAt_number_id_idx" ON "Invoice"("organizationId", "testMode", "createdAt", "number", "id");
DROP INDEX "Invoice_organizationId_testMode_status_createdAt_id_idx";
CREATE INDEX "Invoice_organizationId_testMode_status_createdAt_number_id_idx" ON "Invoice"("organizationId", "testMode", "status", "createdAt", "number", "id");
DROP INDEX "Invoice_customerId_createdAt_id_idx";
CREATE INDEX "Invoice_customerId_createdAt_number_id_idx" ON "Invoice"("customerId", "createdAt", "number", "id");
DROP INDEX "Invoice_organizationId_testMode_documentTypeId_createdAt_id_idx";
CREATE INDEX "Invoice_org_testMode_documentTypeId_createdAt_number_id_idx" ON "Invoice"("organizationId", "testMode", "documentTypeId", "createdAt", "number", "id");
CREATE INDEX "Invoice_organizationId_testMode_number_createdAt_id_idx" ON "Invoice"("organizationId", "testMode", "number", "createdAt", "id");

-- Order: no filter or created or invoiced, status, shipping type, customer, number, date
DROP INDEX "Order_organizationId_testMode_createdAt_id_idx";
CREATE INDEX "Order_organizationId_testMode_createdAt_number_id_idx" ON "Order"("organizationId", "testMode", "createdAt", "number", "id");
DROP INDEX "Order_organizationId_testMode_status_createdAt_id_idx";
CREATE INDEX "Order_organizationId_testMode_status_createdAt_number_id_idx" ON "Order"("organizationId", "testMode", "status", "createdAt", "number", "id");
DROP INDEX "Order_organizationId_testMode_shippingType_createdAt_id_idx";
CREATE INDEX "Order_org_testMode_shippingType_createdAt_number_id_idx" ON "Order"("organizationId", "testMode", "shippingType", "createdAt", "number", "id");
DROP INDEX "Order_customerId_createdAt_id_idx";
CREATE INDEX "Order_customerId_createdAt_number_id_idx" ON "Order"("customerId", "createdAt", "number", "id");
CREATE INDEX "Order_organizationId_testMode_number_createdAt_id_idx" ON "Order"("organizationId", "testMode", "number", "createdAt", "id");
CREATE INDEX "Order_organizationId_testMode_date_idx" ON "Order"("organizationId", "testMode", "date");

-- CreditNote: no filter or created, status, document type, number, date
DROP INDEX "CreditNote_organizationId_testMode_createdAt_id_idx";
CREATE INDEX "CreditNote_organizationId_testMode_createdAt_number_id_idx" ON "CreditNote"("organizationId", "testMode", "createdAt", "number", "id");
DROP INDEX "CreditNote_organizationId_testMode_status_createdAt_id_idx";
CREATE INDEX "CreditNote_org_testMode_status_createdAt_number_id_idx" ON "CreditNote"("organizationId", "testMode", "status", "createdAt", "number", "id");
DROP INDEX "CreditNote_org_testMode_documentTypeId_createdAt_id_idx";
CREATE INDEX "CreditNote_org_testMode_documentTypeId_createdAt_number_id_idx" ON "CreditNote"("organizationId", "testMode", "documentTypeId", "createdAt", "number", "id");
CREATE INDEX "CreditNote_organizationId_testMode_number_createdAt_id_idx" ON "CreditNote"("organizationId", "testMode", "number", "createdAt", "id");
CREATE INDEX "CreditNote_organizationId_testMode_date_idx" ON "CreditNote"("organizationId", "testMode", "date");
