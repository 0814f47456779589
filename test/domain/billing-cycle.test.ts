/** A cycle's invoice (src/domain/billing-cycle.ts): worked examples and properties. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cycleInvoice, type CycleAddon, type CycleCoupon, type CycleInput, type CycleLine } from "../../src/domain/billing-cycle.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const CL33 = { taxPercent: "19", hasTaxes: true, pricesIncludeTax: false };
const TIERS = [
  { up_to: "5", unit_amount: "1000", flat_amount: "0" },
  { up_to: "10", unit_amount: "800", flat_amount: "500" },
  { up_to: null, unit_amount: "500", flat_amount: "0" },
];

const licensed = (over: Partial<CycleLine> = {}): CycleLine => ({
  id: "lin_pro",
  name: "Pro",
  plan: { amount: "10000", tiersMode: null, tiers: [], usageScheme: "licensed", usageAggregation: "sum", exempt: false },
  quantity: 2,
  coupon: null,
  ...over,
});

const input = (over: Partial<CycleInput> = {}): CycleInput => ({
  cycle: 1,
  anchor: "2026-11-01",
  frequency: "monthly",
  dayStart: (date) => new Date(`${date}T03:00:00Z`), // America/Santiago midnight in November (UTC-3)
  currency: CLP,
  taxRules: CL33,
  lines: [licensed()],
  addons: [],
  coupon: null,
  ...over,
});

const coupon = (over: Partial<CycleCoupon> = {}): CycleCoupon => ({
  id: "cou_1",
  name: "Welcome",
  discountScheme: "%",
  amount: "10",
  durationScheme: "once",
  durationTimes: null,
  applyOn: "invoice",
  validUntil: null,
  redemptions: 0,
  ...over,
});

const summary = (i: ReturnType<typeof cycleInvoice>) => ({
  lines: i.lines.map((l) => [l.name, l.quantity, l.amount, l.discount, l.discountScheme, l.periodStart, l.periodEnd]),
  amount: i.totals.amount.toString(),
  tax: i.totals.tax.toString(),
  total: i.totals.total.toString(),
});

describe("cycle invoice: worked examples (docs/recurring-billing.md)", () => {
  it("licensed: 2 x 10 000 for Nov 1 - Dec 1, billed in advance on Nov 1", () => {
    const inv = cycleInvoice(input());
    expect([inv.periodStart, inv.periodEnd]).toEqual(["2026-11-01", "2026-12-01"]);
    expect(summary(inv)).toEqual({ lines: [["Pro", "2", "10000", "0", "%", "2026-11-01", "2026-12-01"]], amount: "20000", tax: "3800", total: "23800" });
  });

  it("tiers: 12 units graduated = 10 500, volume = 6 000, one line each at quantity 1", () => {
    const graduated = licensed({ id: "lin_g", name: "Graduated", quantity: 12, plan: { ...licensed().plan, tiersMode: "graduated", tiers: TIERS } });
    const volume = licensed({ id: "lin_v", name: "Volume", quantity: 12, plan: { ...licensed().plan, tiersMode: "volume", tiers: TIERS } });
    const inv = cycleInvoice(input({ lines: [graduated, volume] }));
    expect(inv.lines.map((l) => [l.name, l.quantity, l.amount, l.description])).toEqual([
      ["Graduated", "1", "10500", "12 units, graduated tiers, 2026-11-01 to 2026-12-01"],
      ["Volume", "1", "6000", "12 units, volume tiers, 2026-11-01 to 2026-12-01"],
    ]);
    expect(inv.totals.amount.toString()).toBe("16500");
  });

  it("metered: billed in arrears, the previous period's usage (none in cycle 1)", () => {
    const usages = [
      { quantity: 30, dateTime: new Date("2026-11-05T12:00:00Z") },
      { quantity: 12, dateTime: new Date("2026-11-30T23:00:00Z") },
      { quantity: 1000, dateTime: new Date("2026-12-01T03:00:00Z") }, // December's
    ];
    const api = licensed({ id: "lin_api", name: "API calls", plan: { amount: "100", tiersMode: null, tiers: [], usageScheme: "metered", usageAggregation: "sum", exempt: false }, usages });
    expect(cycleInvoice(input({ lines: [api] })).lines).toEqual([]);
    const december = cycleInvoice(input({ cycle: 2, lines: [api] }));
    expect(summary(december).lines).toEqual([["API calls", "42", "100", "0", "%", "2026-11-01", "2026-12-01"]]);
    expect(december.lines[0].description).toBe("usage 2026-11-01 to 2026-12-01");
    expect([december.periodStart, december.periodEnd]).toEqual(["2026-12-01", "2027-01-01"]);
  });

  it("addons: a one-time setup split 50/25/25 over cycles 1-3, a recurring one for 2 cycles", () => {
    const setup: CycleAddon = { id: "add_setup", name: "Setup", applyScheme: "one_time", durationTimes: null, amount: "9000", quantity: 1, rates: [{ cycle: 1, percent: "50" }, { cycle: 2, percent: "25" }, { cycle: 3, percent: "25" }], redemptions: 0 };
    const support: CycleAddon = { id: "add_support", name: "Support", applyScheme: "recurring", durationTimes: 2, amount: "1500", quantity: 2, rates: [], redemptions: 0 };
    const addonsOf = (cycle: number, redemptions: number) =>
      cycleInvoice(input({ cycle, lines: [], addons: [setup, { ...support, redemptions }] })).lines.map((l) => [l.name, l.quantity, l.amount]);
    expect(addonsOf(1, 0)).toEqual([["Setup (share 1 of 3)", "1", "4500"], ["Support", "2", "1500"]]);
    expect(addonsOf(2, 1)).toEqual([["Setup (share 2 of 3)", "1", "2250"], ["Support", "2", "1500"]]);
    expect(addonsOf(3, 2)).toEqual([["Setup (share 3 of 3)", "1", "2250"]]);
    expect(addonsOf(4, 2)).toEqual([]);
  });

  it("coupons: a 10 % invoice coupon once, a $ line coupon, the subscription's line coupon on the other lines", () => {
    const first = cycleInvoice(input({ coupon: coupon() }));
    expect([first.discount, first.discountScheme, first.totals.amount.toString(), first.redeemedCoupons]).toEqual(["10", "%", "18000", ["cou_1"]]);
    const second = cycleInvoice(input({ coupon: coupon({ redemptions: 1 }) }));
    expect([second.discount, second.totals.amount.toString(), second.redeemedCoupons]).toEqual(["0", "20000", []]);
    expect([first.subscriptionCouponRedeemed, first.redeemedLineCoupons, second.subscriptionCouponRedeemed]).toEqual([true, [], false]);

    const lineCoupon = coupon({ id: "cou_line", discountScheme: "$", amount: "3000", applyOn: "line", durationScheme: "forever" });
    const perLine = cycleInvoice(
      input({
        lines: [licensed({ coupon: lineCoupon }), licensed({ id: "lin_b", name: "Basic", quantity: 1 })],
        coupon: coupon({ id: "cou_sub", applyOn: "line", durationScheme: "limited", durationTimes: 3, redemptions: 2 }),
      }),
    );
    expect(summary(perLine).lines.map((l) => l.slice(0, 5))).toEqual([
      ["Pro", "2", "10000", "3000", "$"],
      ["Basic", "1", "10000", "10", "%"],
    ]);
    expect(perLine.totals.amount.toString()).toBe("26000");
    expect(perLine.redeemedCoupons.sort()).toEqual(["cou_line", "cou_sub"]);
    // the billing run counts one redemption on the first line's own coupon and one on the subscription's
    expect([perLine.redeemedLineCoupons, perLine.subscriptionCouponRedeemed]).toEqual([["lin_pro"], true]);
  });

  it("a $ invoice coupon larger than the invoice takes it to zero, not below", () => {
    const inv = cycleInvoice(input({ coupon: coupon({ discountScheme: "$", amount: "50000" }) }));
    expect([inv.discount, inv.totals.total.toString()]).toEqual(["20000", "0"]);
  });

  it("exempt plans give exempt lines", () => {
    const inv = cycleInvoice(input({ lines: [licensed({ plan: { ...licensed().plan, exempt: true } })] }));
    expect([inv.lines[0].exempt, inv.totals.exempt.toString(), inv.totals.tax.toString(), inv.totals.total.toString()]).toEqual([true, "20000", "0", "20000"]);
  });
});

describe("cycle invoice: properties", () => {
  it("totals are never negative, whatever the quantities, prices and coupons", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 100000 }),
        fc.constantFrom("%", "$"),
        fc.integer({ min: 0, max: 100 }),
        fc.constantFrom("invoice", "line"),
        (quantity, price, scheme, off, applyOn) => {
          const amount = scheme === "%" ? String(off) : String(off * 1000);
          const inv = cycleInvoice(
            input({
              lines: [licensed({ quantity, plan: { ...licensed().plan, amount: String(price) } })],
              coupon: coupon({ discountScheme: scheme as "%" | "$", amount, applyOn: applyOn as "invoice" | "line", durationScheme: "forever" }),
            }),
          );
          return !inv.totals.total.isNegative() && !inv.totals.amount.isNegative();
        },
      ),
    );
  });

  it("graduated and volume agree when there is one tier", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10000 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }), (quantity, unit, flat) => {
        const one = [{ up_to: null, unit_amount: String(unit), flat_amount: String(flat) }];
        const priced = (mode: string) =>
          cycleInvoice(input({ lines: [licensed({ quantity, plan: { ...licensed().plan, tiersMode: mode, tiers: one } })] })).totals.total.toString();
        return priced("graduated") === priced("volume");
      }),
    );
  });
});
