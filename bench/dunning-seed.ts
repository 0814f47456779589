/**
 * Seeds `count` customers with one overdue CLP invoice each straight into the database, for the dunning bench
 * (bench/dunning.ts, which runs it in its own process: bench/dunning-child.ts), with a few set-based SQL statements
 * (`INSERT ... SELECT ... FROM generate_series`, no API and no rows built in JavaScript): 100,000 customers take
 * seconds. The rows have the shape the services write:
 *
 * - the organization and an API key (services/api-keys.ts `createApiKey`, test mode) and the organization's default
 *   dunning campaign, made by services/dunning-campaigns.ts `createDunningCampaign` (threshold 0 CLP, `retry_card`,
 *   `send_email`, `days_between_attempts` 3, `max_attempts` 3, final action `none`);
 * - per customer (as `POST /v1/customers/` writes it): a Chilean customer; a reusable card source of the `test`
 *   gateway (as services/payments.ts `createSource` writes it: `data` {token, brand, last4}), `tok_visa` for even
 *   customers (charges succeed) and `tok_chargeDeclinedInsufficientFunds` for odd ones (soft declines); one
 *   finalized invoice (CL33, one line of 10,000 CLP + 19 % IVA = 11,900, dated 2026-11-01, due 2026-11-10,
 *   numbered in the `internal` series, with the customer and issuer snapshots finalize stores) with nothing paid;
 *   and the month before's invoice, paid by card on its due date (HISTORY_INVOICE).
 *
 * The invoices are not marked overdue: the dunning worker's overdue sweep does that (the bench runs it first).
 */
import type { PrismaClient } from "../src/infra/prisma/generated/client.js";
import { Prisma } from "../src/infra/prisma/generated/client.js";
import { DEFAULT_SETTINGS } from "../src/infra/config.js";
import { createApiKey } from "../src/services/api-keys.js";
import { createDunningCampaign } from "../src/services/dunning-campaigns.js";
import { runContext } from "../src/services/billing-run/run-context.js";
import { TEST_CARDS } from "../src/infra/gateways/test-cards.js";

export interface DunningSeedOptions {
  count: number;
  organizationName?: string;
}

export interface DunningSeeded {
  organizationId: string;
  campaignId: string;
}

/** The history invoices' numbers are 1 to this at most; the overdue invoices' come after. */
const HISTORY_NUMBERS = 10_000_000;

/** Customers inserted per statement (each statement inserts their sources, invoices and lines too). */
const CHUNK = 25_000;
/** The card of even customers (succeeds) and of odd ones (declines soft, insufficient_funds). */
export const SUCCEEDING_TOKEN = "tok_visa";
export const DECLINING_TOKEN = "tok_chargeDeclinedInsufficientFunds";
/**
 * The customer's history: an invoice of the month before with the same amounts, paid by card on its due date (a
 * succeeded payment and its charge), as a used database has. Without it the payments' tables start the round empty,
 * and the round's reads by id are planned (and their plans cached in the pool's connections) for an empty table:
 * sequential scans of a table that grows by a row per attempt until autovacuum's next analyze, a minute later.
 */
export const HISTORY_INVOICE = {
  date: "2026-10-01",
  dueDate: "2026-10-10",
} as const;

/** The seeded invoice: its net amount, IVA and total (CLP, decimal strings), date and due date. */
export const SEEDED_INVOICE = {
  net: "10000",
  tax: "1900",
  total: "11900",
  date: "2026-11-01",
  dueDate: "2026-11-10",
} as const;

/** The `data` of a test gateway source of `token`, as the test gateway's prepareSource makes it. */
function cardData(token: string): string {
  const card = TEST_CARDS[token];
  return JSON.stringify({ token, brand: card.brand, last4: card.last4 });
}

/**
 * The issuer snapshot finalize stores (domain/issued-parties.ts IssuedIssuer)
 * for an organization without a tax profile.
 */
function issuerSnapshot(name: string): string {
  return JSON.stringify({
    name,
    taxId: null,
    businessName: null,
    activity: null,
    activityCodes: [],
    address: null,
    commune: null,
    city: null,
    resolutionNumber: null,
    resolutionDate: null,
  });
}

/** Inserts the organization, its default campaign and `count` customers, each with a card and an overdue invoice. */
export async function seedOverdueCustomers(prisma: PrismaClient, options: DunningSeedOptions): Promise<DunningSeeded> {
  const name = options.organizationName ?? `Dunning seed ${Date.now()}`;
  const { organization } = await createApiKey(prisma, {
    organizationName: name,
    email: "seed@example.cl",
    mode: "test",
  });
  const ctx = runContext(prisma, DEFAULT_SETTINGS, () => new Date(), {
    organizationId: organization,
    testMode: true,
    userEmail: "seed@example.cl",
  });
  const campaign = await createDunningCampaign(ctx, {
    name: "Estándar",
    code: "standard",
    thresholds: [{ currency: "CLP", amount: "0" }],
    daysBetweenAttempts: 3,
    maxAttempts: 3,
    retryCard: true,
    sendEmail: true,
    finalAction: "none",
    appliedToOrganization: true,
  });
  for (let from = 0; from < options.count; from += CHUNK)
    await seedChunk(prisma, organization, name, from, Math.min(options.count, from + CHUNK) - 1);
  return { organizationId: organization, campaignId: campaign.id };
}

/** One statement: customers `from`..`to` (inclusive) with their source, invoice and invoice line. */
async function seedChunk(prisma: PrismaClient, organization: string, name: string, from: number, to: number) {
  // ids as newId makes them (prefix and 24 base62 characters; hex digits are base62 ones)
  const id = (prefix: string, salt: string) =>
    Prisma.sql`${`${prefix}_`} || substr(md5(random()::text || ${salt}::text || g.i::text), 1, 24)`;
  const { net, tax, total, date, dueDate } = SEEDED_INVOICE;
  await prisma.$executeRaw(Prisma.sql`
    WITH g AS MATERIALIZED (
      SELECT g.i, ${id("cus", "c")} AS "customerId", ${id("sou", "s")} AS "sourceId", ${id("inv", "i")} AS "invoiceId",
        ${id("lin", "l")} AS "lineId", ${id("inv", "h")} AS "historyId", ${id("lin", "k")} AS "historyLineId",
        ${id("pay", "p")} AS "paymentId", ${id("chg", "g")} AS "chargeId", now() AS "at"
      FROM generate_series(${from}::int, ${to}::int) AS g(i)
    ), c AS (
      INSERT INTO "Customer" ("id", "organizationId", "testMode", "name", "countryId", "taxId", "email", "createdAt",
        "updatedAt")
      SELECT "customerId", ${organization}, true, 'Cliente ' || i, 'CL', '76042235-5', 'cliente' || i || '@example.cl',
        "at", "at" FROM g
    ), s AS (
      INSERT INTO "Source" ("id", "organizationId", "testMode", "customerId", "status", "gateway", "usage", "flow",
        "data", "createdAt", "updatedAt")
      SELECT "sourceId", ${organization}, true, "customerId", 'chargeable', 'test', 'reusable', 'none',
        CASE WHEN i % 2 = 0 THEN ${cardData(SUCCEEDING_TOKEN)}::jsonb ELSE ${cardData(DECLINING_TOKEN)}::jsonb END,
        "at", "at" FROM g
    ), l AS (
      INSERT INTO "InvoiceLine" ("id", "invoiceId", "organizationId", "position", "name", "quantity", "amount", "total",
        "createdAt", "updatedAt")
      SELECT "lineId", "invoiceId", ${organization}, 0, 'Servicio', 1, ${net}::numeric, ${net}::numeric, "at", "at"
      FROM g
      UNION ALL
      SELECT "historyLineId", "historyId", ${organization}, 0, 'Servicio', 1, ${net}::numeric, ${net}::numeric, "at",
        "at"
      FROM g
    ), p AS (
      INSERT INTO "Payment" ("id", "organizationId", "testMode", "customerId", "invoiceId", "sourceId", "amount",
        "currencyId", "date", "paymentDate", "status", "userEmail", "createdAt", "updatedAt")
      SELECT "paymentId", ${organization}, true, "customerId", "historyId", "sourceId", ${total}::numeric, 'CLP',
        ${HISTORY_INVOICE.dueDate}::date, ${HISTORY_INVOICE.dueDate}::timestamptz, 'succeeded', 'seed@example.cl',
        "at", "at"
      FROM g
    ), pc AS (
      INSERT INTO "PaymentCharge" ("id", "paymentId", "organizationId", "attempt", "sourceId", "gateway", "amount",
        "currencyId", "reference", "status", "createdAt", "updatedAt")
      SELECT "chargeId", "paymentId", ${organization}, 1, "sourceId", 'test', ${total}::numeric, 'CLP',
        'ch_' || substr(md5("chargeId"), 1, 24), 'succeeded', "at", "at"
      FROM g
    )
    INSERT INTO "Invoice" ("id", "organizationId", "testMode", "customerId", "documentTypeId", "currencyId", "number",
      "numbering", "date", "dueDate", "amount", "tax", "taxPercent", "subtotal", "total", "status", "userEmail",
      "finalizedAt", "overdueCheckedAt", "customerSnapshot", "issuerSnapshot", "createdAt", "updatedAt")
    SELECT v."id", ${organization}, true, "customerId", 'CL33', 'CLP', v."number", 'internal', v."date", v."dueDate",
      ${net}::numeric, ${tax}::numeric, 19, ${net}::numeric, ${total}::numeric, 'finalized', 'seed@example.cl', "at",
      v."checked",
      jsonb_build_object('id', "customerId", 'name', 'Cliente ' || i, 'address', null, 'countryId', 'CL',
        'stateId', null, 'stateCode', null, 'currencyId', null, 'email', 'cliente' || i || '@example.cl',
        'phone', null, 'website', null, 'taxId', '76042235-5', 'activity', null, 'commune', null, 'city', null,
        'contacts', '[]'::jsonb, 'taxSettings', '{}'::jsonb, 'metadata', '{}'::jsonb,
        'createdAt', to_char("at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'updatedAt', to_char("at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
      ${issuerSnapshot(name)}::jsonb, "at", "at"
    FROM g CROSS JOIN LATERAL (VALUES
      -- the month before's invoice (numbers 1, 2, ...), swept on its due date and paid by then
      ("historyId", i + 1, ${HISTORY_INVOICE.date}::date, ${HISTORY_INVOICE.dueDate}::date,
        ${HISTORY_INVOICE.dueDate}::timestamptz),
      -- the overdue one, numbered after every customer's history invoice, not swept yet
      ("invoiceId", ${HISTORY_NUMBERS} + i + 1, ${date}::date, ${dueDate}::date, NULL::timestamptz)
    ) AS v("id", "number", "date", "dueDate", "checked")`);
}
