-- A receiver's answer (RecepcionDTE, ResultadoDTE, EnvioRecibos) names our DTE by type and folio:
-- docs/sii-exchange.md "Inbound" looks the document up by them.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE INDEX "SiiSubmission_organizationId_testMode_dteType_folio_idx" ON "SiiSubmission"("organizationId", "testMode", "dteType", "folio");
