/**
 * The lines and totals of invoices, orders and credit notes as their inputs give them
 * (docs/invoice-totals.md): line validation with field paths, the document discount, a document
 * type's tax rules, and the computed columns (domain/totals.ts does the arithmetic). Pure; the
 * services add ids and write rows (services/document-lifecycle.ts).
 */
import type { FieldErrorCollector } from "./errors.js";
import {
  computeDocumentTotals,
  DISCOUNT_SCHEMES,
  type DiscountScheme,
  type DocumentTotals,
  type TotalsInput,
} from "./totals.js";
import { toDecimal, type DecimalInput } from "./money.js";

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
    if (!DISCOUNT_SCHEMES.includes(scheme as DiscountScheme))
      errors.add(`lines.${i}.discount_scheme`, "must be % or $");
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

/**
 * A document type's tax rules (its `tax` percent, `hasTaxes`, `pricesIncludeTax`), as computeDocumentTotals takes them.
 */
export function taxRulesOf(documentType: {
  tax: { toString(): string };
  hasTaxes: boolean;
  pricesIncludeTax: boolean;
}): Pick<TotalsInput, "taxPercent" | "hasTaxes" | "pricesIncludeTax"> {
  return {
    taxPercent: documentType.tax.toString(),
    hasTaxes: documentType.hasTaxes,
    pricesIncludeTax: documentType.pricesIncludeTax,
  };
}

/**
 * Totals of `lines` under `taxRules` (a document type's, see taxRulesOf, or a credit note's
 * invoice's) in `currency`; ValidationError keeps the field paths.
 */
export function documentTotals(
  taxRules: Pick<TotalsInput, "taxPercent" | "hasTaxes" | "pricesIncludeTax">,
  currency: TotalsInput["currency"],
  lines: NormalizedLine[],
  discount: { discount: string; discountScheme: DiscountScheme },
): DocumentTotals {
  return computeDocumentTotals({
    lines,
    discount: discount.discount,
    discountScheme: discount.discountScheme,
    ...taxRules,
    currency,
  });
}

/** Stored line rows back as line input (decimals as exact strings), to recompute a draft's totals. */
export function storedLineInputs(
  lines: {
    name: string;
    description: string | null;
    quantity: unknown;
    amount: unknown;
    discount: unknown;
    discountScheme: string;
    exempt: boolean;
  }[],
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

/** Validates a document discount (`discount`, `discount_scheme`) over the `current` one (an update's). */
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
