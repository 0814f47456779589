/** domain/catalogue.ts `checkPricingUnfrozen`: pricing is frozen while subscriptions use it (docs/catalogue.md). */
import { describe, expect, it } from "vitest";
import { checkPricingUnfrozen } from "../../src/domain/catalogue.js";
import { InvalidStateError } from "../../src/domain/errors.js";

function refusal(run: () => void): InvalidStateError {
  try {
    run();
  } catch (e) {
    if (e instanceof InvalidStateError) return e;
    throw e;
  }
  throw new Error("no error");
}

describe("frozen pricing", () => {
  it("lets anything change while no subscription uses the item, and nothing-changed pass while one does", () => {
    expect(checkPricingUnfrozen("Plan", "pla_1", ["amount"], 0)).toBeUndefined();
    expect(checkPricingUnfrozen("Addon", "add_1", [], 3)).toBeUndefined();
    expect(checkPricingUnfrozen("Coupon", "cou_1", [], 1)).toBeUndefined();
  });

  it("refuses a pricing change of a used plan (409), naming the fields as REST has them", () => {
    const e = refusal(() => checkPricingUnfrozen("Plan", "pla_1", ["amount", "usageScheme"], 2));
    expect(e.status).toBe(409);
    expect(e.code).toBe("invalid_state");
    expect(e.message).toBe(
      "Plan pla_1 is used by subscriptions; its pricing (amount, usage_scheme) cannot change. " +
        "Create a new plan instead.",
    );
  });

  it("refuses a pricing change of a used addon, and a discount change of a used coupon", () => {
    expect(refusal(() => checkPricingUnfrozen("Addon", "add_1", ["rates"], 1)).message).toBe(
      "Addon add_1 is used by subscriptions; its pricing cannot change. Create a new addon instead.",
    );
    expect(refusal(() => checkPricingUnfrozen("Coupon", "cou_1", ["amount"], 1)).message).toBe(
      "Coupon cou_1 is used by subscriptions; its discount cannot change. Create a new coupon instead.",
    );
  });
});
