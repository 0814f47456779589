/**
 * Sending rules (src/domain/sii-sending.ts): retry delays, upload STATUS and envelope ESTADO meanings, boleta details.
 */
import { describe, expect, it } from "vitest";
import {
  boletaStatusFromDetail,
  documentStatusFromCounts,
  documentStatusFromRecord,
  envelopeOutcome,
  issuedTaxAgencyStatus,
  siiNextAttemptAt,
  siiRetryDelayMs,
  uploadOutcome,
} from "../../src/domain/sii-sending.js";

describe("issuedTaxAgencyStatus", () => {
  it("queues a DTE (pending) unless its mode's sending is off (not_sent)", () => {
    expect([issuedTaxAgencyStatus("automatic"), issuedTaxAgencyStatus("off")]).toEqual(["pending", "not_sent"]);
  });
});

describe("siiRetryDelayMs", () => {
  it("starts at one minute, doubles, and stops growing at six hours", () => {
    expect([1, 2, 3, 4, 5, 9, 10, 11, 50].map(siiRetryDelayMs)).toEqual([
      60_000, 120_000, 240_000, 480_000, 960_000, 15_360_000, 21_600_000, 21_600_000, 21_600_000,
    ]);
    expect(siiRetryDelayMs(0)).toBe(60_000);
  });
  it("the next attempt is that delay after now", () => {
    expect(siiNextAttemptAt(3, new Date("2026-11-23T10:00:00Z")).toISOString()).toBe("2026-11-23T10:04:00.000Z");
  });
});

describe("uploadOutcome", () => {
  it("0 is received, size/truncated/schema/signature errors are final, the rest is retried", () => {
    expect(uploadOutcome("0")).toBe("received");
    expect(["2", "3", "7", "8"].map(uploadOutcome)).toEqual(["rejected", "rejected", "rejected", "rejected"]);
    expect(["1", "5", "6", "9", "99", "x"].map(uploadOutcome)).toEqual([
      "retry",
      "retry",
      "retry",
      "retry",
      "retry",
      "retry",
    ]);
  });
});

describe("envelopeOutcome and documentStatusFromCounts", () => {
  it("maps SII's QueryEstUp states", () => {
    expect(["REC", "SOK", "FOK", "PDR", "CRT"].map(envelopeOutcome)).toEqual(Array(5).fill("in_progress"));
    expect(envelopeOutcome("EPR")).toBe("processed");
    expect(["RLV", "RPR"].map(envelopeOutcome)).toEqual(["accepted_with_objections", "accepted_with_objections"]);
    expect(["RSC", "RFR", "RCT", "RCH", "RPT", "VOF"].map(envelopeOutcome)).toEqual(Array(6).fill("rejected"));
    expect(["001", "002", "003", "-3", "ZZZ"].map(envelopeOutcome)).toEqual(Array(5).fill("retry"));
  });
  it("decides a processed type from its counts", () => {
    const c = (reported: number, accepted: number, rejected: number, objections: number) => ({
      type: 33,
      reported,
      accepted,
      rejected,
      objections,
    });
    expect(documentStatusFromCounts(c(3, 3, 0, 0))).toBe("accepted");
    expect(documentStatusFromCounts(c(3, 2, 0, 1))).toBe("accepted_with_objections");
    expect(documentStatusFromCounts(c(2, 0, 2, 0))).toBe("rejected");
    expect(documentStatusFromCounts(c(3, 2, 1, 0))).toBe("review");
    expect(documentStatusFromCounts(undefined)).toBe("review");
  });
});

describe("boletaStatusFromDetail", () => {
  it("a boleta SII does not list in detalle_rep_rech is accepted", () => {
    expect(boletaStatusFromDetail(undefined)).toBe("accepted");
  });
  it("RCH (and the other rejection codes) reject, RPR and RLV are objections, DOK accepts", () => {
    expect(
      ["RCH", "RSC", "RFR", "RPR", "RLV", "DOK", " RCH "].map((estado) => boletaStatusFromDetail({ estado })),
    ).toEqual([
      "rejected",
      "rejected",
      "rejected",
      "accepted_with_objections",
      "accepted_with_objections",
      "accepted",
      "rejected",
    ]);
  });
  it("an unknown code is left for review, never guessed", () => {
    expect(boletaStatusFromDetail({ estado: "XYZ" })).toBe("review");
  });
});

describe("documentStatusFromRecord (QueryEstDte)", () => {
  it(
    "DOK and the codes of a recorded DTE later modified by a note accept; FAU and FNA reject; others stay " +
      "in review",
    () => {
      expect(["DOK", "MMC", "ANC", "TMD", "FAU", "FNA", "DNK", "FAN", "-3"].map(documentStatusFromRecord)).toEqual([
        "accepted",
        "accepted",
        "accepted",
        "accepted",
        "rejected",
        "rejected",
        "review",
        "review",
        "review",
      ]);
    },
  );
});
