/** Hard and soft declines (src/domain/declines.ts), the table of docs/dunning.md "Hard and soft declines". */
import { describe, expect, it } from "vitest";
import { declineKind, HARD_DECLINE_CODES, SOFT_DECLINE_CODES } from "../../src/domain/declines.js";
import { TEST_CARDS } from "../../src/infra/gateways/test-cards.js";

describe("declineKind", () => {
  const table: [string, "hard" | "soft"][] = [
    ["expired_card", "hard"],
    ["incorrect_number", "hard"],
    ["lost_card", "hard"],
    ["stolen_card", "hard"],
    ["card_not_supported", "hard"],
    ["insufficient_funds", "soft"],
    ["processing_error", "soft"],
    ["card_declined", "soft"],
  ];
  for (const [code, kind] of table)
    it(`${code} is ${kind}`, () => {
      expect(declineKind(code)).toBe(kind);
    });

  it("the lists are the table: five hard codes, three soft ones, none in both", () => {
    expect([...HARD_DECLINE_CODES].sort()).toEqual(
      table
        .filter(([, k]) => k === "hard")
        .map(([c]) => c)
        .sort(),
    );
    expect([...SOFT_DECLINE_CODES].sort()).toEqual(
      table
        .filter(([, k]) => k === "soft")
        .map(([c]) => c)
        .sort(),
    );
    for (const code of HARD_DECLINE_CODES) expect(declineKind(code)).toBe("hard");
    for (const code of SOFT_DECLINE_CODES) expect(declineKind(code)).toBe("soft");
  });

  it("an unknown code is soft (retried): a gateway's new code does not end collection", () => {
    expect(declineKind("do_not_honor")).toBe("soft");
    expect(declineKind("")).toBe("soft");
    // codes are matched exactly
    expect(declineKind("EXPIRED_CARD")).toBe("soft");
    expect(declineKind(" lost_card")).toBe("soft");
  });

  it("no code (null or undefined) is soft", () => {
    expect(declineKind(null)).toBe("soft");
    expect(declineKind(undefined)).toBe("soft");
  });

  it("every decline code of the test gateway's cards is in one of the lists", () => {
    const codes = Object.values(TEST_CARDS).flatMap((card) => (card.decline ? [card.decline.code] : []));
    expect(codes.sort()).toEqual([...HARD_DECLINE_CODES, ...SOFT_DECLINE_CODES].sort());
  });
});
