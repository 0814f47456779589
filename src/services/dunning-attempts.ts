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
 *   source (services/cycle-decision.ts `usableSourceOf`, less those that declined hard in this run), each invoice is
 *   charged for what is due, **outside any transaction**, with a payment of a known id
 *   (`derivedId("pay", run/number/invoice)`): a retry after a crash finds it and takes its recorded answer, or asks
 *   the gateway again about its pending charge with the same charge id (payments.ts `resumeStaleCharge`), as the
 *   billing run's collection does (billing-run/collect.ts). One transaction then checks the claim's token, writes the
 *   attempt row (unique per run and number), its `dunning.attempt` event, and moves the run: `paid` when nothing is
 *   left due, `finished` after the campaign's last attempt (its final action applied in that transaction:
 *   subscriptions paused or cancelled through their use cases, invoices marked uncollectible), with
 *   `dunning.finished`; else the next attempt is due `days_between_attempts` days later.
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
import { sqlRows } from "../infra/prepared-sql.js";
import {
  attemptOutcome,
  finalActionTargets,
  nextAttemptAt,
  runAfterAttempt,
  type AttemptInvoice,
  type DunningRunStatus,
  type FinalAction,
} from "../domain/dunning.js";
import { declineKind } from "../domain/declines.js";
import { ValidationError } from "../domain/errors.js";
import { isIsoDate } from "../domain/formats.js";
import { Decimal, sum, toDecimal } from "../domain/money.js";
import { withinTransaction, type ServiceContext } from "./context.js";
import { usableSourceOf } from "./cycle-decision.js";
import { recordEvents } from "./events.js";
import { invoiceBalances } from "./invoice-balances.js";
import { markInvoiceUncollectible } from "./invoices.js";
import { authorizeLocked, createPayment, finishCharge, resumeStaleCharge } from "./payments.js";
import { cancelSubscription, pauseSubscription } from "./subscriptions.js";
import { runContext } from "./billing-run/run-context.js";
import { queueDunningEmail } from "./dunning-mail.js";
import type { AttemptEmail } from "../domain/dunning-mail.js";

/** Runs claimed per query. */
export const DUNNING_RUN_PAGE = 50;

/**
 * How long (ms, wall clock) a claim of a run lasts: a process that dies mid-attempt leaves the run to another
 * process after this, which resumes its charges (same payment and charge ids).
 */
export const DUNNING_LEASE_MS = 10 * 60_000;

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
  /** checked before each run: a stopping process finishes the attempt it is in and starts no other */
  signal?: AbortSignal;
  /** DUNNING_LEASE_MS unless given */
  leaseMs?: number;
  /**
   * true: a mailer is configured, the attempts' e-mails wait in the outbox as `pending` for its worker; false
   * (default): they are written `kept` and never sent, as reminders are without SMTP_URL
   */
  sendsMail?: boolean;
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

/** The claim of a run was taken over (its lease lapsed and another process claimed it): nothing is written. */
class LostClaim extends Error {}

/** The SQL of an invoice's amount due (services/invoice-balances.ts, domain/payments.ts invoiceAmountDue). */
const DUE = Prisma.sql`GREATEST(0,
  i."total" + COALESCE(cn.debited, 0) - COALESCE(cn.credited, 0) - COALESCE(p.paid, 0))`;

/** The joins DUE reads (finalized credit and debit notes, succeeded payments of invoice `i`). */
const BALANCE_JOINS = Prisma.sql`
    LEFT JOIN LATERAL (
      SELECT SUM(n."total") FILTER (WHERE dt."isCreditNote") AS credited,
             SUM(n."total") FILTER (WHERE NOT dt."isCreditNote") AS debited
      FROM "CreditNote" n JOIN "DocumentType" dt ON dt."id" = n."documentTypeId"
      WHERE n."invoiceId" = i."id" AND n."status" = 'finalized'
    ) cn ON true
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
 * reached their campaign's threshold, then makes every due attempt, a run at a time, until none is left or
 * `signal` aborts. Errors: 400 on `until` when it is not a date yyyy-mm-dd. A run whose attempt fails (a gateway
 * error) is counted in `failed` and left to a later round.
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
  for (;;) {
    if (options.signal?.aborted) break;
    const claimed = await claimRuns(options);
    for (const run of claimed) {
      if (options.signal?.aborted) break;
      try {
        // the page's lease began when it was claimed: each run's lease starts again with its attempt, so a slow page
        // does not hand its last runs to another process while this one is about to attempt them
        await renewClaim(options, run);
        await attempt(options, run, summary);
      } catch (e) {
        if (!(e instanceof LostClaim)) {
          summary.failed++;
          options.onError?.(run.id, e);
        }
      }
    }
    if (claimed.length < DUNNING_RUN_PAGE) break;
  }
  return summary;
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

/** Renews the lease of a claimed run from now; LostClaim when another process has taken it over meanwhile. */
async function renewClaim(options: DunningAttemptsOptions, run: ClaimedRun): Promise<void> {
  const leaseUntil = new Date(options.now().getTime() + (options.leaseMs ?? DUNNING_LEASE_MS));
  const renewed = await options.prisma.$executeRaw(Prisma.sql`
    UPDATE "DunningRun" SET "leaseUntil" = ${leaseUntil}::timestamptz
    WHERE "id" = ${run.id} AND "claimToken" = ${run.claimToken} AND "status" = 'active'`);
  if (renewed === 0) throw new LostClaim(`dunning run ${run.id}: the claim was taken over`);
}

/** An overdue invoice of a run's customer and currency, with what is due on it now. */
interface RunInvoice {
  id: string;
  due: string;
}

/** The payment of `invoiceId` in attempt `number` of run `runId`: a known id, found again after a crash. */
export function attemptPaymentId(runId: string, number: number, invoiceId: string): string {
  return derivedId("pay", `${runId}/${number}/${invoiceId}`);
}

/**
 * Attempt `run.attempts + 1` of a claimed run (see the module's comment), or its closing row when nothing is
 * left due. Throws LostClaim when the claim was taken over before the attempt was written.
 */
async function attempt(options: DunningAttemptsOptions, run: ClaimedRun, summary: DunningAttemptsSummary) {
  const at = new Date(run.at);
  const ctx = runContext(options.prisma, options.settings, () => at, {
    organizationId: run.organizationId,
    testMode: run.testMode,
    userEmail: run.userEmail ?? "dunning",
  });
  const number = run.attempts + 1;
  // every overdue invoice of the customer in the currency, oldest due date first (paid ones are dropped below)
  const overdue = await sqlRows<RunInvoice>(
    options.prisma,
    Prisma.sql`
    SELECT i."id", (${DUE})::text AS "due" FROM "Invoice" i ${BALANCE_JOINS}
    WHERE i."customerId" = ${run.customerId} AND i."currencyId" = ${run.currencyId} AND ${OVERDUE}
    ORDER BY i."dueDate", i."id"`,
  );
  // this attempt's payments made before a crash (their invoices may be paid now: they stay in the attempt)
  const paymentIds = new Map(overdue.map((i) => [attemptPaymentId(run.id, number, i.id), i.id]));
  const own = new Map<string, Payment>();
  for (const p of await options.prisma.payment.findMany({ where: { id: { in: [...paymentIds.keys()] } } }))
    own.set(p.invoiceId!, p);
  const invoices = overdue.filter((i) => toDecimal(i.due).greaterThan(0) || own.has(i.id));
  if (invoices.length === 0) {
    await closePaid(options, ctx, run, number, at, summary);
    return;
  }
  const hard = new Set(run.hardDeclinedSourceIds);
  // the usable card, not one that declined hard in this run (another card of the customer's may be taken)
  let sourceId = run.retryCard ? await usableSourceOf(ctx, run.customerId, [...hard]) : null;
  const rows: AttemptInvoice[] = [];
  for (const invoice of invoices) {
    const paymentId = attemptPaymentId(run.id, number, invoice.id);
    let payment = own.get(invoice.id) ?? null;
    let before = toDecimal(invoice.due);
    if (payment?.status === "succeeded") before = before.plus(payment.amount);
    if (payment) payment = await settledPayment(ctx, payment, sourceId && !hard.has(sourceId) ? sourceId : null);
    else if (sourceId && !hard.has(sourceId)) payment = await charge(ctx, invoice.id, paymentId, sourceId, number, run);
    const row = await attemptRow(options.prisma, invoice.id, before, payment);
    if (row.charge === "succeeded") summary.charged++;
    if (row.charge === "declined") summary.declined++;
    if (row.decline_kind === "hard" && payment?.sourceId) {
      hard.add(payment.sourceId);
      if (sourceId === payment.sourceId) sourceId = await usableSourceOf(ctx, run.customerId, [...hard]);
    }
    rows.push(row);
  }
  await options.prisma.$transaction(async (tx) => {
    const txCtx = withinTransaction(ctx, tx as never);
    await checkClaim(tx as never, run, number);
    const after = await afterAttempt(txCtx, rows);
    const outcome = attemptOutcome(after.amountDue);
    const status = runAfterAttempt(number, run.maxAttempts, outcome);
    const finalAction = status === "finished" ? (run.finalAction as FinalAction) : null;
    const email = await queueDunningEmail(txCtx, {
      customerId: run.customerId,
      currencyId: run.currencyId,
      sendEmail: run.sendEmail,
      bcc: run.bccEmails,
      rows,
      stillDue: after.invoices,
      nextAttemptAt: status === "active" ? nextAttemptAt(at, run.daysBetweenAttempts) : null,
      finalAction,
      sendsMail: options.sendsMail ?? false,
    });
    const attemptId = await writeAttempt(txCtx, run, number, at, rows, after.amountDue, outcome, finalAction, email);
    await recordEvents(txCtx, "dunning.attempt", "dunning_attempt", [attemptId]);
    if (finalAction) await applyFinalAction(txCtx, finalAction, after.invoices);
    await moveRun(txCtx, run, number, at, status, [...hard], finalAction);
    if (status !== "active") await recordEvents(txCtx, "dunning.finished", "dunning_attempt", [attemptId]);
    summary.attempts++;
    if (status === "paid") summary.paid++;
    if (status === "finished") summary.finished++;
    if (email === "queued") summary.emails++;
  });
}

/**
 * Charges `invoiceId` for what is due with the customer's source `sourceId`: creates payment `paymentId` and starts
 * its charge in one transaction (the invoice locked; nothing when nothing is left due beside charges in flight),
 * then charges it outside that transaction. The payment as settled, or null when nothing was charged.
 */
async function charge(
  ctx: ServiceContext,
  invoiceId: string,
  paymentId: string,
  sourceId: string,
  number: number,
  run: ClaimedRun,
): Promise<Payment | null> {
  const started = await ctx.prisma.$transaction(async (tx) => {
    const txCtx = withinTransaction(ctx, tx);
    await tx.$queryRaw`SELECT "id" FROM "Invoice" WHERE "id" = ${invoiceId} FOR UPDATE`;
    // made meanwhile by a process whose claim lapsed (it committed while this one waited for the lock)
    const existing = await tx.payment.findUnique({ where: { id: paymentId } });
    if (existing) return { existing, pending: null };
    const [balance] = await invoiceBalances(txCtx, [invoiceId]);
    const room = toDecimal(balance.due).minus(balance.inFlight);
    if (!room.greaterThan(0)) return null;
    await createPayment(
      txCtx,
      { amount: room.toFixed(), invoice: invoiceId, description: `Dunning attempt ${number} (run ${run.id})` },
      { id: paymentId },
    );
    return { existing: null, pending: await authorizeLocked(txCtx, paymentId, sourceId) };
  });
  if (!started) return null;
  if (started.existing) return settledPayment(ctx, started.existing, sourceId);
  return started.pending ? finishCharge(ctx, started.pending) : null;
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

/** An attempt's entry of `invoiceId` from its payment (null: not charged). */
async function attemptRow(
  prisma: PrismaClient,
  invoiceId: string,
  before: Decimal,
  payment: Payment | null,
): Promise<AttemptInvoice> {
  const row: AttemptInvoice = {
    invoice: invoiceId,
    amount_due: before.toFixed(),
    payment: payment?.id ?? null,
    charge: "not_attempted",
    failure_code: null,
    decline_kind: null,
  };
  if (payment?.status === "succeeded") row.charge = "succeeded";
  else if (payment) {
    const last = await prisma.paymentCharge.findFirst({
      where: { paymentId: payment.id },
      orderBy: { attempt: "desc" },
    });
    if (last?.status === "declined") {
      row.charge = "declined";
      row.failure_code = last.failureCode ?? null;
      row.decline_kind = declineKind(last.failureCode);
    }
  }
  return row;
}

/** Locks the run and checks the claim is still this process's and the attempt not written: LostClaim otherwise. */
async function checkClaim(tx: PrismaClient, run: ClaimedRun, number: number): Promise<void> {
  const [row] = await sqlRows<{ claimToken: string | null; status: string; attempts: number }>(
    tx,
    Prisma.sql`SELECT "claimToken", "status", "attempts" FROM "DunningRun" WHERE "id" = ${run.id} FOR UPDATE`,
  );
  if (!row || row.claimToken !== run.claimToken || row.status !== "active" || row.attempts !== number - 1)
    throw new LostClaim(`dunning run ${run.id}: the claim was taken over`);
}

/** What is due after an attempt on its invoices (those marked uncollectible meanwhile count 0), with their state. */
async function afterAttempt(txCtx: ServiceContext, rows: readonly AttemptInvoice[]) {
  const ids = rows.map((r) => r.invoice);
  const balances = await invoiceBalances(txCtx, ids);
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
  const invoices = ids.map((id, k) => ({
    id,
    due: balances[k].due,
    markedUncollectible: byId.get(id)?.marked ?? false,
    subscriptionId: byId.get(id)?.subscriptionId ?? null,
    subscriptionStatus: byId.get(id)?.subscriptionStatus ?? null,
  }));
  const amountDue = sum(invoices.filter((i) => !i.markedUncollectible).map((i) => toDecimal(i.due)));
  return { invoices, amountDue };
}

/** Writes the attempt row (unique per run and number); returns its id. */
async function writeAttempt(
  txCtx: ServiceContext,
  run: ClaimedRun,
  number: number,
  at: Date,
  rows: readonly AttemptInvoice[],
  amountDue: Decimal,
  outcome: string,
  finalAction: FinalAction | null,
  email: AttemptEmail,
): Promise<string> {
  const created = await txCtx.prisma.dunningAttempt.create({
    data: {
      id: newId("dat"),
      organizationId: run.organizationId,
      testMode: run.testMode,
      runId: run.id,
      customerId: run.customerId,
      campaignId: run.campaignId,
      currencyId: run.currencyId,
      number,
      invoices: rows as unknown as Prisma.InputJsonValue,
      amountDue: amountDue.toFixed(),
      outcome,
      finalAction,
      email,
      createdAt: at,
    },
    select: { id: true },
  });
  return created.id;
}

/** Applies the final action to what the last attempt left unpaid, in the attempt's transaction. */
async function applyFinalAction(
  txCtx: ServiceContext,
  action: FinalAction,
  invoices: Awaited<ReturnType<typeof afterAttempt>>["invoices"],
): Promise<void> {
  const targets = finalActionTargets(action, invoices);
  for (const id of targets.subscriptions) {
    if (action === "pause_subscriptions") await pauseSubscription(txCtx, id, DUNNING_REASON);
    else await cancelSubscription(txCtx, id, { reason: DUNNING_REASON });
  }
  for (const id of targets.invoices) await markInvoiceUncollectible(txCtx, id);
}

/** Records attempt `number` on the run: its next attempt, or its end; the claim released. */
async function moveRun(
  txCtx: ServiceContext,
  run: ClaimedRun,
  number: number,
  at: Date,
  status: DunningRunStatus,
  hardDeclined: string[],
  finalAction: FinalAction | null,
): Promise<void> {
  const next = status === "active" ? nextAttemptAt(at, run.daysBetweenAttempts) : at;
  await txCtx.prisma.$executeRaw(Prisma.sql`
    UPDATE "DunningRun" SET "attempts" = ${number}, "status" = ${status}, "nextAttemptAt" = ${next}::timestamptz,
      "leaseUntil" = NULL, "claimToken" = NULL, "hardDeclinedSourceIds" = ${hardDeclined}::text[],
      "finalAction" = ${finalAction}, "endedAt" = ${status === "active" ? null : at}::timestamptz,
      "updatedAt" = ${new Date()}::timestamptz
    WHERE "id" = ${run.id}`);
}

/**
 * Closes a run whose invoices were all paid (or credited, or marked uncollectible) since its last attempt: a
 * closing row numbered `number` with the last attempt's invoices, nothing charged, outcome `paid`; the run `paid`;
 * `dunning.finished` (no `dunning.attempt`: no attempt was made).
 */
async function closePaid(
  options: DunningAttemptsOptions,
  ctx: ServiceContext,
  run: ClaimedRun,
  number: number,
  at: Date,
  summary: DunningAttemptsSummary,
): Promise<void> {
  await options.prisma.$transaction(async (tx) => {
    const txCtx = withinTransaction(ctx, tx as never);
    await checkClaim(tx as never, run, number);
    const last = await tx.dunningAttempt.findUnique({
      where: { runId_number: { runId: run.id, number: number - 1 } },
      select: { invoices: true },
    });
    const previous = ((last?.invoices ?? []) as unknown as AttemptInvoice[]).map((i) => i.invoice);
    const balances = await invoiceBalances(txCtx, previous);
    const rows: AttemptInvoice[] = previous.map((invoice, k) => ({
      invoice,
      amount_due: balances[k].due,
      payment: null,
      charge: "not_attempted",
      failure_code: null,
      decline_kind: null,
    }));
    const attemptId = await writeAttempt(txCtx, run, number, at, rows, new Decimal(0), "paid", null, "not_needed");
    await moveRun(txCtx, run, number, at, "paid", run.hardDeclinedSourceIds, null);
    await recordEvents(txCtx, "dunning.finished", "dunning_attempt", [attemptId]);
    summary.paid++;
  });
}
