-- Whether a mode's DTEs go to SII (docs/sii-sending.md "Turning sending off"): "automatic" (every
-- existing mode, and the default) queues each DTE for the SII worker at finalize; "off" signs and
-- stores it without queueing it (tax_agency.status "not_sent"). Only test mode may be "off": a live
-- DTE must reach SII (domain/tax-profile.ts; the CHECK below keeps the rule in the database too).
ALTER TABLE "OrganizationSettings" ADD COLUMN "siiSending" TEXT NOT NULL DEFAULT 'automatic';
ALTER TABLE "OrganizationSettings" ADD CONSTRAINT "OrganizationSettings_siiSending_check"
  CHECK ("siiSending" = 'automatic' OR ("siiSending" = 'off' AND "testMode"));
