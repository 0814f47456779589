-- The DTE exchange with receivers (docs/sii-exchange.md) goes through the mail outbox: a message
-- of kind dte_exchange has no reminder, so it carries its own mode (the PDF is rendered in it)
-- and the stored files it attaches as they are (the EnvioDTE addressed to the receiver).
-- Existing messages are reminders.
-- No semicolons in comments: the PostgreSQL driver adapter splits scripts on them.

ALTER TABLE "OutboxMessage" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'reminder';
ALTER TABLE "OutboxMessage" ADD COLUMN "testMode" BOOLEAN;
ALTER TABLE "OutboxMessage" ADD COLUMN "files" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
