-- Reminders (docs/reminders.md): which document's PDF an outgoing message attaches. The PDF is
-- rendered at delivery time from this reference. There is no foreign key, so a draft deleted
-- before delivery is still named (the message then goes without it).
ALTER TABLE "OutboxMessage" ADD COLUMN "attachmentKind" TEXT;
ALTER TABLE "OutboxMessage" ADD COLUMN "attachmentId" TEXT;
