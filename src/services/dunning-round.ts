/**
 * One round of the dunning worker (docs/dunning.md "The worker"): the overdue sweep (services/overdue-invoices.ts),
 * then the campaigns' attempts (services/dunning-attempts.ts). The server's interval, `dunning run` and a test
 * clock's advance all run this, so the three agree on the order and on what a failure does: a sweep that fails
 * does not keep the attempts from running (runs already started still come due), and each failure is returned for
 * the caller to report (the server logs it, the command line exits 1, a test clock becomes `internal_failure`).
 */
import type { DunningAttemptsOptions, DunningAttemptsSummary } from "./dunning-attempts.js";
import { runDunningAttempts } from "./dunning-attempts.js";
import { sweepOverdueInvoices, type OverdueSweepSummary } from "./overdue-invoices.js";

export interface DunningRoundOptions extends DunningAttemptsOptions {
  /**
   * the time the sweep records on the invoices it finds overdue (default `now`): a test clock's time when the
   * round runs for its advance; the attempts keep `now` (the wall clock) for their leases
   */
  sweepNow?: () => Date;
  /** the sweep's progress (the command line's bar): invoices swept so far and those waiting when it began */
  onSweepProgress?: (done: number, total: number) => void;
}

/** What a round did: the sweep's counts and the attempts' (each 0 when its step failed). */
export type DunningRoundSummary = OverdueSweepSummary & DunningAttemptsSummary;

/** A step of the round that failed, with its error. */
export interface DunningRoundFailure {
  step: "sweep" | "attempts";
  error: unknown;
}

const NO_ATTEMPTS: DunningAttemptsSummary = {
  entered: 0,
  attempts: 0,
  paid: 0,
  finished: 0,
  charged: 0,
  declined: 0,
  failed: 0,
  emails: 0,
};

/**
 * Runs the sweep, then the attempts, with `options` (the sweep gets `sweepNow` as its clock). Never throws: a step's
 * error is in `failures` and its counts are 0. A run whose attempt failed is counted in `summary.failed` and told to
 * `onError`, as runDunningAttempts does.
 */
export async function runDunningRound(
  options: DunningRoundOptions,
): Promise<{ summary: DunningRoundSummary; failures: DunningRoundFailure[] }> {
  const failures: DunningRoundFailure[] = [];
  const swept = await sweepOverdueInvoices({
    prisma: options.prisma,
    settings: options.settings,
    now: options.sweepNow ?? options.now,
    until: options.until,
    testClockId: options.testClockId,
    signal: options.signal,
    onProgress: options.onSweepProgress,
  }).catch((error: unknown) => {
    failures.push({ step: "sweep", error });
    return { swept: 0, overdue: 0 };
  });
  const attempted = await runDunningAttempts(options).catch((error: unknown) => {
    failures.push({ step: "attempts", error });
    return NO_ATTEMPTS;
  });
  return { summary: { ...swept, ...attempted }, failures };
}
