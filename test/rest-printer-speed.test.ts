/**
 * A guard on the REST printer's cost (issue "the hot path at the limit of its stack", docs/performance.md "The REST
 * printer's guard"): printing an invoice as `GET /v1/invoices/{id}/` prints it (src/rest/printer.ts `printNode`,
 * then src/rest/json.ts `stringify`) must not become more than twice as slow as recorded.
 *
 * Not a timed test: the printer's time is divided by the time of a fixed loop in the same process over the same
 * object (`JSON.stringify` of the GraphQL result, the least any printer must do), measured in alternating rounds, and
 * the median of the rounds' ratios is compared with RECORDED_RATIO. A slower or busier machine slows both alike.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { printNode } from "../src/rest/printer.js";
import { stringify } from "../src/rest/json.js";

/** A finalized invoice of three lines as the REST retrieve's GraphQL operation returns it (its `InvoiceFields`). */
const node = JSON.parse(readFileSync(new URL("./fixtures/rest-invoice-node.json", import.meta.url), "utf8"));

/**
 * The median ratio measured when the guard was written (2026-12-08, Node 20, the 2-vCPU development machine; see
 * docs/performance.md): the printer's time per invoice over `JSON.stringify`'s of the same object. Three runs gave
 * medians of 12.0, 12.6 and 12.7 (rounds 10.9-14.1).
 */
const RECORDED_RATIO = 12.5;
/** The guard fails when the ratio is more than this times RECORDED_RATIO. */
const ALLOWED_SLOWDOWN = 2;

const printInvoice = () => stringify(printNode("Invoice", node, { shape: "retrieve", expand: new Set() }));
const baseline = () => JSON.stringify(node);

/** Nanoseconds per call of `f` over `n` calls; the result is kept so the calls cannot be optimised away. */
function nsPerCall(f: () => string, n: number): number {
  let length = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) length += f().length;
  const elapsed = Number(process.hrtime.bigint() - start);
  if (length === 0) throw new Error("nothing printed");
  return elapsed / n;
}

describe("the REST printer's cost", () => {
  it("prints what the spec says (the guard measures the real thing)", () => {
    const printed = JSON.parse(printInvoice());
    expect(printed).toMatchObject({
      id: "inv_8McbUsRKM2gS8Z7neXbHo0JV",
      customer: { id: "cus_FChwaGBv3mEaxAvSA4kZruyR", name: "Cliente SpA", state: "RM", country: "CL" },
      document: { id: "CL33", currency: "CLP" },
      test_mode: true,
      due_date: "2026-12-07",
      total: 26180,
      amount_due: 26180,
    });
    expect(printed.lines.map((l: { total: number; discount_scheme: string }) => [l.total, l.discount_scheme])).toEqual([
      [10000, "%"],
      [7500, "%"],
      [4500, "%"],
    ]);
  });

  it(`is at most ${ALLOWED_SLOWDOWN} times the recorded ratio to JSON.stringify of the same object`, () => {
    // warm-up: both compiled by V8's optimizer
    for (let i = 0; i < 3_000; i++) {
      printInvoice();
      baseline();
    }
    const ratios: number[] = [];
    for (let round = 0; round < 9; round++) {
      const base = nsPerCall(baseline, 2_000);
      ratios.push(nsPerCall(printInvoice, 500) / base);
    }
    ratios.sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)];
    console.log(
      `REST printer / JSON.stringify: median ${median.toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2))})`,
    );
    expect(median).toBeLessThanOrEqual(RECORDED_RATIO * ALLOWED_SLOWDOWN);
  });
});
