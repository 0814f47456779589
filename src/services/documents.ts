/**
 * Machinery shared by invoices, orders and credit notes: line validation and totals
 * (domain/totals.ts), row locking and gapless numbering. Reference lookups: ./reference.ts.
 */
import type { Currency, DocumentType } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import type { FieldErrorCollector } from "../domain/errors.js";
import { computeDocumentTotals, DISCOUNT_SCHEMES, type DiscountScheme, type DocumentTotals } from "../domain/totals.js";
import { toDecimal, type DecimalInput } from "../domain/money.js";
import type { ServiceContext, Tx } from "./context.js";

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

/** Totals of `lines` under `documentType` in `currency`; ValidationError keeps the field paths. */
export function documentTotals(
  documentType: DocumentType,
  currency: Currency,
  lines: NormalizedLine[],
  discount: { discount: string; discountScheme: DiscountScheme },
): DocumentTotals {
  return computeDocumentTotals({
    lines,
    discount: discount.discount,
    discountScheme: discount.discountScheme,
    taxPercent: documentType.tax.toString(),
    hasTaxes: documentType.hasTaxes,
    pricesIncludeTax: documentType.pricesIncludeTax,
    currency,
  });
}

/** Prisma create rows for `lines` with their computed totals. */
export function lineRows(lines: NormalizedLine[], totals: DocumentTotals) {
  return lines.map((line, position) => ({
    id: newId("lin"),
    position,
    name: line.name,
    description: line.description,
    quantity: line.quantity,
    amount: line.amount,
    discount: line.discount,
    discountScheme: line.discountScheme,
    exempt: totals.lines[position].exempt,
    total: totals.lines[position].total.toString(),
  }));
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

const TABLES: Record<DocumentKind, string> = { invoice: "Invoice", order: "Order", credit_note: "CreditNote" };

/**
 * Locks the document row for the rest of the transaction (`SELECT ... FOR UPDATE`) and returns its
 * status, or null when no such row of this tenant exists. Concurrent updates, deletes and
 * finalizes of one document are serialized by this lock.
 */
export async function lockDocument(tx: Tx, kind: DocumentKind, id: string, ctx: ServiceContext): Promise<string | null> {
  const rows = await tx.$queryRawUnsafe<{ status: string }[]>(
    `SELECT "status" FROM "${TABLES[kind]}" WHERE "id" = $1 AND "organizationId" = $2 AND "testMode" = $3 FOR UPDATE`,
    id,
    ctx.auth.organizationId,
    ctx.auth.testMode,
  );
  return rows[0]?.status ?? null;
}

/**
 * Next number of (organization, mode, document type): increments the counter row inside the
 * caller's transaction. The row stays locked until commit, so concurrent finalizes queue and a
 * rolled-back finalize gives its number back: numbers are gapless and unique.
 */
export async function nextDocumentNumber(tx: Tx, ctx: ServiceContext, documentTypeId: string, kind: DocumentKind): Promise<number> {
  const rows = await tx.$queryRaw<{ lastNumber: number }[]>`
    INSERT INTO "DocumentCounter" ("organizationId", "testMode", "documentTypeId", "kind", "lastNumber")
    VALUES (${ctx.auth.organizationId}, ${ctx.auth.testMode}, ${documentTypeId}, ${kind}, 1)
    ON CONFLICT ("organizationId", "testMode", "documentTypeId", "kind")
    DO UPDATE SET "lastNumber" = "DocumentCounter"."lastNumber" + 1
    RETURNING "lastNumber"`;
  return Number(rows[0].lastNumber);
}

/** `yyyy-mm-dd` -> Date at UTC midnight (how @db.Date columns are written). */
export function dateColumn(value: string): Date {
  return new Date(`${value}T00:00:00.000Z`);
}
