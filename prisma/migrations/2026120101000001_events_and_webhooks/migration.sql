-- Events and webhooks (docs/webhooks.md): the event log written in the transaction of each change,
-- webhook endpoints with their sealed signing secrets, one message per event and endpoint (claimed
-- by the delivery worker like the outbox) and every attempt's outcome.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

CREATE TABLE "Event" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "type" TEXT NOT NULL,
    "objectId" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "sequence" BIGSERIAL NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "Event_organizationId_testMode_sequence_idx" ON "Event"("organizationId", "testMode", "sequence");
CREATE INDEX "Event_organizationId_testMode_type_sequence_idx" ON "Event"("organizationId", "testMode", "type", "sequence");
CREATE INDEX "Event_organizationId_testMode_createdAt_idx" ON "Event"("organizationId", "testMode", "createdAt");
CREATE INDEX "Event_createdAt_idx" ON "Event"("createdAt");

ALTER TABLE "Event" ADD CONSTRAINT "Event_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "WebhookEndpoint" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "url" TEXT NOT NULL,
    "enabledEvents" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'enabled',
    "description" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "secret" BYTEA NOT NULL,
    "previousSecret" BYTEA,
    "previousSecretExpiresAt" TIMESTAMPTZ(3),
    "createdByEmail" TEXT NOT NULL,
    "failingSince" TIMESTAMPTZ(3),
    "disabledAt" TIMESTAMPTZ(3),
    "disabledReason" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "WebhookEndpoint_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "WebhookEndpoint_organizationId_testMode_createdAt_idx" ON "WebhookEndpoint"("organizationId", "testMode", "createdAt");

ALTER TABLE "WebhookEndpoint" ADD CONSTRAINT "WebhookEndpoint_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "WebhookMessage" (
    "eventId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookMessage_pkey" PRIMARY KEY ("eventId", "endpointId")
);

CREATE INDEX "WebhookMessage_status_nextAttemptAt_idx" ON "WebhookMessage"("status", "nextAttemptAt");
CREATE INDEX "WebhookMessage_endpointId_status_nextAttemptAt_idx" ON "WebhookMessage"("endpointId", "status", "nextAttemptAt");

ALTER TABLE "WebhookMessage" ADD CONSTRAINT "WebhookMessage_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "Event"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "WebhookMessage" ADD CONSTRAINT "WebhookMessage_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "WebhookAttempt" (
    "id" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "testMode" BOOLEAN NOT NULL,
    "attempt" INTEGER NOT NULL,
    "statusCode" INTEGER,
    "durationMs" INTEGER NOT NULL,
    "error" TEXT,
    "responseBody" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookAttempt_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "WebhookAttempt_endpointId_createdAt_idx" ON "WebhookAttempt"("endpointId", "createdAt");
CREATE INDEX "WebhookAttempt_eventId_idx" ON "WebhookAttempt"("eventId");

ALTER TABLE "WebhookAttempt" ADD CONSTRAINT "WebhookAttempt_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "Event"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "WebhookAttempt" ADD CONSTRAINT "WebhookAttempt_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;
