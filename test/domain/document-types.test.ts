import { describe, expect, it } from "vitest";
import { chosenDocumentType, defaultDocumentType } from "../../src/domain/document-types.js";

describe("default document type per country", () => {
  it("is CL33 for a Chilean customer's invoice and CL52 for its order, none elsewhere", () => {
    expect(defaultDocumentType("invoice", "CL")).toBe("CL33");
    expect(defaultDocumentType("order", "CL")).toBe("CL52");
    expect(defaultDocumentType("invoice", "cl")).toBe("CL33");
    expect(defaultDocumentType("invoice", "AR")).toBeNull();
    expect(defaultDocumentType("order", null)).toBeNull();
    expect(defaultDocumentType("invoice", "")).toBeNull();
  });

  it("chooses the given type, else the current one, else the country's default; blank counts as not given", () => {
    expect(chosenDocumentType("invoice", "CL34", null, "CL")).toBe("CL34");
    expect(chosenDocumentType("invoice", "CL34", "CL33", "CL")).toBe("CL34");
    expect(chosenDocumentType("invoice", undefined, "CL34", "CL")).toBe("CL34");
    expect(chosenDocumentType("invoice", null, null, "CL")).toBe("CL33");
    // invoices once kept "" (then unknown type ""), subscriptions took the default: now one rule
    expect(chosenDocumentType("invoice", "", null, "CL")).toBe("CL33");
    expect(chosenDocumentType("invoice", "  ", "CL34", "CL")).toBe("CL34");
    expect(chosenDocumentType("order", "", null, "CL")).toBe("CL52");
    expect(chosenDocumentType("order", "", null, "AR")).toBeNull();
    expect(chosenDocumentType("invoice", undefined, undefined, undefined)).toBeNull();
  });
});
