-- One resource's events, newest first: the events query's `object` filter (an invoice's history on the
-- dashboard, docs/dashboard.md). No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.
CREATE INDEX "Event_organizationId_testMode_objectId_sequence_idx" ON "Event"("organizationId", "testMode", "objectId", "sequence");
