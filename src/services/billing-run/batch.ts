/**
 * One batch of the billing run, inside one transaction (docs/billing-run.md "Throughput"): the
 * claimed subscriptions are read with one services/cycle-input.ts `loadCycleData`, each is billed
 * (bill-subscription.ts) with its writes buffered (bulk-writes.ts), the subscriptions are
 * advanced or cancelled with one statement, and the drafts are finalized last.
 */
import { Prisma } from "../../infra/prisma/generated/client.js";
import type { ServiceContext, Tx } from "../context.js";
import { loadCycleData, type CycleData } from "../cycle-input.js";
import { dateColumn } from "../../domain/formats.js";
import { finalizeNewInvoiceDrafts } from "../document-lifecycle.js";
import { billSubscription, PreviousInvoices, type Outcome } from "./bill-subscription.js";
import { BatchWrites, writeSubscriptions } from "./bulk-writes.js";
import type { Claimed } from "./claim.js";

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
  const stored = await tx.$queryRaw<
    { id: string; subscriptionId: string; billingCycle: number; dueDate: string | null; status: string }[]
  >(Prisma.sql`
    SELECT i.* FROM unnest(ARRAY[${Prisma.join(subs.map((s) => s.id))}]::text[],
    ARRAY[${Prisma.join(subs.map((s) => s.nextBillingCycle - 1))}]::int[]) AS w("id", "from")
    CROSS JOIN LATERAL (
      SELECT "id", "subscriptionId", "billingCycle", to_char("dueDate", 'YYYY-MM-DD') AS "dueDate", "status"
      FROM "Invoice" WHERE "subscriptionId" = w."id" AND "billingCycle" >= w."from" OFFSET 0
    ) i`);
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
 * subscription (billSubscription) keeping that data current in memory, flushes the buffered
 * writes, and advances or cancels the subscriptions with one statement. The drafts are finalized
 * by the caller (finalizeDrafts).
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
  await writes.flush();
  const changed = batch
    .filter((_, i) => outcomes[i].cycles > 0 || outcomes[i].cancelled)
    .map((c) => data.get(c.id)!.subscription);
  await writeSubscriptions(tx, changed);
  return outcomes;
}

/**
 * Finalizes the drafts the batch created (finalizeNewInvoiceDrafts: numbered with one counter
 * update per organization, mode and document type, or with one CAF folio range and DTEs signed in
 * worker threads when the organization issues that type with SII), in creation order within each
 * document type (so numbers follow the cycles). Groups go in a fixed order, so concurrent runners
 * lock counter rows in the same order. Done last: the counter row is held until commit, and
 * concurrent runners of one organization queue on it only for these few statements, not for the
 * whole batch.
 */
export async function finalizeDrafts(tx: Tx, outcomes: Outcome[]): Promise<void> {
  const groups = new Map<string, { ctx: ServiceContext; documentTypeId: string; ids: string[] }>();
  for (const o of outcomes) {
    for (const draft of o.drafts) {
      const key = `${o.ctx.auth.organizationId}\u0000${o.ctx.auth.testMode}\u0000${draft.documentTypeId}`;
      const group = groups.get(key) ?? { ctx: o.ctx, documentTypeId: draft.documentTypeId, ids: [] };
      group.ids.push(draft.id);
      groups.set(key, group);
    }
  }
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key)!;
    await finalizeNewInvoiceDrafts(tx, group.ctx, group.documentTypeId, group.ids);
  }
}
