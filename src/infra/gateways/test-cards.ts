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
