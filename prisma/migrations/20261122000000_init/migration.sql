-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Organization" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "timeZone" TEXT NOT NULL DEFAULT 'America/Santiago',
    "businessName" TEXT,
    "colorBackground" TEXT,
    "colorAsset" TEXT,
    "displayInvoices" BOOLEAN NOT NULL DEFAULT true,
    "termsOfServiceUrl" TEXT,
    "privacyPolicyUrl" TEXT,
    "taxId" TEXT,
    "taxBusinessName" TEXT,
    "taxActivity" TEXT,
    "taxActivityCode" TEXT,
    "taxAddress" TEXT,
    "taxCommune" TEXT,
    "taxCity" TEXT,
    "taxResolutionNumber" INTEGER,
    "taxResolutionDate" DATE,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "userEmail" TEXT NOT NULL,
    "revokedAt" TIMESTAMPTZ(3),
    "lastUsedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Country" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "nameEn" TEXT NOT NULL,
    "phoneCode" TEXT NOT NULL,
    "hasRegulation" BOOLEAN NOT NULL,
    "taxPercent" DECIMAL(7,4) NOT NULL,

    CONSTRAINT "Country_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Currency" (
    "id" TEXT NOT NULL,
    "conversionId" TEXT,
    "countryId" TEXT,
    "isDefault" BOOLEAN NOT NULL,
    "isChargeable" BOOLEAN NOT NULL,
    "available" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "nameEn" TEXT NOT NULL,
    "rounded" BOOLEAN NOT NULL,
    "decimals" INTEGER NOT NULL,

    CONSTRAINT "Currency_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "State" (
    "id" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "countryId" TEXT NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "State_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DocumentType" (
    "id" TEXT NOT NULL,
    "countryId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "tax" DECIMAL(7,4) NOT NULL,
    "code" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "hasTaxes" BOOLEAN NOT NULL,
    "hasTaxesDetail" BOOLEAN NOT NULL,
    "hasLinesTotal" BOOLEAN NOT NULL,
    "hasLocalFormat" BOOLEAN NOT NULL,
    "holdTaxes" BOOLEAN NOT NULL,
    "isForeign" BOOLEAN NOT NULL,
    "isSale" BOOLEAN NOT NULL,
    "isPurchase" BOOLEAN NOT NULL,
    "isOrder" BOOLEAN NOT NULL,
    "isNote" BOOLEAN NOT NULL DEFAULT false,
    "pricesIncludeTax" BOOLEAN NOT NULL DEFAULT false,
    "send" BOOLEAN NOT NULL,
    "given" BOOLEAN NOT NULL,

    CONSTRAINT "DocumentType_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Customer" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "name" TEXT,
    "address" TEXT,
    "countryId" TEXT,
    "stateId" TEXT,
    "stateCode" TEXT,
    "currencyId" TEXT,
    "email" TEXT,
    "phone" TEXT,
    "website" TEXT,
    "taxId" TEXT,
    "contacts" JSONB NOT NULL DEFAULT '[]',
    "taxSettings" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "testClockId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Customer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DocumentCounter" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "documentTypeId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "lastNumber" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "DocumentCounter_pkey" PRIMARY KEY ("organizationId","testMode","documentTypeId","kind")
);

-- CreateTable
CREATE TABLE "Invoice" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "documentTypeId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "number" INTEGER,
    "date" DATE NOT NULL,
    "dueDate" DATE,
    "collectionMethod" TEXT NOT NULL DEFAULT 'deferred',
    "amount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "exempt" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "tax" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "taxPercent" DECIMAL(7,4) NOT NULL DEFAULT 0,
    "subtotal" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "discountAmount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "periodStart" DATE,
    "periodEnd" DATE,
    "localFile" TEXT,
    "note" TEXT,
    "fiscalSettings" JSONB NOT NULL DEFAULT '{}',
    "taxAgency" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'draft',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "userEmail" TEXT NOT NULL,
    "finalizedAt" TIMESTAMPTZ(3),
    "subscriptionId" TEXT,
    "billingCycle" INTEGER,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Invoice_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "InvoiceLine" (
    "id" TEXT NOT NULL,
    "invoiceId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "quantity" DECIMAL(20,6) NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL,
    "discount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "exempt" BOOLEAN NOT NULL DEFAULT false,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "planId" TEXT,
    "periodStart" DATE,
    "periodEnd" DATE,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "InvoiceLine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Order" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "documentTypeId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "number" INTEGER,
    "date" DATE NOT NULL,
    "address" TEXT,
    "carrierId" TEXT,
    "carrierName" TEXT,
    "state" TEXT,
    "licencePlate" TEXT,
    "shippingType" TEXT NOT NULL DEFAULT '1',
    "amount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "exempt" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "tax" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "taxPercent" DECIMAL(7,4) NOT NULL DEFAULT 0,
    "subtotal" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "discountAmount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "localFile" TEXT,
    "taxAgency" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'draft',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "userEmail" TEXT NOT NULL,
    "finalizedAt" TIMESTAMPTZ(3),
    "invoiceId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Order_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OrderLine" (
    "id" TEXT NOT NULL,
    "orderId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "quantity" DECIMAL(20,6) NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL,
    "discount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "exempt" BOOLEAN NOT NULL DEFAULT false,
    "tax" DECIMAL(20,6),
    "taxPercent" DECIMAL(7,4) NOT NULL DEFAULT 0,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "OrderLine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CreditNote" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "invoiceId" TEXT NOT NULL,
    "documentTypeId" TEXT NOT NULL,
    "currencyId" TEXT NOT NULL,
    "number" INTEGER,
    "date" DATE NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "exempt" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "tax" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "taxPercent" DECIMAL(7,4) NOT NULL DEFAULT 0,
    "subtotal" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "discountAmount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "localFile" TEXT,
    "internalNote" TEXT,
    "note" TEXT,
    "referenceCode" INTEGER NOT NULL DEFAULT 3,
    "taxAgency" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'draft',
    "imported" BOOLEAN NOT NULL DEFAULT false,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "userEmail" TEXT NOT NULL,
    "finalizedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "CreditNote_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CreditNoteLine" (
    "id" TEXT NOT NULL,
    "creditNoteId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "quantity" DECIMAL(20,6) NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL,
    "discount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "exempt" BOOLEAN NOT NULL DEFAULT false,
    "tax" DECIMAL(20,6),
    "taxPercent" DECIMAL(7,4) NOT NULL DEFAULT 0,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "CreditNoteLine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Source" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT,
    "amount" DECIMAL(20,6),
    "description" TEXT,
    "returnUrl" TEXT,
    "status" TEXT NOT NULL DEFAULT 'chargeable',
    "gateway" TEXT NOT NULL,
    "usage" TEXT NOT NULL,
    "flow" TEXT NOT NULL DEFAULT 'none',
    "data" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Source_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Payment" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT,
    "invoiceId" TEXT,
    "sourceId" TEXT,
    "amount" DECIMAL(20,6) NOT NULL,
    "currencyId" TEXT NOT NULL,
    "date" DATE NOT NULL,
    "description" TEXT,
    "paymentDate" TIMESTAMPTZ(3),
    "status" TEXT NOT NULL DEFAULT 'requires_payment_method',
    "failureReason" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "userEmail" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Payment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PaymentCharge" (
    "id" TEXT NOT NULL,
    "paymentId" TEXT NOT NULL,
    "gateway" TEXT NOT NULL,
    "reference" TEXT,
    "status" TEXT NOT NULL,
    "failureCode" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PaymentCharge_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Product" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "unitLabel" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "archivedAt" TIMESTAMPTZ(3),
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Product_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Plan" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "productId" TEXT NOT NULL,
    "sku" TEXT,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "amount" DECIMAL(20,6) NOT NULL,
    "currencyId" TEXT NOT NULL,
    "frequency" TEXT NOT NULL DEFAULT 'monthly',
    "usageScheme" TEXT NOT NULL DEFAULT 'licensed',
    "usageAggregation" TEXT NOT NULL DEFAULT 'sum',
    "tiersMode" TEXT,
    "tiers" JSONB NOT NULL DEFAULT '[]',
    "exempt" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL DEFAULT 'active',
    "archivedAt" TIMESTAMPTZ(3),
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Plan_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Addon" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "applyScheme" TEXT NOT NULL DEFAULT 'one_time',
    "durationTimes" INTEGER,
    "sku" TEXT,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "amount" DECIMAL(20,6) NOT NULL,
    "currencyId" TEXT NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'active',
    "archivedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Addon_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Coupon" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "discountScheme" TEXT NOT NULL DEFAULT '%',
    "durationScheme" TEXT NOT NULL DEFAULT 'once',
    "durationTimes" INTEGER,
    "name" TEXT NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL,
    "validUntil" TIMESTAMPTZ(3),
    "applyOn" TEXT NOT NULL DEFAULT 'invoice',
    "currencyId" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'active',
    "archivedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Coupon_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TestClock" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "name" TEXT,
    "frozenTime" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'ready',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "TestClock_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Subscription" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "documentTypeId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "dateStart" DATE NOT NULL,
    "endDate" DATE,
    "billingCycles" INTEGER,
    "nextBilling" DATE NOT NULL,
    "nextBillingCycle" INTEGER NOT NULL DEFAULT 1,
    "previousBilling" DATE,
    "couponId" TEXT,
    "couponRedemptions" INTEGER NOT NULL DEFAULT 0,
    "expirationDays" INTEGER NOT NULL DEFAULT 0,
    "references" JSONB NOT NULL DEFAULT '[]',
    "note" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "taxSettings" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'active',
    "paused" TIMESTAMPTZ(3),
    "pausedReason" TEXT,
    "cancelled" TIMESTAMPTZ(3),
    "cancelReason" TEXT,
    "cancelAtPeriodEnd" BOOLEAN NOT NULL DEFAULT false,
    "pendingChanges" JSONB,
    "userEmail" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SubscriptionLine" (
    "id" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "planId" TEXT NOT NULL,
    "quantity" DECIMAL(20,6) NOT NULL DEFAULT 1,
    "couponId" TEXT,
    "couponRedemptions" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "SubscriptionLine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SubscriptionAddon" (
    "id" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "addonId" TEXT NOT NULL,
    "addonRedemptions" INTEGER NOT NULL DEFAULT 0,
    "quantity" INTEGER NOT NULL DEFAULT 1,
    "rates" JSONB NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "SubscriptionAddon_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Usage" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "subscriptionLineId" TEXT NOT NULL,
    "quantity" DECIMAL(20,6) NOT NULL,
    "dateTime" TIMESTAMPTZ(3) NOT NULL,
    "invoiceId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Usage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IdempotencyKey" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "key" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "resourceId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotencyKey_pkey" PRIMARY KEY ("organizationId","testMode","key")
);

-- CreateTable
CREATE TABLE "Reminder" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "subject" TEXT NOT NULL,
    "recipients" TEXT[],
    "message" TEXT NOT NULL,
    "invoiceId" TEXT,
    "creditNoteId" TEXT,
    "paymentId" TEXT,
    "orderId" TEXT,
    "userEmail" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Reminder_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OutboxMessage" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "reminderId" TEXT,
    "recipients" TEXT[],
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "sentAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OutboxMessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CustomerSession" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "keyHash" TEXT NOT NULL,
    "returnUrl" TEXT NOT NULL,
    "settings" JSONB NOT NULL DEFAULT '{}',
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CustomerSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Caf" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "documentTypeId" TEXT NOT NULL,
    "rangeFrom" INTEGER NOT NULL,
    "rangeTo" INTEGER NOT NULL,
    "nextFolio" INTEGER NOT NULL,
    "authorizedAt" DATE NOT NULL,
    "xml" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Caf_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Certificate" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "subjectRut" TEXT,
    "encrypted" BYTEA NOT NULL,
    "validFrom" TIMESTAMPTZ(3),
    "validTo" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Certificate_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Purchase" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "swapId" TEXT NOT NULL,
    "documentCode" INTEGER NOT NULL,
    "folio" INTEGER NOT NULL,
    "issuerTaxId" TEXT NOT NULL,
    "issuerName" TEXT,
    "date" DATE NOT NULL,
    "amount" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "exempt" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "tax" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "total" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "xml" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Purchase_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Swap" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "localFile" TEXT,
    "receipt" TEXT,
    "reception" TEXT,
    "result" TEXT,
    "replyTo" TEXT,
    "replyBy" TEXT,
    "replyDate" TIMESTAMPTZ(3),
    "status" TEXT,
    "imported" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Swap_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "StoredFile" (
    "name" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "contentType" TEXT NOT NULL,
    "content" BYTEA NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "StoredFile_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_hash_key" ON "ApiKey"("hash");

-- CreateIndex
CREATE INDEX "ApiKey_organizationId_idx" ON "ApiKey"("organizationId");

-- CreateIndex
CREATE INDEX "Country_name_idx" ON "Country"("name");

-- CreateIndex
CREATE INDEX "Currency_countryId_idx" ON "Currency"("countryId");

-- CreateIndex
CREATE INDEX "Currency_name_idx" ON "Currency"("name");

-- CreateIndex
CREATE INDEX "Currency_conversionId_idx" ON "Currency"("conversionId");

-- CreateIndex
CREATE INDEX "State_name_idx" ON "State"("name");

-- CreateIndex
CREATE UNIQUE INDEX "State_countryId_code_key" ON "State"("countryId", "code");

-- CreateIndex
CREATE INDEX "DocumentType_currencyId_idx" ON "DocumentType"("currencyId");

-- CreateIndex
CREATE INDEX "DocumentType_name_idx" ON "DocumentType"("name");

-- CreateIndex
CREATE UNIQUE INDEX "DocumentType_countryId_code_key" ON "DocumentType"("countryId", "code");

-- CreateIndex
CREATE INDEX "Customer_organizationId_testMode_createdAt_idx" ON "Customer"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Customer_countryId_idx" ON "Customer"("countryId");

-- CreateIndex
CREATE INDEX "Customer_stateId_idx" ON "Customer"("stateId");

-- CreateIndex
CREATE INDEX "Customer_currencyId_idx" ON "Customer"("currencyId");

-- CreateIndex
CREATE INDEX "Customer_organizationId_testMode_email_idx" ON "Customer"("organizationId", "testMode", "email");

-- CreateIndex
CREATE INDEX "Customer_organizationId_testMode_name_idx" ON "Customer"("organizationId", "testMode", "name");

-- CreateIndex
CREATE INDEX "Customer_organizationId_testMode_taxId_idx" ON "Customer"("organizationId", "testMode", "taxId");

-- CreateIndex
CREATE INDEX "Customer_testClockId_idx" ON "Customer"("testClockId");

-- CreateIndex
CREATE INDEX "DocumentCounter_documentTypeId_idx" ON "DocumentCounter"("documentTypeId");

-- CreateIndex
CREATE INDEX "Invoice_organizationId_testMode_createdAt_idx" ON "Invoice"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Invoice_organizationId_testMode_status_idx" ON "Invoice"("organizationId", "testMode", "status");

-- CreateIndex
CREATE INDEX "Invoice_organizationId_testMode_date_idx" ON "Invoice"("organizationId", "testMode", "date");

-- CreateIndex
CREATE INDEX "Invoice_customerId_status_idx" ON "Invoice"("customerId", "status");

-- CreateIndex
CREATE INDEX "Invoice_documentTypeId_idx" ON "Invoice"("documentTypeId");

-- CreateIndex
CREATE INDEX "Invoice_currencyId_idx" ON "Invoice"("currencyId");

-- CreateIndex
CREATE UNIQUE INDEX "Invoice_subscriptionId_billingCycle_key" ON "Invoice"("subscriptionId", "billingCycle");

-- CreateIndex
CREATE UNIQUE INDEX "Invoice_organizationId_testMode_documentTypeId_number_key" ON "Invoice"("organizationId", "testMode", "documentTypeId", "number");

-- CreateIndex
CREATE INDEX "InvoiceLine_invoiceId_position_idx" ON "InvoiceLine"("invoiceId", "position");

-- CreateIndex
CREATE INDEX "InvoiceLine_planId_idx" ON "InvoiceLine"("planId");

-- CreateIndex
CREATE INDEX "Order_organizationId_testMode_createdAt_idx" ON "Order"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Order_organizationId_testMode_status_idx" ON "Order"("organizationId", "testMode", "status");

-- CreateIndex
CREATE INDEX "Order_customerId_status_idx" ON "Order"("customerId", "status");

-- CreateIndex
CREATE INDEX "Order_documentTypeId_idx" ON "Order"("documentTypeId");

-- CreateIndex
CREATE INDEX "Order_currencyId_idx" ON "Order"("currencyId");

-- CreateIndex
CREATE INDEX "Order_invoiceId_idx" ON "Order"("invoiceId");

-- CreateIndex
CREATE UNIQUE INDEX "Order_organizationId_testMode_documentTypeId_number_key" ON "Order"("organizationId", "testMode", "documentTypeId", "number");

-- CreateIndex
CREATE INDEX "OrderLine_orderId_position_idx" ON "OrderLine"("orderId", "position");

-- CreateIndex
CREATE INDEX "CreditNote_organizationId_testMode_createdAt_idx" ON "CreditNote"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "CreditNote_invoiceId_status_idx" ON "CreditNote"("invoiceId", "status");

-- CreateIndex
CREATE INDEX "CreditNote_documentTypeId_idx" ON "CreditNote"("documentTypeId");

-- CreateIndex
CREATE INDEX "CreditNote_currencyId_idx" ON "CreditNote"("currencyId");

-- CreateIndex
CREATE UNIQUE INDEX "CreditNote_organizationId_testMode_documentTypeId_number_key" ON "CreditNote"("organizationId", "testMode", "documentTypeId", "number");

-- CreateIndex
CREATE INDEX "CreditNoteLine_creditNoteId_position_idx" ON "CreditNoteLine"("creditNoteId", "position");

-- CreateIndex
CREATE INDEX "Source_organizationId_testMode_createdAt_idx" ON "Source"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Source_customerId_idx" ON "Source"("customerId");

-- CreateIndex
CREATE INDEX "Payment_organizationId_testMode_createdAt_idx" ON "Payment"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Payment_organizationId_testMode_status_idx" ON "Payment"("organizationId", "testMode", "status");

-- CreateIndex
CREATE INDEX "Payment_customerId_status_idx" ON "Payment"("customerId", "status");

-- CreateIndex
CREATE INDEX "Payment_invoiceId_status_idx" ON "Payment"("invoiceId", "status");

-- CreateIndex
CREATE INDEX "Payment_sourceId_idx" ON "Payment"("sourceId");

-- CreateIndex
CREATE INDEX "Payment_currencyId_idx" ON "Payment"("currencyId");

-- CreateIndex
CREATE UNIQUE INDEX "PaymentCharge_paymentId_key" ON "PaymentCharge"("paymentId");

-- CreateIndex
CREATE INDEX "Product_organizationId_testMode_createdAt_idx" ON "Product"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Product_organizationId_testMode_name_idx" ON "Product"("organizationId", "testMode", "name");

-- CreateIndex
CREATE INDEX "Product_organizationId_testMode_status_idx" ON "Product"("organizationId", "testMode", "status");

-- CreateIndex
CREATE INDEX "Product_organizationId_testMode_archivedAt_idx" ON "Product"("organizationId", "testMode", "archivedAt");

-- CreateIndex
CREATE INDEX "Plan_organizationId_testMode_createdAt_idx" ON "Plan"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Plan_productId_idx" ON "Plan"("productId");

-- CreateIndex
CREATE INDEX "Plan_currencyId_idx" ON "Plan"("currencyId");

-- CreateIndex
CREATE INDEX "Addon_organizationId_testMode_createdAt_idx" ON "Addon"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Addon_currencyId_idx" ON "Addon"("currencyId");

-- CreateIndex
CREATE INDEX "Coupon_organizationId_testMode_createdAt_idx" ON "Coupon"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Coupon_currencyId_idx" ON "Coupon"("currencyId");

-- CreateIndex
CREATE INDEX "TestClock_organizationId_idx" ON "TestClock"("organizationId");

-- CreateIndex
CREATE INDEX "Subscription_organizationId_testMode_createdAt_idx" ON "Subscription"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Subscription_status_nextBilling_idx" ON "Subscription"("status", "nextBilling");

-- CreateIndex
CREATE INDEX "Subscription_customerId_idx" ON "Subscription"("customerId");

-- CreateIndex
CREATE INDEX "Subscription_documentTypeId_idx" ON "Subscription"("documentTypeId");

-- CreateIndex
CREATE INDEX "Subscription_couponId_idx" ON "Subscription"("couponId");

-- CreateIndex
CREATE INDEX "SubscriptionLine_subscriptionId_idx" ON "SubscriptionLine"("subscriptionId");

-- CreateIndex
CREATE INDEX "SubscriptionLine_planId_idx" ON "SubscriptionLine"("planId");

-- CreateIndex
CREATE INDEX "SubscriptionLine_couponId_idx" ON "SubscriptionLine"("couponId");

-- CreateIndex
CREATE INDEX "SubscriptionAddon_subscriptionId_idx" ON "SubscriptionAddon"("subscriptionId");

-- CreateIndex
CREATE INDEX "SubscriptionAddon_addonId_idx" ON "SubscriptionAddon"("addonId");

-- CreateIndex
CREATE INDEX "Usage_subscriptionLineId_dateTime_idx" ON "Usage"("subscriptionLineId", "dateTime");

-- CreateIndex
CREATE INDEX "Usage_organizationId_testMode_dateTime_idx" ON "Usage"("organizationId", "testMode", "dateTime");

-- CreateIndex
CREATE INDEX "Usage_invoiceId_idx" ON "Usage"("invoiceId");

-- CreateIndex
CREATE INDEX "Reminder_organizationId_testMode_createdAt_idx" ON "Reminder"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Reminder_invoiceId_idx" ON "Reminder"("invoiceId");

-- CreateIndex
CREATE INDEX "Reminder_creditNoteId_idx" ON "Reminder"("creditNoteId");

-- CreateIndex
CREATE INDEX "Reminder_paymentId_idx" ON "Reminder"("paymentId");

-- CreateIndex
CREATE INDEX "Reminder_orderId_idx" ON "Reminder"("orderId");

-- CreateIndex
CREATE INDEX "OutboxMessage_status_nextAttemptAt_idx" ON "OutboxMessage"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "OutboxMessage_organizationId_idx" ON "OutboxMessage"("organizationId");

-- CreateIndex
CREATE INDEX "OutboxMessage_reminderId_idx" ON "OutboxMessage"("reminderId");

-- CreateIndex
CREATE UNIQUE INDEX "CustomerSession_keyHash_key" ON "CustomerSession"("keyHash");

-- CreateIndex
CREATE INDEX "CustomerSession_customerId_idx" ON "CustomerSession"("customerId");

-- CreateIndex
CREATE INDEX "CustomerSession_organizationId_testMode_createdAt_idx" ON "CustomerSession"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Caf_organizationId_testMode_documentTypeId_idx" ON "Caf"("organizationId", "testMode", "documentTypeId");

-- CreateIndex
CREATE INDEX "Caf_documentTypeId_idx" ON "Caf"("documentTypeId");

-- CreateIndex
CREATE INDEX "Certificate_organizationId_idx" ON "Certificate"("organizationId");

-- CreateIndex
CREATE INDEX "Purchase_swapId_idx" ON "Purchase"("swapId");

-- CreateIndex
CREATE UNIQUE INDEX "Purchase_organizationId_testMode_issuerTaxId_documentCode_f_key" ON "Purchase"("organizationId", "testMode", "issuerTaxId", "documentCode", "folio");

-- CreateIndex
CREATE INDEX "Swap_organizationId_testMode_createdAt_idx" ON "Swap"("organizationId", "testMode", "createdAt");

-- CreateIndex
CREATE INDEX "Swap_organizationId_testMode_status_idx" ON "Swap"("organizationId", "testMode", "status");

-- CreateIndex
CREATE INDEX "StoredFile_organizationId_testMode_idx" ON "StoredFile"("organizationId", "testMode");

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Currency" ADD CONSTRAINT "Currency_conversionId_fkey" FOREIGN KEY ("conversionId") REFERENCES "Currency"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Currency" ADD CONSTRAINT "Currency_countryId_fkey" FOREIGN KEY ("countryId") REFERENCES "Country"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "State" ADD CONSTRAINT "State_countryId_fkey" FOREIGN KEY ("countryId") REFERENCES "Country"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DocumentType" ADD CONSTRAINT "DocumentType_countryId_fkey" FOREIGN KEY ("countryId") REFERENCES "Country"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DocumentType" ADD CONSTRAINT "DocumentType_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Customer" ADD CONSTRAINT "Customer_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Customer" ADD CONSTRAINT "Customer_countryId_fkey" FOREIGN KEY ("countryId") REFERENCES "Country"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Customer" ADD CONSTRAINT "Customer_stateId_fkey" FOREIGN KEY ("stateId") REFERENCES "State"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Customer" ADD CONSTRAINT "Customer_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Customer" ADD CONSTRAINT "Customer_testClockId_fkey" FOREIGN KEY ("testClockId") REFERENCES "TestClock"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DocumentCounter" ADD CONSTRAINT "DocumentCounter_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DocumentCounter" ADD CONSTRAINT "DocumentCounter_documentTypeId_fkey" FOREIGN KEY ("documentTypeId") REFERENCES "DocumentType"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_documentTypeId_fkey" FOREIGN KEY ("documentTypeId") REFERENCES "DocumentType"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Invoice" ADD CONSTRAINT "Invoice_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "Subscription"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "InvoiceLine" ADD CONSTRAINT "InvoiceLine_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "InvoiceLine" ADD CONSTRAINT "InvoiceLine_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Order" ADD CONSTRAINT "Order_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Order" ADD CONSTRAINT "Order_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Order" ADD CONSTRAINT "Order_documentTypeId_fkey" FOREIGN KEY ("documentTypeId") REFERENCES "DocumentType"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Order" ADD CONSTRAINT "Order_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Order" ADD CONSTRAINT "Order_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrderLine" ADD CONSTRAINT "OrderLine_orderId_fkey" FOREIGN KEY ("orderId") REFERENCES "Order"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CreditNote" ADD CONSTRAINT "CreditNote_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CreditNote" ADD CONSTRAINT "CreditNote_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CreditNote" ADD CONSTRAINT "CreditNote_documentTypeId_fkey" FOREIGN KEY ("documentTypeId") REFERENCES "DocumentType"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CreditNote" ADD CONSTRAINT "CreditNote_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CreditNoteLine" ADD CONSTRAINT "CreditNoteLine_creditNoteId_fkey" FOREIGN KEY ("creditNoteId") REFERENCES "CreditNote"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Source" ADD CONSTRAINT "Source_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Source" ADD CONSTRAINT "Source_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Payment" ADD CONSTRAINT "Payment_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Payment" ADD CONSTRAINT "Payment_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Payment" ADD CONSTRAINT "Payment_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Payment" ADD CONSTRAINT "Payment_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Payment" ADD CONSTRAINT "Payment_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PaymentCharge" ADD CONSTRAINT "PaymentCharge_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Product" ADD CONSTRAINT "Product_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Plan" ADD CONSTRAINT "Plan_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Plan" ADD CONSTRAINT "Plan_productId_fkey" FOREIGN KEY ("productId") REFERENCES "Product"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Plan" ADD CONSTRAINT "Plan_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Addon" ADD CONSTRAINT "Addon_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Addon" ADD CONSTRAINT "Addon_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Coupon" ADD CONSTRAINT "Coupon_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Coupon" ADD CONSTRAINT "Coupon_currencyId_fkey" FOREIGN KEY ("currencyId") REFERENCES "Currency"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TestClock" ADD CONSTRAINT "TestClock_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_documentTypeId_fkey" FOREIGN KEY ("documentTypeId") REFERENCES "DocumentType"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_couponId_fkey" FOREIGN KEY ("couponId") REFERENCES "Coupon"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SubscriptionLine" ADD CONSTRAINT "SubscriptionLine_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "Subscription"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SubscriptionLine" ADD CONSTRAINT "SubscriptionLine_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SubscriptionLine" ADD CONSTRAINT "SubscriptionLine_couponId_fkey" FOREIGN KEY ("couponId") REFERENCES "Coupon"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SubscriptionAddon" ADD CONSTRAINT "SubscriptionAddon_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "Subscription"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SubscriptionAddon" ADD CONSTRAINT "SubscriptionAddon_addonId_fkey" FOREIGN KEY ("addonId") REFERENCES "Addon"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Usage" ADD CONSTRAINT "Usage_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Usage" ADD CONSTRAINT "Usage_subscriptionLineId_fkey" FOREIGN KEY ("subscriptionLineId") REFERENCES "SubscriptionLine"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Usage" ADD CONSTRAINT "Usage_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IdempotencyKey" ADD CONSTRAINT "IdempotencyKey_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reminder" ADD CONSTRAINT "Reminder_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reminder" ADD CONSTRAINT "Reminder_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "Invoice"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reminder" ADD CONSTRAINT "Reminder_creditNoteId_fkey" FOREIGN KEY ("creditNoteId") REFERENCES "CreditNote"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reminder" ADD CONSTRAINT "Reminder_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reminder" ADD CONSTRAINT "Reminder_orderId_fkey" FOREIGN KEY ("orderId") REFERENCES "Order"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OutboxMessage" ADD CONSTRAINT "OutboxMessage_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OutboxMessage" ADD CONSTRAINT "OutboxMessage_reminderId_fkey" FOREIGN KEY ("reminderId") REFERENCES "Reminder"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CustomerSession" ADD CONSTRAINT "CustomerSession_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CustomerSession" ADD CONSTRAINT "CustomerSession_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Caf" ADD CONSTRAINT "Caf_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Caf" ADD CONSTRAINT "Caf_documentTypeId_fkey" FOREIGN KEY ("documentTypeId") REFERENCES "DocumentType"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Certificate" ADD CONSTRAINT "Certificate_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Purchase" ADD CONSTRAINT "Purchase_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Purchase" ADD CONSTRAINT "Purchase_swapId_fkey" FOREIGN KEY ("swapId") REFERENCES "Swap"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Swap" ADD CONSTRAINT "Swap_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "StoredFile" ADD CONSTRAINT "StoredFile_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

