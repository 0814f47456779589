/**
 * Hard and soft card declines (docs/dunning.md "Hard and soft declines"): which of a gateway's decline
 * codes (a payment charge's `failureCode`) mean the card can never succeed. Pure; the dunning attempts,
 * being built, use it to decide whether a campaign retries a card.
 *
 * Worked example: `declineKind("lost_card")` is `"hard"`; `declineKind("insufficient_funds")`,
 * `declineKind("do_not_honor")` (a code not in either list) and `declineKind(null)` are `"soft"`.
 */

/**
 * The decline codes after which a card can never succeed (it is expired, its number is wrong, it was
 * reported lost or stolen, or it cannot pay this kind of purchase): a dunning campaign stops retrying the
 * card. Rule: docs/dunning.md "Hard and soft declines".
 */
export const HARD_DECLINE_CODES = [
  "expired_card",
  "incorrect_number",
  "lost_card",
  "stolen_card",
  "card_not_supported",
] as const;

/**
 * The known decline codes after which the same card may succeed later (no money today, the gateway's
 * own error, a generic decline): a dunning campaign retries the card at its next attempt. Every code not
 * in HARD_DECLINE_CODES is treated so too (declineKind); this list names the ones the test gateway makes.
 * Rule: docs/dunning.md "Hard and soft declines".
 */
export const SOFT_DECLINE_CODES = ["insufficient_funds", "processing_error", "card_declined"] as const;

/** A code of HARD_DECLINE_CODES. */
export type HardDeclineCode = (typeof HARD_DECLINE_CODES)[number];
/** A code of SOFT_DECLINE_CODES. */
export type SoftDeclineCode = (typeof SOFT_DECLINE_CODES)[number];
/** `"hard"`: the card can never succeed; `"soft"`: it may, and is retried. */
export type DeclineKind = "hard" | "soft";

const HARD: ReadonlySet<string> = new Set(HARD_DECLINE_CODES);

/**
 * The kind of a decline code (docs/dunning.md "Hard and soft declines"): `"hard"` for a code of
 * HARD_DECLINE_CODES, `"soft"` for every other code, the SOFT_DECLINE_CODES, an unknown code, `null` and
 * `undefined` included.
 *
 * Why: a dunning campaign stops retrying a card after a hard decline, since that card can never succeed
 * and charging it again only adds declines. An unknown code (or none) is soft, so retried, because a
 * gateway's new code should not silently end collection: at worst the campaign retries a card that
 * cannot pay until its attempts run out.
 */
export function declineKind(code: string | null | undefined): DeclineKind {
  return code != null && HARD.has(code) ? "hard" : "soft";
}
