import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/domain/errors.js";
import { Decimal } from "../../src/domain/money.js";
import {
  analyticsMonths,
  monthlyFigures,
  mrrMovement,
  MRR_FREQUENCY_FACTORS,
  type MoneyFlow,
} from "../../src/domain/revenue-analytics.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };

describe("analyticsMonths", () => {
  it("covers the calendar months of from and to, both included, and names the month before", () => {
    expect(analyticsMonths("2026-01-15", "2026-03-01")).toEqual({
      previous: { start: "2025-12-01", last: "2025-12-31" },
      months: [
        { start: "2026-01-01", last: "2026-01-31" },
        { start: "2026-02-01", last: "2026-02-28" },
        { start: "2026-03-01", last: "2026-03-31" },
      ],
    });
    expect(analyticsMonths("2028-02-10", "2028-02-10").months).toEqual([{ start: "2028-02-01", last: "2028-02-29" }]);
  });

  it("refuses a bad date, to before from, and more than 120 months, naming the field", () => {
    const fieldOf = (from: string, to: string) => {
      try {
        analyticsMonths(from, to);
      } catch (e) {
        return Object.keys((e as ValidationError).fields ?? {});
      }
      return [];
    };
    expect(fieldOf("2026-13-01", "2026-12-01")).toEqual(["from"]);
    expect(fieldOf("2026-01-01", "enero")).toEqual(["to"]);
    expect(fieldOf("2026-03-01", "2026-02-28")).toEqual(["to"]);
    expect(fieldOf("2016-01-01", "2025-12-31")).toEqual([]); // exactly 120 months
    expect(fieldOf("2016-01-01", "2026-01-01")).toEqual(["to"]);
  });
});

describe("MRR", () => {
  it("normalizes a period's price to a month", () => {
    const monthly = (amount: number, frequency: keyof typeof MRR_FREQUENCY_FACTORS) => {
      const f = MRR_FREQUENCY_FACTORS[frequency];
      return new Decimal(amount).times(f.numerator).dividedBy(f.denominator).toFixed();
    };
    expect(monthly(120000, "yearly")).toBe("10000");
    expect(monthly(30000, "quarterly")).toBe("10000");
    expect(monthly(10000, "monthly")).toBe("10000");
    expect(monthly(3000, "weekly")).toBe("13000");
    expect(monthly(1200, "daily")).toBe("36500");
  });

  it("classifies a customer's change between two month ends, and the parts add up", () => {
    const move = (previous: number, current: number) => {
      const m = mrrMovement(new Decimal(previous), new Decimal(current));
      expect(new Decimal(previous).plus(m.new).plus(m.expansion).minus(m.contraction).minus(m.churned).toFixed()).toBe(
        String(current),
      );
      return [m.new, m.expansion, m.contraction, m.churned].map((d) => d.toFixed());
    };
    expect(move(0, 10000)).toEqual(["10000", "0", "0", "0"]);
    expect(move(10000, 25000)).toEqual(["0", "15000", "0", "0"]);
    expect(move(25000, 20000)).toEqual(["0", "0", "5000", "0"]);
    expect(move(20000, 0)).toEqual(["0", "0", "0", "20000"]);
    expect(move(20000, 20000)).toEqual(["0", "0", "0", "0"]);
    expect(move(0, 0)).toEqual(["0", "0", "0", "0"]);
  });
});

describe("monthlyFigures", () => {
  it("computes docs/analytics.md's money columns from the flows", () => {
    // two months (January, February 2026); month 0 is December 2025 and earlier
    const flows: MoneyFlow[] = [
      // an invoice of December, 119,000 due in December, unpaid until February
      { kind: "invoice", month: 0, dueMonth: 0, forInvoice: true, total: "119000", tax: "19000" },
      // January: an invoice of 23,800 due in March (beyond the months: 3), and a payment on account
      { kind: "invoice", month: 1, dueMonth: 3, forInvoice: true, total: "23800", tax: "3800" },
      { kind: "payment", month: 1, dueMonth: null, forInvoice: false, total: "5000", tax: "0" },
      // February: the December invoice is paid 60,000 and credited 11,900; a debit note of 2,380 on the January one
      { kind: "payment", month: 2, dueMonth: 0, forInvoice: true, total: "60000", tax: "0" },
      { kind: "credit_note", month: 2, dueMonth: 0, forInvoice: true, total: "11900", tax: "1900" },
      { kind: "debit_note", month: 2, dueMonth: 3, forInvoice: true, total: "2380", tax: "380" },
    ];
    expect(monthlyFigures(flows, 2, CLP)).toEqual([
      {
        invoiced: "23800",
        creditNotes: "0",
        debitNotes: "0",
        iva: "3800",
        collected: "5000",
        outstanding: "142800", // 119,000 + 23,800 (the payment on account is not for an invoice)
        overdue: "119000", // the December invoice; the January one is due in March
      },
      {
        invoiced: "0",
        creditNotes: "11900",
        debitNotes: "2380",
        iva: "-1520", // 380 - 1,900
        collected: "60000",
        outstanding: "73280", // 142,800 - 60,000 - 11,900 + 2,380
        overdue: "47100", // 119,000 - 60,000 - 11,900
      },
    ]);
  });

  it("rounds each figure to the currency's unit", () => {
    const flows: MoneyFlow[] = [
      { kind: "invoice", month: 1, dueMonth: 1, forInvoice: true, total: "100.5", tax: "16.04" },
    ];
    expect(monthlyFigures(flows, 1, CLP)[0]).toMatchObject({ invoiced: "101", iva: "16", overdue: "101" });
    const usd = { id: "USD", rounded: false, decimals: 2 };
    expect(monthlyFigures(flows, 1, usd)[0]).toMatchObject({ invoiced: "100.5", iva: "16.04" });
  });
});
