-- Verification of received supplier DTEs (docs/sii-receiving.md "Verification"): per purchase,
-- whether the issuer's XMLDSig signature and the TED (timbre) verified on import, and why not.
-- Null for purchases imported before verification existed (unknown, not re-checked here).
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "Purchase" ADD COLUMN "signatureValid" BOOLEAN;
ALTER TABLE "Purchase" ADD COLUMN "tedValid" BOOLEAN;
ALTER TABLE "Purchase" ADD COLUMN "verificationError" TEXT;
