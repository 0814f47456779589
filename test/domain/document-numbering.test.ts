import { describe, expect, it } from "vitest";
import { missingSetupSteps, numberingFor, type NumberingFacts } from "../../src/domain/document-numbering.js";
import { InvalidStateError } from "../../src/domain/errors.js";

const facts = (over: Partial<NumberingFacts>): NumberingFacts => ({
  documentTypeId: "CL33",
  testMode: true,
  regulated: true,
  setup: { taxId: true, certificate: true },
  ...over,
});

describe("numbering at finalize", () => {
  it("a regulated type of a mode set up with SII takes an SII folio, in either mode", () => {
    expect(numberingFor(facts({}))).toBe("sii_folio");
    expect(numberingFor(facts({ testMode: false }))).toBe("sii_folio");
    expect(numberingFor(facts({ referencedNumbering: "sii_folio" }))).toBe("sii_folio");
  });

  it("a type no agency issues is internal, set up or not, in either mode", () => {
    expect(numberingFor(facts({ regulated: false }))).toBe("internal");
    expect(
      numberingFor(facts({ regulated: false, testMode: false, setup: { taxId: false, certificate: false } })),
    ).toBe("internal");
  });

  it("test mode before set-up numbers a regulated type in the internal series", () => {
    expect(numberingFor(facts({ setup: { taxId: false, certificate: false } }))).toBe("internal");
    expect(numberingFor(facts({ setup: { taxId: true, certificate: false } }))).toBe("internal");
  });

  it("a note on an internal-series document is internal, even once set up", () => {
    expect(numberingFor(facts({ documentTypeId: "CL61", referencedNumbering: "internal" }))).toBe("internal");
    expect(
      numberingFor(
        facts({
          documentTypeId: "CL61",
          testMode: false,
          referencedNumbering: "internal",
          setup: { taxId: false, certificate: false },
        }),
      ),
    ).toBe("internal");
  });

  it("live mode before set-up refuses a regulated type with a 409 naming each missing step and the CAF", () => {
    const refused = () => numberingFor(facts({ testMode: false, setup: { taxId: false, certificate: false } }));
    expect(refused).toThrow(InvalidStateError);
    let error: InvalidStateError | undefined;
    try {
      refused();
    } catch (e) {
      error = e as InvalidStateError;
    }
    expect(error!.status).toBe(409);
    expect(error!.message).toContain("live mode is not set up with SII");
    expect(error!.message).toContain(
      "set the live mode tax profile with the organization's RUT (PATCH /v1/billers/built_in/tax_profile/",
    );
    expect(error!.message).toContain(
      "upload the live mode signing certificate (POST /v1/billers/built_in/certificates/",
    );
    expect(error!.message).toContain("upload a CAF for CL33 (POST /v1/billers/built_in/cafs/)");
    // only what is missing is named
    expect(() => numberingFor(facts({ testMode: false, setup: { taxId: true, certificate: false } }))).toThrow(
      /^(?!.*tax profile).*signing certificate/,
    );
  });

  it("lists the missing steps per mode", () => {
    expect(missingSetupSteps({ taxId: true, certificate: true }, false)).toEqual([]);
    expect(missingSetupSteps({ taxId: false, certificate: true }, true)).toEqual([
      "set the test mode tax profile with the organization's RUT (PATCH /v1/billers/built_in/tax_profile/ tax_id, or " +
        "GraphQL updateTaxProfile)",
    ]);
  });
});
