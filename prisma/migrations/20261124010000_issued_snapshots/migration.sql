-- Issued documents never change (docs/decisions.md "Issued documents"): at finalize an invoice, order
-- or credit note keeps the customer and the issuer it was issued with (src/domain/issued-parties.ts).
ALTER TABLE "Invoice" ADD COLUMN "customerSnapshot" JSONB, ADD COLUMN "issuerSnapshot" JSONB;
ALTER TABLE "Order" ADD COLUMN "customerSnapshot" JSONB, ADD COLUMN "issuerSnapshot" JSONB;
ALTER TABLE "CreditNote" ADD COLUMN "customerSnapshot" JSONB, ADD COLUMN "issuerSnapshot" JSONB;

-- Backfill: documents finalized before this migration get a snapshot of the customer and the
-- tax profile as they are now (the closest record there is). The keys and formats are those of
-- customerSnapshot and issuerSnapshot in src/domain/issued-parties.ts (a test compares them).
-- A credit note's customer is its invoice's.
UPDATE "Invoice" AS d SET "customerSnapshot" = jsonb_build_object(
  'id', c."id", 'name', c."name", 'address', c."address", 'countryId', c."countryId", 'stateId', c."stateId",
  'stateCode', c."stateCode", 'currencyId', c."currencyId", 'email', c."email", 'phone', c."phone",
  'website', c."website", 'taxId', c."taxId", 'contacts', c."contacts", 'taxSettings', c."taxSettings",
  'metadata', c."metadata",
  'createdAt', to_char(c."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updatedAt', to_char(c."updatedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
FROM "Customer" AS c
WHERE c."id" = d."customerId" AND d."status" <> 'draft';

UPDATE "Order" AS d SET "customerSnapshot" = jsonb_build_object(
  'id', c."id", 'name', c."name", 'address', c."address", 'countryId', c."countryId", 'stateId', c."stateId",
  'stateCode', c."stateCode", 'currencyId', c."currencyId", 'email', c."email", 'phone', c."phone",
  'website', c."website", 'taxId', c."taxId", 'contacts', c."contacts", 'taxSettings', c."taxSettings",
  'metadata', c."metadata",
  'createdAt', to_char(c."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updatedAt', to_char(c."updatedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
FROM "Customer" AS c
WHERE c."id" = d."customerId" AND d."status" <> 'draft';

UPDATE "CreditNote" AS d SET "customerSnapshot" = jsonb_build_object(
  'id', c."id", 'name', c."name", 'address', c."address", 'countryId', c."countryId", 'stateId', c."stateId",
  'stateCode', c."stateCode", 'currencyId', c."currencyId", 'email', c."email", 'phone', c."phone",
  'website', c."website", 'taxId', c."taxId", 'contacts', c."contacts", 'taxSettings', c."taxSettings",
  'metadata', c."metadata",
  'createdAt', to_char(c."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updatedAt', to_char(c."updatedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
FROM "Invoice" AS i, "Customer" AS c
WHERE i."id" = d."invoiceId" AND c."id" = i."customerId" AND d."status" <> 'draft';

-- The issuer: the printed name is the tax business name, else the branding business name, else the
-- organization's name. Activity codes are stored comma-separated.
UPDATE "Invoice" AS d SET "issuerSnapshot" = jsonb_build_object(
  'name', COALESCE(o."taxBusinessName", o."businessName", o."name"), 'taxId', o."taxId",
  'businessName', o."taxBusinessName", 'activity', o."taxActivity",
  'activityCodes', to_jsonb(array_remove(string_to_array(COALESCE(o."taxActivityCode", ''), ','), '')),
  'address', o."taxAddress", 'commune', o."taxCommune", 'city', o."taxCity",
  'resolutionNumber', o."taxResolutionNumber", 'resolutionDate', to_char(o."taxResolutionDate", 'YYYY-MM-DD'))
FROM "Organization" AS o
WHERE o."id" = d."organizationId" AND d."status" <> 'draft';

UPDATE "Order" AS d SET "issuerSnapshot" = jsonb_build_object(
  'name', COALESCE(o."taxBusinessName", o."businessName", o."name"), 'taxId', o."taxId",
  'businessName', o."taxBusinessName", 'activity', o."taxActivity",
  'activityCodes', to_jsonb(array_remove(string_to_array(COALESCE(o."taxActivityCode", ''), ','), '')),
  'address', o."taxAddress", 'commune', o."taxCommune", 'city', o."taxCity",
  'resolutionNumber', o."taxResolutionNumber", 'resolutionDate', to_char(o."taxResolutionDate", 'YYYY-MM-DD'))
FROM "Organization" AS o
WHERE o."id" = d."organizationId" AND d."status" <> 'draft';

UPDATE "CreditNote" AS d SET "issuerSnapshot" = jsonb_build_object(
  'name', COALESCE(o."taxBusinessName", o."businessName", o."name"), 'taxId', o."taxId",
  'businessName', o."taxBusinessName", 'activity', o."taxActivity",
  'activityCodes', to_jsonb(array_remove(string_to_array(COALESCE(o."taxActivityCode", ''), ','), '')),
  'address', o."taxAddress", 'commune', o."taxCommune", 'city', o."taxCity",
  'resolutionNumber', o."taxResolutionNumber", 'resolutionDate', to_char(o."taxResolutionDate", 'YYYY-MM-DD'))
FROM "Organization" AS o
WHERE o."id" = d."organizationId" AND d."status" <> 'draft';
