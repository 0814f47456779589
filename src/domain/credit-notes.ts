/**
 * Credit and debit notes (spec "Credit note"; SII DTE 61 and 112 credit, 56 and 111 debit,
 * docs/sii-dte.md "Sources": Referencia): the rules that need no database. Both are created
 * through the credit note resource (`document` picks the type); a credit note lowers what the
 * invoice's customer owes, a debit note raises it (docs/orders-and-credit-notes.md).
 *
 * Worked example: an invoice totals CLP 2.916 and already has a credit note of CLP 1.190 (draft
 * or finalized; deleted ones are gone). 2.916 - 1.190 = 1.726 is left to credit; a new credit note
 * of 1.726 fits exactly, one of 1.727 is refused naming the 1.726 left. A finalized debit note of
 * CLP 595 on the same invoice raises what can be credited to 1.726 + 595 = 2.321.
 */
import { ValidationError } from "./errors.js";
import { Decimal, sum, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

/** How a note adjusts the invoice it references: SII's 61/112 credit (lower), 56/111 debit (raise). */
export type NoteEffect = "credit" | "debit";

/**
 * The effect of a note document type (`isNote`, `isCreditNote` of DocumentType), or null for a type that is not a note.
 */
export function noteEffect(documentType: { isNote: boolean; isCreditNote: boolean }): NoteEffect | null {
  if (!documentType.isNote) return null;
  return documentType.isCreditNote ? "credit" : "debit";
}

/**
 * What an invoice can still be credited: its total plus its finalized debit notes minus its credit
 * notes' totals (drafts included). May be < 0 only if data was imported.
 */
export function amountLeftToCredit(
  invoiceTotal: DecimalInput,
  creditNoteTotals: DecimalInput[],
  debitNoteTotals: DecimalInput[] = [],
): Decimal {
  return toDecimal(invoiceTotal)
    .plus(sum(debitNoteTotals.map(toDecimal)))
    .minus(sum(creditNoteTotals.map(toDecimal)));
}

/**
 * Checks that a credit note of `creditNoteTotal` fits on the invoice: the totals of all its
 * credit notes may not exceed the invoice total. Throws ValidationError (400) on `total`
 * naming the amount left, in the invoice currency.
 */
export function assertCreditFits(input: {
  invoiceId: string;
  invoiceTotal: DecimalInput;
  /** totals of the invoice's existing (non-deleted) credit notes, drafts included */
  creditNoteTotals: DecimalInput[];
  /** totals of the invoice's finalized debit notes (a draft can still be deleted, so it adds nothing yet) */
  debitNoteTotals?: DecimalInput[];
  creditNoteTotal: DecimalInput;
  currency: CurrencyUnit;
}): void {
  const debitNoteTotals = input.debitNoteTotals ?? [];
  const left = amountLeftToCredit(input.invoiceTotal, input.creditNoteTotals, debitNoteTotals);
  const total = toDecimal(input.creditNoteTotal);
  if (total.greaterThan(left)) {
    const money = (d: Decimal) => `${d.toString()} ${input.currency.id}`;
    const debited = sum(debitNoteTotals.map(toDecimal));
    throw ValidationError.field(
      "total",
      `${money(total)} exceeds what is left to credit on invoice ${input.invoiceId}: ${money(Decimal.max(left, 0))} ` +
        `(invoice total ${money(toDecimal(input.invoiceTotal))}` +
        (debited.isZero() ? "" : `, debit notes ${money(debited)}`) +
        `, already credited ${money(sum(input.creditNoteTotals.map(toDecimal)))})`,
    );
  }
}

export interface NoteTaxRules {
  /** percent applied to taxable lines */
  taxPercent: Decimal;
  /** false: every line is exempt */
  hasTaxes: boolean;
  /** line amounts include tax (notes on boletas) */
  pricesIncludeTax: boolean;
}

/**
 * A credit or debit note is taxed as the invoice it corrects (SII: tax "as referenced doc"): the invoice's
 * tax percent, its tax-included prices (a note on a boleta lists gross amounts like the boleta),
 * and no tax at all when the invoice's or the note's document type has none (a note on a
 * factura exenta, an export credit note).
 */
export function creditNoteTaxRules(
  noteType: { hasTaxes: boolean },
  invoiceType: { hasTaxes: boolean; pricesIncludeTax: boolean },
  invoiceTaxPercent: DecimalInput,
): NoteTaxRules {
  const hasTaxes = noteType.hasTaxes && invoiceType.hasTaxes;
  return {
    taxPercent: hasTaxes ? toDecimal(invoiceTaxPercent) : new Decimal(0),
    hasTaxes,
    pricesIncludeTax: hasTaxes && invoiceType.pricesIncludeTax,
  };
}

/**
 * SII `CodRef` of a note's Referencia (chile-dte.md 2.6): 1 cancels the invoice, 2 corrects text only, 3 corrects
 * amounts.
 */
export const REFERENCE_CODES = [1, 2, 3] as const;
export type ReferenceCode = (typeof REFERENCE_CODES)[number];
/** What a note does when the caller does not say: correct amounts. */
export const DEFAULT_REFERENCE_CODE: ReferenceCode = 3;

/**
 * Why `code` does not fit the note, or null when it does (SII rules, chile-dte.md 2.6):
 * - 1 (cancels): only a credit note cancels an invoice, and it credits the whole invoice total
 *   (a debit note cancelling a credit note is not supported: notes reference invoices);
 * - 2 (corrects text): changes no amount, so its total is 0;
 * - 3 (corrects amounts): any amount.
 * Worked example: on an invoice of CLP 2.916, a credit note of 2.916 may cancel it (1); one of
 * 1.190 may not ("a cancelling credit note credits the whole invoice total 2916 CLP, not 1190
 * CLP"); a text correction of 0 may be 2, one of 1.190 may not.
 */
export function referenceCodeProblem(input: {
  code: number;
  effect: NoteEffect;
  total: DecimalInput;
  invoiceTotal: DecimalInput;
  currency: CurrencyUnit;
}): string | null {
  const money = (d: DecimalInput) => `${toDecimal(d).toString()} ${input.currency.id}`;
  if (!(REFERENCE_CODES as readonly number[]).includes(input.code))
    return "must be 1 (cancels), 2 (corrects text) or 3 (corrects amounts)";
  if (input.code === 1) {
    if (input.effect !== "credit")
      return "1 (cancels) is for credit notes; a debit note corrects amounts (3) or text (2)";
    if (!toDecimal(input.total).equals(toDecimal(input.invoiceTotal))) {
      return (
        `a cancelling credit note credits the whole invoice total ${money(input.invoiceTotal)}, ` +
        `not ${money(input.total)}`
      );
    }
  }
  if (input.code === 2 && !toDecimal(input.total).isZero())
    return `a text correction (2) changes no amount: its total must be 0, not ${money(input.total)}`;
  return null;
}
