-- Subscription lines and addons keep the order they were given in (docs/subscriptions.md)
ALTER TABLE "SubscriptionLine" ADD COLUMN "position" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "SubscriptionAddon" ADD COLUMN "position" INTEGER NOT NULL DEFAULT 0;
