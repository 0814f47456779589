/**
 * The payment gateway interface (docs/payments.md). A gateway
 * validates the sources made for it and charges them; services/payments.ts owns the payment's
 * state, the charge attempts and the transactions around every call. A real gateway is one more
 * implementation registered in ./index.ts and enabled by PAYMENT_GATEWAYS.
 */
import type { FieldErrorCollector } from "../../domain/errors.js";

export type SourceUsage = "single_use" | "reusable";
export type SourceFlow = "none" | "redirect";

/** What a gateway stores of a new source. `data` is public (printed on the source). */
export interface PreparedSource {
  usage: SourceUsage;
  flow: SourceFlow;
  data: Record<string, unknown>;
}

export interface ChargeRequest {
  /** our charge attempt id: the idempotency key at the gateway (a retried call charges once) */
  chargeId: string;
  /** decimal string in `currency`, already rounded to its unit */
  amount: string;
  /** ISO 4217 */
  currency: string;
  description: string | null;
  source: { id: string; data: Record<string, unknown> };
}

export type ChargeResult =
  | { status: "succeeded"; reference: string }
  | { status: "declined"; reference: string; failureCode: string; failureMessage: string };

export interface PaymentGateway {
  /** name clients send as the source's `gateway` */
  readonly name: string;
  /** true: usable with test keys only (built-in simulators) */
  readonly testOnly: boolean;
  /**
   * Checks a new source's `usage` and `data` for this gateway; adds field errors (`usage`,
   * `data.token`, ...) and returns null when they are wrong.
   */
  prepareSource(
    input: { usage?: string | null; data: Record<string, unknown> },
    errors: FieldErrorCollector,
  ): PreparedSource | null;
  /** Reusable sources: charge now. Must be idempotent per `chargeId`. */
  charge?(request: ChargeRequest): Promise<ChargeResult>;
}
