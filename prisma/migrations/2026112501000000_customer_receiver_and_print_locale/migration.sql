-- The receiver's data a Chilean DTE carries (GiroRecep, CmnaRecep, CiudadRecep) as customer
-- columns: "activity" (giro, at most 40 characters), "commune" (for a Chilean customer one of
-- Chile's comunas, src/domain/chile-communes.ts) and "city", all optional. Existing customers keep
-- any activity, commune or city in "taxSettings": issuing and printing read the column first, then
-- that key (src/domain/issued-parties.ts receiverDetails), so nothing is copied or renumbered here.
-- The language printed documents use: "locale" on each mode's settings row, null meaning by the
-- document type's country (src/domain/printed-labels.ts).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "Customer" ADD COLUMN "activity" TEXT;
ALTER TABLE "Customer" ADD COLUMN "commune" TEXT;
ALTER TABLE "Customer" ADD COLUMN "city" TEXT;

ALTER TABLE "OrganizationSettings" ADD COLUMN "locale" TEXT;
