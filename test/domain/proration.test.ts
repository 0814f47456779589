/**
 * Proration of mid-cycle subscription changes (src/domain/proration.ts) and pending items on a
 * cycle invoice (src/domain/billing-cycle.ts): the worked examples of docs/proration.md and
 * properties (fast-check).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { addDays, daysBetween } from "../../src/domain/billing-periods.js";
import { cycleInvoice, type CycleInput, type CyclePendingItem } from "../../src/domain/billing-cycle.js";
import {
  changeProrations,
  linesAtCycle,
  netForInvoicing,
  parsePendingChanges,
  prorationBehavior,
  prorationPoint,
  type PendingItemDraft,
  type ProratedLine,
} from "../../src/domain/proration.js";
import { Decimal } from "../../src/domain/money.js";
import { validationErrorOf } from "../helpers/errors.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const november = { start: "2026-11-01", end: "2026-12-01" };
const pro = (quantity: number, unit = 10000, over: Partial<ProratedLine> = {}): ProratedLine => ({
  plan: "pla_pro",
  name: "Pro",
  quantity,
  periodAmount: quantity * unit,
  exempt: false,
  ...over,
});
const shown = (items: PendingItemDraft[]) => items.map((i) => [i.name, i.amount.toFixed()]);
const sumOf = (items: PendingItemDraft[]) =>
  items.reduce((a, i) => a.plus(i.amount.times(i.quantity)), new Decimal(0)).toFixed();

describe("changeProrations: worked examples (docs/proration.md)", () => {
  it(
    "quantity change: 2 -> 3 seats of 10 000 on Nov 21 (10 of 30 days left): credit 6 667, charge 10 000, " +
      "net 3 333",
    () => {
      const items = changeProrations({
        before: [pro(2)],
        after: [pro(3)],
        period: november,
        date: "2026-11-21",
        currency: CLP,
      });
      expect(shown(items)).toEqual([
        ["Unused time on 2 x Pro (Nov 21 - Dec 1)", "-6667"],
        ["Remaining time on 3 x Pro (Nov 21 - Dec 1)", "10000"],
      ]);
      expect(items.map((i) => [i.quantity.toFixed(), i.periodStart, i.periodEnd, i.exempt])).toEqual([
        ["1", "2026-11-21", "2026-12-01", false],
        ["1", "2026-11-21", "2026-12-01", false],
      ]);
      expect(sumOf(items)).toBe("3333");
    },
  );

  it("upgrade mid-month: Basic 10 000 -> Business 25 000 on Nov 16 (15 of 30 days): -5 000 and +12 500", () => {
    const items = changeProrations({
      before: [pro(1, 10000, { plan: "pla_basic", name: "Basic" })],
      after: [pro(1, 25000, { plan: "pla_biz", name: "Business" })],
      period: november,
      date: "2026-11-16",
      currency: CLP,
    });
    expect(shown(items)).toEqual([
      ["Unused time on 1 x Basic (Nov 16 - Dec 1)", "-5000"],
      ["Remaining time on 1 x Business (Nov 16 - Dec 1)", "12500"],
    ]);
  });

  it(
    "downgrade: Business 25 000 -> Basic 10 000 on Nov 11 (20 of 30 days): -16 667 and +6 667, a net credit " +
      "of 10 000",
    () => {
      const items = changeProrations({
        before: [pro(1, 25000, { plan: "pla_biz", name: "Business" })],
        after: [pro(1, 10000, { plan: "pla_basic", name: "Basic" })],
        period: november,
        date: "2026-11-11",
        currency: CLP,
      });
      expect(shown(items)).toEqual([
        ["Unused time on 1 x Business (Nov 11 - Dec 1)", "-16667"],
        ["Remaining time on 1 x Basic (Nov 11 - Dec 1)", "6667"],
      ]);
      expect(sumOf(items)).toBe("-10000");
    },
  );

  it("first day credits and charges the whole period; the renewal date prorates nothing", () => {
    expect(
      shown(
        changeProrations({ before: [pro(2)], after: [pro(3)], period: november, date: "2026-11-01", currency: CLP }),
      ),
    ).toEqual([
      ["Unused time on 2 x Pro (Nov 1 - Dec 1)", "-20000"],
      ["Remaining time on 3 x Pro (Nov 1 - Dec 1)", "30000"],
    ]);
    expect(
      changeProrations({ before: [pro(2)], after: [pro(3)], period: november, date: "2026-12-01", currency: CLP }),
    ).toEqual([]);
    // the last day of the period: 1 of 30 days
    expect(
      shown(
        changeProrations({ before: [pro(2)], after: [pro(3)], period: november, date: "2026-11-30", currency: CLP }),
      ),
    ).toEqual([
      ["Unused time on 2 x Pro (Nov 30 - Dec 1)", "-667"],
      ["Remaining time on 3 x Pro (Nov 30 - Dec 1)", "1000"],
    ]);
  });

  it(
    "pairs lines by position: unchanged lines prorate nothing, an added line is only charged, a removed one only " +
      "credited",
    () => {
      const extra = pro(1, 2000, { plan: "pla_extra", name: "Extra" });
      const items = changeProrations({
        before: [pro(2), extra],
        after: [pro(2), pro(4, 1500, { plan: "pla_seat", name: "Seat" }), extra],
        period: november,
        date: "2026-11-21",
        currency: CLP,
      });
      expect(shown(items)).toEqual([
        ["Unused time on 1 x Extra (Nov 21 - Dec 1)", "-667"],
        ["Remaining time on 4 x Seat (Nov 21 - Dec 1)", "2000"],
        ["Remaining time on 1 x Extra (Nov 21 - Dec 1)", "667"],
      ]);
      expect(
        shown(
          changeProrations({
            before: [pro(2), extra],
            after: [pro(2)],
            period: november,
            date: "2026-11-21",
            currency: CLP,
          }),
        ),
      ).toEqual([["Unused time on 1 x Extra (Nov 21 - Dec 1)", "-667"]]);
    },
  );

  it(
    "several changes in one cycle: 2 -> 3 on Nov 11, 3 -> 1 on Nov 21; what the customer pays equals the " +
      "seat-days used",
    () => {
      const first = changeProrations({
        before: [pro(2)],
        after: [pro(3)],
        period: november,
        date: "2026-11-11",
        currency: CLP,
      });
      const second = changeProrations({
        before: [pro(3)],
        after: [pro(1)],
        period: november,
        date: "2026-11-21",
        currency: CLP,
      });
      expect(shown([...first, ...second])).toEqual([
        ["Unused time on 2 x Pro (Nov 11 - Dec 1)", "-13333"],
        ["Remaining time on 3 x Pro (Nov 11 - Dec 1)", "20000"],
        ["Unused time on 3 x Pro (Nov 21 - Dec 1)", "-10000"],
        ["Remaining time on 1 x Pro (Nov 21 - Dec 1)", "3333"],
      ]);
      // 20 000 billed in advance + 0 net = 2 seats x 10 days + 3 x 10 + 1 x 10 = 60 seat-days x 333.33 = 20 000
      expect(new Decimal(20000).plus(sumOf([...first, ...second])).toFixed()).toBe("20000");
    },
  );

  it(
    "property: the prorated parts add up: paid in advance + credit + charge = used part of the old + unused part " +
      "of the new",
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 50 }),
          fc.integer({ min: 1, max: 50 }),
          fc.integer({ min: 1, max: 99999 }),
          fc.integer({ min: 0, max: 30 }),
          (q1, q2, unit, day) => {
            const date = addDays(november.start, day);
            const items = changeProrations({
              before: [pro(q1, unit)],
              after: [pro(q2, unit)],
              period: november,
              date,
              currency: CLP,
            });
            const paid = new Decimal(q1 * unit).plus(sumOf(items));
            const left = daysBetween(date, november.end);
            // each part is rounded once: within one peso of the exact seat-days
            const exact = new Decimal(q1 * unit)
              .times(30 - left)
              .plus(new Decimal(q2 * unit).times(left))
              .dividedBy(30);
            expect(paid.minus(exact).abs().lte(1)).toBe(true);
            if (q1 === q2) expect(items).toEqual([]);
          },
        ),
      );
    },
  );
});

describe("proration behaviour, date and pending changes", () => {
  it("proration_behavior: create_prorations by default; anything else unknown is a 400", () => {
    expect(prorationBehavior(undefined)).toBe("create_prorations");
    expect(prorationBehavior("always_invoice")).toBe("always_invoice");
    expect(validationErrorOf(() => prorationBehavior("sometimes")).fields).toEqual({
      proration_behavior: ["must be one of create_prorations, none, always_invoice"],
    });
  });

  it("prorates in the last billed cycle's period, from today clamped to it, or a proration_date inside it", () => {
    const base = { anchor: "2026-10-01", frequency: "monthly" as const, nextBillingCycle: 2 };
    expect(prorationPoint({ ...base, today: "2026-10-21" })).toEqual({
      period: { start: "2026-10-01", end: "2026-11-01" },
      date: "2026-10-21",
    });
    // the renewal passed and the run has not billed cycle 2 yet: nothing left to prorate
    expect(prorationPoint({ ...base, today: "2026-11-05" }).date).toBe("2026-11-01");
    expect(prorationPoint({ ...base, today: "2026-11-05", requested: "2026-10-11" }).date).toBe("2026-10-11");
    expect(
      validationErrorOf(() => prorationPoint({ ...base, today: "2026-10-05", requested: "2026-11-02" })).fields,
    ).toEqual({
      proration_date: ["must be within the current period 2026-10-01 to 2026-11-01"],
    });
  });

  it("always_invoice nets the items per tax class: a net charge to invoice, a net credit to a credit note", () => {
    const up = changeProrations({
      before: [pro(2)],
      after: [pro(3)],
      period: november,
      date: "2026-11-21",
      currency: CLP,
    });
    expect(netForInvoicing(up, CLP).map((n) => [n.exempt, n.net.toFixed(), n.name, n.description])).toEqual([
      [
        false,
        "3333",
        "Proration (Nov 21 - Dec 1)",
        "Unused time on 2 x Pro (Nov 21 - Dec 1): -6667; Remaining time on 3 x Pro (Nov 21 - Dec 1): 10000",
      ],
    ]);
    const down = changeProrations({
      before: [pro(3), pro(1, 5000, { plan: "pla_x", name: "Support", exempt: true })],
      after: [pro(1), pro(2, 5000, { plan: "pla_x", name: "Support", exempt: true })],
      period: november,
      date: "2026-11-21",
      currency: CLP,
    });
    expect(netForInvoicing(down, CLP).map((n) => [n.exempt, n.net.toFixed()])).toEqual([
      [false, "-6667"],
      [true, "1666"], // -round(5 000 x 10/30) + round(10 000 x 10/30) = -1 667 + 3 333
    ]);
    expect(netForInvoicing([], CLP)).toEqual([]);
  });

  it("pending changes (at_period_end) replace the lines from their cycle on", () => {
    const pending = parsePendingChanges({
      cycle: 3,
      lines: [{ id: "lin_1", plan: "pla_basic", quantity: "1", coupon: null }],
      requested: "2026-11-21T12:00:00.000Z",
    });
    expect(linesAtCycle(pending, 2)).toBeNull();
    expect(linesAtCycle(pending, 3)).toEqual([{ id: "lin_1", plan: "pla_basic", quantity: "1", coupon: null }]);
    expect(linesAtCycle(parsePendingChanges(null), 3)).toBeNull();
  });
});

describe("pending items on the cycle invoice", () => {
  const input = (pendingItems: CyclePendingItem[], over: Partial<CycleInput> = {}): CycleInput => ({
    cycle: 2,
    anchor: "2026-11-01",
    frequency: "monthly",
    dayStart: (date) => new Date(`${date}T03:00:00Z`),
    currency: CLP,
    taxRules: { taxPercent: "19", hasTaxes: true, pricesIncludeTax: false },
    lines: [
      {
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
        quantity: 3,
        coupon: null,
      },
    ],
    addons: [],
    coupon: null,
    pendingItems,
    ...over,
  });
  const item = (id: string, amount: number, over: Partial<CyclePendingItem> = {}): CyclePendingItem => ({
    id,
    name: `item ${id}`,
    quantity: 1,
    amount,
    exempt: false,
    periodStart: "2026-11-21",
    periodEnd: "2026-12-01",
    ...over,
  });

  it(
    "the next invoice carries the prorations of 2 -> 3 seats: 30 000 - 6 667 + 10 000 = 33 333, tax 6 333, " +
      "total 39 666",
    () => {
      const invoice = cycleInvoice(
        input([
          item("pii_1", -6667, { name: "Unused time on 2 x Pro (Nov 21 - Dec 1)" }),
          item("pii_2", 10000, { name: "Remaining time on 3 x Pro (Nov 21 - Dec 1)" }),
        ]),
      );
      expect(invoice.lines.map((l) => [l.name, l.quantity, l.amount, l.source.kind])).toEqual([
        ["Pro", "3", "10000", "line"],
        ["Remaining time on 3 x Pro (Nov 21 - Dec 1)", "1", "10000", "pending_item"],
        ["Unused time on 2 x Pro (Nov 21 - Dec 1)", "1", "-6667", "pending_item"],
      ]);
      expect([invoice.totals.amount.toFixed(), invoice.totals.tax.toFixed(), invoice.totals.total.toFixed()]).toEqual([
        "33333",
        "6333",
        "39666",
      ]);
      expect(invoice.billedPendingItems).toEqual(["pii_2", "pii_1"]);
      expect(invoice.carriedCredits).toEqual([]);
    },
  );

  it(
    "a credit larger than the invoice is cut to zero it and the rest is carried (the total never goes " + "negative)",
    () => {
      const invoice = cycleInvoice(input([item("pii_1", -45000)]));
      expect(invoice.lines[1]).toMatchObject({
        quantity: "1",
        amount: "-30000",
        description: "credit, 2026-11-21 to 2026-12-01 (-45000; the rest is carried to the next invoice)",
      });
      expect(invoice.totals.total.toFixed()).toBe("0");
      expect(invoice.carriedCredits.map((c) => [c.name, c.amount.toFixed(), c.exempt])).toEqual([
        ["item pii_1", "-15000", false],
      ]);
    },
  );

  it("a credit on exempt lines only uses the exempt amount; an invoice coupon discounts the net after credits", () => {
    const coupon = {
      id: "cou_1",
      name: "10",
      discountScheme: "%" as const,
      amount: "10",
      durationScheme: "forever" as const,
      durationTimes: null,
      applyOn: "invoice" as const,
      validUntil: null,
      redemptions: 0,
    };
    const invoice = cycleInvoice(input([item("pii_1", -5000, { exempt: true }), item("pii_2", -10000)], { coupon }));
    expect(invoice.lines.map((l) => [l.amount, l.exempt])).toEqual([
      ["10000", false],
      ["-10000", false],
    ]);
    expect(invoice.carriedCredits.map((c) => [c.amount.toFixed(), c.exempt])).toEqual([["-5000", true]]);
    // 30 000 - 10 000 = 20 000, less 10 % = 18 000, tax 3 420
    expect([invoice.totals.amount.toFixed(), invoice.totals.tax.toFixed(), invoice.totals.total.toFixed()]).toEqual([
      "18000",
      "3420",
      "21420",
    ]);
  });

  it("property: totals never negative, and billed plus carried credits equal the credits given", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -60000, max: 20000 }), { maxLength: 6 }),
        fc.boolean(),
        (amounts, exemptFirst) => {
          const items = amounts.map((a, i) => item(`pii_${i}`, a, { exempt: exemptFirst && i === 0 }));
          const invoice = cycleInvoice(input(items));
          expect(invoice.totals.total.isNegative()).toBe(false);
          expect(invoice.totals.amount.isNegative()).toBe(false);
          const billed = invoice.lines
            .filter((l) => l.source.kind === "pending_item")
            .reduce((a, l) => a.plus(new Decimal(l.amount).times(l.quantity)), new Decimal(0));
          const carried = invoice.carriedCredits.reduce((a, c) => a.plus(c.amount), new Decimal(0));
          expect(billed.plus(carried).toFixed()).toBe(amounts.reduce((a, b) => a + b, 0).toString());
        },
      ),
    );
  });
});
