-- Catalogue (docs/catalogue.md).
-- An addon's rates: the shares its amount is billed in over given cycles,
-- [{cycle, percent}] or [{cycle, amount}], empty for all at once. A subscription addon copies them.
ALTER TABLE "Addon" ADD COLUMN "rates" JSONB NOT NULL DEFAULT '[]';

-- A product's plans print in the order they were given (nested create), then as added.
ALTER TABLE "Plan" ADD COLUMN "position" INTEGER NOT NULL DEFAULT 0;
