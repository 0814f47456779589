/**
 * Rules of sending DTEs to SII (docs/sii-sending.md): what an
 * upload answer and an envelope status mean for the documents in it, and when a failed send is
 * retried. Pure functions; the queue (services/sii-sending.ts) applies them.
 */

/**
 * `tax_agency.status` of a document issued as a DTE. `not_sent`: issued while its mode's SII sending
 * was off (SiiSending): signed and stored, never queued for SII.
 */
export type TaxAgencyStatus =
  "pending" | "sent" | "accepted" | "accepted_with_objections" | "rejected" | "review" | "not_sent";

/**
 * Whether a mode's DTEs go to SII (the tax profile's `sii_sending`, docs/sii-sending.md "Turning
 * sending off"): `automatic`, each DTE is queued at finalize and uploaded by the SII worker; `off`,
 * each DTE is signed and stored with `tax_agency.status` `not_sent` and never queued. Only test mode
 * may be `off` (SII_SENDING_OFF_IN_LIVE_MODE).
 */
export const SII_SENDING_MODES = ["automatic", "off"] as const;
export type SiiSending = (typeof SII_SENDING_MODES)[number];

/** Why live mode's sending cannot be turned off. */
export const SII_SENDING_OFF_IN_LIVE_MODE =
  "can be off in test mode only: a live DTE is a tax document and must reach SII";

/** The `tax_agency.status` a DTE is issued with under its mode's `siiSending`: `pending` (queued) or `not_sent`. */
export function issuedTaxAgencyStatus(siiSending: string): "pending" | "not_sent" {
  return siiSending === "off" ? "not_sent" : "pending";
}

/** First retry after one minute, doubling, at most six hours apart; sending never gives up. */
export const SII_RETRY_BASE_MS = 60_000;
export const SII_RETRY_MAX_MS = 6 * 3600_000;
/** How long after an upload (and between polls) the envelope status is asked for. */
export const SII_POLL_DELAY_MS = 60_000;

/**
 * Delay before attempt `attempts + 1` after `attempts` failed ones (>= 1): 1 min · 2^(attempts-1),
 * capped at 6 h. Examples: 1 → 60 000 ms, 2 → 120 000, 5 → 960 000 (16 min), 10 and more → 21 600 000 (6 h).
 */
export function siiRetryDelayMs(attempts: number): number {
  const n = Math.max(1, Math.floor(attempts));
  if (n > 20) return SII_RETRY_MAX_MS;
  return Math.min(SII_RETRY_MAX_MS, SII_RETRY_BASE_MS * 2 ** (n - 1));
}

/** `nextAttemptAt` after `attempts` failed attempts ending at `now`. */
export function siiNextAttemptAt(attempts: number, now: Date): Date {
  return new Date(now.getTime() + siiRetryDelayMs(attempts));
}

/**
 * What DTEUpload's `STATUS` means (chile-dte.md 5.2): 0 received (a TRACKID follows);
 * 2 size error, 3 truncated file, 7 schema error, 8 signature error: SII refused this file, sending
 * it again cannot help → `rejected`; 1 no permission, 5 not authenticated, 6 company not
 * authorised, 9 SII internal error, 99 already received and anything else → `retry` later.
 */
export function uploadOutcome(status: string): "received" | "rejected" | "retry" {
  const code = status.trim();
  if (code === "0") return "received";
  if (["2", "3", "7", "8"].includes(code)) return "rejected";
  return "retry";
}

const IN_PROGRESS = ["REC", "SOK", "FOK", "PDR", "CRT", "-11"];
const REJECTED = ["RSC", "RFR", "RCT", "RCH", "RPT", "VOF", "RCO", "RCS", "RDC", "RSE"];
const WITH_OBJECTIONS = ["RLV", "RPR"];

/** Per-type counts of a processed envelope (QueryEstUp `RESP_BODY`). */
export interface TypeCounts {
  type: number;
  reported: number;
  accepted: number;
  rejected: number;
  objections: number;
}

/**
 * What QueryEstUp's `ESTADO` means for the envelope (chile-dte.md 5.2): REC, SOK, FOK, PDR, CRT
 * (and -11, "not yet processed") → `in_progress` (ask again later); EPR → `processed` (the counts
 * decide per type: `documentStatusFromCounts`); RLV, RPR → `accepted_with_objections`; RSC, RFR,
 * RCT, RCH, RPT, VOF (and the other R.. codes SII lists) → `rejected`; 001–003 (token) and other
 * negative codes (query errors) → `retry`; anything unknown → `retry` too (never guessed as a result).
 */
export function envelopeOutcome(
  estado: string,
): "in_progress" | "processed" | "accepted_with_objections" | "rejected" | "retry" {
  const code = estado.trim();
  if (IN_PROGRESS.includes(code)) return "in_progress";
  if (code === "EPR") return "processed";
  if (WITH_OBJECTIONS.includes(code)) return "accepted_with_objections";
  if (REJECTED.includes(code)) return "rejected";
  return "retry";
}

/**
 * Status of the documents of one type in a processed (EPR) envelope, from SII's counts:
 * none rejected and none with objections → `accepted`; none rejected, some with objections →
 * `accepted_with_objections`; all rejected → `rejected`; some rejected and some not → `review`
 * (the envelope status does not say which ones: check each in SII). No counts for the type → `review`.
 */
export function documentStatusFromCounts(counts: TypeCounts | undefined): TaxAgencyStatus {
  if (!counts || counts.reported === 0) return "review";
  if (counts.rejected === 0) return counts.objections > 0 ? "accepted_with_objections" : "accepted";
  if (counts.rejected >= counts.reported) return "rejected";
  return "review";
}

/**
 * Status of one boleta in a processed (EPR) EnvioBOLETA, from SII's boleta API, which lists only
 * the boletas it objected to or rejected (`detalle_rep_rech`): not listed → `accepted`; listed
 * with a rejection code (RCH, RSC, RFR, …) → `rejected`; with RPR or RLV →
 * `accepted_with_objections`; listed with an accepting code (DOK, EPR) → `accepted`; any other
 * code → `review` (never guessed).
 */
export function boletaStatusFromDetail(detail: { estado: string } | undefined): TaxAgencyStatus {
  if (!detail) return "accepted";
  const code = detail.estado.trim();
  if (REJECTED.includes(code)) return "rejected";
  if (WITH_OBJECTIONS.includes(code)) return "accepted_with_objections";
  if (code === "DOK" || code === "EPR") return "accepted";
  return "review";
}

/** QueryEstDte codes meaning SII holds the DTE as issued (DOK), possibly since corrected or cancelled by a note. */
const RECORDED = ["DOK", "TMD", "TMC", "MMD", "MMC", "AND", "ANC"];

/**
 * Status of a DTE left for `review` (its type was partly rejected in a processed envelope), from
 * SII's record of it (QueryEstDte `ESTADO`): DOK (received, data match; also TMD, TMC, MMD, MMC,
 * AND, ANC: received, later modified by a note) → `accepted`; FAU (not received: SII processed the
 * envelope without keeping it) or FNA (not authorised) → `rejected`; anything else (DNK data do not
 * match, FAN, EMP, error codes) → stays `review`.
 */
export function documentStatusFromRecord(estado: string): TaxAgencyStatus {
  const code = estado.trim();
  if (RECORDED.includes(code)) return "accepted";
  if (code === "FAU" || code === "FNA") return "rejected";
  return "review";
}
