/** Swap replies (src/domain/swap-replies.ts): statuses, one reply per swap, SII's 8-day claim window. */
import { describe, it, expect } from "vitest";
import { checkSwapReply, claimDeadline, proposeSwapReply, SWAP_REPLY_STATUSES } from "../../src/domain/swap-replies.js";

// 2026-01-01 20:00 in Santiago (summer, UTC-3) is 23:00 UTC
const received = new Date("2026-01-01T23:00:00Z");
const base = { currentStatus: null, receivedAt: received, swapId: "swa_x" };

describe("claimDeadline", () => {
  it("SII's example: received 1 Jan 20:00 -> last day 9 Jan", () => {
    expect(claimDeadline(received)).toBe("2026-01-09");
  });
  it("counts the Chilean calendar day: 2 Jan 01:30 UTC is still 1 Jan 22:30 in Santiago", () => {
    expect(claimDeadline(new Date("2026-01-02T01:30:00Z"))).toBe("2026-01-09");
  });
  it("crosses months and winter time (UTC-4)", () => {
    expect(claimDeadline(new Date("2026-06-25T15:00:00Z"))).toBe("2026-07-03");
  });
});

describe("checkSwapReply", () => {
  it("maps statuses to ResultadoDTE states: ACD and ERM accept (0), RCD RFP RFT reject (2)", () => {
    expect(Object.fromEntries(Object.entries(SWAP_REPLY_STATUSES).map(([k, v]) => [k, v.resultStatus]))).toEqual({
      ACD: 0,
      ERM: 0,
      RCD: 2,
      RFP: 2,
      RFT: 2,
    });
    expect(checkSwapReply({ ...base, status: "ERM", now: received }).kind).toBe("acceptance");
  });
  it(
    "a claim on the last day (9 Jan 23:59 Santiago = 10 Jan 02:59 UTC) passes, a minute later it is " + "refused (409)",
    () => {
      expect(checkSwapReply({ ...base, status: "RCD", now: new Date("2026-01-10T02:59:59Z") }).kind).toBe("claim");
      expect(() => checkSwapReply({ ...base, status: "RFT", now: new Date("2026-01-10T03:00:00Z") })).toThrow(
        expect.objectContaining({
          status: 409,
          message: expect.stringMatching(
            /Claim RFT refused.*8 calendar days.*received 2026-01-01, last day 2026-01-09/,
          ),
        }),
      );
    },
  );
  it("acceptances are allowed after the window", () => {
    expect(checkSwapReply({ ...base, status: "ACD", now: new Date("2026-03-01T12:00:00Z") }).resultStatus).toBe(0);
  });
  it("unknown or missing status: 400 on field status; already answered: 409", () => {
    expect(() => checkSwapReply({ ...base, status: "OK", now: received })).toThrow(
      expect.objectContaining({ status: 400, fields: { status: ["must be one of ACD, ERM, RCD, RFP, RFT, not OK"] } }),
    );
    expect(() => checkSwapReply({ ...base, status: null, now: received })).toThrow(
      expect.objectContaining({ status: 400 }),
    );
    expect(() => checkSwapReply({ ...base, currentStatus: "ACD", status: "RCD", now: received })).toThrow(
      expect.objectContaining({ status: 409, message: expect.stringContaining("already answered with ACD") }),
    );
  });
});

describe("proposeSwapReply", () => {
  const ok = { type: 33, folio: 60, issuerTaxId: "97975000-5", signatureValid: true, tedValid: true };
  it("every document verified: ACD", () => {
    expect(proposeSwapReply([ok, { ...ok, folio: 61 }])).toEqual({
      status: "ACD",
      reason: "every document's signature and timbre (TED) verified",
    });
  });
  it("a bad signature or timbre: RCD naming each document and what failed", () => {
    expect(
      proposeSwapReply([
        ok,
        { ...ok, folio: 61, signatureValid: false },
        { ...ok, folio: 62, signatureValid: false, tedValid: false },
        { ...ok, folio: 63, tedValid: false },
      ]),
    ).toEqual({
      status: "RCD",
      reason:
        "type 33 folio 61 from 97975000-5: signature did not verify; type 33 folio 62 from 97975000-5: signature and " +
        "timbre (TED) did not verify; " +
        "type 33 folio 63 from 97975000-5: timbre (TED) did not verify; claim the content within 8 days",
    });
  });
  it("documents imported before verification: no proposal", () => {
    expect(proposeSwapReply([ok, { ...ok, folio: 61, signatureValid: null, tedValid: null }]).status).toBeNull();
  });
});
