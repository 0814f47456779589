import { expect } from "vitest";
import { ValidationError } from "../../src/domain/errors.js";

/** The ValidationError `fn` throws (fails the test when it throws nothing or something else). */
export function validationErrorOf(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError, nothing was thrown");
}
