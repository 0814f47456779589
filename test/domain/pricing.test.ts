/** Plan pricing and addon rates (docs/pricing.md): worked examples, validation, properties. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Decimal } from "../../src/domain/money.js";
import {
  addonRateShares,
  priceQuantity,
  validateAddonRates,
  validateTiers,
  type Tier,
} from "../../src/domain/pricing.js";
import { validationErrorOf } from "../helpers/errors.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };

// the worked example of docs/pricing.md
const TIERS: Tier[] = [
  { up_to: "5", unit_amount: "1000", flat_amount: "0" },
  { up_to: "10", unit_amount: "800", flat_amount: "500" },
  { up_to: null, unit_amount: "500", flat_amount: "0" },
];
const graduated = { amount: 0, tiersMode: "graduated", tiers: TIERS };
const volume = { amount: 0, tiersMode: "volume", tiers: TIERS };
const price = (plan: Parameters<typeof priceQuantity>[0], q: number | string, currency = CLP) =>
  priceQuantity(plan, q, currency).toFixed();

describe("priceQuantity", () => {
  it("prices flat per unit without tiers, rounded once to the currency's unit", () => {
    expect(price({ amount: 1000, tiersMode: null, tiers: [] }, 3)).toBe("3000");
    expect(price({ amount: "0.333", tiersMode: null, tiers: [] }, 3, USD)).toBe("1");
    expect(price({ amount: "0.125", tiersMode: null, tiers: [] }, 1, USD)).toBe("0.13"); // half away from zero
    expect(price({ amount: "999.5", tiersMode: null, tiers: [] }, 1)).toBe("1000");
  });

  it("graduated: each unit at its tier's price plus each reached tier's flat amount", () => {
    expect(price(graduated, 12)).toBe("10500"); // 5*1000 + (5*800 + 500) + 2*500
    expect(price(graduated, 5)).toBe("5000"); // the second tier is not reached
    expect(price(graduated, 6)).toBe("6300"); // 5000 + 800 + 500
    expect(price(graduated, 10)).toBe("9500"); // 5000 + 4000 + 500
    expect(price(graduated, 1)).toBe("1000");
    expect(price(graduated, "5.5")).toBe("5900"); // part of a unit reaches the tier: 5000 + 0.5*800 + 500
  });

  it("volume: every unit at the price of the tier the total falls in, plus that tier's flat amount", () => {
    expect(price(volume, 12)).toBe("6000"); // 12*500 + 0
    expect(price(volume, 5)).toBe("5000"); // 5*1000 (up_to is inclusive)
    expect(price(volume, 6)).toBe("5300"); // 6*800 + 500
    expect(price(volume, 10)).toBe("8500");
    expect(price(volume, 11)).toBe("5500");
  });

  it("quantity 0 costs nothing in every mode; a negative quantity is an error", () => {
    expect(price(graduated, 0)).toBe("0");
    expect(price(volume, 0)).toBe("0");
    expect(price({ amount: 1000, tiersMode: null, tiers: [] }, 0)).toBe("0");
    expect(validationErrorOf(() => priceQuantity(graduated, -1, CLP)).fields).toEqual({
      quantity: ["must not be negative"],
    });
  });

  it("rounds the line once, not each tier", () => {
    const tiers: Tier[] = [
      { up_to: "1", unit_amount: "0.004", flat_amount: "0" },
      { up_to: null, unit_amount: "0.004", flat_amount: "0" },
    ];
    // per tier 0.004 + 0.004 would round to 0.00 + 0.00; once, 0.008 rounds to 0.01
    expect(price({ amount: 0, tiersMode: "graduated", tiers }, 2, USD)).toBe("0.01");
  });
});

describe("validateTiers", () => {
  it("normalizes tiers (decimal strings, flat_amount 0 by default)", () => {
    expect(
      validateTiers([
        { up_to: 5, unit_amount: 1000 },
        { up_to: null, unit_amount: "500.50", flat_amount: 10 },
      ]),
    ).toEqual([
      { up_to: "5", unit_amount: "1000", flat_amount: "0" },
      { up_to: null, unit_amount: "500.5", flat_amount: "10" },
    ]);
  });

  it("names every bad field", () => {
    const e = validationErrorOf(() =>
      validateTiers([
        { up_to: 10, unit_amount: 1 },
        { up_to: 5, unit_amount: -1 },
        { up_to: null, unit_amount: 1, flat_amount: -2 },
        { up_to: 0, unit_amount: null },
      ]),
    );
    expect(Object.keys(e.fields!).sort()).toEqual([
      "tiers.1.unit_amount",
      "tiers.1.up_to",
      "tiers.2.flat_amount",
      "tiers.2.up_to",
      "tiers.3.unit_amount",
      "tiers.3.up_to",
    ]);
    expect(e.fields!["tiers.1.up_to"][0]).toMatch(/greater than the previous/);
    expect(e.fields!["tiers.2.up_to"][0]).toMatch(/only the last tier may be open/);
  });

  it("requires a last open tier and at least one tier", () => {
    expect(validationErrorOf(() => validateTiers([{ up_to: 5, unit_amount: 1 }])).fields!["tiers.0.up_to"][0]).toMatch(
      /last tier must be open/,
    );
    expect(validationErrorOf(() => validateTiers([])).fields).toHaveProperty("tiers");
  });

  it("rejects more than 6 decimals (the column's scale)", () => {
    expect(validationErrorOf(() => validateTiers([{ up_to: null, unit_amount: "0.0000001" }])).fields).toHaveProperty([
      "tiers.0.unit_amount",
    ]);
  });
});

describe("addon rates", () => {
  it("accepts percents summing to 100 or amounts summing to the addon's amount", () => {
    expect(
      validateAddonRates(
        [
          { cycle: 1, percent: 50 },
          { cycle: 3, percent: "50" },
        ],
        300000,
        CLP,
      ),
    ).toEqual([
      { cycle: 1, percent: "50" },
      { cycle: 3, percent: "50" },
    ]);
    expect(
      validateAddonRates(
        [
          { cycle: 1, amount: 100000 },
          { cycle: 2, amount: 200000 },
        ],
        300000,
        CLP,
      ),
    ).toHaveLength(2);
  });

  it("rejects rates that do not add up, mixed kinds, bad cycles", () => {
    expect(
      validationErrorOf(() =>
        validateAddonRates(
          [
            { cycle: 1, percent: 60 },
            { cycle: 2, percent: 30 },
          ],
          100,
          CLP,
        ),
      ).fields!.rates[0],
    ).toMatch(/sum to 100/);
    expect(validationErrorOf(() => validateAddonRates([{ cycle: 1, amount: 60 }], 100, CLP)).fields!.rates[0]).toMatch(
      /sum to the addon's amount 100/,
    );
    expect(
      validationErrorOf(() =>
        validateAddonRates(
          [
            { cycle: 1, amount: 60 },
            { cycle: 2, percent: 40 },
          ],
          100,
          CLP,
        ),
      ).fields,
    ).toHaveProperty("rates");
    expect(
      validationErrorOf(() =>
        validateAddonRates(
          [
            { cycle: 2, percent: 50 },
            { cycle: 2, percent: 50 },
          ],
          100,
          CLP,
        ),
      ).fields,
    ).toHaveProperty(["rates.1.cycle"]);
    expect(validationErrorOf(() => validateAddonRates([{ cycle: 0, percent: 100 }], 100, CLP)).fields).toHaveProperty([
      "rates.0.cycle",
    ]);
    expect(
      validationErrorOf(() =>
        validateAddonRates(
          [
            { cycle: 1, amount: "99.5" },
            { cycle: 2, amount: "0.5" },
          ],
          100,
          CLP,
        ),
      ).fields,
    ).toHaveProperty(["rates.0.amount"]);
  });

  it("splits percents to the currency's unit, the last share taking the remainder", () => {
    const rates = validateAddonRates(
      [
        { cycle: 1, percent: "33.3333" },
        { cycle: 2, percent: "33.3333" },
        { cycle: 3, percent: "33.3334" },
      ],
      1000,
      CLP,
    );
    expect(addonRateShares(1000, rates, CLP).map((s) => [s.cycle, s.amount.toFixed()])).toEqual([
      [1, "333"],
      [2, "333"],
      [3, "334"],
    ]);
    expect(addonRateShares(1000, [], CLP).map((s) => s.amount.toFixed())).toEqual(["1000"]);
  });
});

describe("pricing properties", () => {
  const amount = fc.integer({ min: 0, max: 1_000_000 }).map(String);
  const tierList = fc
    .array(fc.record({ step: fc.integer({ min: 1, max: 1000 }), unit: amount, flat: amount }), {
      minLength: 1,
      maxLength: 6,
    })
    .map((rows) => {
      let upTo = 0;
      return rows.map((row, i): Tier => {
        upTo += row.step;
        return { up_to: i === rows.length - 1 ? null : String(upTo), unit_amount: row.unit, flat_amount: row.flat };
      });
    });
  const quantity = fc.integer({ min: 0, max: 10_000 });

  it("graduated and volume agree when there is one tier", () => {
    fc.assert(
      fc.property(amount, amount, quantity, (unit, flat, q) => {
        const tiers: Tier[] = [{ up_to: null, unit_amount: unit, flat_amount: flat }];
        expect(
          priceQuantity({ amount: 0, tiersMode: "graduated", tiers }, q, CLP).eq(
            priceQuantity({ amount: 0, tiersMode: "volume", tiers }, q, CLP),
          ),
        ).toBe(true);
      }),
    );
  });

  it("prices are never negative", () => {
    fc.assert(
      fc.property(tierList, quantity, fc.constantFrom("graduated", "volume"), (tiers, q, mode) => {
        expect(priceQuantity({ amount: 0, tiersMode: mode, tiers }, q, CLP).isNegative()).toBe(false);
      }),
    );
  });

  it("graduated is monotonic in quantity", () => {
    fc.assert(
      fc.property(tierList, quantity, quantity, (tiers, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const plan = { amount: 0, tiersMode: "graduated", tiers };
        expect(priceQuantity(plan, lo, CLP).lte(priceQuantity(plan, hi, CLP))).toBe(true);
      }),
    );
  });

  it("generated tiers pass validateTiers, and graduated prices equal a unit-by-unit sum", () => {
    fc.assert(
      fc.property(tierList, fc.integer({ min: 0, max: 300 }), (tiers, q) => {
        expect(validateTiers(tiers)).toEqual(tiers);
        let expected = new Decimal(0);
        let lower = 0;
        for (const tier of tiers) {
          const upper = tier.up_to === null ? Infinity : Number(tier.up_to);
          const units = Math.max(0, Math.min(q, upper) - lower);
          if (units > 0) expected = expected.plus(new Decimal(tier.unit_amount).times(units)).plus(tier.flat_amount);
          lower = upper;
        }
        expect(priceQuantity({ amount: 0, tiersMode: "graduated", tiers }, q, CLP).toFixed()).toBe(expected.toFixed());
      }),
    );
  });
});
