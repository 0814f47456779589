/**
 * REST bodies -> GraphQL variables (src/rest/input.ts): a value of the wrong JSON type for its field is a
 * validation error naming the field's REST path, never coerced, dropped or read as null; the documented other
 * forms (decimal strings, printed objects of references, a state object's code) stay accepted.
 */
import { describe, expect, it } from "vitest";
import { isScalarType } from "graphql";
import { ValidationError } from "../src/domain/errors.js";
import { schema } from "../src/graphql/schema.js";
import * as ops from "../src/graphql/generated/operations.js";
import { bodyVariables, SCALAR_INPUTS } from "../src/rest/input.js";

/** The field errors of `body` for operation `doc` (none: `{}`). */
function fieldsOf(doc: Parameters<typeof bodyVariables>[0], body: unknown): Record<string, string[]> {
  try {
    bodyVariables(doc, body);
    return {};
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return { ...e.fields };
  }
}

describe("bodyVariables: JSON types", () => {
  it("every scalar of the schema says which JSON types it takes", () => {
    const scalars = Object.values(schema.getTypeMap()).filter(isScalarType);
    expect(scalars.map((s) => s.name).filter((name) => !Object.hasOwn(SCALAR_INPUTS, name))).toEqual([]);
  });

  it("an object or a list for a scalar is an error on its path, never null or absent", () => {
    const customer = ops.RestCreateCustomerDocument;
    expect(fieldsOf(customer, { name: "A", state: { $gt: "" } })).toEqual({ state: ["must be a string"] });
    expect(fieldsOf(customer, { name: "A", state: { code: ["RM"] } })).toEqual({ state: ["must be a string"] });
    expect(fieldsOf(customer, { name: ["A"], email: { $ne: null } })).toEqual({
      name: ["must be a string"],
      email: ["must be a string"],
    });
    expect(fieldsOf(customer, { name: "A", contacts: [{ name: "B" }, "C"] })).toEqual({
      contacts: ["item 1: must be an object"],
    });
    const invoice = ops.RestCreateInvoiceDocument;
    expect(fieldsOf(invoice, { customer: 42, document: { currency: "CLP" } })).toEqual({
      customer: ["must be a string"],
      document: ["must be a string"],
    });
    expect(
      fieldsOf(invoice, {
        lines: [{ name: "A", quantity: { $gt: 0 }, amount: [1], exempt: "false" }],
        date: 20261124,
        metadata: ["x"],
      }),
    ).toEqual({
      "lines.0.quantity": ["must be a decimal number"],
      "lines.0.amount": ["must be a decimal number"],
      "lines.0.exempt": ["must be true or false"],
      date: ["must be a date yyyy-mm-dd"],
      metadata: ["must be a JSON object"],
    });
    const reminder = ops.RestCreateReminderDocument;
    expect(fieldsOf(reminder, { subject: "S", recipient: ["a@b.cl", 7], message: "m" })).toEqual({
      recipient: ["item 1: must be a string"],
    });
    expect(fieldsOf(ops.RestUpdateTaxProfileDocument, { resolution_number: "80" })).toEqual({
      resolution_number: ["must be an integer"],
    });
  });

  it("the documented forms stay accepted", () => {
    const invoice = bodyVariables(ops.RestCreateInvoiceDocument, {
      customer: { id: "cus_1", name: "printed" },
      document: { id: "CL33", currency: "CLP" },
      lines: [{ name: "A", quantity: "2", amount: 1000.5, exempt: false }],
      metadata: { k: "v" },
    }) as { input: Record<string, unknown> };
    expect(invoice.input).toMatchObject({
      customer: "cus_1",
      document: "CL33",
      currency: "CLP",
      lines: [{ name: "A", quantity: "2", amount: "1000.5", exempt: false }],
    });
    const customer = bodyVariables(ops.RestCreateCustomerDocument, {
      name: "A",
      state: { id: null, code: "Texas", name: null },
    }) as { input: Record<string, unknown> };
    expect(customer.input.state).toBe("Texas");
    const tax = bodyVariables(ops.RestUpdateTaxProfileDocument, { activity_codes: "620200, 631100" }) as {
      input: Record<string, unknown>;
    };
    expect(tax.input.activityCodes).toEqual(["620200", "631100"]);
  });
});
