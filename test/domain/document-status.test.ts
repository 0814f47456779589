/** Document status machine: only drafts can be updated, deleted or finalized (409 otherwise). */
import { describe, it, expect } from "vitest";
import { transition, type DocumentAction } from "../../src/domain/document-status.js";
import { InvalidStateError } from "../../src/domain/errors.js";

const ACTIONS: DocumentAction[] = ["update", "delete", "finalize"];

function invalidStateErrorOf(fn: () => unknown): InvalidStateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidStateError);
    return error as InvalidStateError;
  }
  throw new Error("expected an InvalidStateError, nothing was thrown");
}

describe("transition from draft", () => {
  it("update keeps the draft", () => {
    expect(transition("invoice", "draft", "update")).toBe("draft");
  });

  it("delete removes it", () => {
    expect(transition("invoice", "draft", "delete")).toBe("removed");
  });

  it("finalize finalizes it", () => {
    expect(transition("invoice", "draft", "finalize")).toBe("finalized");
  });
});

describe("transition from finalized", () => {
  for (const action of ACTIONS) {
    it(`${action} throws InvalidStateError (409 invalid_state)`, () => {
      const error = invalidStateErrorOf(() => transition("invoice", "finalized", action));
      expect(error.status).toBe(409);
      expect(error.code).toBe("invalid_state");
      expect(error.message).toContain(`Cannot ${action} a finalized invoice`);
    });
  }

  it("names the document kind in the message", () => {
    const error = invalidStateErrorOf(() => transition("credit note", "finalized", "delete"));
    expect(error.message).toBe("Cannot delete a finalized credit note; only drafts can be deleted");
  });
});

describe("transition from an unknown status", () => {
  for (const action of ACTIONS) {
    it(`${action} throws InvalidStateError`, () => {
      expect(invalidStateErrorOf(() => transition("order", "removed", action)).status).toBe(409);
    });
  }
});
