/**
 * The REST routes outside the seven standard shapes (docs/rest.md "How the REST adapter is
 * declared"), each named by its resource's declaration in resources.ts: pay and authorize, the
 * usage batch, the cancel of a subscription, the session by key, the reminder array, the test
 * clock's advance, the SII set-up's singletons and files, and the receiver answers.
 */
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import * as ops from "../graphql/generated/operations.js";
import * as bodies from "./bodies.js";
import { parseFilters } from "./filters.js";
import { jsonResponse } from "./json.js";
import { arrayPage, errorResponse, pageArgs } from "./respond.js";
import { printNode } from "./printer.js";
import * as sii from "./sii.js";
import type { RestRequest } from "./types.js";

/** `POST /v1/payments/{id}/authorize/`: attaches `source` and charges (docs/payments.md). */
export async function authorizePayment(r: RestRequest): Promise<Response> {
  const body = bodies.parseBody(bodies.authorizeBody, r.body);
  const data = await r.run(ops.RestAuthorizePaymentDocument, { id: r.params.id, source: body.source });
  return jsonResponse(printNode("Payment", data.authorizePayment));
}

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
    const input = bodies.usageBatchInput(bodies.parseBody(bodies.usageBatchBody, r.body));
    const { usages, duplicates } = (await r.run(ops.RestRecordUsagesDocument, { input })).recordUsages;
    return jsonResponse(
      { usages: usages.map((u) => printNode("Usage", u)), duplicates },
      duplicates.length === usages.length ? 200 : 201,
    );
  }
  const input = bodies.usageInput(bodies.parseBody(bodies.usageBody, r.body));
  return jsonResponse(printNode("Usage", (await r.run(ops.RestCreateUsageDocument, { input })).createUsage), 201);
}

/** `GET /v1/subscriptions/{id}/upcoming_invoice/` (ours; docs/subscriptions.md). */
export async function upcomingInvoice(r: RestRequest): Promise<Response> {
  const data = await r.run(ops.RestUpcomingInvoiceDocument, { subscription: r.params.id });
  return jsonResponse(printNode("UpcomingInvoice", data.upcomingInvoice));
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

/** `GET /v1/customer_base/sessions/{key}/`: an unknown, expired or other tenant's key is a 404. */
export async function customerSession(r: RestRequest): Promise<Response> {
  const data = await r.run(ops.RestCustomerSessionDocument, { key: r.params.key });
  if (!data.customerSession)
    return errorResponse(
      "not_found",
      "No customer session with this key (unknown, expired, or of another organization or mode)",
    );
  return jsonResponse(printNode("CustomerSession", data.customerSession));
}

/** `GET /v1/reminders/messages/`: a bare array (spec), its total and neighbours in headers. */
export async function reminders(r: RestRequest): Promise<Response> {
  const page = pageArgs(r.url);
  const where = parseFilters(r.url.searchParams, {
    invoice: { key: "invoice", kind: "string" },
    credit_note: { key: "creditNote", kind: "string" },
    payment: { key: "payment", kind: "string" },
    order: { key: "order", kind: "string" },
    created: { key: "created", kind: "datetime" },
  });
  const data = await r.run(ops.RestRemindersDocument, { first: page.first, offset: page.offset, where });
  return arrayPage(
    r,
    page,
    data.reminders.totalCount,
    data.reminders.edges.map((e) => printNode("Reminder", e.node)),
  );
}

/** `POST /v1/test_clocks/{id}/advance/`: moves the clock forward and bills what came due (docs/test-clocks.md). */
export async function advanceTestClock(r: RestRequest): Promise<Response> {
  const input = bodies.testClockInput(bodies.parseBody(bodies.testClockBody, r.body));
  const data = await r.run(ops.RestAdvanceTestClockDocument, { id: r.params.id, input });
  return jsonResponse(printNode("TestClock", data.advanceTestClock));
}

/** `GET /v1/billers/built_in/tax_profile/` (docs/sii-setup.md). */
export async function taxProfile(r: RestRequest): Promise<Response> {
  return jsonResponse(sii.taxProfile((await r.run(ops.RestTaxProfileDocument, {})).taxProfile));
}

/** `PATCH /v1/billers/built_in/tax_profile/` (docs/sii-setup.md). */
export async function updateTaxProfile(r: RestRequest): Promise<Response> {
  const input = sii.taxProfileInput(bodies.parseBody(sii.taxProfileBody, r.body));
  return jsonResponse(sii.taxProfile((await r.run(ops.RestUpdateTaxProfileDocument, { input })).updateTaxProfile));
}

/** `GET /v1/billers/built_in/certificates/`: every certificate, a bare array. */
export async function certificates(r: RestRequest): Promise<Response> {
  return jsonResponse((await r.run(ops.RestCertificatesDocument, {})).certificates.map(sii.certificate));
}

/** `GET /v1/files/{name}/`: a stored file's bytes (a document's `local_file`), only to its organization and mode. */
export async function storedFile(r: RestRequest): Promise<Response> {
  const file = (await r.run(ops.RestStoredFileDocument, { name: r.params.name })).storedFile;
  if (!file) return errorResponse("not_found", `No file named ${r.params.name}`);
  return new Response(Buffer.from(file.content, "base64"), {
    status: 200,
    headers: { "content-type": file.contentType, "content-disposition": `inline; filename="${file.name}"` },
  });
}

/** `POST /v1/billers/built_in/receiver_answers/`: a receiver's answer to our DTEs (docs/sii-exchange.md "Inbound"). */
export async function receiverAnswer(r: RestRequest): Promise<Response> {
  const body = bodies.parseBody(bodies.receiverAnswerBody, r.body);
  const data = await r.run(ops.RestRecordReceiverAnswerDocument, { input: { xml: body.xml, file: body.file } });
  return jsonResponse(printNode("ReceiverAnswer", data.recordReceiverAnswer), 201);
}
