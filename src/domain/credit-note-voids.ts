/**
 * A debit note that voids a credit note (SII: a nota de débito 56 referencing a nota de crédito 61
 * with `CodRef` 1, "anula documento de referencia"; for exports a 111 referencing a 112;
 * docs/orders-and-credit-notes.md "Debit notes that void a credit note", chile-dte.md 2.6: "a debit
 * note cancels a credit note"). Pure rules; services/credit-notes.ts gathers the facts.
 *
 * Rules, each a problem on the field named (a 400, nothing written):
 * - `document`: the note is the debit note type that pairs with the credit note's type: CL56 voids a
 *   CL61, CL111 voids a CL112 (`VOIDING_DEBIT_TYPE`); a credit note type or a CL56 against a CL112 is
 *   refused;
 * - `reference_code`: 1 (anula), the only code a void takes (default 1 when a credit note is given);
 * - `credit_note`: the credit note is finalized (issued), its DTE, when it has one, is not rejected by
 *   SII (a rejected DTE does not exist for SII, there is nothing to void), and no other debit note
 *   (draft or finalized) voids it already;
 * - `total`: the debit note's total equals the credit note's total (a void restores exactly what
 *   the credit note took off). Without lines the debit note copies the credit note's lines and
 *   discount, so this holds by construction.
 *
 * Afterwards the credit note stays finalized and unchanged (issued documents never change); it reads
 * as voided (`voided_by`, GraphQL `CreditNote.voidedBy`) once the debit note is finalized, and the
 * invoice's amount due and the customer's balance rise by the debit note's total, which undoes the
 * credit.
 *
 * Worked example: invoice CL33 N° 12 totals CLP 11.900; credit note CL61 N° 5 of CLP 1.190 (1.000 +
 * 19 % IVA) brings its amount due to 10.710. A debit note CL56 with `credit_note` = that note, no
 * lines → copies 1 x 1.000, total 1.190, CodRef 1; finalized it brings the amount due back to
 * 11.900, and its DTE carries `Referencia` TpoDocRef 61, FolioRef 5, FchRef the note's date, CodRef 1.
 * A second void of the same note, a total of 1.000, or `reference_code` 3 are refused.
 */
import { toDecimal, type CurrencyUnit, type DecimalInput } from "./money.js";

/** The debit note type code that voids a credit note type code: 61 → 56, 112 (export) → 111. */
export const VOIDING_DEBIT_TYPE: Readonly<Record<number, number>> = { 61: 56, 112: 111 };

/** SII `CodRef` of a void: 1, anula documento de referencia. */
export const VOID_REFERENCE_CODE = 1;

/** A field and why it is wrong, as FieldErrorCollector takes it. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** What the rules need to know about the credit note being voided. */
export interface VoidedCreditNote {
  id: string;
  /** its document type: SII code (61, 112), id (CL61) and whether it is a credit note type */
  documentType: { id: string; code: number; isCreditNote: boolean };
  status: string;
  number: number | null;
  total: DecimalInput;
  /** `taxAgency.status` of its DTE (domain/sii-sending.ts TaxAgencyStatus), null without a DTE */
  taxAgencyStatus: string | null;
  /** ids of the debit notes (drafts and finalized) that already void it */
  voidedBy: string[];
}

/**
 * Every problem with a debit note of type `noteType`, reference code `referenceCode` and total
 * `total` voiding `creditNote` (module header), empty when it may. `total` null: not known yet
 * (the lines were invalid), only the other rules are checked.
 * Examples: (CL56, 1, 1190, CL61 finalized of 1190, accepted) → []; (CL61, …) → document;
 * (CL56, 3, …) → reference_code; (CL56, 1, 1000, …1190) → total "must equal the credit note's total 1190 CLP".
 */
export function creditNoteVoidProblems(input: {
  noteType: { id: string; code: number };
  referenceCode: number;
  total: DecimalInput | null;
  creditNote: VoidedCreditNote;
  currency: CurrencyUnit;
}): FieldProblem[] {
  const { creditNote, noteType } = input;
  const problems: FieldProblem[] = [];
  const money = (d: DecimalInput) => `${toDecimal(d).toString()} ${input.currency.id}`;
  const numberText = creditNote.number === null ? "" : ` N° ${creditNote.number}`;
  const name = `${creditNote.id} (${creditNote.documentType.id}${numberText})`;
  if (!creditNote.documentType.isCreditNote) {
    problems.push({ field: "credit_note", message: `${name} is not a credit note; only a credit note can be voided` });
    return problems;
  }
  const voiding = VOIDING_DEBIT_TYPE[creditNote.documentType.code];
  if (noteType.code !== voiding)
    problems.push({
      field: "document",
      message:
        `a ${creditNote.documentType.id} is voided by a debit note of type ` +
        `${voiding === undefined ? "none" : `CL${voiding}`}, not ${noteType.id}`,
    });
  if (input.referenceCode !== VOID_REFERENCE_CODE)
    problems.push({
      field: "reference_code",
      message:
        "a debit note referencing a credit note voids it: 1 (anula documento de referencia), " +
        `not ${input.referenceCode}`,
    });
  if (creditNote.status !== "finalized")
    problems.push({
      field: "credit_note",
      message: `${name} is a ${creditNote.status}; only an issued credit note can be voided`,
    });
  else if (creditNote.taxAgencyStatus === "rejected")
    problems.push({
      field: "credit_note",
      message: `${name} was rejected by SII; there is no issued document to void`,
    });
  if (creditNote.voidedBy.length > 0)
    problems.push({ field: "credit_note", message: `${name} is already voided by ${creditNote.voidedBy.join(", ")}` });
  if (input.total !== null && !toDecimal(input.total).equals(toDecimal(creditNote.total)))
    problems.push({
      field: "total",
      message:
        `a debit note voiding ${name} must equal the credit note's total ${money(creditNote.total)}, ` +
        `not ${money(input.total)}`,
    });
  return problems;
}
