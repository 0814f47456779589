import { describe, expect, it } from "vitest";
import { classifyDatabaseError, domainErrorOfDatabaseFailure } from "../src/infra/database-errors.js";
import { ServiceUnavailableError, ValidationError } from "../src/domain/errors.js";

/** An Error with extra fields, the way Prisma, the pg driver and its adapter shape theirs. */
const error = (message: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), extra);

describe("classifyDatabaseError", () => {
  it(
    "knows an unavailable database by Prisma code, SQLSTATE, socket code, adapter kind or pg's message, also " +
      "as a cause",
    () => {
      expect(
        classifyDatabaseError(error("Timed out fetching a new connection from the connection pool", { code: "P2024" })),
      ).toBe("unavailable");
      expect(
        classifyDatabaseError(
          error("Transaction API error: Unable to start a transaction in the given time.", { code: "P2028" }),
        ),
      ).toBe("unavailable");
      expect(classifyDatabaseError(error("canceling statement due to statement timeout", { code: "57014" }))).toBe(
        "unavailable",
      );
      expect(
        classifyDatabaseError(error("terminating connection due to administrator command", { code: "57P01" })),
      ).toBe("unavailable");
      expect(classifyDatabaseError(error("connect ECONNREFUSED 127.0.0.1:1", { code: "ECONNREFUSED" }))).toBe(
        "unavailable",
      );
      expect(classifyDatabaseError(error("wrapped", { cause: { kind: "DatabaseNotReachable" } }))).toBe("unavailable");
      expect(classifyDatabaseError(error("outer", { cause: error("timeout exceeded when trying to connect") }))).toBe(
        "unavailable",
      );
      expect(classifyDatabaseError(new AggregateError([error("x", { code: "ECONNREFUSED" })]))).toBe("unavailable");
    },
  );

  it("maps a numeric overflow to a 400 and leaves anything else alone (a 500)", () => {
    expect(
      domainErrorOfDatabaseFailure(error("numeric field overflow", { cause: { kind: "ValueOutOfRange" } })),
    ).toBeInstanceOf(ValidationError);
    expect(domainErrorOfDatabaseFailure(error("x", { code: "P2024" }))).toBeInstanceOf(ServiceUnavailableError);
    expect(domainErrorOfDatabaseFailure(new TypeError("x is not a function"))).toBeNull();
    expect(domainErrorOfDatabaseFailure(error("duplicate key", { code: "23505" }))).toBeNull();
    const loop: Record<string, unknown> = { message: "loop" };
    loop.cause = loop;
    expect(classifyDatabaseError(loop)).toBeNull();
  });
});
