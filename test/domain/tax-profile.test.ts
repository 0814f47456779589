import { describe, expect, it } from "vitest";
import { FieldErrorCollector, ValidationError } from "../../src/domain/errors.js";
import { activityCodesOf, missingForIssuing, normalizeTaxProfile } from "../../src/domain/tax-profile.js";

function normalize(input: Parameters<typeof normalizeTaxProfile>[0], testMode = true) {
  const errors = new FieldErrorCollector();
  const columns = normalizeTaxProfile(input, errors, testMode);
  let fields: Record<string, string[]> = {};
  try {
    errors.throwIfAny();
  } catch (e) {
    fields = (e as ValidationError).fields ?? {};
  }
  return { columns, fields };
}

describe("normalizeTaxProfile", () => {
  it("normalizes the RUT and joins activity codes (the worked example)", () => {
    const { columns, fields } = normalize({
      taxId: "76.042.235-5",
      activityCodes: ["620200", " 631200 "],
      businessName: "  Acme SpA ",
      resolutionNumber: 0,
      resolutionDate: "2026-01-15",
    });
    expect(fields).toEqual({});
    expect(columns).toEqual({
      taxId: "76042235-5",
      taxActivityCode: "620200,631200",
      taxBusinessName: "Acme SpA",
      taxResolutionNumber: 0,
      taxResolutionDate: "2026-01-15",
    });
  });

  it("sii_sending: automatic or off in test mode; off in live mode and other values are field errors", () => {
    expect(normalize({ siiSending: "off" })).toEqual({ columns: { siiSending: "off" }, fields: {} });
    expect(normalize({ siiSending: null }, false)).toEqual({ columns: { siiSending: "automatic" }, fields: {} });
    expect(normalize({ siiSending: "automatic" }, false)).toEqual({ columns: { siiSending: "automatic" }, fields: {} });
    expect(normalize({ siiSending: "off" }, false).fields).toEqual({
      sii_sending: ["can be off in test mode only: a live DTE is a tax document and must reach SII"],
    });
    expect(normalize({ siiSending: "manual" }).fields).toEqual({ sii_sending: ["must be one of automatic, off"] });
  });

  it("names every bad field", () => {
    const { fields } = normalize({
      taxId: "76042235-4",
      activityCodes: ["62A", "1", "2", "3", "4"],
      commune: "x".repeat(21),
      resolutionNumber: -1,
      resolutionDate: "15-01-2026",
    });
    expect(Object.keys(fields).sort()).toEqual([
      "activity_codes",
      "activity_codes.0",
      "commune",
      "resolution_date",
      "resolution_number",
      "tax_id",
    ]);
    expect(fields.commune).toEqual(["must have at most 20 characters"]);
  });

  it("clears with null or an empty string and leaves absent fields alone", () => {
    expect(normalize({ taxId: "", address: null, activityCodes: [] }).columns).toEqual({
      taxId: null,
      taxAddress: null,
      taxActivityCode: null,
    });
    expect(normalize({}).columns).toEqual({});
  });
});

describe("missingForIssuing", () => {
  it("lists what SII's Emisor requires", () => {
    expect(missingForIssuing({ taxId: null, taxBusinessName: null, taxActivity: null, taxActivityCode: null })).toEqual(
      ["tax_id", "business_name", "activity", "activity_codes"],
    );
    expect(
      missingForIssuing({
        taxId: "76042235-5",
        taxBusinessName: "Acme",
        taxActivity: "Software",
        taxActivityCode: "620200",
      }),
    ).toEqual([]);
    expect(activityCodesOf("620200,631200")).toEqual(["620200", "631200"]);
  });
});
