/** A cycle's invoice (src/domain/billing-cycle.ts): worked examples and properties. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  cycleDecision,
  cycleInvoice,
  ENDED_REASON,
  meteredPeriod,
  NO_CARD_REASON,
  noCardCheckNeeded,
  noCardEnds,
  periodUsages,
  type CycleAddon,
  type CycleCoupon,
  type CycleInput,
  type CycleLine,
  type CycleSubscription,
} from "../../src/domain/billing-cycle.js";
import { aggregateUsage } from "../../src/domain/usage.js";

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
  plan: {
    amount: "10000",
    tiersMode: null,
    tiers: [],
    usageScheme: "licensed",
    usageAggregation: "sum",
    exempt: false,
  },
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
    expect(summary(inv)).toEqual({
      lines: [["Pro", "2", "10000", "0", "%", "2026-11-01", "2026-12-01"]],
      amount: "20000",
      tax: "3800",
      total: "23800",
    });
  });

  it("tiers: 12 units graduated = 10 500, volume = 6 000, one line each at quantity 1", () => {
    const graduated = licensed({
      id: "lin_g",
      name: "Graduated",
      quantity: 12,
      plan: { ...licensed().plan, tiersMode: "graduated", tiers: TIERS },
    });
    const volume = licensed({
      id: "lin_v",
      name: "Volume",
      quantity: 12,
      plan: { ...licensed().plan, tiersMode: "volume", tiers: TIERS },
    });
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
    const api = licensed({
      id: "lin_api",
      name: "API calls",
      plan: {
        amount: "100",
        tiersMode: null,
        tiers: [],
        usageScheme: "metered",
        usageAggregation: "sum",
        exempt: false,
      },
      usages,
    });
    expect(cycleInvoice(input({ lines: [api] })).lines).toEqual([]);
    const december = cycleInvoice(input({ cycle: 2, lines: [api] }));
    expect(summary(december).lines).toEqual([["API calls", "42", "100", "0", "%", "2026-11-01", "2026-12-01"]]);
    expect(december.lines[0].description).toBe("usage 2026-11-01 to 2026-12-01");
    expect([december.periodStart, december.periodEnd]).toEqual(["2026-12-01", "2027-01-01"]);
  });

  it("addons: a one-time setup split 50/25/25 over cycles 1-3, a recurring one for 2 cycles", () => {
    const setup: CycleAddon = {
      id: "add_setup",
      name: "Setup",
      applyScheme: "one_time",
      durationTimes: null,
      amount: "9000",
      quantity: 1,
      rates: [
        { cycle: 1, percent: "50" },
        { cycle: 2, percent: "25" },
        { cycle: 3, percent: "25" },
      ],
      redemptions: 0,
    };
    const support: CycleAddon = {
      id: "add_support",
      name: "Support",
      applyScheme: "recurring",
      durationTimes: 2,
      amount: "1500",
      quantity: 2,
      rates: [],
      redemptions: 0,
    };
    const addonsOf = (cycle: number, redemptions: number) =>
      cycleInvoice(input({ cycle, lines: [], addons: [setup, { ...support, redemptions }] })).lines.map((l) => [
        l.name,
        l.quantity,
        l.amount,
      ]);
    expect(addonsOf(1, 0)).toEqual([
      ["Setup (share 1 of 3)", "1", "4500"],
      ["Support", "2", "1500"],
    ]);
    expect(addonsOf(2, 1)).toEqual([
      ["Setup (share 2 of 3)", "1", "2250"],
      ["Support", "2", "1500"],
    ]);
    expect(addonsOf(3, 2)).toEqual([["Setup (share 3 of 3)", "1", "2250"]]);
    expect(addonsOf(4, 2)).toEqual([]);
  });

  it("coupons: a 10 % invoice coupon once, a $ line coupon, the subscription's line coupon on the other lines", () => {
    const first = cycleInvoice(input({ coupon: coupon() }));
    expect([first.discount, first.discountScheme, first.totals.amount.toString(), first.redeemedCoupons]).toEqual([
      "10",
      "%",
      "18000",
      ["cou_1"],
    ]);
    const second = cycleInvoice(input({ coupon: coupon({ redemptions: 1 }) }));
    expect([second.discount, second.totals.amount.toString(), second.redeemedCoupons]).toEqual(["0", "20000", []]);
    expect([first.subscriptionCouponRedeemed, first.redeemedLineCoupons, second.subscriptionCouponRedeemed]).toEqual([
      true,
      [],
      false,
    ]);

    const lineCoupon = coupon({
      id: "cou_line",
      discountScheme: "$",
      amount: "3000",
      applyOn: "line",
      durationScheme: "forever",
    });
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
    expect([
      inv.lines[0].exempt,
      inv.totals.exempt.toString(),
      inv.totals.tax.toString(),
      inv.totals.total.toString(),
    ]).toEqual([true, "20000", "0", "20000"]);
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
              coupon: coupon({
                discountScheme: scheme as "%" | "$",
                amount,
                applyOn: applyOn as "invoice" | "line",
                durationScheme: "forever",
              }),
            }),
          );
          return !inv.totals.total.isNegative() && !inv.totals.amount.isNegative();
        },
      ),
    );
  });

  it("graduated and volume agree when there is one tier", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        (quantity, unit, flat) => {
          const one = [{ up_to: null, unit_amount: String(unit), flat_amount: String(flat) }];
          const priced = (mode: string) =>
            cycleInvoice(
              input({ lines: [licensed({ quantity, plan: { ...licensed().plan, tiersMode: mode, tiers: one } })] }),
            ).totals.total.toString();
          return priced("graduated") === priced("volume");
        },
      ),
    );
  });
});

describe("when a cycle is billed and when a subscription ends (cycleDecision; docs/billing-run.md)", () => {
  const sub = (over: Partial<CycleSubscription> = {}): CycleSubscription => ({
    status: "active",
    cycle: 1,
    date: "2026-07-01",
    cancelAtPeriodEnd: false,
    cancelReason: null,
    billingCycles: null,
    endDate: null,
    ...over,
  });

  it("bills an active subscription's next cycle on its date", () => {
    expect(cycleDecision(sub({ cycle: 3, date: "2026-09-01" }))).toEqual({
      action: "bill",
      cycle: 3,
      date: "2026-09-01",
    });
  });

  it("does nothing while paused or cancelled", () => {
    expect(cycleDecision(sub({ status: "paused", cancelAtPeriodEnd: true }))).toEqual({
      action: "none",
      status: "paused",
    });
    expect(cycleDecision(sub({ status: "cancelled" }), true)).toEqual({ action: "none", status: "cancelled" });
  });

  it("cancel at period end: ends at the next cycle's start with the stored reason, before any other rule", () => {
    expect(
      cycleDecision(
        sub({ cycle: 2, date: "2026-08-01", cancelAtPeriodEnd: true, cancelReason: "too_expensive", billingCycles: 1 }),
        true,
      ),
    ).toEqual({
      action: "end",
      cycle: 2,
      date: "2026-08-01",
      end: "cancel_at_period_end",
      cancelReason: "too_expensive",
      cancelledAt: "cycle_start",
      finalInvoice: true,
    });
  });

  it("billing_cycles 2 from 2026-07-01: bills Jul 1 and Aug 1, ends on Sep 1 with `ended`", () => {
    const at = (cycle: number, date: string) =>
      cycleDecision(sub({ cycle, date, billingCycles: 2, endDate: "2026-09-01" }));
    expect(at(1, "2026-07-01").action).toBe("bill");
    expect(at(2, "2026-08-01").action).toBe("bill");
    expect(at(3, "2026-09-01")).toMatchObject({
      action: "end",
      end: "billing_cycles",
      cancelReason: ENDED_REASON,
      cancelledAt: "cycle_start",
    });
  });

  it(
    "end_date 2026-08-15: Aug 1 is billed whole (before the end date), Sep 1 ends; an end date on a cycle's start " +
      "ends there",
    () => {
      expect(cycleDecision(sub({ cycle: 2, date: "2026-08-01", endDate: "2026-08-15" })).action).toBe("bill");
      expect(cycleDecision(sub({ cycle: 3, date: "2026-09-01", endDate: "2026-08-15" }))).toMatchObject({
        action: "end",
        end: "end_date",
        cancelReason: ENDED_REASON,
      });
      expect(cycleDecision(sub({ cycle: 2, date: "2026-08-01", endDate: "2026-08-01" }))).toMatchObject({
        action: "end",
        end: "end_date",
      });
    },
  );

  it("no card: ends with `no_card` at the moment it is found, only for a cycle that would be billed", () => {
    expect(cycleDecision(sub({ cycle: 2, date: "2026-08-01" }), true)).toEqual({
      action: "end",
      cycle: 2,
      date: "2026-08-01",
      end: "no_card",
      cancelReason: NO_CARD_REASON,
      cancelledAt: "now",
      finalInvoice: false,
    });
    expect(cycleDecision(sub({ cycle: 3, date: "2026-09-01", billingCycles: 2 }), true)).toMatchObject({
      end: "billing_cycles",
    });
  });

  it("the no-card rule: a past-due previous invoice with an amount due and no usable source", () => {
    const previous = { status: "finalized", dueDate: "2026-05-13" };
    const check = { cycle: 2, date: "2026-06-03", previous, amountDue: "11900", hasUsableSource: false };
    expect(noCardEnds(check)).toBe(true);
    expect(noCardEnds({ ...check, hasUsableSource: true })).toBe(false); // the run charges the card
    expect(noCardEnds({ ...check, amountDue: "0" })).toBe(false); // paid on time by other means
    // due on the renewal day: not yet past due
    expect(noCardEnds({ ...check, previous: { ...previous, dueDate: "2026-06-03" } })).toBe(false);
    expect(noCardEnds({ ...check, previous: { ...previous, status: "void" } })).toBe(false);
    expect(noCardEnds({ ...check, previous: null })).toBe(false); // nothing billed before (metered-only cycle 1)
    expect(noCardEnds({ ...check, cycle: 1 })).toBe(false);
    // billed earlier in the same run
    expect(noCardCheckNeeded(2, { status: "draft", dueDate: "2026-05-13" }, "2026-06-03")).toBe(true);
  });
});

describe("which usage a period bills (periodUsages, meteredPeriod)", () => {
  const at = (iso: string, quantity: number, invoiceId: string | null = null, created = iso) => ({
    quantity,
    dateTime: new Date(iso),
    createdAt: new Date(created),
    invoiceId,
  });
  const october = { start: new Date("2026-10-01T03:00:00Z"), end: new Date("2026-11-01T03:00:00Z") };
  const records = [
    at("2026-09-20T12:00:00Z", 9, "inv_sep"),
    at("2026-10-31T23:00:00Z", 12),
    at("2026-10-05T12:00:00Z", 30),
    at("2026-10-10T12:00:00Z", 7, "inv_other"),
    at("2026-11-01T03:00:00Z", 500),
  ];

  it("sum over October: the period's records not billed yet, by time (42); the one at the period's end waits", () => {
    const { priced, billed } = periodUsages(records, "sum", october);
    expect(priced.map((u) => u.quantity)).toEqual([30, 12]);
    expect(billed).toEqual(priced);
    expect(aggregateUsage(priced, "sum", october).toString()).toBe("42");
  });

  it(
    "last_ever prices the latest record before the period's end, billed or not, and bills the period's " +
      "unbilled records",
    () => {
      const { priced, billed } = periodUsages(records, "last_ever", october);
      expect(priced.map((u) => u.quantity)).toEqual([12]);
      expect(billed.map((u) => u.quantity)).toEqual([30, 12]);
      const november = { start: october.end, end: new Date("2026-12-01T03:00:00Z") };
      expect(periodUsages(records.slice(0, 4), "last_ever", november)).toEqual({ priced: [records[1]], billed: [] });
    },
  );

  it("equal times: the record created later is later", () => {
    const a = at("2026-10-10T12:00:00Z", 1, null, "2026-10-10T12:00:01Z");
    const b = at("2026-10-10T12:00:00Z", 2, null, "2026-10-10T12:00:00Z");
    expect(periodUsages([a, b], "last_during_period", october).priced).toEqual([b, a]);
  });

  it("metered lines bill the cycle before's period: none in cycle 1", () => {
    expect(meteredPeriod("2026-01-31", "monthly", 1)).toBeNull();
    expect(meteredPeriod("2026-01-31", "monthly", 2)).toEqual({ start: "2026-01-31", end: "2026-02-28" });
  });
});

describe("lines of a document type without taxes are exempt on the invoice", () => {
  it("CL34: a taxable plan's line says exempt, as its totals count it", () => {
    const inv = cycleInvoice(input({ taxRules: { taxPercent: "0", hasTaxes: false, pricesIncludeTax: false } }));
    expect(inv.lines.map((l) => l.exempt)).toEqual([true]);
    expect([inv.totals.amount.toString(), inv.totals.exempt.toString(), inv.totals.total.toString()]).toEqual([
      "0",
      "20000",
      "20000",
    ]);
  });
});

describe("the final invoice of a subscription that ends (cycleInvoice `final`)", () => {
  const api: CycleLine = {
    id: "lin_api",
    name: "API",
    plan: { amount: "100", tiersMode: null, tiers: [], usageScheme: "metered", usageAggregation: "sum", exempt: false },
    quantity: 1,
    coupon: null,
    usages: [
      { quantity: 30, dateTime: new Date("2026-11-05T15:00:00Z") },
      { quantity: 12, dateTime: new Date("2026-11-30T15:00:00Z") },
    ],
  };
  const setup: CycleAddon = {
    id: "add_1",
    name: "Soporte",
    applyScheme: "recurring",
    durationTimes: null,
    amount: "1500",
    quantity: 1,
    rates: [],
    redemptions: 0,
  };

  it("ends on Dec 1 after November: bills November's usage (42 x 100), no seats, no addon, dated for November", () => {
    const inv = cycleInvoice(input({ cycle: 2, final: true, lines: [licensed(), api], addons: [setup] }));
    expect(summary(inv)).toEqual({
      lines: [["API", "42", "100", "0", "%", "2026-11-01", "2026-12-01"]],
      amount: "4200",
      tax: "798",
      total: "4998",
    });
    expect([inv.periodStart, inv.periodEnd, inv.billedAddons]).toEqual(["2026-11-01", "2026-12-01", []]);
  });

  it("pending items are billed on it too", () => {
    const item = {
      id: "pii_1",
      name: "Remaining time on 3 x Pro (Nov 21 - Dec 1)",
      quantity: 1,
      amount: "10000",
      exempt: false,
      periodStart: "2026-11-21",
      periodEnd: "2026-12-01",
    };
    const inv = cycleInvoice(input({ cycle: 2, final: true, lines: [licensed()], pendingItems: [item] }));
    expect(summary(inv).lines).toEqual([[item.name, "1", "10000", "0", "%", "2026-11-21", "2026-12-01"]]);
    expect(inv.billedPendingItems).toEqual(["pii_1"]);
  });

  it("nothing to bill (no usage, licensed lines only, or cycle 1): no lines, no coupon redeemed", () => {
    const none = cycleInvoice(
      input({
        cycle: 2,
        final: true,
        lines: [licensed(), { ...api, usages: [] }],
        coupon: coupon({ applyOn: "invoice" }),
      }),
    );
    expect([none.lines, none.redeemedCoupons, none.subscriptionCouponRedeemed, none.totals.total.toString()]).toEqual([
      [],
      [],
      false,
      "0",
    ]);
    expect(cycleInvoice(input({ cycle: 1, final: true, lines: [api] })).lines).toEqual([]);
  });

  it("cycleDecision asks for a final invoice on every end but no_card", () => {
    const base = {
      status: "active",
      cycle: 3,
      date: "2026-09-01",
      cancelAtPeriodEnd: false,
      cancelReason: null,
      billingCycles: null,
      endDate: null,
    };
    expect(cycleDecision({ ...base, billingCycles: 2 })).toMatchObject({ end: "billing_cycles", finalInvoice: true });
    expect(cycleDecision({ ...base, cancelAtPeriodEnd: true })).toMatchObject({
      end: "cancel_at_period_end",
      finalInvoice: true,
    });
    expect(cycleDecision({ ...base, endDate: "2026-09-01" })).toMatchObject({ end: "end_date", finalInvoice: true });
    expect(cycleDecision(base, true)).toMatchObject({ end: "no_card", finalInvoice: false });
  });
});
