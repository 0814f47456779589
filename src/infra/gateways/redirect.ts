/**
 * The built-in `redirect` gateway: single-use sources paid at a hosted test checkout page served
 * by this service (`/checkout/<token>`, src/checkout.ts), where a person, or a test over HTTP,
 * approves or rejects the payment. Test mode only. The services create the checkout token and
 * put the page's address in the source's `data.redirect_url`; the checkout's answer settles the
 * payment (services/payments.ts completeCheckout).
 */
import type { FieldErrorCollector } from "../../domain/errors.js";
import type { PaymentGateway, PreparedSource } from "./types.js";

export const redirectGateway: PaymentGateway = {
  name: "redirect",
  testOnly: true,

  prepareSource(
    input: { usage?: string | null; data: Record<string, unknown> },
    errors: FieldErrorCollector,
  ): PreparedSource | null {
    const usage = input.usage ?? "single_use";
    if (usage !== "single_use") {
      errors.add("usage", "the redirect gateway makes single-use sources (usage single_use)");
      return null;
    }
    if (Object.keys(input.data).length > 0)
      errors.add("data", "the redirect gateway takes no data; it returns data.redirect_url");
    return { usage: "single_use", flow: "redirect", data: {} };
  },
};

/** Path of the hosted checkout of a token. */
export function checkoutPath(token: string): string {
  return `/checkout/${token}`;
}
