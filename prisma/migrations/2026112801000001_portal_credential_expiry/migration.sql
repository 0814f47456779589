-- Expired portal credentials are purged at every session-key exchange (docs/customer-portal.md):
-- the index finds them without reading the live ones.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE INDEX "PortalCredential_expiresAt_idx" ON "PortalCredential"("expiresAt");
