/** A debit note voiding a credit note (src/domain/credit-note-voids.ts); the header's worked example first. */
import { describe, expect, it } from "vitest";
import {
  VOIDING_DEBIT_TYPE,
  creditNoteVoidProblems,
  type VoidedCreditNote,
} from "../../src/domain/credit-note-voids.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const CL56 = { id: "CL56", code: 56 };
const note61: VoidedCreditNote = {
  id: "cre_61",
  documentType: { id: "CL61", code: 61, isCreditNote: true },
  status: "finalized",
  number: 5,
  total: 1190,
  taxAgencyStatus: "accepted",
  voidedBy: [],
};
const check = (over: Partial<Parameters<typeof creditNoteVoidProblems>[0]>) =>
  creditNoteVoidProblems({ noteType: CL56, referenceCode: 1, total: 1190, creditNote: note61, currency: CLP, ...over });

describe("a debit note voiding a credit note", () => {
  it("worked example: a CL56 of 1190 with CodRef 1 voids the finalized CL61 N° 5 of 1190", () => {
    expect(check({})).toEqual([]);
    expect(check({ creditNote: { ...note61, taxAgencyStatus: null } })).toEqual([]);
    expect(check({ creditNote: { ...note61, taxAgencyStatus: "pending" } })).toEqual([]);
  });

  it("pairs 56 with 61 and 111 with 112 only", () => {
    expect(VOIDING_DEBIT_TYPE).toEqual({ 61: 56, 112: 111 });
    expect(check({ noteType: { id: "CL61", code: 61 } })).toEqual([
      { field: "document", message: "a CL61 is voided by a debit note of type CL56, not CL61" },
    ]);
    const export112 = { ...note61, documentType: { id: "CL112", code: 112, isCreditNote: true } };
    expect(check({ creditNote: export112 })).toEqual([
      { field: "document", message: "a CL112 is voided by a debit note of type CL111, not CL56" },
    ]);
    expect(check({ creditNote: export112, noteType: { id: "CL111", code: 111 } })).toEqual([]);
  });

  it("takes only CodRef 1", () => {
    expect(check({ referenceCode: 3 })).toEqual([
      {
        field: "reference_code",
        message: "a debit note referencing a credit note voids it: 1 (anula documento de referencia), not 3",
      },
    ]);
  });

  it("needs an issued, not rejected, not yet voided credit note", () => {
    expect(check({ creditNote: { ...note61, status: "draft", number: null } })).toEqual([
      { field: "credit_note", message: "cre_61 (CL61) is a draft; only an issued credit note can be voided" },
    ]);
    expect(check({ creditNote: { ...note61, taxAgencyStatus: "rejected" } })).toEqual([
      { field: "credit_note", message: "cre_61 (CL61 N° 5) was rejected by SII; there is no issued document to void" },
    ]);
    expect(check({ creditNote: { ...note61, voidedBy: ["cre_56"] } })).toEqual([
      { field: "credit_note", message: "cre_61 (CL61 N° 5) is already voided by cre_56" },
    ]);
    expect(check({ creditNote: { ...note61, documentType: { id: "CL56", code: 56, isCreditNote: false } } })).toEqual([
      { field: "credit_note", message: "cre_61 (CL56 N° 5) is not a credit note; only a credit note can be voided" },
    ]);
  });

  it("equals the credit note's total", () => {
    expect(check({ total: 1000 })).toEqual([
      {
        field: "total",
        message: "a debit note voiding cre_61 (CL61 N° 5) must equal the credit note's total 1190 CLP, not 1000 CLP",
      },
    ]);
    expect(check({ total: null })).toEqual([]);
    expect(check({ total: "1190.000000" })).toEqual([]);
  });
});
