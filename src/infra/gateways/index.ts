/**
 * Payment gateways by name. Built in: `test` (test card tokens) and `redirect` (hosted test
 * checkout). PAYMENT_GATEWAYS (settings.paymentGateways) says which are enabled; a real gateway is
 * one more entry in AVAILABLE implementing ./types.ts.
 */
import { redirectGateway } from "./redirect.js";
import { testCardGateway } from "./test-cards.js";
import type { PaymentGateway } from "./types.js";

export type { ChargeRequest, ChargeResult, PaymentGateway, PreparedSource } from "./types.js";

const AVAILABLE: Record<string, PaymentGateway> = {
  [testCardGateway.name]: testCardGateway,
  [redirectGateway.name]: redirectGateway,
};

/** Names of the gateways this build has (PAYMENT_GATEWAYS may enable any of them). */
export const GATEWAY_NAMES: readonly string[] = Object.keys(AVAILABLE);

/** The enabled gateway called `name`, or null. */
export function findGateway(name: string, enabled: readonly string[]): PaymentGateway | null {
  return enabled.includes(name) ? (AVAILABLE[name] ?? null) : null;
}
