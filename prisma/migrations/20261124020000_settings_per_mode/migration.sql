-- Settings per mode (docs/decisions.md "Mode isolation of settings"): the tax profile and the
-- branding move from "Organization" to one "OrganizationSettings" row per organization and mode,
-- and certificates get a mode. A test key then changes only test mode's copy, never what a live
-- document is issued or signed with. Existing values become both modes' copies (live keeps each
-- certificate's id, test mode gets a copy under a new id), so nothing issued changes with the upgrade.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE TABLE "OrganizationSettings" (
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
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

    CONSTRAINT "OrganizationSettings_pkey" PRIMARY KEY ("organizationId","testMode")
);

ALTER TABLE "OrganizationSettings" ADD CONSTRAINT "OrganizationSettings_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- both modes start from the organization-wide values
INSERT INTO "OrganizationSettings" (
    "organizationId", "testMode", "businessName", "colorBackground", "colorAsset", "displayInvoices", "termsOfServiceUrl", "privacyPolicyUrl",
    "taxId", "taxBusinessName", "taxActivity", "taxActivityCode", "taxAddress", "taxCommune", "taxCity", "taxResolutionNumber", "taxResolutionDate",
    "createdAt", "updatedAt")
SELECT o."id", m."testMode", o."businessName", o."colorBackground", o."colorAsset", o."displayInvoices", o."termsOfServiceUrl", o."privacyPolicyUrl",
    o."taxId", o."taxBusinessName", o."taxActivity", o."taxActivityCode", o."taxAddress", o."taxCommune", o."taxCity", o."taxResolutionNumber", o."taxResolutionDate",
    o."createdAt", o."updatedAt"
FROM "Organization" o CROSS JOIN (VALUES (false), (true)) AS m("testMode");

ALTER TABLE "Organization"
    DROP COLUMN "businessName",
    DROP COLUMN "colorBackground",
    DROP COLUMN "colorAsset",
    DROP COLUMN "displayInvoices",
    DROP COLUMN "termsOfServiceUrl",
    DROP COLUMN "privacyPolicyUrl",
    DROP COLUMN "taxId",
    DROP COLUMN "taxBusinessName",
    DROP COLUMN "taxActivity",
    DROP COLUMN "taxActivityCode",
    DROP COLUMN "taxAddress",
    DROP COLUMN "taxCommune",
    DROP COLUMN "taxCity",
    DROP COLUMN "taxResolutionNumber",
    DROP COLUMN "taxResolutionDate";

-- certificates: the existing ones sign live documents, and a copy (new id, same sealed bytes) test ones
ALTER TABLE "Certificate" ADD COLUMN "testMode" BOOLEAN NOT NULL DEFAULT false;

INSERT INTO "Certificate" ("id", "organizationId", "testMode", "subjectRut", "encrypted", "validFrom", "validTo", "createdAt")
SELECT 'cer_' || substr(md5(random()::text || c."id"), 1, 24), c."organizationId", true, c."subjectRut", c."encrypted", c."validFrom", c."validTo", c."createdAt"
FROM "Certificate" c;

ALTER TABLE "Certificate" ALTER COLUMN "testMode" DROP DEFAULT;

DROP INDEX "Certificate_organizationId_idx";

CREATE INDEX "Certificate_organizationId_testMode_idx" ON "Certificate"("organizationId", "testMode");
