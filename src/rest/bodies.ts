/**
 * Request body shapes of the REST paths (spec "Endpoints"), checked with zod before the body
 * becomes GraphQL variables: types, unknown fields (400), and the snake_case -> camelCase rename.
 * Server-assigned and computed fields of a resource (id, number, status, totals, created, ...)
 * are accepted and ignored, so a retrieved resource can be sent back. Business rules (required
 * fields, limits, references) are checked by the services behind GraphQL, not here.
 */
import { z } from "zod";
import { Decimal } from "decimal.js";
import { decimalRangeProblem } from "../domain/input-limits.js";
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import { shippingTypeRule } from "../domain/shipping-types.js";
import { restEnumField } from "./enums.js";
import type {
  AddonApplyScheme,
  CollectionMethod,
  CouponApplyOn,
  CouponDurationScheme,
  DiscountScheme,
  ShippingType,
  SourceUsage,
} from "../graphql/generated/operations.js";
import { FREQUENCIES, USAGE_AGGREGATIONS, USAGE_SCHEMES } from "../domain/catalogue.js";
import { TIERS_MODES } from "../domain/pricing.js";
import { PRORATION_BEHAVIORS } from "../domain/proration.js";
import { SWAP_REPLY_STATUSES } from "../domain/swap-replies.js";
import type * as ops from "../graphql/generated/operations.js";

const text = z.string().nullable().optional();
/** A money or quantity value: a JSON number or a decimal string, within the column's range (domain/input-limits.ts). */
const decimal = z
  .union([
    z
      .number()
      .finite()
      .transform((n) => new Decimal(n).toFixed()),
    z
      .string()
      .max(100, "must be a decimal number")
      .regex(/^-?\d+(\.\d+)?$/, "must be a decimal number"),
  ])
  .superRefine((v, ctx) => {
    const problem = decimalRangeProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .nullable()
  .optional();
const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date yyyy-mm-dd")
  .nullable()
  .optional();
const keyValues = z.record(z.string(), z.unknown()).nullable().optional();
const ignored = z.unknown().optional();

const contact = z.strictObject({ name: text, email: text, phone: text, role: text });

/** What the service assigns or computes on every document (accepted in bodies and ignored). */
const documentOutputs = {
  id: ignored,
  number: ignored,
  numbering: ignored,
  status: ignored,
  created: ignored,
  updated: ignored,
  amount: ignored,
  exempt: ignored,
  tax: ignored,
  tax_percent: ignored,
  total: ignored,
  local_file: ignored,
};

/** What the service computes on every line (accepted and ignored). */
const lineOutputs = { id: ignored, total: ignored };

export const customerBody = z.strictObject({
  id: ignored,
  created: ignored,
  updated: ignored,
  aggregations: ignored,
  sources: ignored,
  name: text,
  address: text,
  country: z
    .union([z.string(), z.object({ id: z.string() }).transform((c) => c.id)])
    .nullable()
    .optional(),
  state: z
    .union([z.string(), z.object({ code: z.string() }).transform((s) => s.code)])
    .nullable()
    .optional(),
  currency: text,
  email: text,
  phone: text,
  website: text,
  tax_id: text,
  activity: text,
  commune: text,
  city: text,
  contacts: z.array(contact).nullable().optional(),
  tax_settings: keyValues,
  metadata: keyValues,
  test_clock: text,
});

export function customerInput(body: z.infer<typeof customerBody>) {
  return {
    name: body.name,
    address: body.address,
    country: body.country,
    state: body.state,
    currency: body.currency,
    email: body.email,
    phone: body.phone,
    website: body.website,
    taxId: body.tax_id,
    activity: body.activity,
    commune: body.commune,
    city: body.city,
    contacts: body.contacts,
    taxSettings: body.tax_settings,
    metadata: body.metadata,
    testClock: body.test_clock,
  };
}

/** POST /v1/test_clocks/ and POST /v1/test_clocks/{id}/advance/ (docs/test-clocks.md). */
export const testClockBody = z.strictObject({
  id: ignored,
  status: ignored,
  customers: ignored,
  created: ignored,
  updated: ignored,
  name: text,
  frozen_time: z.string().datetime({ offset: true, message: "must be an ISO 8601 timestamp with offset" }),
});

export function testClockInput(body: z.infer<typeof testClockBody>) {
  return { name: body.name, frozenTime: body.frozen_time };
}

const invoiceLine = z.strictObject({
  ...lineOutputs,
  name: text,
  description: text,
  quantity: decimal,
  amount: decimal,
  discount: decimal,
  discount_scheme: restEnumField<DiscountScheme>("DiscountScheme"),
  exempt: z.boolean().nullable().optional(),
});

/** Credit note lines: invoice lines that also print their tax and timestamps (ignored on input). */
const creditNoteLine = invoiceLine.extend({ tax: ignored, tax_percent: ignored, created: ignored, updated: ignored });

export const invoiceBody = z.strictObject({
  ...documentOutputs,
  test_mode: ignored,
  payments: ignored,
  subtotal: ignored,
  user: ignored,
  customer: z
    .union([z.string(), z.object({ id: z.string() }).transform((c) => c.id)])
    .nullable()
    .optional(),
  document: z
    .union([z.string(), z.object({ id: z.string(), currency: z.string().optional() }).passthrough()])
    .nullable()
    .optional(),
  currency: text,
  date,
  due_date: date,
  collection_method: restEnumField<CollectionMethod>("CollectionMethod"),
  lines: z.array(invoiceLine).nullable().optional(),
  discount: decimal,
  discount_scheme: restEnumField<DiscountScheme>("DiscountScheme"),
  period_start: date,
  period_end: date,
  note: text,
  fiscal_settings: keyValues,
  metadata: keyValues,
});

export function invoiceInput(body: z.infer<typeof invoiceBody>) {
  const document = typeof body.document === "object" && body.document !== null ? body.document : null;
  return {
    customer: body.customer,
    document: document ? document.id : (body.document as string | null | undefined),
    currency: body.currency ?? (document?.currency as string | undefined),
    date: body.date,
    dueDate: body.due_date,
    collectionMethod: body.collection_method,
    lines: body.lines?.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: l.quantity,
      amount: l.amount,
      discount: l.discount,
      discountScheme: l.discount_scheme,
      exempt: l.exempt,
    })),
    discount: body.discount,
    discountScheme: body.discount_scheme,
    periodStart: body.period_start,
    periodEnd: body.period_end,
    note: body.note,
    fiscalSettings: body.fiscal_settings,
    metadata: body.metadata,
  };
}

const reference = z
  .union([
    z.string(),
    z
      .object({ id: z.string() })
      .passthrough()
      .transform((o) => o.id),
  ])
  .nullable()
  .optional();

/** Order lines print their tax (ignored on input) and take no discounts (the spec's order line has none). */
const orderLine = creditNoteLine.omit({ discount: true, discount_scheme: true });

/** Spec "Order": the fields a client sends; `shipping_type` may be a string or a number. */
export const orderBody = z.strictObject({
  ...documentOutputs,
  test_mode: ignored,
  tax_agency: ignored,
  customer: reference,
  document: reference,
  date,
  address: text,
  carrier_id: text,
  carrier_name: text,
  state: text,
  licence_plate: text,
  shipping_type: restEnumField<ShippingType>("ShippingType", { message: shippingTypeRule, acceptInteger: true }),
  lines: z.array(orderLine).nullable().optional(),
});

export function orderInput(body: z.infer<typeof orderBody>) {
  return {
    customer: body.customer,
    document: body.document,
    date: body.date,
    address: body.address,
    carrierId: body.carrier_id,
    carrierName: body.carrier_name,
    state: body.state,
    licencePlate: body.licence_plate,
    shippingType: body.shipping_type,
    lines: body.lines?.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: l.quantity,
      amount: l.amount,
      exempt: l.exempt,
    })),
  };
}

/**
 * Spec "Credit note" and its create endpoint: invoice, document, date, lines, plus discounts and notes;
 * `credit_note`: the credit note a debit note voids (docs/orders-and-credit-notes.md).
 */
export const creditNoteBody = z.strictObject({
  ...documentOutputs,
  subtotal: ignored,
  tax_agency: ignored,
  imported: ignored,
  user: ignored,
  invoice: reference,
  document: reference,
  date,
  lines: z.array(creditNoteLine).nullable().optional(),
  discount: decimal,
  discount_scheme: restEnumField<DiscountScheme>("DiscountScheme"),
  internal_note: text,
  note: text,
  credit_note: reference,
  voided_by: ignored,
});

export function creditNoteInput(body: z.infer<typeof creditNoteBody>) {
  return {
    invoice: body.invoice,
    document: body.document,
    date: body.date,
    lines: body.lines?.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: l.quantity,
      amount: l.amount,
      discount: l.discount,
      discountScheme: l.discount_scheme,
      exempt: l.exempt,
    })),
    discount: body.discount,
    discountScheme: body.discount_scheme,
    internalNote: body.internal_note,
    note: body.note,
    creditNote: body.credit_note,
  };
}

/** Spec "Payment" and its create endpoint: amount, date, description, currency, customer, invoice, metadata. */
export const paymentBody = z.strictObject({
  id: ignored,
  status: ignored,
  created: ignored,
  updated: ignored,
  source: ignored,
  return_url: ignored,
  payment_date: ignored,
  failure_reason: ignored,
  amount: decimal,
  date,
  description: text,
  currency: text,
  customer: reference,
  invoice: reference,
  metadata: keyValues,
});

export function paymentInput(body: z.infer<typeof paymentBody>) {
  return {
    amount: body.amount,
    date: body.date,
    description: body.description,
    currency: body.currency,
    customer: body.customer,
    invoice: body.invoice,
    metadata: body.metadata,
  };
}

/** POST /v1/payments/{id}/authorize/: the source that pays the payment. */
export const authorizeBody = z.strictObject({ source: reference });

/** POST /v1/sources/ (not in the spec; docs/payments.md): the Source fields a client sends. */
export const sourceBody = z.strictObject({
  id: ignored,
  status: ignored,
  flow: ignored,
  created: ignored,
  updated: ignored,
  customer: reference,
  gateway: text,
  usage: restEnumField<SourceUsage>("SourceUsage"),
  amount: decimal,
  description: text,
  return_url: text,
  data: keyValues,
  metadata: keyValues,
});

export function sourceInput(body: z.infer<typeof sourceBody>) {
  return {
    customer: body.customer,
    gateway: body.gateway,
    usage: body.usage,
    amount: body.amount,
    description: body.description,
    returnUrl: body.return_url,
    data: body.data,
    metadata: body.metadata,
  };
}

/** Parses `raw` with `schema`; a ValidationError names each bad or unknown field. */
export function parseBody<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw ValidationError.field("body", "must be a JSON object");
  }
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const fields: FieldErrors = {};
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) addFieldError(fields, [...issue.path, key].join("."), "unknown field");
    } else {
      addFieldError(fields, issue.path.join(".") || "body", issue.message);
    }
  }
  const summary = Object.entries(fields)
    .map(([k, v]) => `${k}: ${v.join(", ")}`)
    .join("; ");
  throw new ValidationError(`Invalid request body: ${summary}`, fields);
}

/**
 * Spec "Sessions" create: customer and return_url. The session's server-assigned fields (id, key,
 * created, expires, settings: a snapshot of the organization's branding) are accepted and ignored.
 */
export const customerSessionBody = z.strictObject({
  id: ignored,
  key: ignored,
  created: ignored,
  expires: ignored,
  settings: ignored,
  customer: reference,
  return_url: text,
});

export function customerSessionInput(body: z.infer<typeof customerSessionBody>) {
  return { customer: body.customer, returnUrl: body.return_url };
}

/** POST /v1/reminders/messages/ (spec "Reminders"): `recipient` is the list of addresses. */
export const reminderBody = z.strictObject({
  id: ignored,
  created: ignored,
  user: ignored,
  delivery: ignored,
  subject: text,
  recipient: z
    .union([z.array(z.string()), z.string().transform((one) => [one])])
    .nullable()
    .optional(),
  message: text,
  invoice: reference,
  credit_note: reference,
  payment: reference,
  order: reference,
});

export function reminderInput(body: z.infer<typeof reminderBody>) {
  return {
    subject: body.subject,
    recipients: body.recipient,
    message: body.message,
    invoice: body.invoice,
    creditNote: body.credit_note,
    payment: body.payment,
    order: body.order,
  };
}

// ---------------------------------------------------------------------------------------------
// Catalogue (docs/catalogue.md): products with nested plans, plans, addons, coupons. `status`,
// `archived`, `test_mode`, `id`, `created` and `updated` are server fields (accepted, ignored);
// `currency`, `frequency` and `product` may be the id or the printed object with `id`.

const catalogueOutputs = {
  id: ignored,
  status: ignored,
  archived: ignored,
  test_mode: ignored,
  created: ignored,
  updated: ignored,
};
const integer = z.number().int("must be an integer").nullable().optional();

const planTier = z.strictObject({ up_to: decimal, unit_amount: decimal, flat_amount: decimal });

export const planBody = z.strictObject({
  ...catalogueOutputs,
  product: reference,
  sku: text,
  name: text,
  description: text,
  amount: decimal,
  currency: reference,
  frequency: restEnumField<ops.BillingFrequency>("BillingFrequency", {
    order: Object.keys(FREQUENCIES),
    acceptObjectId: true,
  }),
  usage_scheme: restEnumField<ops.PlanUsageScheme>("PlanUsageScheme", { order: USAGE_SCHEMES }),
  usage_aggregation: restEnumField<ops.PlanUsageAggregation>("PlanUsageAggregation", { order: USAGE_AGGREGATIONS }),
  tiers_mode: restEnumField<ops.PlanTiersMode>("PlanTiersMode", {
    order: TIERS_MODES,
    emptyIsNull: true,
    message: () => `must be one of ${TIERS_MODES.join(", ")} (or null: flat per unit)`,
  }),
  tiers: z.array(planTier).nullable().optional(),
  exempt: z.boolean().nullable().optional(),
  metadata: keyValues,
});

export function planInput(body: z.infer<typeof planBody>) {
  return {
    product: body.product,
    sku: body.sku,
    name: body.name,
    description: body.description,
    amount: body.amount,
    currency: body.currency,
    frequency: body.frequency,
    usageScheme: body.usage_scheme,
    usageAggregation: body.usage_aggregation,
    tiersMode: body.tiers_mode,
    tiers: body.tiers?.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount })),
    exempt: body.exempt,
    metadata: body.metadata,
  };
}

/** Spec "Product": name, unit_label, metadata and (on create) its plans. */
export const productBody = z.strictObject({
  ...catalogueOutputs,
  name: text,
  unit_label: text,
  metadata: keyValues,
  plans: z.array(planBody).nullable().optional(),
});

export function productInput(body: z.infer<typeof productBody>) {
  return { name: body.name, unitLabel: body.unit_label, metadata: body.metadata, plans: body.plans?.map(planInput) };
}

const addonRate = z.strictObject({ cycle: integer, percent: decimal, amount: decimal });

export const addonBody = z.strictObject({
  ...catalogueOutputs,
  apply_scheme: restEnumField<AddonApplyScheme>("AddonApplyScheme"),
  duration_times: integer,
  sku: text,
  name: text,
  description: text,
  amount: decimal,
  currency: reference,
  rates: z.array(addonRate).nullable().optional(),
  metadata: keyValues,
});

export function addonInput(body: z.infer<typeof addonBody>) {
  return {
    applyScheme: body.apply_scheme,
    durationTimes: body.duration_times,
    sku: body.sku,
    name: body.name,
    description: body.description,
    amount: body.amount,
    currency: body.currency,
    rates: body.rates,
    metadata: body.metadata,
  };
}

export const couponBody = z.strictObject({
  ...catalogueOutputs,
  discount_scheme: restEnumField<DiscountScheme>("DiscountScheme"),
  duration_scheme: restEnumField<CouponDurationScheme>("CouponDurationScheme"),
  duration_times: integer,
  name: text,
  amount: decimal,
  valid_until: z
    .string()
    .datetime({ offset: true, message: "must be an ISO 8601 timestamp with offset" })
    .nullable()
    .optional(),
  apply_on: restEnumField<CouponApplyOn>("CouponApplyOn"),
  currency: reference,
  metadata: keyValues,
});

export function couponInput(body: z.infer<typeof couponBody>) {
  return {
    discountScheme: body.discount_scheme,
    durationScheme: body.duration_scheme,
    durationTimes: body.duration_times,
    name: body.name,
    amount: body.amount,
    validUntil: body.valid_until,
    applyOn: body.apply_on,
    currency: body.currency,
    metadata: body.metadata,
  };
}

/**
 * POST /v1/usages/ (spec "Usages"): subscription_line, quantity, date_time (ISO 8601; default now);
 * ours: transaction_id (the sender's idempotency key, docs/rest.md "Usage records").
 */
export const usageBody = z.strictObject({
  id: ignored,
  created: ignored,
  invoice: ignored,
  subscription_line: reference,
  quantity: decimal,
  date_time: z.iso
    .datetime({ offset: true, message: "must be an ISO 8601 timestamp with an offset" })
    .nullable()
    .optional(),
  transaction_id: text,
});

export function usageInput(body: z.infer<typeof usageBody>) {
  return {
    subscriptionLine: body.subscription_line,
    quantity: body.quantity,
    dateTime: body.date_time,
    transactionId: body.transaction_id,
  };
}

/**
 * POST /v1/usages/ with `{"usages": [...]}` (ours, docs/rest.md "Usage records"): a batch of single-record bodies;
 * the count is checked by recordUsages.
 */
export const usageBatchBody = z.strictObject({ usages: z.array(usageBody) });

export function usageBatchInput(body: z.infer<typeof usageBatchBody>) {
  return { usages: body.usages.map(usageInput) };
}

// ---------------------------------------------------------------------------------------------
// Subscriptions (docs/subscriptions.md). `plan`, `addon`, `coupon` and `customer` may be the id or
// the printed object with `id`; computed fields (dates of billing, redemptions, status, cancel and
// pause fields) are accepted and ignored, so a retrieved subscription can be sent back.

const subscriptionLine = z.strictObject({
  id: ignored,
  created: ignored,
  updated: ignored,
  coupon_redemptions: ignored,
  plan: reference,
  quantity: decimal,
  coupon: reference,
});

const subscriptionAddon = z.strictObject({
  addon_redemptions: ignored,
  addon: reference,
  quantity: integer,
  rates: z.array(addonRate).nullable().optional(),
});

export const subscriptionBody = z.strictObject({
  id: ignored,
  test_mode: ignored,
  next_billing: ignored,
  next_billing_cycle: ignored,
  previous_billing: ignored,
  coupon_redemptions: ignored,
  status: ignored,
  paused: ignored,
  paused_reason: ignored,
  cancelled: ignored,
  cancel_reason: ignored,
  cancel_at_period_end: ignored,
  pending_changes: ignored,
  pending_invoice_items: ignored,
  created: ignored,
  updated: ignored,
  customer: reference,
  document: reference,
  date_start: date,
  end_date: date,
  billing_cycles: integer,
  lines: z.array(subscriptionLine).nullable().optional(),
  addons: z.array(subscriptionAddon).nullable().optional(),
  coupon: reference,
  expiration_days: integer,
  references: z.array(z.record(z.string(), z.unknown())).nullable().optional(),
  note: text,
  metadata: keyValues,
  tax_settings: keyValues,
  // update of lines after a billed cycle (docs/proration.md)
  proration_behavior: restEnumField<ops.ProrationBehavior>("ProrationBehavior", { order: PRORATION_BEHAVIORS }),
  proration_date: date,
  at_period_end: z.boolean().nullable().optional(),
});

export function subscriptionInput(body: z.infer<typeof subscriptionBody>) {
  return {
    customer: body.customer,
    document: body.document,
    dateStart: body.date_start,
    endDate: body.end_date,
    billingCycles: body.billing_cycles,
    lines: body.lines?.map((l) => ({ plan: l.plan, quantity: l.quantity, coupon: l.coupon })),
    addons: body.addons?.map((a) => ({ addon: a.addon, quantity: a.quantity, rates: a.rates })),
    coupon: body.coupon,
    expirationDays: body.expiration_days,
    references: body.references,
    note: body.note,
    metadata: body.metadata,
    taxSettings: body.tax_settings,
    prorationBehavior: body.proration_behavior,
    prorationDate: body.proration_date,
    atPeriodEnd: body.at_period_end,
  };
}

// ---------------------------------------------------------------------------------------------
// Swaps and purchases (docs/sii-receiving.md). PATCH takes the swap's fields: status and reply_to
// are set, the others are the server's and ignored, so a retrieved swap can be sent back.

export const swapBody = z.strictObject({
  id: ignored,
  purchases: ignored,
  local_file: ignored,
  receipt: ignored,
  reception: ignored,
  result: ignored,
  reply_by: ignored,
  reply_date: ignored,
  imported: ignored,
  created: ignored,
  status: restEnumField<ops.SwapReplyStatus>("SwapReplyStatus", {
    order: Object.keys(SWAP_REPLY_STATUSES),
    message: (value) => `must be one of ${Object.keys(SWAP_REPLY_STATUSES).join(", ")}, not ${value}`,
  }),
  reply_to: z.string().nullable().optional(),
});

export function swapInput(body: z.infer<typeof swapBody>) {
  return { status: body.status, replyTo: body.reply_to };
}

/** POST /billers/built_in/purchases/: the EnvioDTE as `xml` (text) or `file` (Base64), optional `file_name`. */
export const purchasesBody = z.strictObject({
  xml: z.string().nullable().optional(),
  file: z.string().nullable().optional(),
  file_name: z.string().max(80).nullable().optional(),
});

export function purchasesInput(body: z.infer<typeof purchasesBody>) {
  return { xml: body.xml, file: body.file, fileName: body.file_name };
}

// A receiver's answer to our DTEs (docs/sii-exchange.md "Inbound"): the file as text or Base64.
export const receiverAnswerBody = z.strictObject({
  xml: z.string().nullable().optional(),
  file: z.string().nullable().optional(),
});
