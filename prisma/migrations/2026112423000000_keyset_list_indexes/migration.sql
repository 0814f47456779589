-- Indexes in the order of the lists (docs/performance.md "Deep pages"). A list is newest first,
-- ORDER BY "createdAt" DESC, "id" DESC (usages: "dateTime" DESC, "id" DESC), and a page after a cursor
-- bounds the first sort column (src/graphql/pagination.ts keyset). An index whose columns are a
-- filter's equalities then the sort columns serves the page as one backward range scan that stops
-- after the page, however deep the cursor, and the filter's totalCount as an index-only scan.
-- Each index below replaces the narrower one it extends (same leading columns), so writes keep
-- the same number of index entries, except the new document type and country ones. A name longer
-- than PostgreSQL's 63 characters is given shorter (and mapped in prisma/schema.prisma).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

-- Invoice: no filter or created (a range), status, customer, document type
DROP INDEX "Invoice_organizationId_testMode_createdAt_idx";
CREATE INDEX "Invoice_organizationId_testMode_createdAt_id_idx" ON "Invoice"("organizationId", "testMode", "createdAt", "id");
DROP INDEX "Invoice_organizationId_testMode_status_idx";
CREATE INDEX "Invoice_organizationId_testMode_status_createdAt_id_idx" ON "Invoice"("organizationId", "testMode", "status", "createdAt", "id");
DROP INDEX "Invoice_customerId_status_idx";
CREATE INDEX "Invoice_customerId_createdAt_id_idx" ON "Invoice"("customerId", "createdAt", "id");
CREATE INDEX "Invoice_organizationId_testMode_documentTypeId_createdAt_id_idx" ON "Invoice"("organizationId", "testMode", "documentTypeId", "createdAt", "id");

-- CreditNote: no filter or created, status, document type (invoice: "CreditNote_invoiceId_status_idx", a few notes per invoice)
DROP INDEX "CreditNote_organizationId_testMode_createdAt_idx";
CREATE INDEX "CreditNote_organizationId_testMode_createdAt_id_idx" ON "CreditNote"("organizationId", "testMode", "createdAt", "id");
DROP INDEX "CreditNote_organizationId_testMode_status_idx";
CREATE INDEX "CreditNote_organizationId_testMode_status_createdAt_id_idx" ON "CreditNote"("organizationId", "testMode", "status", "createdAt", "id");
CREATE INDEX "CreditNote_org_testMode_documentTypeId_createdAt_id_idx" ON "CreditNote"("organizationId", "testMode", "documentTypeId", "createdAt", "id");

-- Order: no filter or created or invoiced, status, shipping type, customer (invoice: "Order_invoiceId_idx")
DROP INDEX "Order_organizationId_testMode_createdAt_idx";
CREATE INDEX "Order_organizationId_testMode_createdAt_id_idx" ON "Order"("organizationId", "testMode", "createdAt", "id");
DROP INDEX "Order_organizationId_testMode_status_idx";
CREATE INDEX "Order_organizationId_testMode_status_createdAt_id_idx" ON "Order"("organizationId", "testMode", "status", "createdAt", "id");
DROP INDEX "Order_organizationId_testMode_shippingType_idx";
CREATE INDEX "Order_organizationId_testMode_shippingType_createdAt_id_idx" ON "Order"("organizationId", "testMode", "shippingType", "createdAt", "id");
DROP INDEX "Order_customerId_status_idx";
CREATE INDEX "Order_customerId_createdAt_id_idx" ON "Order"("customerId", "createdAt", "id");

-- Payment: no filter or created, status, customer (invoice: "Payment_invoiceId_status_idx", a few payments per invoice)
DROP INDEX "Payment_organizationId_testMode_createdAt_idx";
CREATE INDEX "Payment_organizationId_testMode_createdAt_id_idx" ON "Payment"("organizationId", "testMode", "createdAt", "id");
DROP INDEX "Payment_organizationId_testMode_status_idx";
CREATE INDEX "Payment_organizationId_testMode_status_createdAt_id_idx" ON "Payment"("organizationId", "testMode", "status", "createdAt", "id");
DROP INDEX "Payment_customerId_status_idx";
CREATE INDEX "Payment_customerId_createdAt_id_idx" ON "Payment"("customerId", "createdAt", "id");

-- Customer: no filter or created, and the exact filters email, name, tax id and country (the
-- substring operators contains and icontains cannot use a b-tree: docs/performance.md)
DROP INDEX "Customer_organizationId_testMode_createdAt_idx";
CREATE INDEX "Customer_organizationId_testMode_createdAt_id_idx" ON "Customer"("organizationId", "testMode", "createdAt", "id");
DROP INDEX "Customer_organizationId_testMode_email_idx";
CREATE INDEX "Customer_organizationId_testMode_email_createdAt_id_idx" ON "Customer"("organizationId", "testMode", "email", "createdAt", "id");
DROP INDEX "Customer_organizationId_testMode_name_idx";
CREATE INDEX "Customer_organizationId_testMode_name_createdAt_id_idx" ON "Customer"("organizationId", "testMode", "name", "createdAt", "id");
DROP INDEX "Customer_organizationId_testMode_taxId_idx";
CREATE INDEX "Customer_organizationId_testMode_taxId_createdAt_id_idx" ON "Customer"("organizationId", "testMode", "taxId", "createdAt", "id");
CREATE INDEX "Customer_organizationId_testMode_countryId_createdAt_id_idx" ON "Customer"("organizationId", "testMode", "countryId", "createdAt", "id");

-- Usage: no filter or dateTime, latest first (subscription line: "Usage_subscriptionLineId_dateTime_createdAt_idx",
-- invoice: "Usage_invoiceId_idx")
DROP INDEX "Usage_organizationId_testMode_dateTime_idx";
CREATE INDEX "Usage_organizationId_testMode_dateTime_id_idx" ON "Usage"("organizationId", "testMode", "dateTime", "id");
