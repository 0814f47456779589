/**
 * Credit notes (spec "Credit note"; SII DTE 61 and 112, ../shared/domain/chile-dte.md 2.1 and
 * 2.6): the rules that need no database.
 *
 * Worked example: an invoice totals CLP 2.916 and already has a credit note of CLP 1.190 (draft
 * or finalized; deleted ones are gone). 2.916 - 1.190 = 1.726 is left to credit; a new credit note
 * of 1.726 fits exactly, one of 1.727 is refused naming the 1.726 left.
 */
import { ValidationError } from "./errors.js";
import { Decimal, sum, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

/** What an invoice can still be credited: its total minus its credit notes' totals (may be < 0 only if data was imported). */
export function amountLeftToCredit(invoiceTotal: DecimalInput, creditNoteTotals: DecimalInput[]): Decimal {
  return toDecimal(invoiceTotal).minus(sum(creditNoteTotals.map(toDecimal)));
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
  creditNoteTotal: DecimalInput;
  currency: CurrencyUnit;
}): void {
  const left = amountLeftToCredit(input.invoiceTotal, input.creditNoteTotals);
  const total = toDecimal(input.creditNoteTotal);
  if (total.greaterThan(left)) {
    const money = (d: Decimal) => `${d.toString()} ${input.currency.id}`;
    throw ValidationError.field(
      "total",
      `${money(total)} exceeds what is left to credit on invoice ${input.invoiceId}: ${money(Decimal.max(left, 0))} ` +
        `(invoice total ${money(toDecimal(input.invoiceTotal))}, already credited ${money(toDecimal(input.invoiceTotal).minus(left))})`,
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
 * A credit note is taxed as the invoice it corrects (SII: tax "as referenced doc"): the invoice's
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
