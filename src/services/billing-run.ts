/**
 * The billing run (docs/billing-run.md): bills every due subscription of every organization and
 * mode exactly once per cycle, then collects the invoices with the customer's reusable payment
 * source. This module is its public entry; the phases are in ./billing-run/:
 *
 * - claim.ts: which subscriptions are due, claimed in batches with `FOR UPDATE SKIP LOCKED`, so
 *   concurrent runners take disjoint subscriptions.
 * - batch.ts: one batch in one transaction: read with one `loadCycleData`, each subscription
 *   billed, the subscriptions advanced or cancelled, the drafts finalized (numbered; SII-issued
 *   types take one CAF folio range per batch and sign their DTEs in worker threads). A crash rolls
 *   the whole batch back; the unique index Invoice(subscriptionId, billingCycle) is the last guard
 *   against a double bill.
 * - bill-subscription.ts: every due cycle of one subscription in order (catch-up), decided by
 *   domain/billing-cycle.ts `cycleDecision` and computed by `cycleInvoice` over
 *   services/cycle-input.ts `cycleInputFrom`, the same functions as the upcoming-invoice preview.
 * - bulk-writes.ts: the batch's invoice rows, lines, usage marks and redemptions, written with a
 *   few bulk statements.
 * - collect.ts: after a batch commits (gateways are never called inside a transaction), each new
 *   invoice with an amount due is charged to the customer's usable reusable source.
 * - run.ts: the claim loops, the one-by-one retry of a failed batch (so one bad subscription fails
 *   alone), the final collection sweep, and the run on an interval inside the server.
 */
export {
  runBilling,
  startBillingRunWorker,
  DEFAULT_BATCH_SIZE,
  type BillingRunOptions,
  type BillingRunSummary,
  type BillingRunWorker,
} from "./billing-run/run.js";
export { MAX_CYCLES_PER_RUN } from "./billing-run/bill-subscription.js";
export { collectInvoices } from "./billing-run/collect.js";
export { runContext } from "./billing-run/run-context.js";
/** The cancel reasons and the source the run charges, from the one place of the cycle rules. */
export { ENDED_REASON, NO_CARD_REASON } from "../domain/billing-cycle.js";
export { usableSourceOf } from "./cycle-decision.js";
