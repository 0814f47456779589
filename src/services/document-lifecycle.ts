/**
 * The lifecycle of invoices, orders and credit notes (docs/invoice-totals.md,
 * docs/orders-and-credit-notes.md): a draft's update, delete and finalize under a row lock
 * (domain/document-status.ts), and the line rows they write. Lines and totals are computed by
 * domain/document-lines.ts; the number a document gets at finalize comes from services/numbering.ts
 * (its series: docs/sii-setup.md "Numbering before enrollment"). Reference lookups: ./reference.ts.
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { NotFoundError, ValidationError } from "../domain/errors.js";
import { transition, type DocumentKind } from "../domain/document-status.js";
import type { NormalizedLine } from "../domain/document-lines.js";
import type { DocumentTotals } from "../domain/totals.js";
import {
  nextDocumentNumbers,
  numberDocument,
  numberingPlan,
  numberNewInvoices,
  type NumberingPlan,
} from "./numbering.js";
import type { InvoiceBatch } from "./tax-documents.js";
import { loadIssuing, type Issuing } from "./issuing.js";
import type { DocumentNumbering } from "../domain/document-numbering.js";
import type { IssuedCustomer, IssuedIssuer } from "../domain/issued-parties.js";
import { enqueueIssuedDocument, enqueueIssuedDocuments } from "./sii-sending.js";
import { customerSnapshots, snapshotColumns, snapshotParties } from "./issued-parties.js";
import { lockTenantRow, withinTransaction, type ServiceContext, type TenantTable, type Tx } from "./context.js";
import { printedObjects, recordEvents } from "./events.js";
import { settlingInvoice } from "./invoice-balances.js";
import type { EventType } from "../domain/events.js";

/** The events of a kind's lifecycle (docs/webhooks.md "Event types"); credit notes are never updated. */
export const DOCUMENT_EVENTS: Record<
  DocumentKind,
  { created: EventType; updated?: EventType; deleted: EventType; finalized: EventType }
> = {
  invoice: {
    created: "invoice.created",
    updated: "invoice.updated",
    deleted: "invoice.deleted",
    finalized: "invoice.finalized",
  },
  order: { created: "order.created", updated: "order.updated", deleted: "order.deleted", finalized: "order.finalized" },
  credit_note: { created: "credit_note.created", deleted: "credit_note.deleted", finalized: "credit_note.finalized" },
};

/**
 * Prisma create rows for `lines` with their computed totals. `withLineTax`: also the per-line
 * `tax` and `taxPercent` columns (order and credit note lines print them).
 */
export function lineRows(lines: NormalizedLine[], totals: DocumentTotals, { withLineTax = false } = {}) {
  return lines.map((line, position) => {
    const computed = totals.lines[position];
    return {
      id: newId("lin"),
      position,
      name: line.name,
      description: line.description,
      quantity: line.quantity,
      amount: line.amount,
      discount: line.discount,
      discountScheme: line.discountScheme,
      exempt: computed.exempt,
      total: computed.total.toString(),
      ...(withLineTax ? { tax: computed.tax?.toString() ?? null, taxPercent: computed.taxPercent.toString() } : {}),
    };
  });
}

const TABLES: Record<DocumentKind, TenantTable> = { invoice: "Invoice", order: "Order", credit_note: "CreditNote" };

/** Words of a kind in messages: "credit note". */
const RESOURCE: Record<DocumentKind, string> = { invoice: "invoice", order: "order", credit_note: "credit note" };

/** The Prisma delegates of a kind's document and line tables (their shapes agree where used here). */
interface DocumentModel {
  document(tx: Tx): {
    findUniqueOrThrow(args: object): Promise<unknown>;
    update(args: object): Promise<unknown>;
    delete(args: object): Promise<unknown>;
  };
  lines(tx: Tx): { update(args: object): Promise<unknown>; deleteMany(args: object): Promise<unknown> };
  parentKey: string;
}

const MODELS: Record<DocumentKind, DocumentModel> = {
  invoice: { document: (tx) => tx.invoice, lines: (tx) => tx.invoiceLine, parentKey: "invoiceId" },
  order: { document: (tx) => tx.order, lines: (tx) => tx.orderLine, parentKey: "orderId" },
  credit_note: { document: (tx) => tx.creditNote, lines: (tx) => tx.creditNoteLine, parentKey: "creditNoteId" },
};

/** What a kind's `prepare` returns: every column, the line rows, and whether lines were given. */
export interface PreparedDocument {
  columns: Record<string, unknown>;
  lines: ReturnType<typeof lineRows>;
  linesChanged: boolean;
}

/** A draft's stored line as read for an update: its id and its columns, by position in the document. */
type StoredDraftLine = { id: string } & Record<string, unknown>;

/**
 * Updates a draft: locks it, checks the transition (404 unknown, 409 not a draft), lets `prepare`
 * validate the input over the stored document (read inside the transaction, lines by position),
 * then replaces the lines when given, or rewrites the computed columns of the stored lines that
 * changed (totals depend on the document type and currency). One transaction; a failure changes
 * nothing. Returns the updated document row.
 */
export async function updateDraftDocument<T, C extends { lines: unknown[] }>(
  ctx: ServiceContext,
  kind: DocumentKind,
  id: string,
  prepare: (ctx: ServiceContext, current: C) => Promise<PreparedDocument>,
): Promise<T> {
  const model = MODELS[kind];
  return ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, kind, id, ctx);
    if (status === null) throw new NotFoundError(RESOURCE[kind], id);
    transition(RESOURCE[kind], status, "update");
    const txCtx = withinTransaction(ctx, tx);
    const before = await printedObjects(txCtx, kind, [id]);
    const current = (await model
      .document(tx)
      .findUniqueOrThrow({ where: { id }, include: { lines: { orderBy: { position: "asc" } } } })) as C;
    const { columns, lines, linesChanged } = await prepare(withinTransaction(ctx, tx), current);
    if (linesChanged) await model.lines(tx).deleteMany({ where: { [model.parentKey]: id } });
    else {
      for (const [i, stored] of (current.lines as StoredDraftLine[]).entries()) {
        const { total, exempt, tax, taxPercent } = lines[i] as Record<string, unknown>;
        const computed = Object.fromEntries(
          Object.entries({ total, exempt, tax, taxPercent }).filter(([, v]) => v !== undefined),
        );
        if (Object.entries(computed).some(([key, value]) => String(stored[key]) !== String(value))) {
          await model.lines(tx).update({ where: { id: stored.id }, data: computed });
        }
      }
    }
    const updated = (await model.document(tx).update({
      where: { id },
      data: { ...columns, ...(linesChanged ? { lines: { create: lines } } : {}) },
    })) as T;
    const event = DOCUMENT_EVENTS[kind].updated;
    if (event) await recordEvents(txCtx, event, kind, [id], { before });
    return updated;
  });
}

/** Deletes a draft and its lines (cascade): 404 unknown, 409 finalized. One transaction. */
export async function deleteDraftDocument(ctx: ServiceContext, kind: DocumentKind, id: string): Promise<void> {
  await ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, kind, id, ctx);
    if (status === null) throw new NotFoundError(RESOURCE[kind], id);
    transition(RESOURCE[kind], status, "delete");
    // the event reports the document as it was
    const txCtx = withinTransaction(ctx, tx);
    const objects = await printedObjects(txCtx, kind, [id]);
    await MODELS[kind].document(tx).delete({ where: { id } });
    await recordEvents(txCtx, DOCUMENT_EVENTS[kind].deleted, kind, [id], { objects });
  });
}

/**
 * Finalizes a draft: locks it (404 unknown, 409 not a draft) and finalizes it with
 * finalizeLockedDocument. One transaction.
 */
export async function finalizeDraftDocument<T>(ctx: ServiceContext, kind: DocumentKind, id: string): Promise<T> {
  return ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, kind, id, ctx);
    if (status === null) throw new NotFoundError(RESOURCE[kind], id);
    return finalizeLockedDocument<T>(tx, ctx, kind, id, status);
  });
}

/**
 * Finalizes draft `id`, already locked by the caller's transaction `tx` (lockDocument, or created in
 * it): checks the transition (409 not a draft), requires at least one line (400 on `lines`; a tax
 * document needs one), reads what it needs of the organization once (services/issuing.ts: its
 * settings and name; the numbering plan adds the type's agency and the mode's certificates) and
 * hands it down, stores the snapshot of its customer and issuer (services/issued-parties.ts:
 * what every reader shows from then on), numbers it (services/numbering.ts: an SII folio with the
 * signed DTE, built from that snapshot, stored as `localFile` with `taxAgency` pending, for a mode
 * set up with SII and a type it issues; else the internal series; 409 in live mode for a type SII
 * issues when the mode is not set up, or when no folio is left), and sets status `finalized`,
 * `finalizedAt`, `number` and `numbering`. Everything the API's finalize does happens here, so other
 * use cases (the billing run) finalize the same way inside their own transaction. Returns the
 * finalized row.
 */
export async function finalizeLockedDocument<T>(
  tx: Tx,
  ctx: ServiceContext,
  kind: DocumentKind,
  id: string,
  status: string,
): Promise<T> {
  const model = MODELS[kind];
  transition(RESOURCE[kind], status, "finalize");
  const document = (await model
    .document(tx)
    .findUniqueOrThrow({ where: { id }, include: { _count: { select: { lines: true } } } })) as {
    documentTypeId: string;
    _count: { lines: number };
  };
  if (document._count.lines === 0)
    throw ValidationError.field(
      "lines",
      `a${kind === "order" || kind === "invoice" ? "n" : ""} ${RESOURCE[kind]} needs at least one line to be finalized`,
    );
  // a credit note may leave nothing due on its invoice: invoice.paid (services/invoice-balances.ts)
  const creditedInvoice =
    kind === "credit_note"
      ? (await tx.creditNote.findUniqueOrThrow({ where: { id }, select: { invoiceId: true } })).invoiceId
      : null;
  const settling = creditedInvoice ? await settlingInvoice(withinTransaction(ctx, tx), creditedInvoice) : null;
  const issuing = await loadIssuing(tx, ctx);
  // the customer and issuer as issued, stored with the document (services/issued-parties.ts)
  const parties = await snapshotParties(withinTransaction(ctx, tx), kind, id, issuing.issuer);
  const draft = { kind, id, documentTypeId: document.documentTypeId };
  const { number, numbering, issued } = await numberDocument(issuing, draft, parties);
  const taxColumns = issued ? { localFile: issued.localFile, taxAgency: issued.taxAgency } : {};
  const finalized = await model.document(tx).update({
    where: { id },
    data: {
      status: "finalized",
      number,
      numbering,
      finalizedAt: issuing.now,
      ...snapshotColumns(parties),
      ...taxColumns,
    },
  });
  // an SII DTE is queued for sending in the same transaction (services/sii-sending.ts)
  if (issued) await enqueueIssuedDocument(tx, { ...issuing.owner, now: issuing.now }, kind, id, issued);
  await recordEvents(withinTransaction(ctx, tx), DOCUMENT_EVENTS[kind].finalized, kind, [id]);
  await settling?.recordPaid();
  return finalized as T;
}

/**
 * Locks the document row for the rest of the transaction (`SELECT ... FOR UPDATE`) and returns its
 * status, or null when no such row of this tenant exists. Concurrent updates, deletes and
 * finalizes of one document are serialized by this lock.
 */
export async function lockDocument(
  tx: Tx,
  kind: DocumentKind,
  id: string,
  ctx: ServiceContext,
): Promise<string | null> {
  const row = await lockTenantRow(tx, ctx, TABLES[kind], id, ["status"]);
  return row ? String(row.status) : null;
}

/**
 * The drafts `ids` created in the caller's transaction, with their customers, checked to be drafts
 * of `documentTypeId` in the context's organization and mode. Checked here rather than in the
 * finalize UPDATE (writeFinalizedDrafts): there the planner could take these columns' index and
 * read every invoice of the type in the organization (stale statistics of a growing table).
 */
async function newDrafts(
  { tx, owner }: Issuing,
  documentTypeId: string,
  ids: readonly string[],
): Promise<{ id: string; customerId: string }[]> {
  const drafts = await tx.invoice.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, customerId: true, organizationId: true, testMode: true, documentTypeId: true, status: true },
  });
  const strangers = drafts.filter(
    (d) =>
      d.status !== "draft" ||
      d.organizationId !== owner.organizationId ||
      d.testMode !== owner.testMode ||
      d.documentTypeId !== documentTypeId,
  );
  if (drafts.length !== ids.length || strangers.length)
    throw new Error(
      `finalizing ${ids.length} new invoice drafts: ${ids.length - drafts.length + strangers.length} are not ` +
        `drafts of this type in this organization and mode`,
    );
  return drafts;
}

/** A stored draft's finalized columns of its own (the others are the same for the whole update). */
interface FinalizedDraft {
  id: string;
  number: number;
  customerSnapshot: IssuedCustomer | null;
  localFile: string | null;
  taxAgency: unknown;
}

/**
 * Finalizes stored drafts with one update (status, number, series, time, the parties as issued, and
 * for DTEs the file and `taxAgency`), one JSON parameter for all rows (a VALUES list of 5 parameters
 * a row costs the Prisma client more). Throws unless each is a draft with at least one line.
 */
async function writeFinalizedDrafts(
  tx: Tx,
  drafts: readonly FinalizedDraft[],
  common: { numbering: DocumentNumbering; now: Date; issuer: IssuedIssuer },
): Promise<void> {
  if (drafts.length === 0) return;
  const { numbering, now } = common;
  const updated = await tx.$executeRaw(Prisma.sql`
    UPDATE "Invoice" i SET "status" = 'finalized', "number" = v."number", "numbering" = ${numbering},
    "finalizedAt" = ${now}, "updatedAt" = ${now},
      "customerSnapshot" = v."customerSnapshot", "issuerSnapshot" = ${JSON.stringify(common.issuer)}::jsonb,
      "localFile" = COALESCE(v."localFile", i."localFile"), "taxAgency" = COALESCE(v."taxAgency", i."taxAgency")
    FROM json_to_recordset(${JSON.stringify(drafts)}::json) AS v("id" text, "number" int, "customerSnapshot" jsonb,
    "localFile" text, "taxAgency" jsonb)
    WHERE i."id" = v."id" AND i."status" = 'draft' AND EXISTS (SELECT 1 FROM "InvoiceLine" l
      WHERE l."invoiceId" = i."id")`);
  if (updated !== drafts.length) throw new Error(`finalizing ${drafts.length} new invoice drafts updated ${updated}`);
}

/**
 * Finalizes the invoice drafts of `batch` (`ids` of document type `documentTypeId`), all created in
 * `issuing`'s transaction with at least one line each (so nobody else sees them and none is empty),
 * in the order given, as finalizeLockedDocument would each, in bulk, in the series `plan`
 * (numbering.ts numberingPlan of the type with the same `issuing`): numbered by numbering.ts
 * numberNewInvoices (one counter update for the internal series, or one CAF folio range with the
 * DTEs built and signed off the main thread; the same 409s), then one update of the invoices, which
 * also writes each one's snapshot of its customer and `issuing.issuer` (and its DTE file and
 * `taxAgency`), and for DTEs one insert of their SII submissions. Returns how many were finalized.
 * (finalizeNewInvoiceDrafts loads `issuing` and `plan` itself.)
 */
export async function finalizePlannedInvoiceDrafts(
  issuing: Issuing,
  plan: NumberingPlan,
  batch: InvoiceBatch,
): Promise<number> {
  const { tx, issuer, now } = issuing;
  const { documentTypeId, ids } = batch;
  if (ids.length === 0) return 0;
  transition(RESOURCE.invoice, "draft", "finalize");
  // the snapshot of each invoice's customer and of the issuer, as finalizeLockedDocument stores it
  const drafts = await newDrafts(issuing, documentTypeId, ids);
  const customerOf = new Map(drafts.map((d) => [d.id, d.customerId]));
  const customers = await customerSnapshots(
    tx,
    drafts.map((d) => d.customerId),
  );
  const customerSnapshotOf = (id: string) => customers.get(customerOf.get(id)!) ?? null;
  const parties = new Map(ids.map((id) => [id, { customer: customerSnapshotOf(id)!, issuer }]));
  const { numbering, numbers, issued } = await numberNewInvoices(issuing, plan, batch, parties);
  await writeFinalizedDrafts(
    tx,
    ids.map((id, i) => ({
      id,
      number: numbers[i],
      customerSnapshot: customerSnapshotOf(id),
      localFile: issued?.[i].localFile ?? null,
      taxAgency: issued?.[i].taxAgency ?? null,
    })),
    { numbering, now, issuer },
  );
  // each SII DTE is queued for sending in the same transaction (services/sii-sending.ts)
  if (issued)
    await enqueueIssuedDocuments(
      tx,
      { ...issuing.owner, now },
      "invoice",
      ids.map((id, i) => ({ id, issued: issued[i] })),
    );
  return ids.length;
}

/**
 * finalizePlannedInvoiceDrafts for invoice drafts `ids` of type `documentTypeId` created in `tx` by
 * `ctx`'s organization and mode, which reads what it needs of the organization (services/issuing.ts)
 * and decides the series (numbering.ts numberingPlan) first. Same errors; returns how many were finalized.
 */
export async function finalizeNewInvoiceDrafts(
  tx: Tx,
  ctx: ServiceContext,
  documentTypeId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const issuing = await loadIssuing(tx, ctx);
  const plan = await numberingPlan(issuing, documentTypeId);
  return finalizePlannedInvoiceDrafts(issuing, plan, { documentTypeId, ids });
}

/** The columns an invoice finalized as it is inserted stores (finalizeNewInternalInvoices). */
export interface FinalizedColumns {
  status: "finalized";
  number: number;
  numbering: "internal";
  /** ISO instant */
  finalizedAt: string;
  customerSnapshot: IssuedCustomer;
  issuerSnapshot: IssuedIssuer;
}

/**
 * Finalizes in bulk new invoices of type `documentTypeId` that the internal series numbers for
 * `issuing`'s organization and mode (numbering.ts numberingPlan), created in its transaction in the
 * order given, each with at least one line: what finalizeNewInvoiceDrafts does, without
 * storing them as drafts first. One counter update numbers them all in order; each stores the
 * snapshot of its customer and of the issuer. The invoices already stored as drafts (`stored`) are
 * finalized with one update; for the others, which the caller inserts afterwards in the same
 * transaction, returns the columns to insert them with, by id. An invoice is never stored as a
 * draft and updated when it can be inserted finalized: the update wrote every row of the batch a
 * second time (docs/performance.md "After: the database's share").
 */
export async function finalizeNewInternalInvoices(
  issuing: Issuing,
  documentTypeId: string,
  invoices: readonly { id: string; customerId: string; stored: boolean }[],
): Promise<Map<string, FinalizedColumns>> {
  const columns = new Map<string, FinalizedColumns>();
  if (invoices.length === 0) return columns;
  const { tx, owner, issuer, now } = issuing;
  transition(RESOURCE.invoice, "draft", "finalize");
  const stored = invoices.filter((i) => i.stored).map((i) => i.id);
  if (stored.length) await newDrafts(issuing, documentTypeId, stored);
  const customers = await customerSnapshots(
    tx,
    invoices.map((i) => i.customerId),
  );
  const series = { documentTypeId, kind: "invoice" as const };
  const numbers = await nextDocumentNumbers(tx, owner, series, invoices.length);
  const drafts: FinalizedDraft[] = [];
  invoices.forEach(({ id, customerId, stored }, i) => {
    const customerSnapshot = customers.get(customerId)!;
    if (stored) drafts.push({ id, number: numbers[i], customerSnapshot, localFile: null, taxAgency: null });
    else
      columns.set(id, {
        status: "finalized",
        number: numbers[i],
        numbering: "internal",
        finalizedAt: now.toISOString(),
        customerSnapshot,
        issuerSnapshot: issuer,
      });
  });
  await writeFinalizedDrafts(tx, drafts, { numbering: "internal", now, issuer });
  return columns;
}
