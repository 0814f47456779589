/**
 * SQL fragments of revenue analytics (docs/analytics.md) shared by the live statements (services/revenue-analytics.ts,
 * the reference and rebuild path) and the maintained aggregates (services/revenue-aggregates.ts), so that a rule
 * written in SQL is written once. Each repeats a rule of domain/revenue-analytics.ts and names it.
 *
 * Aliases the fragments expect: `i` the cycle invoice, `s` its subscription, `dt` its document type, `l` a line of
 * it, `p` the line's plan, `org` a row with the organization's time zone `tz`.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { MRR_FREQUENCY_FACTORS } from "../domain/revenue-analytics.js";

/** The month index (year * 12 + month - 1, domain/revenue-analytics.ts `monthIndex`) of a date column. */
export const monthIndexOf = (column: string): string =>
  `(EXTRACT(YEAR FROM ${column}) * 12 + EXTRACT(MONTH FROM ${column}) - 1)::int`;

/** The last day of the month whose index is the integer expression `k` (domain `monthAt(k).last`). */
export const monthEndOf = (k: string): string =>
  `(make_date(${k} / 12, ${k} % 12 + 1, 1) + interval '1 month' - interval '1 day')::date`;

/** A plan line's monthly amount: `net` times its plan's frequency factor (MRR_FREQUENCY_FACTORS). */
export const MONTHLY = Prisma.raw(
  `CASE "frequency" ${Object.entries(MRR_FREQUENCY_FACTORS)
    .map(([frequency, f]) => `WHEN '${frequency}' THEN net * ${f.numerator} / ${f.denominator}`)
    .join(" ")} END`,
);

/**
 * A cycle invoice's licensed plan lines, with their subscription and document type (docs/analytics.md "Recurring
 * revenue": the plan lines of the period the invoice bills, proration lines excluded).
 */
export const PLAN_LINE_JOINS = Prisma.sql`
  JOIN "Subscription" s ON s."id" = i."subscriptionId"
  JOIN "DocumentType" dt ON dt."id" = i."documentTypeId"
  JOIN "InvoiceLine" l ON l."invoiceId" = i."id" AND l."planId" IS NOT NULL AND l."periodStart" = i."periodStart"
  JOIN "Plan" p ON p."id" = l."planId" AND p."usageScheme" = 'licensed'`;

/** A plan line's net of tax: boletas' lines (prices include tax) divided by 1 + tax percent / 100. */
export const PLAN_LINE_NET = Prisma.sql`CASE WHEN dt."pricesIncludeTax" AND NOT l."exempt"
  THEN l."total" * 100 / (100 + i."taxPercent") ELSE l."total" END`;

/** Which of the organization's invoices are cycle invoices that count: finalized, of a billing cycle. */
export const CYCLE_INVOICE = Prisma.sql`i."status" = 'finalized' AND i."billingCycle" IS NOT NULL`;

/**
 * The day `last` (a date expression) is covered by the cycle invoice `i` and its subscription `s` counts then:
 * `[periodStart, periodEnd)` contains it, and the subscription is neither cancelled nor paused by then (in the
 * organization's time zone; a subscription paused without a pause time counts in no month).
 */
export const countsAt = (last: string): Prisma.Sql =>
  Prisma.raw(`i."periodStart" <= ${last} AND i."periodEnd" > ${last}
    AND (s."cancelled" IS NULL OR (s."cancelled" AT TIME ZONE org.tz)::date > ${last})
    AND NOT (s."status" = 'paused' AND COALESCE((s."paused" AT TIME ZONE org.tz)::date <= ${last}, true))`);

/**
 * domain/revenue-analytics.ts `mrrMovement` of one customer's (prev, cur) pair: new, expansion, contraction and
 * churned, in that order.
 */
export const MOVEMENT = {
  newMrr: Prisma.sql`CASE WHEN prev = 0 AND cur > 0 THEN cur ELSE 0 END`,
  expansionMrr: Prisma.sql`CASE WHEN prev > 0 AND cur > prev THEN cur - prev ELSE 0 END`,
  contractionMrr: Prisma.sql`CASE WHEN cur > 0 AND cur < prev THEN prev - cur ELSE 0 END`,
  churnedMrr: Prisma.sql`CASE WHEN prev > 0 AND cur = 0 THEN prev ELSE 0 END`,
};

/** A finalized note's kind (domain/revenue-analytics.ts MoneyFlow `kind`), `dt` its document type. */
export const NOTE_KIND = Prisma.sql`CASE WHEN dt."isCreditNote" THEN 'credit_note' ELSE 'debit_note' END`;

/** A month's MRR sums as the statements return them: month index k (1 = the first month asked for). */
export interface MrrRow {
  k: number;
  mrr: string;
  newMrr: string | null;
  expansionMrr: string | null;
  contractionMrr: string | null;
  churnedMrr: string | null;
  activeSubscriptions: number;
  activeCustomers: number;
}
