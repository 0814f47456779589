-- Revenue analytics' maintained aggregates (docs/analytics.md "How it is computed", docs/performance.md "Revenue
-- analytics"). revenueAnalytics read every document at each request (about 20 s at 1,000,000 invoices). Now:
-- - "RevenueDirtyCustomer": the customers whose figures may have moved, one row per (customer, transaction), written
--   by the triggers below in the transaction of the change itself (an invoice, a line of a finalized invoice, a
--   credit note, a payment, a subscription's state, an organization's time zone, a plan's frequency or usage
--   scheme, a document type's prices-include-tax, a currency's rounding). The transaction id in the key keeps a
--   transaction's marks to one row per customer without ever waiting on another transaction's row.
-- - "RevenueCustomerMonth" and "RevenueCustomerFlow": each customer's MRR per month end (rounded, with its movement
--   against the previous month end) and its money flows per (month, due month), as the live statements compute them
-- - "RevenueMonth" and "RevenueFlow": their sums per (organization, mode, currency, month[, due month]), kept equal
--   to the sums of the customer rows: a drain (services/revenue-aggregates.ts) takes dirty customers, recomputes
--   their rows, and adds the difference, in one transaction under an advisory lock of the organization and mode.
-- "dueMonth" -1 stands for no due month (an invoice without a due date, a payment on account).
-- "customerId" '' owns the payments of no customer and no invoice. Month indexes are year * 12 + month - 1.
-- Every customer starts dirty (the backfill): the first read or the background drain computes them.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE TABLE "RevenueDirtyCustomer" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "transactionId" BIGINT NOT NULL,
    CONSTRAINT "RevenueDirtyCustomer_pkey" PRIMARY KEY ("organizationId", "testMode", "customerId", "transactionId"),
    CONSTRAINT "RevenueDirtyCustomer_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "RevenueCustomerMonth" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "month" INTEGER NOT NULL,
    "mrr" DECIMAL NOT NULL,
    "subscriptions" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL,
    "newMrr" DECIMAL NOT NULL,
    "expansionMrr" DECIMAL NOT NULL,
    "contractionMrr" DECIMAL NOT NULL,
    "churnedMrr" DECIMAL NOT NULL,
    CONSTRAINT "RevenueCustomerMonth_pkey" PRIMARY KEY ("organizationId", "testMode", "customerId", "currencyId", "month"),
    CONSTRAINT "RevenueCustomerMonth_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "RevenueMonth" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "currencyId" TEXT NOT NULL,
    "month" INTEGER NOT NULL,
    "mrr" DECIMAL NOT NULL,
    "newMrr" DECIMAL NOT NULL,
    "expansionMrr" DECIMAL NOT NULL,
    "contractionMrr" DECIMAL NOT NULL,
    "churnedMrr" DECIMAL NOT NULL,
    "activeSubscriptions" INTEGER NOT NULL,
    "activeCustomers" INTEGER NOT NULL,
    CONSTRAINT "RevenueMonth_pkey" PRIMARY KEY ("organizationId", "testMode", "currencyId", "month"),
    CONSTRAINT "RevenueMonth_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "RevenueCustomerFlow" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "month" INTEGER NOT NULL,
    "dueMonth" INTEGER NOT NULL,
    "forInvoice" BOOLEAN NOT NULL,
    "total" DECIMAL NOT NULL,
    "tax" DECIMAL NOT NULL,
    CONSTRAINT "RevenueCustomerFlow_pkey" PRIMARY KEY ("organizationId", "testMode", "customerId", "currencyId", "kind", "month", "dueMonth", "forInvoice"),
    CONSTRAINT "RevenueCustomerFlow_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "RevenueFlow" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "currencyId" TEXT NOT NULL,
    "month" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "dueMonth" INTEGER NOT NULL,
    "forInvoice" BOOLEAN NOT NULL,
    "total" DECIMAL NOT NULL,
    "tax" DECIMAL NOT NULL,
    CONSTRAINT "RevenueFlow_pkey" PRIMARY KEY ("organizationId", "testMode", "currencyId", "month", "kind", "dueMonth", "forInvoice"),
    CONSTRAINT "RevenueFlow_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE
);


-- marks (organization, mode, customer) dirty for this transaction, once
CREATE FUNCTION revenue_mark(organization TEXT, test_mode BOOLEAN, customer TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
  VALUES (organization, test_mode, COALESCE(customer, ''), pg_current_xact_id()::text::bigint)
  ON CONFLICT DO NOTHING;
END $$;

-- an invoice counts when finalized (its totals, its cycle's plan lines) and owns its credit notes and payments (its
-- due date, its customer): a change of either side marks the old and the new customer
CREATE FUNCTION revenue_invoice_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND (OLD."status" = 'finalized' OR TG_OP = 'DELETE' OR OLD."dueDate" IS DISTINCT FROM NEW."dueDate"
      OR OLD."customerId" IS DISTINCT FROM NEW."customerId" OR NEW."status" = 'finalized') THEN
    PERFORM revenue_mark(OLD."organizationId", OLD."testMode", OLD."customerId");
  END IF;
  IF TG_OP <> 'DELETE' AND NEW."status" = 'finalized'
      AND (TG_OP = 'INSERT' OR OLD."customerId" IS DISTINCT FROM NEW."customerId" OR OLD."testMode" IS DISTINCT FROM NEW."testMode") THEN
    PERFORM revenue_mark(NEW."organizationId", NEW."testMode", NEW."customerId");
  END IF;
  RETURN NULL;
END $$;

-- inserts are marked once per statement (a set-based insert of many rows pays one INSERT ... SELECT)
CREATE FUNCTION revenue_invoices_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
  SELECT DISTINCT "organizationId", "testMode", "customerId", pg_current_xact_id()::text::bigint
  FROM new_rows WHERE "status" = 'finalized'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER "Invoice_revenue_insert" AFTER INSERT ON "Invoice" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION revenue_invoices_inserted();
CREATE TRIGGER "Invoice_revenue_update" AFTER UPDATE ON "Invoice" FOR EACH ROW
  WHEN ((OLD."status" = 'finalized' OR NEW."status" = 'finalized' OR OLD."dueDate" IS DISTINCT FROM NEW."dueDate"
      OR OLD."customerId" IS DISTINCT FROM NEW."customerId")
    AND (OLD."status", OLD."date", OLD."dueDate", OLD."total", OLD."tax", OLD."taxPercent", OLD."currencyId",
      OLD."customerId", OLD."testMode", OLD."documentTypeId", OLD."subscriptionId", OLD."billingCycle",
      OLD."periodStart", OLD."periodEnd")
      IS DISTINCT FROM (NEW."status", NEW."date", NEW."dueDate", NEW."total", NEW."tax", NEW."taxPercent",
      NEW."currencyId", NEW."customerId", NEW."testMode", NEW."documentTypeId", NEW."subscriptionId",
      NEW."billingCycle", NEW."periodStart", NEW."periodEnd"))
  EXECUTE FUNCTION revenue_invoice_changed();
CREATE TRIGGER "Invoice_revenue_delete" AFTER DELETE ON "Invoice" FOR EACH ROW
  EXECUTE FUNCTION revenue_invoice_changed();

-- a line counts only on a finalized invoice (its plan lines are MRR): lines written while the invoice is a draft
-- mark nothing, its finalization does
CREATE FUNCTION revenue_line_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  line RECORD;
BEGIN
  IF TG_OP = 'DELETE' THEN line := OLD; ELSE line := NEW; END IF;
  PERFORM revenue_mark(i."organizationId", i."testMode", i."customerId")
    FROM "Invoice" i WHERE i."id" = line."invoiceId" AND i."status" = 'finalized';
  RETURN NULL;
END $$;

CREATE FUNCTION revenue_lines_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
  SELECT DISTINCT i."organizationId", i."testMode", i."customerId", pg_current_xact_id()::text::bigint
  FROM new_rows l JOIN "Invoice" i ON i."id" = l."invoiceId" WHERE i."status" = 'finalized'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER "InvoiceLine_revenue_insert" AFTER INSERT ON "InvoiceLine" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION revenue_lines_inserted();
CREATE TRIGGER "InvoiceLine_revenue_delete" AFTER DELETE ON "InvoiceLine" FOR EACH ROW
  EXECUTE FUNCTION revenue_line_changed();
CREATE TRIGGER "InvoiceLine_revenue_update" AFTER UPDATE ON "InvoiceLine" FOR EACH ROW
  WHEN ((OLD."total", OLD."planId", OLD."periodStart", OLD."exempt", OLD."invoiceId")
    IS DISTINCT FROM (NEW."total", NEW."planId", NEW."periodStart", NEW."exempt", NEW."invoiceId"))
  EXECUTE FUNCTION revenue_line_changed();

-- a credit or debit note belongs to its invoice's customer
CREATE FUNCTION revenue_note_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM revenue_mark(OLD."organizationId", OLD."testMode", i."customerId") FROM "Invoice" i WHERE i."id" = OLD."invoiceId";
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM revenue_mark(NEW."organizationId", NEW."testMode", i."customerId") FROM "Invoice" i WHERE i."id" = NEW."invoiceId";
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION revenue_notes_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
  SELECT DISTINCT n."organizationId", n."testMode", i."customerId", pg_current_xact_id()::text::bigint
  FROM new_rows n JOIN "Invoice" i ON i."id" = n."invoiceId" WHERE n."status" = 'finalized'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER "CreditNote_revenue_insert" AFTER INSERT ON "CreditNote" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION revenue_notes_inserted();
CREATE TRIGGER "CreditNote_revenue_update" AFTER UPDATE ON "CreditNote" FOR EACH ROW
  WHEN ((OLD."status" = 'finalized' OR NEW."status" = 'finalized')
    AND (OLD."status", OLD."date", OLD."total", OLD."tax", OLD."currencyId", OLD."invoiceId", OLD."testMode",
      OLD."documentTypeId")
      IS DISTINCT FROM (NEW."status", NEW."date", NEW."total", NEW."tax", NEW."currencyId", NEW."invoiceId",
      NEW."testMode", NEW."documentTypeId"))
  EXECUTE FUNCTION revenue_note_changed();
CREATE TRIGGER "CreditNote_revenue_delete" AFTER DELETE ON "CreditNote" FOR EACH ROW WHEN (OLD."status" = 'finalized')
  EXECUTE FUNCTION revenue_note_changed();

-- a payment belongs to its invoice's customer, else to its own customer, else to ''
CREATE FUNCTION revenue_payment_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM revenue_mark(OLD."organizationId", OLD."testMode",
      COALESCE((SELECT i."customerId" FROM "Invoice" i WHERE i."id" = OLD."invoiceId"), OLD."customerId"));
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM revenue_mark(NEW."organizationId", NEW."testMode",
      COALESCE((SELECT i."customerId" FROM "Invoice" i WHERE i."id" = NEW."invoiceId"), NEW."customerId"));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION revenue_payments_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
  SELECT DISTINCT p."organizationId", p."testMode", COALESCE(i."customerId", p."customerId", ''),
    pg_current_xact_id()::text::bigint
  FROM new_rows p LEFT JOIN "Invoice" i ON i."id" = p."invoiceId" WHERE p."status" = 'succeeded'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER "Payment_revenue_insert" AFTER INSERT ON "Payment" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION revenue_payments_inserted();
CREATE TRIGGER "Payment_revenue_update" AFTER UPDATE ON "Payment" FOR EACH ROW
  WHEN ((OLD."status" = 'succeeded' OR NEW."status" = 'succeeded')
    AND (OLD."status", OLD."date", OLD."amount", OLD."currencyId", OLD."invoiceId", OLD."customerId", OLD."testMode")
      IS DISTINCT FROM (NEW."status", NEW."date", NEW."amount", NEW."currencyId", NEW."invoiceId", NEW."customerId",
      NEW."testMode"))
  EXECUTE FUNCTION revenue_payment_changed();
CREATE TRIGGER "Payment_revenue_delete" AFTER DELETE ON "Payment" FOR EACH ROW WHEN (OLD."status" = 'succeeded')
  EXECUTE FUNCTION revenue_payment_changed();

-- a subscription's cancellation or pause removes month ends from its customer's MRR
CREATE FUNCTION revenue_subscription_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM revenue_mark(OLD."organizationId", OLD."testMode", OLD."customerId");
  IF OLD."customerId" IS DISTINCT FROM NEW."customerId" THEN
    PERFORM revenue_mark(NEW."organizationId", NEW."testMode", NEW."customerId");
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "Subscription_revenue_update" AFTER UPDATE ON "Subscription" FOR EACH ROW
  WHEN ((OLD."status" = 'paused') IS DISTINCT FROM (NEW."status" = 'paused')
    OR (OLD."paused", OLD."cancelled", OLD."customerId") IS DISTINCT FROM (NEW."paused", NEW."cancelled", NEW."customerId"))
  EXECUTE FUNCTION revenue_subscription_changed();

-- what every customer of a cycle invoice depends on: the organization's time zone (cancelled and paused days),
-- a plan's frequency and usage scheme, a document type's prices-include-tax, a currency's rounding
CREATE FUNCTION revenue_reference_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'Organization' THEN
    PERFORM revenue_mark(i."organizationId", i."testMode", i."customerId")
      FROM (SELECT DISTINCT "organizationId", "testMode", "customerId" FROM "Invoice"
        WHERE "organizationId" = NEW."id" AND "billingCycle" IS NOT NULL) i;
  ELSIF TG_TABLE_NAME = 'Plan' THEN
    PERFORM revenue_mark(i."organizationId", i."testMode", i."customerId")
      FROM (SELECT DISTINCT i."organizationId", i."testMode", i."customerId" FROM "InvoiceLine" l
        JOIN "Invoice" i ON i."id" = l."invoiceId" WHERE l."planId" = NEW."id") i;
  ELSIF TG_TABLE_NAME = 'DocumentType' THEN
    PERFORM revenue_mark(i."organizationId", i."testMode", i."customerId")
      FROM (SELECT DISTINCT "organizationId", "testMode", "customerId" FROM "Invoice"
        WHERE "documentTypeId" = NEW."id" AND "billingCycle" IS NOT NULL) i;
  ELSE
    PERFORM revenue_mark(i."organizationId", i."testMode", i."customerId")
      FROM (SELECT DISTINCT "organizationId", "testMode", "customerId" FROM "Invoice"
        WHERE "currencyId" = NEW."id" AND "billingCycle" IS NOT NULL) i;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "Organization_revenue_update" AFTER UPDATE OF "timeZone" ON "Organization" FOR EACH ROW
  WHEN (OLD."timeZone" IS DISTINCT FROM NEW."timeZone") EXECUTE FUNCTION revenue_reference_changed();
CREATE TRIGGER "Plan_revenue_update" AFTER UPDATE OF "frequency", "usageScheme" ON "Plan" FOR EACH ROW
  WHEN ((OLD."frequency", OLD."usageScheme") IS DISTINCT FROM (NEW."frequency", NEW."usageScheme"))
  EXECUTE FUNCTION revenue_reference_changed();
CREATE TRIGGER "DocumentType_revenue_update" AFTER UPDATE OF "pricesIncludeTax" ON "DocumentType" FOR EACH ROW
  WHEN (OLD."pricesIncludeTax" IS DISTINCT FROM NEW."pricesIncludeTax") EXECUTE FUNCTION revenue_reference_changed();
CREATE TRIGGER "Currency_revenue_update" AFTER UPDATE OF "rounded", "decimals" ON "Currency" FOR EACH ROW
  WHEN ((OLD."rounded", OLD."decimals") IS DISTINCT FROM (NEW."rounded", NEW."decimals"))
  EXECUTE FUNCTION revenue_reference_changed();

-- the backfill: every customer, and the payments of no customer, start dirty
INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
SELECT "organizationId", "testMode", "id", 0 FROM "Customer";
INSERT INTO "RevenueDirtyCustomer" ("organizationId", "testMode", "customerId", "transactionId")
SELECT DISTINCT "organizationId", "testMode", '', 0 FROM "Payment" WHERE "customerId" IS NULL AND "invoiceId" IS NULL;
