/** The Idempotency-Key table (src/domain/idempotency.ts), one test per row. */
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_MS, assertIdempotencyKey, idempotencyDecision } from "../../src/domain/idempotency.js";
import { InvalidStateError } from "../../src/domain/errors.js";
import { validationErrorOf } from "../helpers/errors.js";

const now = new Date("2026-11-22T12:00:00Z");
const request = { operation: "POST /v1/payments/", requestHash: "abc" };
const stored = (
  over: Partial<{ operation: string; requestHash: string; responseStatus: number | null; createdAt: Date }> = {},
) => ({
  ...request,
  responseStatus: 201,
  createdAt: new Date(now.getTime() - 60_000),
  ...over,
});

describe("idempotency decisions", () => {
  it("the same request, answered: replay", () => {
    expect(idempotencyDecision(stored(), request, now)).toBe("replay");
  });
  it("the same request, still running: 409", () => {
    expect(() => idempotencyDecision(stored({ responseStatus: null }), request, now)).toThrow(InvalidStateError);
  });
  it("another body or path: 400 on idempotency_key", () => {
    expect(
      Object.keys(
        validationErrorOf(() => idempotencyDecision(stored({ requestHash: "other" }), request, now)).fields ?? {},
      ),
    ).toEqual(["idempotency_key"]);
    expect(() => idempotencyDecision(stored({ operation: "POST /v1/sources/" }), request, now)).toThrow(
      /was used by another request/,
    );
  });
  it("older than 24 hours: run again, whatever was stored", () => {
    expect(
      idempotencyDecision(
        stored({ requestHash: "other", createdAt: new Date(now.getTime() - IDEMPOTENCY_TTL_MS) }),
        request,
        now,
      ),
    ).toBe("rerun");
  });
  it("keys are 1 to 255 printable characters", () => {
    expect(() => assertIdempotencyKey("order-7f3a")).not.toThrow();
    for (const bad of ["", "   ", "x".repeat(256), "a\nb"])
      expect(() => assertIdempotencyKey(bad)).toThrow(/idempotency_key/);
  });
});
