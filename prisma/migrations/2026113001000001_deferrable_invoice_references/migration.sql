-- The foreign keys from invoice lines and usage records to their invoice may be deferred to
-- commit (they stay checked at once unless a transaction says SET CONSTRAINTS ... DEFERRED).
-- The billing run defers them so that it writes a batch's lines and usage marks before the
-- invoices, and holds the organization's numbering counter only while it inserts the invoices
-- (docs/billing-run.md "Throughput", docs/performance.md "The numbering counter's hold").
-- Prisma's schema cannot say DEFERRABLE; prisma/schema.prisma notes it on both relations.
ALTER TABLE "InvoiceLine" ALTER CONSTRAINT "InvoiceLine_invoiceId_fkey" DEFERRABLE INITIALLY IMMEDIATE;
ALTER TABLE "Usage" ALTER CONSTRAINT "Usage_invoiceId_fkey" DEFERRABLE INITIALLY IMMEDIATE;
