/**
 * One batch of the billing run, inside one transaction (docs/billing-run.md "Throughput"): the
 * claimed subscriptions are read with one services/cycle-input.ts `loadCycleData`, each is billed
 * (bill-subscription.ts) with its writes buffered (bulk-writes.ts), the subscriptions are
 * advanced or cancelled with one statement, and the invoices are finalized last, most of them as
 * they are inserted.
 */
import { Prisma } from "../../infra/prisma/generated/client.js";
import { sqlRows } from "../../infra/sql/index.js";
import type { ServiceContext, Tx } from "../context.js";
import { loadCycleData, type CycleData } from "../cycle-input.js";
import { dateColumn } from "../../domain/formats.js";
import {
  finalizeNewInternalInvoices,
  finalizePlannedInvoiceDrafts,
  type FinalizedColumns,
} from "../document-lifecycle.js";
import { numberingPlan } from "../numbering.js";
import { loadIssuing } from "../issuing.js";
import { billSubscription, PreviousInvoices, type Outcome } from "./bill-subscription.js";
import { BatchWrites, writeSubscriptions } from "./bulk-writes.js";
import type { Claimed } from "./claim.js";
import type { PrismaClient } from "../../infra/prisma/generated/client.js";
import { printedTenantObjects, recordTenantEvents, type PrintedObject } from "../events.js";

/** Who a claimed subscription is billed as, and up to which day. */
export interface BatchTerms {
  contextOf: (c: Claimed) => ServiceContext;
  /** `yyyy-mm-dd`: the last cycle start to bill */
  cutoffOf: (c: Claimed) => string;
}

/**
 * The stored invoices the no-card rule reads (cycle n-1 on) of the batch's subscriptions: one raw
 * statement whatever the batch, one probe of the unique index on (subscriptionId, billingCycle) per
 * subscription (the LATERAL subquery with OFFSET 0 is not pulled up into a join, which the planner
 * served with a read of the whole table when its statistics were older than the rows); a findMany
 * with one OR branch per subscription cost a query compilation per batch.
 */
async function loadPreviousInvoices(tx: Tx, data: Map<string, CycleData>): Promise<PreviousInvoices> {
  const previous = new PreviousInvoices();
  const subs = [...data.values()].map((d) => d.subscription);
  if (subs.length === 0) return previous;
  const stored = await sqlRows<{
    id: string;
    subscriptionId: string;
    billingCycle: number;
    dueDate: string | null;
    status: string;
  }>(
    tx,
    Prisma.sql`
    SELECT i.* FROM unnest(${subs.map((s) => s.id)}::text[], ${subs.map((s) => s.nextBillingCycle - 1)}::int[])
    AS w("id", "from")
    CROSS JOIN LATERAL (
      SELECT "id", "subscriptionId", "billingCycle", to_char("dueDate", 'YYYY-MM-DD') AS "dueDate", "status"
      FROM "Invoice" WHERE "subscriptionId" = w."id" AND "billingCycle" >= w."from" OFFSET 0
    ) i`,
    { prepared: true },
  );
  for (const i of stored)
    previous.set(i.subscriptionId, i.billingCycle, {
      id: i.id,
      status: i.status,
      dueDate: i.dueDate === null ? null : dateColumn(i.dueDate),
    });
  return previous;
}

/**
 * Bills every due cycle of each claimed (locked) subscription of `batch` in order, inside `tx`
 * (docs/billing-run.md for the rules): reads the batch with loadCycleData, bills each
 * subscription (billSubscription) keeping that data current in memory, advances or cancels the
 * subscriptions with one statement, and finalizes the invoices (finalizeInvoices) as it writes the
 * buffered rows.
 */
export async function billBatch(tx: Tx, batch: Claimed[], terms: BatchTerms): Promise<Outcome[]> {
  if (batch.length === 0) return [];
  const zoneOf = new Map(batch.map((c) => [c.id, c.timeZone]));
  const data = await loadCycleData(
    tx,
    batch.map((c) => c.id),
    { timeZoneOf: (s) => zoneOf.get(s.id)! },
  );
  // the no-card rule reads cycle n-1's invoice: stored ones, and the ones this batch creates
  const previous = await loadPreviousInvoices(tx, data);
  // the subscriptions as they are, for the previous_attributes of their subscription.updated events
  const subscriptions = batch.map((c) => ({ ctx: terms.contextOf(c), id: c.id }));
  const before = await printedTenantObjects(tx as unknown as PrismaClient, "subscription", subscriptions);
  const writes = new BatchWrites(tx);
  const outcomes: Outcome[] = [];
  for (const claimed of batch) {
    const d = data.get(claimed.id);
    if (!d) throw new Error(`subscription ${claimed.id} was claimed but not found`);
    outcomes.push(
      await billSubscription({
        tx,
        base: terms.contextOf(claimed),
        data: d,
        cutoff: terms.cutoffOf(claimed),
        writes,
        previous,
      }),
    );
  }
  const changed = batch
    .filter((_, i) => outcomes[i].cycles > 0 || outcomes[i].cancelled)
    .map((c) => data.get(c.id)!.subscription);
  await writeSubscriptions(tx, changed);
  await recordSubscriptionEvents(tx, subscriptions, outcomes, before);
  await finalizeInvoices(tx, outcomes, writes);
  // the new invoices' events: created and finalized in this transaction, each printed once, finalized
  const invoices = outcomes.flatMap((o) => o.invoices.map((id) => ({ ctx: o.ctx, id })));
  await recordTenantEvents(
    tx as unknown as PrismaClient,
    ["invoice.created", "invoice.finalized"],
    "invoice",
    invoices,
  );
  return outcomes;
}

/**
 * The events of the batch's subscriptions (docs/webhooks.md): subscription.canceled for those the
 * run ended (the no-card rule, a cancellation at period end), subscription.updated with
 * previous_attributes for those it renewed (a new period).
 */
async function recordSubscriptionEvents(
  tx: Tx,
  subscriptions: { ctx: ServiceContext; id: string }[],
  outcomes: Outcome[],
  before: Map<string, PrintedObject>,
): Promise<void> {
  const db = tx as unknown as PrismaClient;
  const canceled = subscriptions.filter((_, i) => outcomes[i].cancelled);
  const renewed = subscriptions.filter((_, i) => !outcomes[i].cancelled && outcomes[i].cycles > 0);
  await recordTenantEvents(db, ["subscription.canceled"], "subscription", canceled);
  await recordTenantEvents(db, ["subscription.updated"], "subscription", renewed, before);
}

/**
 * Finalizes the invoices the batch created, in creation order within each organization, mode and
 * document type (so numbers follow the cycles), and writes the buffered rows. Groups go in a fixed
 * order, so concurrent runners lock counter rows (and CAFs) in the same order. Done last: a counter
 * row is held until commit, and concurrent runners of one organization queue on it only for these
 * few statements, not for the whole batch.
 *
 * When the internal series numbers every group (numbering.ts numberingPlan), the buffered lines,
 * usage marks and redemptions are written first (BatchWrites.flushAllButInvoices, their foreign
 * keys to Invoice deferred until the invoices are in), then each group is numbered
 * (document-lifecycle.ts finalizeNewInternalInvoices: one counter update per group), the drafts a
 * flush stored before (the no-card rule, pending changes and items read the database) are
 * finalized with one update, and the invoices still buffered are inserted finalized, last. A
 * counter row is held from its update to commit; with the invoices' insert the only large write
 * left in that window, two runners of one organization wait for each other less
 * (docs/performance.md "The numbering counter's hold"). When a group is an SII type, its DTEs are
 * built from the stored drafts: every buffered row is written as a draft and each group finalized
 * by finalizeNewInvoiceDrafts (one CAF folio range, DTEs signed in worker threads).
 */
async function finalizeInvoices(tx: Tx, outcomes: Outcome[], writes: BatchWrites): Promise<void> {
  const groups = new Map<string, { ctx: ServiceContext; documentTypeId: string; drafts: Outcome["drafts"] }>();
  for (const o of outcomes) {
    for (const draft of o.drafts) {
      const key = `${o.ctx.auth.organizationId}\u0000${o.ctx.auth.testMode}\u0000${draft.documentTypeId}`;
      const group = groups.get(key) ?? { ctx: o.ctx, documentTypeId: draft.documentTypeId, drafts: [] };
      group.drafts.push(draft);
      groups.set(key, group);
    }
  }
  const ordered = [...groups.keys()].sort().map((key) => groups.get(key)!);
  // what each group's finalize needs from its organization, read once (services/issuing.ts)
  const issuings = [];
  for (const g of ordered) {
    const issuing = await loadIssuing(tx, g.ctx);
    issuings.push({ issuing, plan: await numberingPlan(issuing, g.documentTypeId) });
  }
  if (issuings.some(({ plan }) => plan.numbering !== "internal")) {
    await writes.flush();
    for (const [i, g] of ordered.entries()) {
      const { issuing, plan } = issuings[i];
      await finalizePlannedInvoiceDrafts(issuing, plan, {
        documentTypeId: g.documentTypeId,
        ids: g.drafts.map((d) => d.id),
      });
    }
    return;
  }
  // everything but the invoices goes out before the first counter is taken, so that the counter rows
  // are held (until commit) only while the invoices are inserted
  await writes.flushAllButInvoices();
  const buffered = writes.bufferedInvoiceIds();
  const finalized = new Map<string, FinalizedColumns>();
  for (const [i, g] of ordered.entries()) {
    const invoices = g.drafts.map((d) => ({ id: d.id, customerId: d.customerId, stored: !buffered.has(d.id) }));
    for (const [id, columns] of await finalizeNewInternalInvoices(issuings[i].issuing, g.documentTypeId, invoices))
      finalized.set(id, columns);
  }
  writes.finalize(finalized);
  await writes.flush();
}
