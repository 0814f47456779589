/**
 * Machinery shared by invoices, orders and credit notes (docs/invoice-totals.md, docs/orders-and-credit-notes.md): line validation
 * and totals (domain/totals.ts), the draft lifecycle (update, delete, finalize under a row lock,
 * domain/document-status.ts) and gapless numbering. Reference lookups: ./reference.ts.
 */
import type { Currency, DocumentType } from "../infra/prisma/generated/client.js";
import { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { NotFoundError, ValidationError, type FieldErrorCollector } from "../domain/errors.js";
import { transition } from "../domain/document-status.js";
import { isoDate, todayIn } from "../domain/formats.js";
import { computeDocumentTotals, DISCOUNT_SCHEMES, type DiscountScheme, type DocumentTotals, type TotalsInput } from "../domain/totals.js";
import { toDecimal, type DecimalInput } from "../domain/money.js";
import { issueTaxDocument, issueTaxInvoices, taxAgencyIssuing } from "./tax-documents.js";
import { enqueueIssuedDocument, enqueueIssuedDocuments } from "./sii-sending.js";
import { snapshotColumns, snapshotParties, snapshotPartiesOfCustomers } from "./issued-parties.js";
import { lockTenantRow, tenant, withinTransaction, type ServiceContext, type TenantTable, type Tx } from "./context.js";

export type DocumentKind = "invoice" | "order" | "credit_note";

export interface LineInput {
  name?: string | null;
  description?: string | null;
  quantity?: DecimalInput | null;
  amount?: DecimalInput | null;
  discount?: DecimalInput | null;
  discountScheme?: string | null;
  exempt?: boolean | null;
}

export interface NormalizedLine {
  name: string;
  description: string | null;
  quantity: string;
  amount: string;
  discount: string;
  discountScheme: DiscountScheme;
  exempt: boolean;
}

export const MAX_LINES = 1000;

/** Validates lines (name required, quantity defaults to 1, amount required); field paths `lines.N.x`. */
export function normalizeLines(lines: LineInput[], errors: FieldErrorCollector): NormalizedLine[] {
  if (lines.length > MAX_LINES) errors.add("lines", `at most ${MAX_LINES} lines`);
  return lines.map((line, i) => {
    if (!line.name || !line.name.trim()) errors.add(`lines.${i}.name`, "is required");
    else if (line.name.length > 200) errors.add(`lines.${i}.name`, "must have at most 200 characters");
    if (line.amount === undefined || line.amount === null) errors.add(`lines.${i}.amount`, "is required");
    const scheme = line.discountScheme ?? "%";
    if (!DISCOUNT_SCHEMES.includes(scheme as DiscountScheme)) errors.add(`lines.${i}.discount_scheme`, "must be % or $");
    return {
      name: line.name ?? "",
      description: line.description ?? null,
      quantity: toDecimal(line.quantity ?? 1).toString(),
      amount: toDecimal(line.amount ?? 0).toString(),
      discount: toDecimal(line.discount ?? 0).toString(),
      discountScheme: scheme as DiscountScheme,
      exempt: line.exempt ?? false,
    };
  });
}

/** A document type's tax rules, as computeDocumentTotals takes them. */
export function taxRulesOf(documentType: DocumentType): Pick<TotalsInput, "taxPercent" | "hasTaxes" | "pricesIncludeTax"> {
  return { taxPercent: documentType.tax.toString(), hasTaxes: documentType.hasTaxes, pricesIncludeTax: documentType.pricesIncludeTax };
}

/**
 * Totals of `lines` under `taxRules` (a document type's, see taxRulesOf, or a credit note's
 * invoice's) in `currency`; ValidationError keeps the field paths.
 */
export function documentTotals(
  taxRules: Pick<TotalsInput, "taxPercent" | "hasTaxes" | "pricesIncludeTax">,
  currency: Currency,
  lines: NormalizedLine[],
  discount: { discount: string; discountScheme: DiscountScheme },
): DocumentTotals {
  return computeDocumentTotals({ lines, discount: discount.discount, discountScheme: discount.discountScheme, ...taxRules, currency });
}

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

/** Stored line rows back as line input (decimals as exact strings), to recompute a draft's totals. */
export function storedLineInputs(
  lines: { name: string; description: string | null; quantity: unknown; amount: unknown; discount: unknown; discountScheme: string; exempt: boolean }[],
): LineInput[] {
  return lines.map((l) => ({
    name: l.name,
    description: l.description,
    quantity: String(l.quantity),
    amount: String(l.amount),
    discount: String(l.discount),
    discountScheme: l.discountScheme,
    exempt: l.exempt,
  }));
}

/** A customer of the caller for a document; a field error (not a 404) when missing or unknown. */
export async function findDocumentCustomer(ctx: ServiceContext, id: string | null | undefined, errors: FieldErrorCollector, field = "customer") {
  if (!id) {
    errors.add(field, "is required");
    return null;
  }
  // with what a new document's answer shows of it (its country) and the organization's time zone
  // (the default document date): one statement (infra/joined-reads.ts)
  const customer = await ctx.prisma.customer.findFirst({ where: { id, ...tenant(ctx) }, include: { country: true, organization: { select: { timeZone: true } } } });
  if (!customer) errors.add(field, `unknown customer ${id}`);
  return customer;
}

/** Today (`yyyy-mm-dd`) in the caller organization's time zone: the default document date. */
export async function organizationToday(ctx: ServiceContext): Promise<string> {
  const org = await ctx.prisma.organization.findUniqueOrThrow({ where: { id: ctx.auth.organizationId }, select: { timeZone: true } });
  return todayIn(org.timeZone, ctx.now());
}

/** A stored `@db.Date` as `yyyy-mm-dd`, null stays null. */
export function storedDate(d: Date | null | undefined): string | null {
  return d ? isoDate(d) : null;
}

/** Document columns from totals. */
export function totalColumns(totals: DocumentTotals, discount: { discount: string; discountScheme: DiscountScheme }) {
  return {
    amount: totals.amount.toString(),
    exempt: totals.exempt.toString(),
    tax: totals.tax.toString(),
    taxPercent: totals.taxPercent.toString(),
    subtotal: totals.subtotal.toString(),
    discount: discount.discount,
    discountScheme: discount.discountScheme,
    discountAmount: totals.discountAmount.toString(),
    total: totals.total.toString(),
  };
}

/** Validates a document discount (`discount`, `discount_scheme`). */
export function normalizeDiscount(
  input: { discount?: DecimalInput | null; discountScheme?: string | null },
  current: { discount: string; discountScheme: string } | null,
  errors: FieldErrorCollector,
): { discount: string; discountScheme: DiscountScheme } {
  const scheme = input.discountScheme ?? current?.discountScheme ?? "%";
  if (!DISCOUNT_SCHEMES.includes(scheme as DiscountScheme)) errors.add("discount_scheme", "must be % or $");
  return {
    discount: toDecimal(input.discount ?? current?.discount ?? 0).toString(),
    discountScheme: scheme as DiscountScheme,
  };
}

const TABLES: Record<DocumentKind, TenantTable> = { invoice: "Invoice", order: "Order", credit_note: "CreditNote" };

/** Words of a kind in messages: "credit note". */
const RESOURCE: Record<DocumentKind, string> = { invoice: "invoice", order: "order", credit_note: "credit note" };

/** The Prisma delegates of a kind's document and line tables (their shapes agree where used here). */
interface DocumentModel {
  document(tx: Tx): {
    findUniqueOrThrow(args: object): Promise<any>;
    update(args: object): Promise<any>;
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

type StoredLine = { id: string } & Record<string, unknown>;

/**
 * Updates a draft: locks it, checks the transition (404 unknown, 409 not a draft), lets `prepare`
 * validate the input over the stored document (read inside the transaction, lines by position),
 * then replaces the lines when given, or rewrites the computed columns of the stored lines that
 * changed (totals depend on the document type and currency). One transaction; a failure changes
 * nothing. Returns the updated document row.
 */
export async function updateDraftDocument<T>(
  ctx: ServiceContext,
  kind: DocumentKind,
  id: string,
  prepare: (ctx: ServiceContext, current: any) => Promise<PreparedDocument>,
): Promise<T> {
  const model = MODELS[kind];
  return ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, kind, id, ctx);
    if (status === null) throw new NotFoundError(RESOURCE[kind], id);
    transition(RESOURCE[kind], status, "update");
    const current = await model.document(tx).findUniqueOrThrow({ where: { id }, include: { lines: { orderBy: { position: "asc" } } } });
    const { columns, lines, linesChanged } = await prepare(withinTransaction(ctx, tx), current);
    if (linesChanged) await model.lines(tx).deleteMany({ where: { [model.parentKey]: id } });
    else {
      for (const [i, stored] of (current.lines as StoredLine[]).entries()) {
        const { total, exempt, tax, taxPercent } = lines[i] as Record<string, unknown>;
        const computed = Object.fromEntries(Object.entries({ total, exempt, tax, taxPercent }).filter(([, v]) => v !== undefined));
        if (Object.entries(computed).some(([key, value]) => String(stored[key]) !== String(value))) {
          await model.lines(tx).update({ where: { id: stored.id }, data: computed });
        }
      }
    }
    return model.document(tx).update({ where: { id }, data: { ...columns, ...(linesChanged ? { lines: { create: lines } } : {}) } });
  });
}

/** Deletes a draft and its lines (cascade): 404 unknown, 409 finalized. One transaction. */
export async function deleteDraftDocument(ctx: ServiceContext, kind: DocumentKind, id: string): Promise<void> {
  await ctx.prisma.$transaction(async (tx) => {
    const status = await lockDocument(tx, kind, id, ctx);
    if (status === null) throw new NotFoundError(RESOURCE[kind], id);
    transition(RESOURCE[kind], status, "delete");
    await MODELS[kind].document(tx).delete({ where: { id } });
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
 * document needs one), assigns the next number of its document type (gapless, unique under
 * concurrency), sets status `finalized` and `finalizedAt`, and stores the snapshot of its
 * customer and issuer (services/issued-parties.ts: what every reader shows from then on). For an
 * organization enrolled with SII and a type its agency issues, the number is the next CAF folio
 * instead and the signed DTE, built from that snapshot, is stored as `localFile` with `taxAgency`
 * pending (services/tax-documents.ts; 409 when no folio is left). Everything the API's finalize does
 * happens here, so other use cases (the billing run) finalize the same way inside their own
 * transaction. Returns the finalized row.
 */
export async function finalizeLockedDocument<T>(tx: Tx, ctx: ServiceContext, kind: DocumentKind, id: string, status: string): Promise<T> {
  const model = MODELS[kind];
  transition(RESOURCE[kind], status, "finalize");
  const document = await model.document(tx).findUniqueOrThrow({ where: { id }, include: { _count: { select: { lines: true } } } });
  if (document._count.lines === 0) throw ValidationError.field("lines", `a${kind === "order" || kind === "invoice" ? "n" : ""} ${RESOURCE[kind]} needs at least one line to be finalized`);
  // the customer and issuer as issued, stored with the document (services/issued-parties.ts)
  const parties = await snapshotParties(withinTransaction(ctx, tx), kind, id);
  // an organization enrolled with a tax agency gets the agency's file, numbered with its folio
  const issued = await issueTaxDocument(tx, withinTransaction(ctx, tx), kind, id, document.documentTypeId, parties);
  const number = issued ? issued.folio : await nextDocumentNumber(tx, ctx, document.documentTypeId, kind);
  const taxColumns = issued ? { localFile: issued.localFile, taxAgency: issued.taxAgency } : {};
  const finalized = await model.document(tx).update({ where: { id }, data: { status: "finalized", number, finalizedAt: ctx.now(), ...snapshotColumns(parties), ...taxColumns } });
  // an SII DTE is queued for sending in the same transaction (services/sii-sending.ts)
  if (issued) await enqueueIssuedDocument(tx, { organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode, now: ctx.now() }, kind, id, issued);
  return finalized;
}

/**
 * Locks the document row for the rest of the transaction (`SELECT ... FOR UPDATE`) and returns its
 * status, or null when no such row of this tenant exists. Concurrent updates, deletes and
 * finalizes of one document are serialized by this lock.
 */
export async function lockDocument(tx: Tx, kind: DocumentKind, id: string, ctx: ServiceContext): Promise<string | null> {
  const row = await lockTenantRow(tx, ctx, TABLES[kind], id, ["status"]);
  return row ? String(row.status) : null;
}

/**
 * Next number of (organization, mode, document type): increments the counter row inside the
 * caller's transaction. The row stays locked until commit, so concurrent finalizes queue and a
 * rolled-back finalize gives its number back: numbers are gapless and unique.
 */
export async function nextDocumentNumber(tx: Tx, ctx: ServiceContext, documentTypeId: string, kind: DocumentKind): Promise<number> {
  return (await nextDocumentNumbers(tx, ctx, documentTypeId, kind, 1))[0];
}

/**
 * The next `count` (>= 1) numbers of (organization, mode, document type), in order, with one
 * update of the counter row (same lock and gapless guarantee as nextDocumentNumber).
 */
export async function nextDocumentNumbers(tx: Tx, ctx: ServiceContext, documentTypeId: string, kind: DocumentKind, count: number): Promise<number[]> {
  const rows = await tx.$queryRaw<{ lastNumber: number }[]>`
    INSERT INTO "DocumentCounter" ("organizationId", "testMode", "documentTypeId", "kind", "lastNumber")
    VALUES (${ctx.auth.organizationId}, ${ctx.auth.testMode}, ${documentTypeId}, ${kind}, ${count}::int)
    ON CONFLICT ("organizationId", "testMode", "documentTypeId", "kind")
    DO UPDATE SET "lastNumber" = "DocumentCounter"."lastNumber" + ${count}::int
    RETURNING "lastNumber"`;
  const last = Number(rows[0].lastNumber);
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}

/**
 * Finalizes invoice drafts `ids` of document type `documentTypeId`, all created in the caller's
 * transaction `tx` with at least one line each (so nobody else sees them and none is empty), in
 * the order given, as finalizeLockedDocument would each, in bulk: numbered with one counter update
 * (nextDocumentNumbers) or, when the organization issues that type with SII (taxAgencyIssuing), with
 * one CAF folio range and the DTEs built and signed off the main thread (tax-documents.ts
 * issueTaxInvoices); then one update of the invoices, which also writes each one's snapshot of its
 * customer and issuer (and its DTE file and `taxAgency`), and for DTEs one insert of their SII
 * submissions. Returns how many were finalized.
 */
export async function finalizeNewInvoiceDrafts(tx: Tx, ctx: ServiceContext, documentTypeId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const enrolled = await taxAgencyIssuing(tx, tenant(ctx), documentTypeId);
  transition(RESOURCE.invoice, "draft", "finalize");
  // the snapshot of each invoice's customer and of the issuer, as finalizeLockedDocument stores it
  const drafts = await tx.invoice.findMany({ where: { id: { in: [...ids] } }, select: { id: true, customerId: true } });
  const customerOf = new Map(drafts.map((d) => [d.id, d.customerId]));
  const { issuer, customers } = await snapshotPartiesOfCustomers(withinTransaction(ctx, tx), drafts.map((d) => d.customerId));
  const customerSnapshotOf = (id: string) => customers.get(customerOf.get(id)!) ?? null;
  // an organization enrolled with SII for this type: one folio range, DTEs signed off the main thread
  const issued = enrolled
    ? await issueTaxInvoices(tx, ctx, enrolled, documentTypeId, ids, new Map(ids.map((id) => [id, { customer: customerSnapshotOf(id)!, issuer }])))
    : null;
  const numbers = issued ? issued.map((d) => d.folio) : await nextDocumentNumbers(tx, ctx, documentTypeId, "invoice", ids.length);
  const now = ctx.now();
  const issuerJson = JSON.stringify(issuer);
  // one parameter: the rows as JSON (a VALUES list of 5 parameters a row costs the Prisma client more)
  const rows = JSON.stringify(
    ids.map((id, i) => ({ id, number: numbers[i], customerSnapshot: customerSnapshotOf(id), localFile: issued?.[i].localFile ?? null, taxAgency: issued?.[i].taxAgency ?? null })),
  );
  const updated = await tx.$executeRaw(Prisma.sql`
    UPDATE "Invoice" i SET "status" = 'finalized', "number" = v."number", "finalizedAt" = ${now}, "updatedAt" = ${now},
      "customerSnapshot" = v."customerSnapshot", "issuerSnapshot" = ${issuerJson}::jsonb,
      "localFile" = COALESCE(v."localFile", i."localFile"), "taxAgency" = COALESCE(v."taxAgency", i."taxAgency")
    FROM json_to_recordset(${rows}::json) AS v("id" text, "number" int, "customerSnapshot" jsonb, "localFile" text, "taxAgency" jsonb)
    WHERE i."id" = v."id" AND i."status" = 'draft' AND i."organizationId" = ${ctx.auth.organizationId} AND i."testMode" = ${ctx.auth.testMode}
      AND i."documentTypeId" = ${documentTypeId} AND EXISTS (SELECT 1 FROM "InvoiceLine" l WHERE l."invoiceId" = i."id")`);
  if (updated !== ids.length) throw new Error(`finalizing ${ids.length} new invoice drafts updated ${updated}`);
  // each SII DTE is queued for sending in the same transaction (services/sii-sending.ts)
  if (issued) await enqueueIssuedDocuments(tx, { organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode, now }, "invoice", ids.map((id, i) => ({ id, issued: issued[i] })));
  return ids.length;
}

/** `yyyy-mm-dd` -> Date at UTC midnight (how @db.Date columns are written). */
export function dateColumn(value: string): Date {
  return new Date(`${value}T00:00:00.000Z`);
}
