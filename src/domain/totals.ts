/**
 * Document totals for invoices, orders and credit notes (docs/invoice-totals.md; SII's Totales and
 * LibreDTE's computation). Pure: the same input always
 * gives the same totals; the services recompute them on every create and update.
 *
 * Worked example (CL33, CLP, 19 %): lines 2 x 1000 and 1 x 500 with 10 % off
 *   line 1: gross 2000, net 2000; line 2: gross 500, discount 50, net 450
 *   amount 2450, exempt 0, subtotal 2450, tax round(465.5) = 466, total 2916.
 * More examples: docs/invoice-totals.md (each is a unit test in test/domain/totals.test.ts).
 */
import { Decimal, roundMoney, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";
import { FieldErrorCollector } from "./errors.js";

/** `%`: percent of the base; `$`: an amount in the document currency. */
export type DiscountScheme = "%" | "$";
export const DISCOUNT_SCHEMES: readonly DiscountScheme[] = ["%", "$"];

export interface LineInput {
  /** units, may be fractional (SII: up to 6 decimals) */
  quantity: DecimalInput;
  /** unit price in the document currency; gross of tax when the type's prices include tax */
  amount: DecimalInput;
  /** line discount: percent (0-100) or amount, per `discountScheme`; default 0 */
  discount?: DecimalInput;
  discountScheme?: DiscountScheme;
  /** exempt from tax (SII IndExe=1); forced for document types without taxes */
  exempt?: boolean;
}

export interface TotalsInput {
  lines: LineInput[];
  /** document discount, applied to the taxable lines only */
  discount?: DecimalInput;
  discountScheme?: DiscountScheme;
  /** tax percent of the document type (19 for CL33) */
  taxPercent: DecimalInput;
  /** false: every line is exempt (CL34, CL41, exports) */
  hasTaxes: boolean;
  /** line amounts include tax (CL39 boleta): net is derived from the gross total */
  pricesIncludeTax: boolean;
  currency: CurrencyUnit;
  /**
   * true: a line may have a negative unit amount, without a line discount (a credit: subscription
   * prorations, domain/billing-cycle.ts). The taxable amount still may not go negative.
   */
  allowCredits?: boolean;
}

export interface LineTotals {
  /** round(quantity x amount) */
  gross: Decimal;
  /** line discount in currency units */
  discountAmount: Decimal;
  /** gross - discountAmount */
  total: Decimal;
  exempt: boolean;
  /** the document's tax percent, 0 on exempt lines */
  taxPercent: Decimal;
  /**
   * tax of this line alone, null when exempt: round(total x taxPercent / 100), or with
   * tax-included prices total - round(total / (1 + taxPercent / 100)). Informational (orders and
   * credit notes print it per line): the document tax is computed once on the summed net after
   * the document discount, so line taxes may not add up to it.
   */
  tax: Decimal | null;
}

export interface DocumentTotals {
  lines: LineTotals[];
  /** document discount in currency units (on taxable lines) */
  discountAmount: Decimal;
  /** taxable net after the document discount (SII MntNeto) */
  amount: Decimal;
  /** exempt net (SII MntExe) */
  exempt: Decimal;
  /** amount + exempt */
  subtotal: Decimal;
  taxPercent: Decimal;
  /** SII IVA */
  tax: Decimal;
  /** subtotal + tax (SII MntTotal) */
  total: Decimal;
}

function discountOf(base: Decimal, discount: Decimal, scheme: DiscountScheme, currency: CurrencyUnit): Decimal {
  if (discount.isZero()) return new Decimal(0);
  return scheme === "%" ? roundMoney(base.times(discount).dividedBy(100), currency) : roundMoney(discount, currency);
}

/**
 * Checks the inputs totals depend on; throws ValidationError naming each field
 * (`lines.N.quantity`, `lines.N.discount`, `discount`, ...). Rules: at least one line is not
 * required here (drafts may be empty); quantity and amount >= 0; a `%` discount is 0..100; a `$`
 * discount is >= 0 and at most the base it applies to. Returns the totals it computed to check the
 * last rules (what computeDocumentTotals returns).
 */
export function validateTotalsInput(input: TotalsInput): DocumentTotals {
  const errors = new FieldErrorCollector();
  const nonNegative = (path: string, value: DecimalInput | undefined) => {
    if (value !== undefined && toDecimal(value).isNegative()) errors.add(path, "must not be negative");
  };
  input.lines.forEach((line, i) => {
    nonNegative(`lines.${i}.quantity`, line.quantity);
    if (!input.allowCredits) nonNegative(`lines.${i}.amount`, line.amount);
    else if (toDecimal(line.amount).isNegative() && !toDecimal(line.discount ?? 0).isZero())
      errors.add(`lines.${i}.discount`, "a credit line takes no discount");
    nonNegative(`lines.${i}.discount`, line.discount);
    const scheme = line.discountScheme ?? "%";
    if (scheme === "%" && line.discount !== undefined && toDecimal(line.discount).greaterThan(100)) {
      errors.add(`lines.${i}.discount`, "a % discount must be at most 100");
    }
  });
  nonNegative("discount", input.discount);
  if (
    (input.discountScheme ?? "%") === "%" &&
    input.discount !== undefined &&
    toDecimal(input.discount).greaterThan(100)
  ) {
    errors.add("discount", "a % discount must be at most 100");
  }
  errors.throwIfAny();
  // `$` discounts larger than what they discount would make a negative total
  const totals = computeUnchecked(input);
  totals.lines.forEach((line, i) => {
    if (line.total.isNegative() && !line.gross.isNegative())
      errors.add(`lines.${i}.discount`, "the discount exceeds the line amount");
  });
  errors.throwIfAny();
  // only a document discount can make the taxable amount negative once every line is >= 0
  if (totals.amount.isNegative())
    errors.add(
      input.allowCredits ? "lines" : "discount",
      input.allowCredits
        ? "credits and the discount exceed the taxable amount"
        : "the discount exceeds the taxable amount",
    );
  if (totals.exempt.isNegative()) errors.add("lines", "credits exceed the exempt amount");
  errors.throwIfAny();
  return totals;
}

function lineTax(
  total: Decimal,
  exempt: boolean,
  input: TotalsInput,
  currency: CurrencyUnit,
): { taxPercent: Decimal; tax: Decimal | null } {
  if (exempt) return { taxPercent: new Decimal(0), tax: null };
  const taxPercent = toDecimal(input.taxPercent);
  const tax = input.pricesIncludeTax
    ? total.minus(roundMoney(total.dividedBy(taxPercent.dividedBy(100).plus(1)), currency))
    : roundMoney(total.times(taxPercent).dividedBy(100), currency);
  return { taxPercent, tax };
}

function computeUnchecked(input: TotalsInput): DocumentTotals {
  const { currency } = input;
  const lines = input.lines.map((line): LineTotals => {
    const gross = roundMoney(toDecimal(line.quantity).times(toDecimal(line.amount)), currency);
    const discountAmount = discountOf(gross, toDecimal(line.discount ?? 0), line.discountScheme ?? "%", currency);
    const total = gross.minus(discountAmount);
    const exempt = !input.hasTaxes || line.exempt === true;
    return { gross, discountAmount, total, exempt, ...lineTax(total, exempt, input, currency) };
  });
  let taxableNet = new Decimal(0);
  let exempt = new Decimal(0);
  for (const line of lines) {
    if (line.exempt) exempt = exempt.plus(line.total);
    else taxableNet = taxableNet.plus(line.total);
  }
  const discountAmount = discountOf(taxableNet, toDecimal(input.discount ?? 0), input.discountScheme ?? "%", currency);
  const taxableAfterDiscount = taxableNet.minus(discountAmount);
  const taxPercent = input.hasTaxes ? toDecimal(input.taxPercent) : new Decimal(0);

  let amount: Decimal;
  let tax: Decimal;
  if (input.pricesIncludeTax) {
    // boletas: the lines are gross; derive the net so the total is exactly what the lines say
    amount = roundMoney(taxableAfterDiscount.dividedBy(taxPercent.dividedBy(100).plus(1)), currency);
    tax = taxableAfterDiscount.minus(amount);
  } else {
    amount = taxableAfterDiscount;
    tax = roundMoney(amount.times(taxPercent).dividedBy(100), currency);
  }
  const subtotal = amount.plus(exempt);
  return { lines, discountAmount, amount, exempt, subtotal, taxPercent, tax, total: subtotal.plus(tax) };
}

/**
 * Totals of a document. Throws ValidationError (400) for negative quantities or amounts, a `%`
 * discount over 100 or a discount larger than what it discounts.
 */
export function computeDocumentTotals(input: TotalsInput): DocumentTotals {
  // validation computes the totals to check them: computed once
  return validateTotalsInput(input);
}
