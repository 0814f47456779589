import { describe, expect, it } from "vitest";
import { chosenDocumentType, defaultDocumentType, documentTypeMismatch } from "../../src/domain/document-types.js";

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

describe("which document types a document may use", () => {
  const factura = { id: "CL33", name: "Factura electrónica", isOrder: false, isNote: false };
  const guia = { id: "CL52", name: "Guía de despacho electrónica", isOrder: true, isNote: false };
  const credito = { id: "CL61", name: "Nota de crédito electrónica", isOrder: false, isNote: true };

  it("an invoice (or a subscription) takes an invoice type, not an order or a note type", () => {
    expect(documentTypeMismatch("invoice", factura)).toBeNull();
    expect(documentTypeMismatch("invoice", guia)).toBe("CL52 (Guía de despacho electrónica) is not an invoice type");
    expect(documentTypeMismatch("invoice", credito)).toBe("CL61 (Nota de crédito electrónica) is not an invoice type");
  });

  it("an order takes an order type only", () => {
    expect(documentTypeMismatch("order", guia)).toBeNull();
    expect(documentTypeMismatch("order", factura)).toBe("CL33 (Factura electrónica) is not an order type");
    expect(documentTypeMismatch("order", credito)).toBe("CL61 (Nota de crédito electrónica) is not an order type");
  });
});
