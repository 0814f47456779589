/**
 * Plan pricing (docs/pricing.md): what `quantity` units of a plan cost, and the tiers and addon
 * rates that describe it. Pure: no database, no clock. The billing run prices subscription lines
 * with `priceQuantity`; the catalogue validates plans with `validateTiers` and addons with
 * `validateAddonRates`.
 *
 * - No tiers: quantity x amount (flat per unit).
 * - `graduated`: each unit at the unit amount of the tier it falls in, plus the flat amount of
 *   every tier reached (a tier is reached when at least part of a unit falls in it).
 * - `volume`: every unit at the unit amount of the tier the total quantity falls in, plus that
 *   tier's flat amount.
 * - Quantity 0 costs 0 in every mode (no tier is reached).
 * - One rounding, of the line amount, with roundMoney (the currency's unit, half away from zero).
 *
 * Tiers: `up_to` ascending and positive, the last one `null` (open: everything above), unit and
 * flat amounts not negative. Example: [{up_to: 5, unit_amount: 1000, flat_amount: 0},
 * {up_to: 10, unit_amount: 800, flat_amount: 500}, {up_to: null, unit_amount: 500, flat_amount: 0}]
 * prices 12 units graduated at 5x1000 + (5x800 + 500) + 2x500 = 10500, volume at 12x500 = 6000.
 */
import { FieldErrorCollector, ValidationError } from "./errors.js";
import { Decimal, roundMoney, toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

export const TIERS_MODES = ["graduated", "volume"] as const;
export type TiersMode = (typeof TIERS_MODES)[number];

/** A tier as stored and printed (REST and the plan's `tiers` column): snake_case, decimals as strings. */
export interface Tier {
  /** inclusive upper bound of the tier in units; null: the last, open tier */
  up_to: string | null;
  /** price of each unit in the tier */
  unit_amount: string;
  /** price of the tier as a whole, once it is reached */
  flat_amount: string;
}

/** A tier as given by a client (numbers or decimal strings; flat_amount defaults to 0). */
export interface TierInput {
  up_to?: DecimalInput | null;
  unit_amount?: DecimalInput | null;
  flat_amount?: DecimalInput | null;
}

/** At most this many tiers per plan. */
export const MAX_TIERS = 50;
/** Decimal places of catalogue amounts (the columns are DECIMAL(20, 6)). */
export const MAX_AMOUNT_DECIMALS = 6;

function parse(value: DecimalInput, path: string, errors: FieldErrorCollector): Decimal | null {
  try {
    const d = toDecimal(value);
    if (!d.isFinite()) throw new Error("not finite");
    return d;
  } catch {
    errors.add(path, "must be a decimal number");
    return null;
  }
}

/** Adds a field error when `value` has more than `decimals` decimal places. */
function checkScale(value: Decimal, path: string, errors: FieldErrorCollector, decimals = MAX_AMOUNT_DECIMALS) {
  if (value.decimalPlaces() > decimals) errors.add(path, `must have at most ${decimals} decimal places`);
}

/**
 * Validates tiers and returns them normalized (decimal strings, flat_amount 0 when absent).
 * Rules: at least one tier, at most MAX_TIERS; `up_to` positive and strictly ascending; exactly
 * one open tier (`up_to: null`), the last; unit and flat amounts given (flat may be omitted) and
 * not negative. Throws one ValidationError naming every bad field (`tiers.N.up_to`, ...).
 */
export function validateTiers(tiers: readonly TierInput[], path = "tiers"): Tier[] {
  const errors = new FieldErrorCollector();
  if (tiers.length === 0) errors.add(path, "must have at least one tier (the last with up_to null)");
  if (tiers.length > MAX_TIERS) errors.add(path, `must have at most ${MAX_TIERS} tiers`);
  let previous: Decimal | null = null;
  const result = tiers.map((tier, i): Tier => {
    const last = i === tiers.length - 1;
    let upTo: Decimal | null = null;
    if (tier.up_to === null || tier.up_to === undefined) {
      if (!last) errors.add(`${path}.${i}.up_to`, "only the last tier may be open (up_to null)");
    } else {
      upTo = parse(tier.up_to, `${path}.${i}.up_to`, errors);
      if (upTo) {
        checkScale(upTo, `${path}.${i}.up_to`, errors);
        if (!upTo.isPositive() || upTo.isZero()) errors.add(`${path}.${i}.up_to`, "must be positive");
        else if (previous && upTo.lte(previous))
          errors.add(`${path}.${i}.up_to`, `must be greater than the previous tier's up_to (${previous.toFixed()})`);
        if (last)
          errors.add(`${path}.${i}.up_to`, "the last tier must be open (up_to null), so every quantity has a price");
        previous = upTo;
      }
    }
    const amount = (field: "unit_amount" | "flat_amount", required: boolean): string => {
      const raw = tier[field];
      if (raw === null || raw === undefined) {
        if (required) errors.add(`${path}.${i}.${field}`, "is required");
        return "0";
      }
      const d = parse(raw, `${path}.${i}.${field}`, errors);
      if (!d) return "0";
      if (d.isNegative()) errors.add(`${path}.${i}.${field}`, "must not be negative");
      checkScale(d, `${path}.${i}.${field}`, errors);
      return d.toFixed();
    };
    return {
      up_to: upTo ? upTo.toFixed() : null,
      unit_amount: amount("unit_amount", true),
      flat_amount: amount("flat_amount", false),
    };
  });
  errors.throwIfAny("Invalid tiers");
  return result;
}

/** What priceQuantity needs of a plan. */
export interface PricedPlan {
  /** unit price when there are no tiers */
  amount: DecimalInput;
  tiersMode: TiersMode | string | null;
  tiers: readonly Tier[] | readonly TierInput[];
}

/**
 * The line amount of `quantity` units of `plan` in `currency` (rounded once, to the currency's
 * unit). Rules above; tiers are taken as validated (validateTiers). A negative quantity is a
 * ValidationError on `quantity`; an unknown tiers mode one on `tiers_mode`.
 */
export function priceQuantity(plan: PricedPlan, quantity: DecimalInput, currency: CurrencyUnit): Decimal {
  const q = toDecimal(quantity);
  if (q.isNegative()) throw ValidationError.field("quantity", "must not be negative");
  if (q.isZero()) return roundMoney(0, currency);
  if (!plan.tiersMode) return roundMoney(q.times(toDecimal(plan.amount)), currency);
  const tiers = plan.tiers.map((t) => ({
    upTo: t.up_to === null || t.up_to === undefined ? null : toDecimal(t.up_to),
    unit: toDecimal(t.unit_amount ?? 0),
    flat: toDecimal(t.flat_amount ?? 0),
  }));
  if (tiers.length === 0) throw ValidationError.field("tiers", "must have at least one tier");

  if (plan.tiersMode === "volume") {
    const tier = tiers.find((t) => t.upTo === null || q.lte(t.upTo)) ?? tiers[tiers.length - 1];
    return roundMoney(q.times(tier.unit).plus(tier.flat), currency);
  }
  if (plan.tiersMode !== "graduated") throw ValidationError.field("tiers_mode", "must be graduated or volume");
  let total = new Decimal(0);
  let lower = new Decimal(0);
  for (const tier of tiers) {
    if (q.lte(lower)) break;
    const upper = tier.upTo === null ? q : Decimal.min(q, tier.upTo);
    total = total.plus(upper.minus(lower).times(tier.unit)).plus(tier.flat);
    if (tier.upTo === null) break;
    lower = tier.upTo;
  }
  return roundMoney(total, currency);
}

// ---------------------------------------------------------------------------------------------
// addon rates

/** One share of an addon's amount, billed in subscription cycle `cycle` (1 = the first). */
export type AddonRate = { cycle: number; percent: string } | { cycle: number; amount: string };

export interface AddonRateInput {
  cycle?: number | null;
  percent?: DecimalInput | null;
  amount?: DecimalInput | null;
}

/** At most this many rates per addon. */
export const MAX_RATES = 120;

/**
 * Validates an addon's rates against its `amount` in `currency` and returns them normalized.
 * Each rate has a `cycle` (a positive integer, strictly ascending) and either `percent` (of the
 * amount, positive) or `amount` (positive, in the currency's unit), every rate the same kind;
 * percents sum to exactly 100 and amounts to exactly the addon's amount. Empty: no split.
 * Throws one ValidationError naming every bad field (`rates.N.cycle`, ...).
 */
export function validateAddonRates(
  rates: readonly AddonRateInput[],
  amount: DecimalInput,
  currency: CurrencyUnit,
  path = "rates",
): AddonRate[] {
  const errors = new FieldErrorCollector();
  if (rates.length > MAX_RATES) errors.add(path, `must have at most ${MAX_RATES} rates`);
  const kinds = new Set(rates.map((r) => (r.percent !== null && r.percent !== undefined ? "percent" : "amount")));
  if (kinds.size > 1) errors.add(path, "every rate must be a percent or every rate an amount, not both");
  let previousCycle = 0;
  let sumPercent = new Decimal(0);
  let sumAmount = new Decimal(0);
  const result = rates.map((rate, i): AddonRate => {
    const cycle = rate.cycle;
    if (cycle === null || cycle === undefined) errors.add(`${path}.${i}.cycle`, "is required");
    else if (!Number.isInteger(cycle) || cycle < 1) errors.add(`${path}.${i}.cycle`, "must be a positive integer");
    else if (cycle <= previousCycle)
      errors.add(`${path}.${i}.cycle`, `must be greater than the previous rate's cycle (${previousCycle})`);
    else previousCycle = cycle;
    const hasPercent = rate.percent !== null && rate.percent !== undefined;
    const hasAmount = rate.amount !== null && rate.amount !== undefined;
    if (hasPercent === hasAmount) {
      errors.add(`${path}.${i}`, "must have either percent or amount");
      return { cycle: cycle ?? 0, amount: "0" };
    }
    const field = hasPercent ? "percent" : "amount";
    const value = parse((hasPercent ? rate.percent : rate.amount)!, `${path}.${i}.${field}`, errors);
    if (!value) return { cycle: cycle ?? 0, amount: "0" };
    if (!value.isPositive() || value.isZero()) errors.add(`${path}.${i}.${field}`, "must be positive");
    if (hasPercent) {
      checkScale(value, `${path}.${i}.percent`, errors, 4);
      sumPercent = sumPercent.plus(value);
      return { cycle: cycle ?? 0, percent: value.toFixed() };
    }
    if (!roundMoney(value, currency).eq(value))
      errors.add(`${path}.${i}.amount`, `must be in whole units of ${currency.id}`);
    sumAmount = sumAmount.plus(value);
    return { cycle: cycle ?? 0, amount: value.toFixed() };
  });
  if (rates.length > 0 && errors.empty) {
    if (kinds.has("percent") && !sumPercent.eq(100))
      errors.add(path, `percents must sum to 100 (they sum to ${sumPercent.toFixed()})`);
    const whole = toDecimal(amount);
    if (kinds.has("amount") && !sumAmount.eq(whole))
      errors.add(
        path,
        `amounts must sum to the addon's amount ${whole.toFixed()} (they sum to ${sumAmount.toFixed()})`,
      );
  }
  errors.throwIfAny("Invalid rates");
  return result;
}

/**
 * The amount billed in each cycle of an addon of `amount` split by `rates` (validated): amount
 * rates as given; percent rates rounded to the currency's unit, the last share taking the
 * rounding remainder so the shares always sum to the whole. No rates: everything in cycle 1.
 */
export function addonRateShares(
  amount: DecimalInput,
  rates: readonly AddonRate[],
  currency: CurrencyUnit,
): { cycle: number; amount: Decimal }[] {
  const whole = roundMoney(amount, currency);
  if (rates.length === 0) return [{ cycle: 1, amount: whole }];
  let billed = new Decimal(0);
  return rates.map((rate, i) => {
    const share =
      i === rates.length - 1
        ? whole.minus(billed)
        : "amount" in rate
          ? toDecimal(rate.amount)
          : roundMoney(whole.times(rate.percent).div(100), currency);
    billed = billed.plus(share);
    return { cycle: rate.cycle, amount: share };
  });
}
