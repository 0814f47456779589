/**
 * A payment's charge attempts (docs/payments.md "Charges"): read-only, each a `PaymentCharge` row written by the
 * payment use cases (services/payments.ts) when a gateway is asked to charge a source, and `Payment.charges`, the
 * list of a payment's attempts. A declined attempt keeps the gateway's decline code and message; the payment's own
 * `failureReason` is only the latest one's.
 */
import { builder } from "../builder.js";

const PaymentChargeStatus = builder.enumType("PaymentChargeStatus", {
  description: "Where a charge attempt stands at its gateway.",
  values: {
    pending: {
      value: "pending",
      description: "asked of the gateway, not answered yet (or the answer was lost: the next pay asks again)",
    },
    succeeded: { value: "succeeded", description: "the gateway charged the source: the payment succeeded" },
    declined: { value: "declined", description: "the gateway refused it: failureCode and failureMessage say why" },
    canceled: { value: "canceled", description: "given up before the gateway charged (the payment was cancelled)" },
  } as const,
});

export const PaymentCharge = builder.prismaObject("PaymentCharge", {
  description:
    "One attempt to charge a payment's source at its gateway. Attempts are numbered per payment from 1; at most one " +
    "is pending or succeeded, so a payment is never charged twice (docs/payments.md).",
  fields: (t) => ({
    id: t.exposeID("id", { description: "`chg_` id; also the idempotency key the gateway is given" }),
    attempt: t.exposeInt("attempt", { description: "the attempt's number in its payment, from 1" }),
    status: t.field({
      type: PaymentChargeStatus,
      description: "pending, succeeded, declined or canceled",
      select: { status: true },
      resolve: (charge) => charge.status as "pending" | "succeeded" | "declined" | "canceled",
    }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "what was asked of the gateway, in currency units of `currency` (whole pesos for CLP)",
    }),
    currency: t.exposeString("currencyId", { description: "ISO 4217 code, e.g. CLP (the payment's)" }),
    gateway: t.exposeString("gateway", { description: "the gateway asked (`test`, `redirect`, ...)" }),
    source: t.relation("source", {
      nullable: true,
      description: "the source charged; null when it was deleted since",
    }),
    reference: t.exposeString("reference", {
      nullable: true,
      description: "the gateway's own reference of the charge; null when it gave none (or has not answered)",
    }),
    failureCode: t.exposeString("failureCode", {
      nullable: true,
      description: "a declined attempt's code, as the gateway gives it (e.g. `card_declined`); null otherwise",
    }),
    failureMessage: t.exposeString("failureMessage", {
      nullable: true,
      description: "a declined attempt's message, as the gateway words it; null otherwise",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when the attempt started (ISO 8601)" }),
    updated: t.expose("updatedAt", {
      type: "DateTime",
      description: "when it last changed: the gateway's answer (ISO 8601)",
    }),
  }),
});

builder.prismaObjectField("Payment", "charges", (t) =>
  t.relation("charges", {
    description:
      "the payment's charge attempts, first attempt first (a payment paid without a gateway charge has none)",
    query: { orderBy: { attempt: "asc" } },
  }),
);
