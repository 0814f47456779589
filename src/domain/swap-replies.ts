/**
 * Replies to received supplier documents (swaps): docs/sii-receiving.md and
 * docs/sii-dte.md "Sources" (receiver events). Pure rules, no database.
 *
 * | status | meaning                                          | kind       | ResultadoDTE EstadoDTE |
 * |--------|--------------------------------------------------|------------|------------------------|
 * | ACD    | accepts the content of the document              | acceptance | 0 accepted             |
 * | ERM    | receipt of goods or services (Ley 19.983 recibo) | acceptance | 0 accepted (+ EnvioRecibos) |
 * | RCD    | claims the content of the document               | claim      | 2 rejected             |
 * | RFP    | claims partial non-delivery of goods             | claim      | 2 rejected             |
 * | RFT    | claims total non-delivery of goods               | claim      | 2 rejected             |
 *
 * A swap is answered once: a reply is final (409 after). A claim must be made within 8 calendar
 * days of the reception (SII: received 1 Jan 20:00, the window ends 9 Jan 23:59, Chilean time);
 * after that the documents are irrevocably accepted, so a claim is refused (409) while ACD and ERM
 * are still allowed.
 */
import { InvalidStateError, ValidationError } from "./errors.js";
import { siiTimestamp } from "./dte-rules.js";

export const SWAP_REPLY_STATUSES = {
  ACD: { kind: "acceptance", resultStatus: 0, text: "Acepta contenido del documento" },
  ERM: { kind: "acceptance", resultStatus: 0, text: "Otorga recibo de mercaderias o servicios (Ley 19.983)" },
  RCD: { kind: "claim", resultStatus: 2, text: "Reclamo al contenido del documento" },
  RFP: { kind: "claim", resultStatus: 2, text: "Reclamo por falta parcial de mercaderias" },
  RFT: { kind: "claim", resultStatus: 2, text: "Reclamo por falta total de mercaderias" },
} as const;

export type SwapReplyStatus = keyof typeof SWAP_REPLY_STATUSES;

/** SII's claim window: calendar days after the day of reception. */
export const CLAIM_WINDOW_DAYS = 8;
/** SII counts days in Chile. */
export const SII_TIME_ZONE = "America/Santiago";

export function isSwapReplyStatus(value: string): value is SwapReplyStatus {
  return Object.hasOwn(SWAP_REPLY_STATUSES, value);
}

/**
 * The last day (yyyy-mm-dd, Chilean calendar) on which a claim about documents received at
 * `receivedAt` can be made: the reception's Chilean date plus 8 days (received 2026-01-01 20:00
 * -> "2026-01-09", the claim is allowed until 23:59:59 of that day).
 */
export function claimDeadline(receivedAt: Date): string {
  const day = siiTimestamp(receivedAt, SII_TIME_ZONE).slice(0, 10);
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + CLAIM_WINDOW_DAYS);
  return d.toISOString().slice(0, 10);
}

/**
 * Checks a reply to a swap. Throws:
 * - ValidationError (400, field `status`) for a status other than ACD, RCD, ERM, RFP, RFT (or none);
 * - InvalidStateError (409) when the swap already has a status (a reply is final);
 * - InvalidStateError (409) for a claim (RCD, RFP, RFT) when `now` is after the claim deadline.
 * Returns the status's row of SWAP_REPLY_STATUSES.
 */
export function checkSwapReply(input: {
  status: string | null | undefined;
  currentStatus: string | null;
  receivedAt: Date;
  now: Date;
  swapId: string;
}) {
  const { status } = input;
  if (!status)
    throw ValidationError.field("status", `is required: one of ${Object.keys(SWAP_REPLY_STATUSES).join(", ")}`);
  if (!isSwapReplyStatus(status))
    throw ValidationError.field(
      "status",
      `must be one of ${Object.keys(SWAP_REPLY_STATUSES).join(", ")}, not ${status}`,
    );
  if (input.currentStatus) {
    throw new InvalidStateError(
      `Swap ${input.swapId} was already answered with ${input.currentStatus}; a reply is final`,
    );
  }
  const rule = SWAP_REPLY_STATUSES[status];
  if (rule.kind === "claim") {
    const deadline = claimDeadline(input.receivedAt);
    const today = siiTimestamp(input.now, SII_TIME_ZONE).slice(0, 10);
    if (today > deadline) {
      throw new InvalidStateError(
        `Claim ${status} refused: SII accepts claims within ${CLAIM_WINDOW_DAYS} calendar days of reception ` +
          `(received ${siiTimestamp(input.receivedAt, SII_TIME_ZONE).slice(0, 10)}, last day ${deadline}` +
          `, ${SII_TIME_ZONE}); the documents are now accepted`,
      );
    }
  }
  return rule;
}

/** A received document's verification as the import recorded it (null: imported before verification). */
export interface VerifiedDocument {
  type: number;
  folio: number;
  issuerTaxId: string;
  signatureValid: boolean | null;
  tedValid: boolean | null;
}

/** The reply the service proposes for a swap, from its documents' verification; the user still answers. */
export interface ProposedReply {
  status: "ACD" | "RCD" | null;
  reason: string;
}

/**
 * Proposes a reply from the verification of the swap's documents (docs/sii-receiving.md
 * "Verification"):
 * - any document whose XMLDSig signature or TED did not verify: **RCD** (claim the content: what
 *   was received is not what the issuer signed, or its timbre was not made with a folio SII
 *   authorised), naming the documents;
 * - every document verified: **ACD** (the content can be accepted; receipt of goods, ERM, and the
 *   delivery claims RFP and RFT depend on the goods, which no signature tells);
 * - a document imported before verification existed (null): no proposal.
 */
export function proposeSwapReply(documents: readonly VerifiedDocument[]): ProposedReply {
  if (documents.some((d) => d.signatureValid === null || d.tedValid === null)) {
    return { status: null, reason: "imported before signatures and timbres were verified: no proposal" };
  }
  const bad = documents.filter((d) => !d.signatureValid || !d.tedValid);
  if (!bad.length) return { status: "ACD", reason: "every document's signature and timbre (TED) verified" };
  const what = (d: VerifiedDocument) =>
    [!d.signatureValid && "signature", !d.tedValid && "timbre (TED)"].filter(Boolean).join(" and ");
  return {
    status: "RCD",
    reason: `${bad
      .map((d) => `type ${d.type} folio ${d.folio} from ${d.issuerTaxId}: ${what(d)} did ` + `not verify`)
      .join("; ")}; claim the content within ${CLAIM_WINDOW_DAYS} days`,
  };
}
