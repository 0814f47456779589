import { describe, expect, it } from "vitest";
import { RECEIVER_STATUSES, nextReceiverStatus, receiverStatusOf } from "../../src/domain/receiver-status.js";

describe("receiverStatusOf", () => {
  it("maps SII's codes: EstadoRecepDTE 0 received, else reception_rejected; EstadoDTE 0/1/2; a Recibo", () => {
    expect([
      receiverStatusOf("reception", 0),
      receiverStatusOf("reception", 1),
      receiverStatusOf("reception", 99),
    ]).toEqual(["received", "reception_rejected", "reception_rejected"]);
    expect([receiverStatusOf("result", 0), receiverStatusOf("result", 1), receiverStatusOf("result", 2)]).toEqual([
      "accepted",
      "accepted_with_discrepancies",
      "claimed",
    ]);
    expect(receiverStatusOf("receipt", null)).toBe("goods_received");
  });
});

describe("nextReceiverStatus", () => {
  it("a later or equal stage replaces, an earlier one does not", () => {
    expect(nextReceiverStatus(undefined, "received")).toBe("received");
    expect(nextReceiverStatus("received", "claimed")).toBe("claimed");
    expect(nextReceiverStatus("claimed", "received")).toBe("claimed");
    expect(nextReceiverStatus("claimed", "accepted")).toBe("accepted");
    expect(nextReceiverStatus("goods_received", "accepted")).toBe("goods_received");
    expect(nextReceiverStatus("accepted", "goods_received")).toBe("goods_received");
    expect(nextReceiverStatus("something else", "received")).toBe("received");
  });
  it("every status has a stage 1 to 3 and a description", () => {
    for (const rule of Object.values(RECEIVER_STATUSES)) {
      expect([1, 2, 3]).toContain(rule.stage);
      expect(rule.description.length).toBeGreaterThan(20);
    }
  });
});
