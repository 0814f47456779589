/**
 * Test clocks (REST /v1/test_clocks/, GraphQL createTestClock/advanceTestClock/...;
 * docs/test-clocks.md): a frozen time for customers attached to it, so renewals can be tried
 * without waiting. Test mode only: a live key gets 403 and live data never sees a clock.
 *
 * - Created at `frozen_time` (any instant, past or future). Customers attach at creation
 *   (`test_clock` on the customer); their subscriptions start, take usage and renew on the
 *   clock's time, and the regular billing run leaves them alone.
 * - Advancing moves `frozen_time` forward only (400 otherwise) and runs the billing run for the
 *   clock's subscriptions as if that time had come, every due cycle in order, in the same request.
 * - Deleting a clock with customers attached is refused (409); delete or keep them first.
 */
import { runDunningRound } from "./dunning-round.js";
import type { TestClock } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError, PermissionError } from "../domain/errors.js";
import type { ServiceContext, Tx } from "./context.js";
import { runBilling } from "./billing-run.js";
import { todayIn } from "../domain/formats.js";

export interface TestClockInput {
  name?: string | null;
  /** ISO 8601 timestamp, or a Date from GraphQL's DateTime */
  frozenTime?: string | Date | null;
}

const MAX_NAME_LENGTH = 200;

/** PermissionError (403) unless the caller uses a test key. */
export function assertTestMode(ctx: ServiceContext): void {
  if (!ctx.auth.testMode)
    throw new PermissionError("test clocks exist in test mode only; use a test key (sk_test_...)");
}

/** The filter of the caller's clocks (they have no mode column: every clock is test data). */
export function testClockTenant(ctx: ServiceContext) {
  assertTestMode(ctx);
  return { organizationId: ctx.auth.organizationId };
}

function parseFrozenTime(value: string | Date | null | undefined, errors: FieldErrorCollector): Date | null {
  if (value === undefined || value === null || value === "") {
    errors.add("frozen_time", "is required (ISO 8601 timestamp)");
    return null;
  }
  const time = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(time.getTime())) {
    errors.add("frozen_time", "must be an ISO 8601 timestamp");
    return null;
  }
  return time;
}

/**
 * Creates a clock frozen at `frozenTime`. Errors: 403 in live mode, 400 without a valid frozen_time or with a name over
 * 200 characters.
 */
export async function createTestClock(ctx: ServiceContext, input: TestClockInput): Promise<TestClock> {
  const where = testClockTenant(ctx);
  const errors = new FieldErrorCollector();
  const frozenTime = parseFrozenTime(input.frozenTime, errors);
  if (input.name && input.name.length > MAX_NAME_LENGTH)
    errors.add("name", `must have at most ${MAX_NAME_LENGTH} characters`);
  errors.throwIfAny();
  return ctx.prisma.testClock.create({
    data: { id: newId("clk"), organizationId: where.organizationId, name: input.name || null, frozenTime: frozenTime! },
  });
}

/** The caller's clock `id`, locked until `tx` ends. NotFoundError (404) when it is not theirs. */
export async function lockTestClock(tx: Tx, ctx: ServiceContext, id: string): Promise<TestClock> {
  const { organizationId } = testClockTenant(ctx);
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT "id" FROM "TestClock" WHERE "id" = $1 AND "organizationId" = $2 FOR UPDATE`,
    id,
    organizationId,
  );
  if (rows.length === 0) throw new NotFoundError("test_clock", id);
  return tx.testClock.findUniqueOrThrow({ where: { id } });
}

/**
 * Moves the clock to `frozenTime` (later than its current time, else 400) and returns it. The
 * caller (advanceTestClock below) then bills what came due.
 */
export async function moveTestClock(
  tx: Tx,
  ctx: ServiceContext,
  id: string,
  input: TestClockInput,
): Promise<{ clock: TestClock; from: Date }> {
  const clock = await lockTestClock(tx, ctx, id);
  const errors = new FieldErrorCollector();
  const frozenTime = parseFrozenTime(input.frozenTime, errors);
  if (frozenTime && frozenTime <= clock.frozenTime)
    errors.add("frozen_time", `must be later than the clock's time ${clock.frozenTime.toISOString()}`);
  errors.throwIfAny();
  const moved = await tx.testClock.update({ where: { id }, data: { frozenTime: frozenTime! } });
  return { clock: moved, from: clock.frozenTime };
}

/**
 * Advances the caller's clock `id` to `input.frozenTime` (later than now, else 400) and runs the
 * billing run for the subscriptions of its customers with the clock's time as "now" and its day
 * (organization time zone) as the cutoff: every cycle that came due is billed, in order, and
 * collected with the customers' reusable sources; then sweeps its customers' invoices now past their due date
 * (services/overdue-invoices.ts: `invoice.payment_overdue`), then makes the dunning campaigns' attempts due at the
 * clock's time (services/dunning-attempts.ts). Status `ready` afterwards (declined charges included), or
 * `internal_failure` when a subscription could not be billed or a charge failed otherwise (the run's errors are
 * logged), or the sweep or an attempt failed. The attempts' e-mails wait in the outbox when `sendsMail` (a mailer is
 * configured), else they are kept.
 * Errors: 403 live key, 404, 400.
 */
export async function advanceTestClock(
  ctx: ServiceContext,
  id: string,
  input: TestClockInput,
  { sendsMail = false }: { sendsMail?: boolean } = {},
): Promise<TestClock> {
  const { clock } = await ctx.prisma.$transaction((tx) => moveTestClock(tx, ctx, id, input));
  const { timeZone } = await ctx.prisma.organization.findUniqueOrThrow({
    where: { id: ctx.auth.organizationId },
    select: { timeZone: true },
  });
  const summary = await runBilling({
    prisma: ctx.prisma,
    settings: ctx.settings,
    now: () => clock.frozenTime,
    until: todayIn(timeZone, clock.frozenTime),
    testClockId: clock.id,
  });
  // then the dunning worker's round for its customers at the clock's time (services/dunning-round.ts): invoices now
  // past their due date are swept (invoice.payment_overdue), then runs start and due attempts are made
  const dunning = await runDunningRound({
    prisma: ctx.prisma,
    settings: ctx.settings,
    now: () => new Date(),
    sweepNow: () => clock.frozenTime,
    testClockId: clock.id,
    sendsMail,
  });
  const dunned = dunning.failures.length === 0 && dunning.summary.failed === 0;
  return ctx.prisma.testClock.update({
    where: { id },
    // a declined card is the customer's outcome (the subscription goes past due), not a failure of the clock
    data: {
      status: summary.failed - summary.declined > 0 || !dunned ? "internal_failure" : "ready",
    },
  });
}

/** Deletes a clock without customers. Errors: 404, 409 when customers are attached. */
export async function deleteTestClock(ctx: ServiceContext, id: string): Promise<{ id: string; deleted: true }> {
  return ctx.prisma.$transaction(async (tx) => {
    await lockTestClock(tx, ctx, id);
    const customers = await tx.customer.count({ where: { testClockId: id } });
    if (customers > 0)
      throw new InvalidStateError(`test clock ${id} has ${customers} customer(s) attached; delete them first`);
    await tx.testClock.delete({ where: { id } });
    return { id, deleted: true as const };
  });
}

/**
 * The id of the caller's clock `id` to attach a new customer to. ValidationError on `test_clock`
 * in live mode or for an unknown clock.
 */
export async function resolveTestClock(
  ctx: ServiceContext,
  id: string | null | undefined,
  errors: FieldErrorCollector,
): Promise<string | null> {
  if (!id) return null;
  if (!ctx.auth.testMode) {
    errors.add("test_clock", "test clocks exist in test mode only");
    return null;
  }
  const clock = await ctx.prisma.testClock.findFirst({
    where: { id, organizationId: ctx.auth.organizationId },
    select: { id: true },
  });
  if (!clock) errors.add("test_clock", `no test clock ${id}`);
  return clock?.id ?? null;
}
