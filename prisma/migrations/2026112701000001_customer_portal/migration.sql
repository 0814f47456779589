-- The customer portal (docs/customer-portal.md): the credential a session key is exchanged for,
-- early revocation of a session, the default source of a customer and the branding setting that
-- lets customers cancel subscriptions in the portal.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "CustomerSession" ADD COLUMN "revokedAt" TIMESTAMPTZ(3);

ALTER TABLE "Customer" ADD COLUMN "defaultSourceId" TEXT;

ALTER TABLE "OrganizationSettings" ADD COLUMN "portalCancelSubscriptions" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "PortalCredential" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "customerId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "csrfHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PortalCredential_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "PortalCredential_tokenHash_key" ON "PortalCredential"("tokenHash");
CREATE INDEX "PortalCredential_sessionId_idx" ON "PortalCredential"("sessionId");
CREATE INDEX "PortalCredential_customerId_idx" ON "PortalCredential"("customerId");
CREATE INDEX "PortalCredential_organizationId_testMode_idx" ON "PortalCredential"("organizationId", "testMode");

ALTER TABLE "PortalCredential" ADD CONSTRAINT "PortalCredential_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PortalCredential" ADD CONSTRAINT "PortalCredential_customerId_fkey" FOREIGN KEY ("customerId") REFERENCES "Customer"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PortalCredential" ADD CONSTRAINT "PortalCredential_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "CustomerSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;
