/**
 * The built-in `test` gateway: reusable card sources made from test card tokens, charged
 * deterministically, as Stripe's test tokens behave. Test mode only. The tokens
 * (docs/payments.md lists them):
 *
 * | token | card | charge result |
 * |---|---|---|
 * | tok_visa | Visa 4242 | succeeded |
 * | tok_mastercard | Mastercard 4444 | succeeded |
 * | tok_chargeDeclined | Visa 0002 | declined, card_declined |
 * | tok_chargeDeclinedInsufficientFunds | Visa 9995 | declined, insufficient_funds |
 * | tok_chargeDeclinedProcessingError | Visa 0119 | declined, processing_error |
 * | tok_chargeDeclinedExpiredCard | Visa 0069 | declined, expired_card |
 * | tok_chargeDeclinedIncorrectNumber | Visa 4241 | declined, incorrect_number |
 * | tok_chargeDeclinedLostCard | Visa 9987 | declined, lost_card |
 * | tok_chargeDeclinedStolenCard | Visa 9979 | declined, stolen_card |
 * | tok_chargeDeclinedCardNotSupported | Visa 0051 | declined, card_not_supported |
 *
 * The last four digits are those of Stripe's test card for the same decline where Stripe has one
 * (4242424242424241 incorrect number, 4000000000009987 lost, 4000000000009979 stolen); Stripe has
 * no test card for card_not_supported, so 0051 is this gateway's own.
 */
import type { FieldErrorCollector } from "../../domain/errors.js";
import type { ChargeRequest, ChargeResult, PaymentGateway, PreparedSource } from "./types.js";

interface TestCard {
  brand: string;
  last4: string;
  decline?: { code: string; message: string };
}

export const TEST_CARDS: Record<string, TestCard> = {
  tok_visa: { brand: "visa", last4: "4242" },
  tok_mastercard: { brand: "mastercard", last4: "4444" },
  tok_chargeDeclined: {
    brand: "visa",
    last4: "0002",
    decline: { code: "card_declined", message: "The card was declined." },
  },
  tok_chargeDeclinedInsufficientFunds: {
    brand: "visa",
    last4: "9995",
    decline: { code: "insufficient_funds", message: "The card has insufficient funds." },
  },
  tok_chargeDeclinedProcessingError: {
    brand: "visa",
    last4: "0119",
    decline: { code: "processing_error", message: "An error occurred while processing the card." },
  },
  tok_chargeDeclinedExpiredCard: {
    brand: "visa",
    last4: "0069",
    decline: { code: "expired_card", message: "The card has expired." },
  },
  tok_chargeDeclinedIncorrectNumber: {
    brand: "visa",
    last4: "4241",
    decline: { code: "incorrect_number", message: "The card number is incorrect." },
  },
  tok_chargeDeclinedLostCard: {
    brand: "visa",
    last4: "9987",
    decline: { code: "lost_card", message: "The card was reported lost." },
  },
  tok_chargeDeclinedStolenCard: {
    brand: "visa",
    last4: "9979",
    decline: { code: "stolen_card", message: "The card was reported stolen." },
  },
  tok_chargeDeclinedCardNotSupported: {
    brand: "visa",
    last4: "0051",
    decline: { code: "card_not_supported", message: "The card does not support this type of purchase." },
  },
};

export const testCardGateway: PaymentGateway = {
  name: "test",
  testOnly: true,

  prepareSource(
    input: { usage?: string | null; data: Record<string, unknown> },
    errors: FieldErrorCollector,
  ): PreparedSource | null {
    const usage = input.usage ?? "reusable";
    if (usage !== "reusable") errors.add("usage", "the test gateway makes reusable card sources (usage reusable)");
    const token = input.data.token;
    const card = typeof token === "string" ? TEST_CARDS[token] : undefined;
    if (!card) errors.add("data.token", `must be a test card token: ${Object.keys(TEST_CARDS).join(", ")}`);
    if (!card || usage !== "reusable") return null;
    return { usage: "reusable", flow: "none", data: { token, brand: card.brand, last4: card.last4 } };
  },

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const card = TEST_CARDS[String(request.source.data.token)];
    const reference = `test_${request.chargeId}`;
    if (!card)
      return { status: "declined", reference, failureCode: "invalid_source", failureMessage: "Unknown test card." };
    if (card.decline)
      return { status: "declined", reference, failureCode: card.decline.code, failureMessage: card.decline.message };
    return { status: "succeeded", reference };
  },
};
