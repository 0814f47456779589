/**
 * The REST routes outside the seven standard shapes that no operation answers by rule (docs/rest.md
 * "How the REST adapter is declared"), each named by its resource's declaration in resources.ts:
 * pay, the usage batch and the cancel of a subscription.
 */
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import * as ops from "../graphql/generated/operations.js";
import { bodyVariables } from "./input.js";
import { jsonResponse } from "./json.js";
import { printNode } from "./printer.js";
import type { RestRequest } from "./types.js";

/** `GET /v1/payments/{id}/pay/`: the payment plus `redirect_url` (spec "Payments"). */
export async function payPayment(r: RestRequest): Promise<Response> {
  const data = await r.run(ops.RestPayPaymentDocument, { id: r.params.id });
  return jsonResponse({ ...printNode("Payment", data.payPayment.payment), redirect_url: data.payPayment.redirectUrl });
}

/**
 * `POST /v1/usages/`: one usage (201), or with `usages` a batch (ours, docs/rest.md "Usage
 * records"): every record's usage in order and the duplicates' indexes, 200 when all were duplicates.
 */
export async function recordUsage(r: RestRequest): Promise<Response> {
  if (r.body !== null && typeof r.body === "object" && !Array.isArray(r.body) && Object.hasOwn(r.body, "usages")) {
    const variables = bodyVariables(ops.RestRecordUsagesDocument, r.body) as ops.RestRecordUsagesMutationVariables;
    const { usages, duplicates } = (await r.run(ops.RestRecordUsagesDocument, variables)).recordUsages;
    return jsonResponse(
      { usages: usages.map((u) => printNode("Usage", u)), duplicates },
      duplicates.length === usages.length ? 200 : 201,
    );
  }
  const variables = bodyVariables(ops.RestCreateUsageDocument, r.body) as ops.RestCreateUsageMutationVariables;
  return jsonResponse(printNode("Usage", (await r.run(ops.RestCreateUsageDocument, variables)).createUsage), 201);
}

/**
 * `DELETE /v1/subscriptions/{id}/` cancels and answers 200 with the subscription: `?cancel_reason=`
 * (free text) and `?at_period_end=true|false`; anything else is a 400.
 */
export async function cancelSubscription(r: RestRequest): Promise<Response> {
  const errors: FieldErrors = {};
  for (const name of new Set(r.url.searchParams.keys())) {
    if (name !== "cancel_reason" && name !== "at_period_end")
      addFieldError(errors, name, "unknown parameter; DELETE takes cancel_reason and at_period_end");
  }
  const raw = r.url.searchParams.get("at_period_end");
  if (raw !== null && raw !== "true" && raw !== "false")
    addFieldError(errors, "at_period_end", "must be true or false");
  if (Object.keys(errors).length) throw new ValidationError("Invalid cancel parameters", errors);
  const data = await r.run(ops.RestCancelSubscriptionDocument, {
    id: r.params.id,
    cancelReason: r.url.searchParams.get("cancel_reason"),
    atPeriodEnd: raw === "true",
  });
  return jsonResponse(printNode("Subscription", data.cancelSubscription));
}
