-- Sending issued DTEs to SII (docs/sii-sending.md): one row per DTE, written when the document
-- is finalized, uploaded in an EnvioDTE by the SII worker and polled until SII decides.
CREATE TABLE "SiiSubmission" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "documentKind" TEXT NOT NULL,
    "documentId" TEXT NOT NULL,
    "dteType" INTEGER NOT NULL,
    "folio" INTEGER NOT NULL,
    "dteFile" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "trackId" TEXT,
    "envelopeFile" TEXT,
    "sentAt" TIMESTAMPTZ(3),
    "siiStatus" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "SiiSubmission_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "SiiSubmission_documentKind_documentId_key" ON "SiiSubmission"("documentKind", "documentId");
CREATE INDEX "SiiSubmission_status_nextAttemptAt_idx" ON "SiiSubmission"("status", "nextAttemptAt");
CREATE INDEX "SiiSubmission_organizationId_testMode_trackId_idx" ON "SiiSubmission"("organizationId", "testMode", "trackId");

ALTER TABLE "SiiSubmission" ADD CONSTRAINT "SiiSubmission_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
