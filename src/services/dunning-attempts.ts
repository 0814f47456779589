/**
 * Dunning attempts (docs/dunning.md "Attempts"): the dunning worker's second step, after the overdue sweep.
 *
 * - **Entry.** A customer whose overdue amount in a currency (the `amount_due` of their finalized invoices marked
 *   overdue by the sweep, not marked uncollectible) reaches their campaign's threshold in that currency
 *   (domain/dunning.ts `thresholdReached`) gets a run (`DunningRun`, `active`), its first attempt due at once. The
 *   campaign is the customer's `dunningCampaignId`, else the organization and mode's default; none when the customer
 *   is excluded. One active run per customer and currency (a partial unique index; the insert skips a conflict). An
 *   invoice that went through a finished run's last attempt does not start another run by itself.
 * - **Attempts.** A due run (its `nextAttemptAt` reached at the customer's time: its test clock's, else the wall
 *   clock) is claimed with a lease and a fencing token (`UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)`).
 *   The attempt covers all the customer's overdue invoices in the currency: with `retry_card` and a usable reusable
 *   source (services/cycle-decision.ts `usableSourcesOf`, less those that declined hard in this run), each invoice is
 *   charged for what is due, **outside any transaction**, with a payment of a known id
 *   (`derivedId("pay", run/number/invoice)`): a retry after a crash finds it and takes its recorded answer, or asks
 *   the gateway again about its pending charge with the same charge id (payments.ts `resumeStaleCharge`), as the
 *   billing run's collection does (billing-run/collect.ts). One transaction then checks the claim's token, writes the
 *   attempt row (unique per run and number), its `dunning.attempt` event, and moves the run: `paid` when nothing is
 *   left due, `finished` after the campaign's last attempt (its final action applied in that transaction:
 *   subscriptions paused or cancelled through their use cases, invoices marked uncollectible), with
 *   `dunning.finished`; else the next attempt is due `days_between_attempts` days later.
 * - **A page at a time.** The runs of a claim (DUNNING_RUN_PAGE) are attempted together, set-based
 *   (docs/performance.md "Dunning attempts"): the page is read with a few queries, the payments and pending charges
 *   of its invoices created in one transaction, the gateway asked outside any transaction several at a time, the
 *   answers recorded in one transaction, and the attempts, e-mails, events and run moves written in one, each run
 *   fenced by its claim token; a customer's second invoice is charged in a second wave (after a hard decline,
 *   with another card). The rules are the single-payment ones' batch forms (payments.ts createPayments,
 *   authorizeManyLocked, finishCharges; dunning-mail.ts queueDunningEmails; cycle-decision.ts usableSourcesOf).
 *   The page's transactions are infra/sql/ `directTransaction`s (their hand-written statements and
 *   inserts, infra/sql/insert-rows.ts, go straight to pg on PostgreSQL), and on PostgreSQL a process works on
 *   DUNNING_PAGES_IN_FLIGHT pages at once (claim loops, each fenced by its own claims like another process).
 * - **Paid between attempts.** A run whose invoices are all paid (by any means) before its next attempt is closed at
 *   the next round by a closing row (the next number, nothing charged, outcome `paid`) and `dunning.finished` only.
 *
 * - **E-mail.** In the attempt's transaction, with the campaign's `send_email`, what is still due is queued as one
 *   e-mail to the customer (services/dunning-mail.ts): the attempt row records `email` (queued, off, no_address,
 *   not_needed), and the outbox sends it with the invoices' PDFs and a portal pay link.
 */
import { randomUUID } from "node:crypto";
import { Prisma, type Payment, type PrismaClient } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import { derivedId, newId } from "../infra/ids.js";
import { directQueryOf, directTransaction, insertRows, sqlRows } from "../infra/sql/index.js";
import {
  attemptOutcome,
  finalActionTargets,
  nextAttemptAt,
  runAfterAttempt,
  type AttemptInvoice,
  type AttemptOutcome,
  type DunningRunStatus,
  type FinalAction,
} from "../domain/dunning.js";
import { declineKind } from "../domain/declines.js";
import { ValidationError } from "../domain/errors.js";
import { isIsoDate } from "../domain/formats.js";
import { Decimal, sum, toDecimal } from "../domain/money.js";
import { withinTransaction, type ServiceContext } from "./context.js";
import { usableSourcesOf } from "./cycle-decision.js";
import { printedObjects, recordEvents } from "./events.js";
import { NOTES_JOIN, invoiceBalances, lockInvoices } from "./invoice-balances.js";
import { markInvoiceUncollectible } from "./invoices.js";
import {
  authorizeLocked,
  authorizeManyLocked,
  createPayments,
  finishCharge,
  finishCharges,
  resumeStaleCharge,
  type PendingCharge,
} from "./payments.js";
import { cancelSubscription, pauseSubscription } from "./subscriptions.js";
import { runContext } from "./billing-run/run-context.js";
import { queueDunningEmails } from "./dunning-mail.js";
import type { AttemptEmail } from "../domain/dunning-mail.js";

/** Runs claimed per query. */
export const DUNNING_RUN_PAGE = 50;

/**
 * How long (ms, wall clock) a claim of a run lasts: a process that dies mid-attempt leaves the run to another
 * process after this, which resumes its charges (same payment and charge ids).
 */
export const DUNNING_LEASE_MS = 10 * 60_000;

/**
 * Pages of runs attempted at once in a process on PostgreSQL (claim loops, each with its own page): one page's
 * gateway calls and CPU work overlap the other's waits for the database (docs/performance.md "Dunning attempts").
 * On PGlite (one connection) one page at a time.
 */
export const DUNNING_PAGES_IN_FLIGHT = 2;

/**
 * Runs entered in one round from which the round analyzes `DunningRun` before its claims (PostgreSQL's advice after a
 * bulk load). The claims' plan depends on how many active runs the planner thinks there are: right after a large
 * entry into a table autovacuum has not analyzed yet, it guesses a few dozen, reads every active run by a bitmap and
 * sorts them, testing each run not yet due for "nothing left due" on every claim (a round grew with the square of its
 * runs: 54.6 ms a claim at 10,000, docs/performance.md "Dunning attempts"). With the statistics, a claim walks the
 * index in order and stops after its page.
 */
export const DUNNING_ANALYZE_ENTRY = 1_000;

/** The cancel (and pause) reason the final actions give. */
export const DUNNING_REASON = "unpaid";

export interface DunningAttemptsOptions {
  prisma: PrismaClient;
  settings: AppSettings;
  /** the wall clock: leases, and the time of customers without a test clock */
  now: () => Date;
  /**
   * "today" for every customer (yyyy-mm-dd, `dunning run --until`): the time of every customer is that day's
   * start (00:00 UTC). Default: the wall clock, a test clock's customers at their clock's time.
   */
  until?: string;
  /** only this test clock's customers (advancing the clock) */
  testClockId?: string;
  /** checked before each page of runs: a stopping process finishes the page it is in and claims no other */
  signal?: AbortSignal;
  /** DUNNING_LEASE_MS unless given */
  leaseMs?: number;
  /**
   * true: a mailer is configured, the attempts' e-mails wait in the outbox as `pending` for its worker; false
   * (default): they are written `kept` and never sent, as reminders are without SMTP_URL
   */
  sendsMail?: boolean;
  /**
   * pages attempted at once (claim loops); default DUNNING_PAGES_IN_FLIGHT when `prisma` is the PostgreSQL pool's
   * client (infra/sql/: it has a direct query), else 1 (PGlite's one connection)
   */
  pagesInFlight?: number;
  /** runs entered from which the round analyzes `DunningRun` before its claims; DUNNING_ANALYZE_ENTRY unless given */
  analyzeAfterEntry?: number;
  /** told of each run whose attempt failed (the server logs it) */
  onError?: (runId: string, error: unknown) => void;
}

/** What a round did. */
export interface DunningAttemptsSummary {
  /** runs started (customers that entered a campaign in a currency) */
  entered: number;
  /** attempts made (a closing row of a run paid between attempts is not one) */
  attempts: number;
  /** runs ended `paid` */
  paid: number;
  /** runs ended `finished` (their final action applied) */
  finished: number;
  /** card charges that succeeded */
  charged: number;
  /** card charges declined */
  declined: number;
  /** runs whose attempt could not be completed (an error; retried once their claim lapses) */
  failed: number;
  /** e-mails queued (one per attempt that left something due, when the campaign sends e-mails) */
  emails: number;
}

/** The SQL of an invoice's amount due (services/invoice-balances.ts, domain/payments.ts invoiceAmountDue). */
const DUE = Prisma.sql`GREATEST(0,
  i."total" + COALESCE(cn.debited, 0) - COALESCE(cn.credited, 0) - COALESCE(p.paid, 0))`;

/** The joins DUE reads (finalized credit and debit notes, succeeded payments of invoice `i`). */
const BALANCE_JOINS = Prisma.sql`
    ${Prisma.raw(NOTES_JOIN)}
    LEFT JOIN LATERAL (
      SELECT SUM(pay."amount") AS paid FROM "Payment" pay WHERE pay."invoiceId" = i."id" AND pay."status" = 'succeeded'
    ) p ON true`;

/** Invoice `i` is overdue: finalized, marked overdue by the sweep, not marked uncollectible. */
const OVERDUE = Prisma.sql`i."status" = 'finalized' AND i."paymentOverdueAt" IS NOT NULL
  AND i."markedUncollectibleAt" IS NULL`;

/** The customers' time: `until`'s start, else their test clock's time, else the wall clock `now`. */
function customerTime(options: DunningAttemptsOptions, now: Date): Prisma.Sql {
  if (options.until) return Prisma.sql`${`${options.until}T00:00:00Z`}::timestamptz`;
  return Prisma.sql`COALESCE(t."frozenTime", ${now}::timestamptz)`;
}

/**
 * Runs the dunning attempts once (see the module's comment): starts the runs of customers whose overdue amount
 * reached their campaign's threshold, then makes every due attempt, a claimed page at a time (attemptPage), until
 * none is left or `signal` aborts. Errors: 400 on `until` when it is not a date yyyy-mm-dd. A run whose attempt
 * fails (a gateway error) is counted in `failed` and left to a later round.
 */
export async function runDunningAttempts(options: DunningAttemptsOptions): Promise<DunningAttemptsSummary> {
  if (options.until !== undefined && !isIsoDate(options.until))
    throw ValidationError.field("until", `must be a date yyyy-mm-dd, got ${options.until}`);
  const summary: DunningAttemptsSummary = {
    entered: 0,
    attempts: 0,
    paid: 0,
    finished: 0,
    charged: 0,
    declined: 0,
    failed: 0,
    emails: 0,
  };
  summary.entered = await enterRuns(options);
  if (summary.entered >= (options.analyzeAfterEntry ?? DUNNING_ANALYZE_ENTRY))
    await options.prisma.$executeRawUnsafe(`ANALYZE "DunningRun"`);
  const lanes = options.pagesInFlight ?? (directQueryOf(options.prisma) ? DUNNING_PAGES_IN_FLIGHT : 1);
  await Promise.all(Array.from({ length: lanes }, () => attemptPages(options, summary)));
  return summary;
}

/**
 * One claim loop of runDunningAttempts: claims a page of due runs and makes its attempts, until a claim finds fewer
 * than a page or `signal` aborts. Several run at once in a process (DUNNING_PAGES_IN_FLIGHT); each claim takes runs
 * no other holds (`SKIP LOCKED`, claim tokens), as between processes.
 */
async function attemptPages(options: DunningAttemptsOptions, summary: DunningAttemptsSummary): Promise<void> {
  for (;;) {
    if (options.signal?.aborted) break;
    const claimed = await claimRuns(options);
    if (claimed.length) await attemptPageOrEach(options, claimed, summary);
    if (claimed.length < DUNNING_RUN_PAGE) break;
  }
}

/**
 * Starts a run for every customer and currency whose overdue amount reaches the threshold of the customer's
 * campaign and that has no active run, with at least one overdue invoice that no finished run's last attempt
 * covered. Returns how many started.
 *
 * One statement, `INSERT ... SELECT`: the customers to start are found and their runs written in the database,
 * so nothing per customer comes back to this process (its memory does not grow with them, and 100,000 customers
 * are one round trip; docs/performance.md "Dunning attempts"). The threshold is checked in the SQL as
 * domain/dunning.ts `thresholdReached` checks it (something overdue, and at least the threshold); the run ids are
 * `dnr_` and 24 hex digits of PostgreSQL's `gen_random_uuid()` (cryptographic randomness, as newId's are).
 */
async function enterRuns(options: DunningAttemptsOptions): Promise<number> {
  const now = options.now();
  const clock = options.testClockId ? Prisma.sql`AND c."testClockId" = ${options.testClockId}` : Prisma.empty;
  return options.prisma.$executeRaw(Prisma.sql`
    INSERT INTO "DunningRun" ("id", "organizationId", "testMode", "customerId", "campaignId", "currencyId",
      "status", "attempts", "nextAttemptAt", "hardDeclinedSourceIds", "createdAt", "updatedAt")
    SELECT 'dnr_' || substr(md5(gen_random_uuid()::text), 1, 24), e."organizationId", e."testMode", e."customerId",
      e."campaignId", e."currencyId", 'active', 0, e."at", ARRAY[]::text[], ${now}::timestamptz, ${now}::timestamptz
    FROM (${entrySelect(options, now, clock)}) e
    WHERE e."overdue" > 0 AND e."overdue" >= e."threshold"
    ON CONFLICT ("customerId", "currencyId") WHERE "status" = 'active' DO NOTHING`);
}

/**
 * The customers and currencies that may enter (enterRuns), with their campaign, its threshold, their overdue
 * amount and their time.
 */
function entrySelect(options: DunningAttemptsOptions, now: Date, clock: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT c."id" AS "customerId", c."organizationId", c."testMode", i."currencyId", camp."id" AS "campaignId",
      th."amount" AS "threshold", SUM(${DUE}) AS "overdue", ${customerTime(options, now)} AS "at"
    FROM "Customer" c
    LEFT JOIN "TestClock" t ON t."id" = c."testClockId"
    JOIN "DunningCampaign" camp ON camp."id" = COALESCE(c."dunningCampaignId",
      (SELECT d."id" FROM "DunningCampaign" d WHERE d."organizationId" = c."organizationId"
        AND d."testMode" = c."testMode" AND d."appliedToOrganization"))
    JOIN "Invoice" i ON i."customerId" = c."id" AND ${OVERDUE}
    JOIN "DunningCampaignThreshold" th ON th."campaignId" = camp."id" AND th."currencyId" = i."currencyId"
    ${BALANCE_JOINS}
    WHERE NOT c."excludeFromDunning" ${clock}
      AND NOT EXISTS (SELECT 1 FROM "DunningRun" r WHERE r."customerId" = c."id" AND r."currencyId" = i."currencyId"
        AND r."status" = 'active')
      AND ${DUE} > 0
    GROUP BY c."id", c."organizationId", c."testMode", i."currencyId", camp."id", th."amount", t."frozenTime"
    HAVING bool_or(NOT EXISTS (SELECT 1 FROM "DunningAttempt" a JOIN "DunningRun" f ON f."id" = a."runId"
      WHERE a."customerId" = c."id" AND f."status" = 'finished' AND a."finalAction" IS NOT NULL
        AND a."invoices" @> jsonb_build_array(jsonb_build_object('invoice', i."id"))))`;
}

/** A claimed run with what its attempt needs. */
interface ClaimedRun {
  id: string;
  organizationId: string;
  testMode: boolean;
  customerId: string;
  campaignId: string;
  currencyId: string;
  attempts: number;
  hardDeclinedSourceIds: string[];
  claimToken: string;
  retryCard: boolean;
  sendEmail: boolean;
  bccEmails: string[];
  maxAttempts: number;
  daysBetweenAttempts: number;
  finalAction: string;
  at: Date;
  userEmail: string | null;
}

/**
 * Claims up to DUNNING_RUN_PAGE active runs whose claim is free and whose next attempt is due at the customer's
 * time, or whose invoices have nothing left due (to close them): sets their lease and a fresh token in one
 * statement (rows locked by another claimer are skipped). Returns them with their campaign and customer's time.
 * The active runs are read in the order of the partial index `DunningRun_active_next_attempt_idx` (migration
 * 2026120701000006_dunning_claim_order), so a claim stops after the first due ones instead of sorting them all.
 */
async function claimRuns(options: DunningAttemptsOptions): Promise<ClaimedRun[]> {
  const now = options.now();
  const token = randomUUID();
  const leaseUntil = new Date(now.getTime() + (options.leaseMs ?? DUNNING_LEASE_MS));
  const clock = options.testClockId ? Prisma.sql`AND c."testClockId" = ${options.testClockId}` : Prisma.empty;
  const ids = await sqlRows<{ id: string }>(
    options.prisma,
    Prisma.sql`
    UPDATE "DunningRun" SET "leaseUntil" = ${leaseUntil}::timestamptz, "claimToken" = ${token}
    WHERE "id" IN (
      SELECT r."id" FROM "DunningRun" r
      JOIN "Customer" c ON c."id" = r."customerId"
      LEFT JOIN "TestClock" t ON t."id" = c."testClockId"
      WHERE r."status" = 'active' AND (r."leaseUntil" IS NULL OR r."leaseUntil" < ${now}::timestamptz) ${clock}
        AND (r."nextAttemptAt" <= ${customerTime(options, now)}
          OR NOT EXISTS (SELECT 1 FROM "Invoice" i ${BALANCE_JOINS}
            WHERE i."customerId" = r."customerId" AND i."currencyId" = r."currencyId" AND ${OVERDUE} AND ${DUE} > 0))
      ORDER BY r."nextAttemptAt", r."id"
      LIMIT ${DUNNING_RUN_PAGE}
      FOR UPDATE OF r SKIP LOCKED)
    RETURNING "id"`,
  );
  if (ids.length === 0) return [];
  return sqlRows<ClaimedRun>(
    options.prisma,
    Prisma.sql`
    SELECT r."id", r."organizationId", r."testMode", r."customerId", r."campaignId", r."currencyId", r."attempts",
      COALESCE(r."hardDeclinedSourceIds", ARRAY[]::text[]) AS "hardDeclinedSourceIds", r."claimToken",
      camp."retryCard", camp."sendEmail", camp."bccEmails", camp."maxAttempts", camp."daysBetweenAttempts",
      camp."finalAction",
      ${customerTime(options, now)} AS "at",
      (SELECT i."userEmail" FROM "Invoice" i WHERE i."customerId" = r."customerId"
        ORDER BY i."createdAt" DESC LIMIT 1) AS "userEmail"
    FROM "DunningRun" r
    JOIN "DunningCampaign" camp ON camp."id" = r."campaignId"
    JOIN "Customer" c ON c."id" = r."customerId"
    LEFT JOIN "TestClock" t ON t."id" = c."testClockId"
    WHERE r."id" = ANY(${ids.map((r) => r.id)}::text[]) AND r."claimToken" = ${token}
    ORDER BY r."nextAttemptAt", r."id"`,
  );
}

/** The payment of `invoiceId` in attempt `number` of run `runId`: a known id, found again after a crash. */
export function attemptPaymentId(runId: string, number: number, invoiceId: string): string {
  return derivedId("pay", `${runId}/${number}/${invoiceId}`);
}

/** An overdue invoice of a run's customer and currency, with what is due on it now. */
interface RunInvoice {
  id: string;
  due: string;
}

/** A claimed run as its page's attempt works on it. */
interface PageRun {
  run: ClaimedRun;
  /** the run's context: its organization and mode, the customer's time, the user of their latest invoice */
  ctx: ServiceContext;
  /** the attempt's number */
  number: number;
  /** the attempt's invoices, oldest due date first (none: the run is closed paid) */
  invoices: RunInvoice[];
  /** this attempt's payments made before a crash, by invoice */
  own: Map<string, Payment>;
  /** the cards that declined hard in this run */
  hard: Set<string>;
  /** the card the next invoice is charged with (null: none) */
  sourceId: string | null;
  /** the attempt's entries, one per invoice charged so far */
  rows: AttemptInvoice[];
  /** set when the attempt failed (a gateway error): nothing more is done or written for the run */
  failed?: unknown;
}

/** What a page did, merged into the round's summary once the page is done. */
type PageSummary = DunningAttemptsSummary & { failures: [string, unknown][] };

/**
 * Makes the attempts of a claimed page (attemptPage). When the page fails as a whole (an error in one of its
 * transactions, which rolls back the writes of all its runs), each run is attempted again alone, so an error fails
 * only its own run, as when runs were attempted one at a time; a lone run's error is counted in `failed`.
 */
async function attemptPageOrEach(
  options: DunningAttemptsOptions,
  runs: ClaimedRun[],
  summary: DunningAttemptsSummary,
): Promise<void> {
  const page: PageSummary = { ...emptySummary(), failures: [] };
  try {
    await attemptPage(options, runs, page);
  } catch (e) {
    if (runs.length > 1) {
      for (const run of runs) await attemptPageOrEach(options, [run], summary);
      return;
    }
    page.failures.push([runs[0].id, e]);
  }
  for (const key of Object.keys(summary) as (keyof DunningAttemptsSummary)[]) summary[key] += page[key];
  summary.failed += page.failures.length;
  for (const [runId, error] of page.failures) options.onError?.(runId, error);
}

/** A summary of nothing done. */
function emptySummary(): DunningAttemptsSummary {
  return { entered: 0, attempts: 0, paid: 0, finished: 0, charged: 0, declined: 0, failed: 0, emails: 0 };
}

/**
 * The attempts of a claimed page, set-based (docs/performance.md "Dunning attempts"): the claims renewed with one
 * statement (a run whose claim was taken over, its lease lapsed, is left out: it writes nothing), the page read
 * with three queries
 * (readPage), its invoices charged a wave at a time (chargeWave: the payments and charges of a wave created in one
 * transaction, the gateway calls made outside any transaction several at a time, the answers recorded in one),
 * then the attempt rows, e-mails, events and run updates of the page written in one transaction (writePage), each
 * run fenced by its claim token.
 */
async function attemptPage(options: DunningAttemptsOptions, claimed: ClaimedRun[], summary: PageSummary) {
  const runs = await renewClaims(options, claimed);
  if (runs.length === 0) return;
  const page = await readPage(options, runs);
  const attempting = page.filter((p) => p.invoices.length > 0);
  for (let wave = 0; attempting.some((p) => !p.failed && wave < p.invoices.length); wave++) {
    const charging = attempting.filter((p) => !p.failed && wave < p.invoices.length);
    for (const group of byContext(charging)) await chargeWave(options, group, wave, summary);
    await nextSources(attempting.filter((p) => !p.failed && wave + 1 < p.invoices.length));
  }
  for (const p of attempting) if (p.failed) summary.failures.push([p.run.id, p.failed]);
  const closing = page.filter((p) => p.invoices.length === 0);
  await writePage(
    options,
    attempting.filter((p) => !p.failed),
    closing,
    summary,
  );
}

/**
 * Renews the lease of the claimed runs from now, with one statement; returns those whose claim this process still
 * holds (the others were taken over since the claim: nothing is done for them).
 */
async function renewClaims(options: DunningAttemptsOptions, runs: ClaimedRun[]): Promise<ClaimedRun[]> {
  const leaseUntil = new Date(options.now().getTime() + (options.leaseMs ?? DUNNING_LEASE_MS));
  const renewed = await sqlRows<{ id: string }>(
    options.prisma,
    Prisma.sql`
    UPDATE "DunningRun" r SET "leaseUntil" = ${leaseUntil}::timestamptz
    FROM unnest(${runs.map((r) => r.id)}::text[], ${runs.map((r) => r.claimToken)}::text[]) AS v("id", "token")
    WHERE r."id" = ANY(${runs.map((r) => r.id)}::text[]) AND r."id" = v."id" AND r."claimToken" = v."token"
      AND r."status" = 'active'
    RETURNING r."id"`,
  );
  const held = new Set(renewed.map((r) => r.id));
  return runs.filter((r) => held.has(r.id));
}

/**
 * The page's runs with what their attempts need: every overdue invoice of each run's customer in its currency with
 * what is due (one query; those with nothing due are dropped unless this attempt has a payment of them, made
 * before a crash), this attempt's payments found again (one query), and each customer's usable card, less those
 * that declined hard in the run (one query per organization and mode; cycle-decision.ts usableSourcesOf).
 */
async function readPage(options: DunningAttemptsOptions, runs: ClaimedRun[]): Promise<PageRun[]> {
  // driven by the page's runs, one probe of the overdue invoices' index per run (the LATERAL with OFFSET 0 is not
  // pulled up into a join, which the planner served by reading every overdue invoice while the runs the entry just
  // wrote had no statistics yet: 5 s a page at 10,000 runs)
  const overdue = await sqlRows<RunInvoice & { runId: string }>(
    options.prisma,
    Prisma.sql`
    SELECT v."runId", o."id", o."due"
    FROM unnest(${runs.map((r) => r.id)}::text[], ${runs.map((r) => r.customerId)}::text[],
      ${runs.map((r) => r.currencyId)}::text[]) WITH ORDINALITY AS v("runId", "customerId", "currencyId", n)
    CROSS JOIN LATERAL (
      SELECT i."id", (${DUE})::text AS "due", i."dueDate" FROM "Invoice" i ${BALANCE_JOINS}
      WHERE i."customerId" = v."customerId" AND i."currencyId" = v."currencyId" AND ${OVERDUE} OFFSET 0
    ) o
    ORDER BY v.n, o."dueDate", o."id"`,
  );
  const paymentIds = overdue.map((i) => attemptPaymentId(i.runId, attemptNumber(runs, i.runId), i.id));
  const payments = paymentIds.length
    ? await options.prisma.payment.findMany({ where: { id: { in: paymentIds } } })
    : [];
  const page = runs.map((run): PageRun => {
    const number = run.attempts + 1;
    const mine = overdue.filter((i) => i.runId === run.id);
    const own = new Map<string, Payment>();
    for (const i of mine) {
      const payment = payments.find((p) => p.id === attemptPaymentId(run.id, number, i.id));
      if (payment) own.set(i.id, payment);
    }
    return {
      run,
      ctx: contextOf(options, run),
      number,
      invoices: mine
        .filter((i) => toDecimal(i.due).greaterThan(0) || own.has(i.id))
        .map(({ id, due }) => ({ id, due })),
      own,
      hard: new Set(run.hardDeclinedSourceIds),
      sourceId: null,
      rows: [],
    };
  });
  await nextSources(
    page.filter((p) => p.invoices.length > 0),
    true,
  );
  return page;
}

/** The attempt number of run `runId` of the page. */
function attemptNumber(runs: readonly ClaimedRun[], runId: string): number {
  return runs.find((r) => r.id === runId)!.attempts + 1;
}

/** The context a run's attempt acts with (the billing run's runContext): the customer's time, the invoice's user. */
function contextOf(options: DunningAttemptsOptions, run: ClaimedRun): ServiceContext {
  const at = new Date(run.at);
  return runContext(options.prisma, options.settings, () => at, {
    organizationId: run.organizationId,
    testMode: run.testMode,
    userEmail: run.userEmail ?? "dunning",
  });
}

/** The page's runs grouped by their context (organization, mode, time, user), each group with its context. */
function byContext(runs: readonly PageRun[]): { ctx: ServiceContext; runs: PageRun[] }[] {
  const groups = new Map<string, { ctx: ServiceContext; runs: PageRun[] }>();
  for (const p of runs) {
    const { organizationId, testMode, userEmail } = p.ctx.auth;
    const key = [organizationId, testMode, userEmail, p.ctx.now().toISOString()].join("\u0000");
    const group = groups.get(key) ?? { ctx: p.ctx, runs: [] };
    group.runs.push(p);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/**
 * Sets the card each run's next invoice is charged with: the customer's usable card (cycle-decision.ts
 * usableSourcesOf), not one that declined hard in this run (another card of the customer's may be taken): at the
 * start of the attempt (`first`), and after a wave for the runs whose card declined hard in it. One query per
 * organization and mode.
 */
async function nextSources(runs: readonly PageRun[], first = false): Promise<void> {
  const changing = runs.filter((p) => p.run.retryCard && (first || (p.sourceId && p.hard.has(p.sourceId))));
  for (const group of byContext(changing)) {
    const found = await usableSourcesOf(
      group.ctx,
      group.runs.map((p) => ({ customerId: p.run.customerId, exclude: [...p.hard] })),
    );
    group.runs.forEach((p, k) => (p.sourceId = found[k]));
  }
}

/** An invoice of a wave: its run, what was due before the attempt, and the attempt's payment of it. */
interface Slot {
  p: PageRun;
  invoice: RunInvoice;
  before: Decimal;
  payment: Payment | null;
  /** the payment was made before this process charged (a crash, or a process whose claim lapsed): to settle */
  found: boolean;
}

/** The card a run may charge now: its current card unless that declined hard in this run. */
const cardOf = (p: PageRun) => (p.sourceId && !p.hard.has(p.sourceId) ? p.sourceId : null);

/**
 * Charges invoice `wave` of each run of `group` (one context) for what is due: the payments of known ids
 * (attemptPaymentId) and their charges are created in one transaction (startPayments), the gateway asked outside
 * it, several at a time, and the answers recorded in one transaction (payments.ts finishCharges); a payment made
 * before (a crash, or a process whose claim lapsed) is settled as it stands (settledPayment). A run whose charge
 * fails (a gateway error) is marked failed. Then each invoice's entry of the attempt (addRows).
 */
async function chargeWave(
  options: DunningAttemptsOptions,
  group: { ctx: ServiceContext; runs: PageRun[] },
  wave: number,
  summary: PageSummary,
): Promise<void> {
  const { ctx } = group;
  const slots = group.runs.map((p): Slot => {
    const invoice = p.invoices[wave];
    const payment = p.own.get(invoice.id) ?? null;
    let before = toDecimal(invoice.due);
    if (payment?.status === "succeeded") before = before.plus(payment.amount);
    return { p, invoice, before, payment, found: payment !== null };
  });
  const fresh = slots.filter((s) => !s.payment && cardOf(s.p));
  const started = await startPayments(ctx, fresh);
  const charging: Slot[] = [];
  const pending: PendingCharge[] = [];
  fresh.forEach((s, k) => {
    const r = started[k];
    if (r && "started" in r) {
      charging.push(s);
      pending.push(r);
    } else if (r) [s.payment, s.found] = [r, true];
  });
  const finished = await finishCharges(ctx, pending);
  charging.forEach((s, k) => {
    const r = finished[k];
    if (r instanceof Error) s.p.failed = r;
    else s.payment = r;
  });
  for (const s of slots) {
    if (!s.found || !s.payment || s.p.failed) continue;
    try {
      s.payment = await settledPayment(ctx, s.payment, cardOf(s.p));
    } catch (e) {
      s.p.failed = e;
    }
  }
  await addRows(
    options.prisma,
    slots.filter((s) => !s.p.failed),
    summary,
  );
}

/**
 * In one transaction: locks the invoices of `slots` (in id order), and for each creates the attempt's payment for
 * what is due beside charges in flight and starts its charge with the run's card (payments.ts createPayments,
 * authorizeManyLocked: a few statements for the whole wave). Per slot, in order: the pending charge; the payment
 * when one of its id exists already (made meanwhile by a process whose claim lapsed, which committed while this
 * one waited for the lock); or null when nothing is left to charge.
 */
async function startPayments(ctx: ServiceContext, slots: readonly Slot[]): Promise<(PendingCharge | Payment | null)[]> {
  if (slots.length === 0) return [];
  const ids = slots.map((s) => attemptPaymentId(s.p.run.id, s.p.number, s.invoice.id));
  return directTransaction(ctx.prisma, async (tx) => {
    const txCtx = withinTransaction(ctx, tx);
    await lockInvoices(
      txCtx,
      slots.map((s) => s.invoice.id),
    );
    const existing = await tx.payment.findMany({ where: { id: { in: ids } } });
    const balances = await invoiceBalances(
      txCtx,
      slots.map((s) => s.invoice.id),
    );
    const room = balances.map((b) => toDecimal(b.due).minus(b.inFlight));
    const creating = slots
      .map((s, k) => ({ s, k, id: ids[k] }))
      .filter(({ k, id }) => !existing.some((p) => p.id === id) && room[k].greaterThan(0));
    await createPayments(
      txCtx,
      creating.map(({ s, k, id }) => ({
        input: {
          amount: room[k].toFixed(),
          invoice: s.invoice.id,
          description: `Dunning attempt ${s.p.number} (run ${s.p.run.id})`,
        },
        id,
      })),
    );
    const pending = await authorizeManyLocked(
      txCtx,
      creating.map(({ s, id }) => ({ id, sourceId: cardOf(s.p) })),
    );
    return slots.map((_, k) => {
      const made = creating.findIndex((c) => c.k === k);
      if (made >= 0) return pending[made];
      return existing.find((p) => p.id === ids[k]) ?? null;
    });
  });
}

/**
 * This attempt's payment found after a crash, settled: its recorded answer; a charge left pending asked again
 * at the gateway with the same charge id (resumeStaleCharge); a payment created and never charged charged with
 * `sourceId` (none: left as it is). Throws when a charge is still pending (another process is answering it).
 */
async function settledPayment(ctx: ServiceContext, payment: Payment, sourceId: string | null): Promise<Payment> {
  if (payment.status === "processing") {
    const pending = await ctx.prisma.paymentCharge.findFirst({ where: { paymentId: payment.id, status: "pending" } });
    if (pending) await resumeStaleCharge(ctx, pending.id, new Date());
    const now = await ctx.prisma.payment.findUniqueOrThrow({ where: { id: payment.id } });
    if (now.status === "processing") throw new Error(`the charge of payment ${payment.id} is still pending`);
    return now;
  }
  if (payment.status === "requires_payment_method" && sourceId) {
    const charges = await ctx.prisma.paymentCharge.count({ where: { paymentId: payment.id } });
    if (charges === 0) {
      const pending = await ctx.prisma.$transaction((tx) =>
        authorizeLocked(withinTransaction(ctx, tx), payment.id, sourceId),
      );
      if (pending) return finishCharge(ctx, pending);
    }
  }
  return payment;
}

/**
 * Each slot's entry of the attempt from its payment (null: not charged), the last charge of the payments not
 * succeeded read with one query; counts the charges that succeeded and declined, and adds a card that declined
 * hard to its run's.
 */
async function addRows(prisma: PrismaClient, slots: readonly Slot[], summary: PageSummary): Promise<void> {
  const unsettled = slots.filter((s) => s.payment && s.payment.status !== "succeeded").map((s) => s.payment!.id);
  const charges = unsettled.length
    ? await sqlRows<{ paymentId: string; status: string; failureCode: string | null }>(
        prisma,
        Prisma.sql`SELECT "paymentId", "status", "failureCode" FROM "PaymentCharge"
        WHERE "paymentId" = ANY(${unsettled}::text[]) ORDER BY "paymentId", "attempt" DESC`,
        { prepared: true },
      )
    : [];
  for (const { p, invoice, before, payment } of slots) {
    const row: AttemptInvoice = {
      invoice: invoice.id,
      amount_due: before.toFixed(),
      payment: payment?.id ?? null,
      charge: "not_attempted",
      failure_code: null,
      decline_kind: null,
    };
    const last = payment ? charges.find((c) => c.paymentId === payment.id) : undefined;
    if (payment?.status === "succeeded") row.charge = "succeeded";
    else if (last?.status === "declined") {
      row.charge = "declined";
      row.failure_code = last.failureCode ?? null;
      row.decline_kind = declineKind(last.failureCode);
    }
    if (row.charge === "succeeded") summary.charged++;
    if (row.charge === "declined") summary.declined++;
    if (row.decline_kind === "hard" && payment?.sourceId) p.hard.add(payment.sourceId);
    p.rows.push(row);
  }
}

/**
 * Writes the page's attempts in one transaction: the runs locked (one statement) and those whose claim this process
 * no longer holds left out (another process took them over, and writes their attempts), then, per
 * context, the attempts of the runs charged (writeAttempts) and the closing rows of the runs paid between attempts
 * (closePaid). Counts what was written once it commits.
 */
async function writePage(
  options: DunningAttemptsOptions,
  attempting: readonly PageRun[],
  closing: readonly PageRun[],
  summary: PageSummary,
): Promise<void> {
  if (attempting.length + closing.length === 0) return;
  const written = await directTransaction(options.prisma, async (tx) => {
    const held = await lockClaims(tx as never, [...attempting, ...closing]);
    const counts = emptySummary();
    for (const group of byContext(attempting.filter((p) => held.has(p.run.id))))
      await writeAttempts(options, withinTransaction(group.ctx, tx as never), group.runs, counts);
    for (const group of byContext(closing.filter((p) => held.has(p.run.id))))
      await closePaid(withinTransaction(group.ctx, tx as never), group.runs, counts);
    return counts;
  });
  for (const key of ["attempts", "paid", "finished", "emails"] as const) summary[key] += written[key];
}

/**
 * Locks the runs (in id order, one statement) and returns the ids of those whose claim is still this process's
 * and whose attempt is not written yet.
 */
async function lockClaims(tx: PrismaClient, runs: readonly PageRun[]): Promise<Set<string>> {
  const rows = await sqlRows<{ id: string; claimToken: string | null; status: string; attempts: number }>(
    tx,
    Prisma.sql`SELECT "id", "claimToken", "status", "attempts" FROM "DunningRun"
    WHERE "id" = ANY(${runs.map((p) => p.run.id)}::text[]) ORDER BY "id" FOR UPDATE`,
  );
  return new Set(
    runs
      .filter((p) => {
        const row = rows.find((r) => r.id === p.run.id);
        return row && row.claimToken === p.run.claimToken && row.status === "active" && row.attempts === p.number - 1;
      })
      .map((p) => p.run.id),
  );
}

/** What an attempt writes: its row, the run's next state, its e-mail's request. */
interface AttemptPlan {
  p: PageRun;
  id: string;
  after: Awaited<ReturnType<typeof afterAttempts>>[number];
  outcome: AttemptOutcome;
  status: DunningRunStatus;
  finalAction: FinalAction | null;
  next: Date | null;
}

/**
 * Writes the attempts of `runs` (one context, in its transaction `txCtx`): what is still due after them (two
 * queries), their e-mails (services/dunning-mail.ts queueDunningEmails), the attempt rows (one statement) and
 * their `dunning.attempt` events (one), the final actions of the runs that finished (through their use cases), the
 * runs moved (one statement: the next attempt, or the end) and the `dunning.finished` events of those that ended.
 */
async function writeAttempts(
  options: DunningAttemptsOptions,
  txCtx: ServiceContext,
  runs: readonly PageRun[],
  counts: DunningAttemptsSummary,
): Promise<void> {
  const at = txCtx.now();
  const after = await afterAttempts(txCtx, runs);
  const plans = runs.map((p, k): AttemptPlan => {
    const outcome = attemptOutcome(after[k].amountDue);
    const status = runAfterAttempt(p.number, p.run.maxAttempts, outcome);
    const finalAction = status === "finished" ? (p.run.finalAction as FinalAction) : null;
    const next = status === "active" ? nextAttemptAt(at, p.run.daysBetweenAttempts) : null;
    return { p, id: newId("dat"), after: after[k], outcome, status, finalAction, next };
  });
  const emails = await queueDunningEmails(
    txCtx,
    plans.map(({ p, after, next, finalAction }) => ({
      customerId: p.run.customerId,
      currencyId: p.run.currencyId,
      sendEmail: p.run.sendEmail,
      bcc: p.run.bccEmails,
      rows: p.rows,
      stillDue: after.invoices,
      nextAttemptAt: next,
      finalAction,
      sendsMail: options.sendsMail ?? false,
    })),
  );
  await insertRows(
    txCtx.prisma,
    "DunningAttempt",
    plans.map((plan, k) =>
      attemptData(plan.p, plan.id, at, {
        rows: plan.p.rows,
        amountDue: plan.after.amountDue,
        outcome: plan.outcome,
        finalAction: plan.finalAction,
        email: emails[k],
      }),
    ),
  );
  // printed once for both events (an attempt row is not changed after its insert)
  const printed = await printedObjects(
    txCtx,
    "dunning_attempt",
    plans.map((plan) => plan.id),
  );
  await recordEvents(
    txCtx,
    "dunning.attempt",
    "dunning_attempt",
    plans.map((plan) => plan.id),
    { objects: printed },
  );
  for (const plan of plans) if (plan.finalAction) await applyFinalAction(txCtx, plan.finalAction, plan.after.invoices);
  await moveRuns(
    txCtx,
    at,
    plans.map(({ p, status, next, finalAction }) => ({ p, status, next, hard: [...p.hard], finalAction })),
  );
  const ended = plans.flatMap((plan, k) => (plan.status === "active" ? [] : [{ plan, object: printed[k] }]));
  await recordEvents(
    txCtx,
    "dunning.finished",
    "dunning_attempt",
    ended.map((e) => e.plan.id),
    { objects: ended.map((e) => e.object) },
  );
  counts.attempts += plans.length;
  counts.paid += plans.filter((plan) => plan.status === "paid").length;
  counts.finished += plans.filter((plan) => plan.status === "finished").length;
  counts.emails += emails.filter((e) => e === "queued").length;
}

/** The columns of an attempt row of run `p` (unique per run and number), as infra/sql/insert-rows.ts inserts them. */
function attemptData(
  p: PageRun,
  id: string,
  at: Date,
  written: {
    rows: readonly AttemptInvoice[];
    amountDue: Decimal;
    outcome: string;
    finalAction: FinalAction | null;
    email: AttemptEmail;
  },
): Prisma.DunningAttemptCreateManyInput {
  return {
    id,
    organizationId: p.run.organizationId,
    testMode: p.run.testMode,
    runId: p.run.id,
    customerId: p.run.customerId,
    campaignId: p.run.campaignId,
    currencyId: p.run.currencyId,
    number: p.number,
    invoices: written.rows as unknown as Prisma.InputJsonValue,
    amountDue: written.amountDue.toFixed(),
    outcome: written.outcome,
    finalAction: written.finalAction,
    email: written.email,
    createdAt: at,
  };
}

/**
 * What is due after each run's attempt on its invoices (those marked uncollectible meanwhile count 0), with their
 * state: the balances of all the runs' invoices with one query, their state with another. In the order of `runs`.
 */
async function afterAttempts(txCtx: ServiceContext, runs: readonly PageRun[]) {
  const ids = runs.flatMap((p) => p.rows.map((r) => r.invoice));
  const balances = await invoiceBalances(txCtx, ids);
  const due = new Map(ids.map((id, k) => [id, balances[k].due]));
  const state = await sqlRows<{
    id: string;
    marked: boolean;
    subscriptionId: string | null;
    subscriptionStatus: string | null;
  }>(
    txCtx.prisma,
    Prisma.sql`
    SELECT i."id", i."markedUncollectibleAt" IS NOT NULL AS "marked", i."subscriptionId",
      s."status" AS "subscriptionStatus"
    FROM "Invoice" i LEFT JOIN "Subscription" s ON s."id" = i."subscriptionId"
    WHERE i."id" = ANY(${ids}::text[])`,
  );
  const byId = new Map(state.map((s) => [s.id, s]));
  return runs.map((p) => {
    const invoices = p.rows.map(({ invoice: id }) => ({
      id,
      due: due.get(id)!,
      markedUncollectible: byId.get(id)?.marked ?? false,
      subscriptionId: byId.get(id)?.subscriptionId ?? null,
      subscriptionStatus: byId.get(id)?.subscriptionStatus ?? null,
    }));
    const amountDue = sum(invoices.filter((i) => !i.markedUncollectible).map((i) => toDecimal(i.due)));
    return { invoices, amountDue };
  });
}

/** Applies the final action to what the last attempt left unpaid, in the attempt's transaction. */
async function applyFinalAction(
  txCtx: ServiceContext,
  action: FinalAction,
  invoices: Awaited<ReturnType<typeof afterAttempts>>[number]["invoices"],
): Promise<void> {
  const targets = finalActionTargets(action, invoices);
  for (const id of targets.subscriptions) {
    if (action === "pause_subscriptions") await pauseSubscription(txCtx, id, DUNNING_REASON);
    else await cancelSubscription(txCtx, id, { reason: DUNNING_REASON });
  }
  for (const id of targets.invoices) await markInvoiceUncollectible(txCtx, id);
}

/**
 * Records each run's attempt (one statement): its next attempt (`next`), or its end at `at`; the claim released.
 */
async function moveRuns(
  txCtx: ServiceContext,
  at: Date,
  moves: readonly {
    p: PageRun;
    status: DunningRunStatus;
    next: Date | null;
    hard: string[];
    finalAction: FinalAction | null;
  }[],
): Promise<void> {
  if (moves.length === 0) return;
  const values = moves.map((m) => ({
    id: m.p.run.id,
    attempts: m.p.number,
    status: m.status,
    next: m.status === "active" ? m.next : at,
    hard: m.hard,
    finalAction: m.finalAction,
    endedAt: m.status === "active" ? null : at,
  }));
  await sqlRows(
    txCtx.prisma,
    Prisma.sql`
    UPDATE "DunningRun" r SET "attempts" = v."attempts", "status" = v."status", "nextAttemptAt" = v."next",
      "leaseUntil" = NULL, "claimToken" = NULL,
      "hardDeclinedSourceIds" = ARRAY(SELECT jsonb_array_elements_text(v."hard")),
      "finalAction" = v."finalAction", "endedAt" = v."endedAt", "updatedAt" = ${new Date()}::timestamptz
    FROM json_to_recordset(${JSON.stringify(values)}::json) AS v("id" text, "attempts" int, "status" text,
      "next" timestamptz, "hard" jsonb, "finalAction" text, "endedAt" timestamptz)
    WHERE r."id" = ANY(${values.map((v) => v.id)}::text[]) AND r."id" = v."id"`,
  );
}

/**
 * Closes runs whose invoices were all paid (or credited, or marked uncollectible) since their last attempt: for
 * each, a closing row numbered as its next attempt with the last attempt's invoices, nothing charged, outcome
 * `paid`; the run `paid`; `dunning.finished` (no `dunning.attempt`: no attempt was made). A few statements for
 * all of `runs` (one context, in its transaction `txCtx`).
 */
async function closePaid(txCtx: ServiceContext, runs: readonly PageRun[], counts: DunningAttemptsSummary) {
  const at = txCtx.now();
  const last = await sqlRows<{ runId: string; invoices: AttemptInvoice[] }>(
    txCtx.prisma,
    Prisma.sql`
    SELECT a."runId", a."invoices" FROM "DunningAttempt" a
    JOIN unnest(${runs.map((p) => p.run.id)}::text[], ${runs.map((p) => p.number - 1)}::int[]) AS v("runId", "number")
      ON a."runId" = v."runId" AND a."number" = v."number"`,
  );
  const previous = runs.map((p) => (last.find((l) => l.runId === p.run.id)?.invoices ?? []).map((i) => i.invoice));
  const balances = await invoiceBalances(txCtx, previous.flat());
  let k = 0;
  const ids = runs.map(() => newId("dat"));
  await insertRows(
    txCtx.prisma,
    "DunningAttempt",
    runs.map((p, n) => {
      const rows = previous[n].map((invoice): AttemptInvoice => ({
        invoice,
        amount_due: balances[k++].due,
        payment: null,
        charge: "not_attempted",
        failure_code: null,
        decline_kind: null,
      }));
      const written = { rows, amountDue: new Decimal(0), outcome: "paid", finalAction: null, email: "not_needed" };
      return attemptData(p, ids[n], at, written as Parameters<typeof attemptData>[3]);
    }),
  );
  await moveRuns(
    txCtx,
    at,
    runs.map((p) => ({ p, status: "paid", next: null, hard: p.run.hardDeclinedSourceIds, finalAction: null })),
  );
  await recordEvents(txCtx, "dunning.finished", "dunning_attempt", ids);
  counts.paid += runs.length;
}
