/**
 * GraphQL results -> the spec's REST shapes (docs/rest-api.md, "Resources and their
 * fields"): snake_case names, decimals as JSON numbers, timestamps `yyyy-mm-dd hh:mm:ss` (UTC) for
 * invoices, embedded customers and payments and ISO 8601 with offset elsewhere, dates `yyyy-mm-dd`.
 * Pure reshaping: no rule lives here.
 */
import type {
  CreditNoteFieldsFragment,
  OrderFieldsFragment,
  CountryFieldsFragment,
  CurrencyFieldsFragment,
  CustomerFieldsFragment,
  DocumentTypeFieldsFragment,
  EmbeddedCustomerFieldsFragment,
  InvoiceFieldsFragment,
  PaymentFieldsFragment,
  SourceFieldsFragment,
  StateFieldsFragment,
} from "../graphql/generated/operations.js";
import type { CustomerSessionFieldsFragment } from "../graphql/generated/operations.js";
import type { ReminderFieldsFragment } from "../graphql/generated/operations.js";
import type { UsageFieldsFragment } from "../graphql/generated/operations.js";
import type { RestRecordReceiverAnswerMutation, SwapFieldsFragment } from "../graphql/generated/operations.js";
import type { RestUpcomingInvoiceQuery } from "../graphql/generated/operations.js";
import type {
  AddonFieldsFragment,
  CouponFieldsFragment,
  PlanFieldsFragment,
  ProductFieldsFragment,
} from "../graphql/generated/operations.js";
import { restEnumValue } from "./enums.js";
import { num } from "./json.js";

/** ISO 8601 -> `yyyy-mm-dd hh:mm:ss` in UTC. */
export function plainTimestamp(iso: string | null | undefined): string | null {
  if (!iso) return null;
  return new Date(iso).toISOString().slice(0, 19).replace("T", " ");
}

/** ISO 8601 with an explicit offset (`2026-11-22T10:00:00.000+00:00`). */
export function isoTimestamp(iso: string | null | undefined): string | null {
  if (!iso) return null;
  return new Date(iso).toISOString().replace("Z", "+00:00");
}

export function country(c: CountryFieldsFragment | null) {
  if (!c) return null;
  return {
    id: c.id,
    name: c.name,
    name_en: c.nameEn,
    phone_code: c.phoneCode,
    has_regulation: c.hasRegulation,
    tax_percent: num(c.taxPercent),
  };
}

export function currency(c: CurrencyFieldsFragment) {
  return {
    id: c.id,
    conversion: c.conversion,
    country: c.country,
    default: c.default,
    is_chargeable: c.isChargeable,
    available: c.available,
    name: c.name,
    name_en: c.nameEn,
    rounded: c.rounded,
  };
}

export function state(s: StateFieldsFragment) {
  return { id: s.id, code: s.code, country: s.country, name: s.name };
}

export function documentType(d: DocumentTypeFieldsFragment) {
  return {
    id: d.id,
    currency: currency(d.currency),
    tax: num(d.tax),
    code: d.code,
    name: d.name,
    has_taxes: d.hasTaxes,
    has_taxes_detail: d.hasTaxesDetail,
    has_lines_total: d.hasLinesTotal,
    has_local_format: d.hasLocalFormat,
    hold_taxes: d.holdTaxes,
    is_foreign: d.isForeign,
    is_sale: d.isSale,
    is_purshase: d.isPurchase,
    is_order: d.isOrder,
    send: d.send,
    given: d.given,
    country: d.country,
  };
}

/** A customer's `aggregations` (spec "Customer"). */
function aggregations(a: { balance: string; sales: string; salesCurrentPeriod: string }) {
  return { balance: num(a.balance), sales: num(a.sales), sales_current_period: num(a.salesCurrentPeriod) };
}

/**
 * A customer resource. `expanded`: country and state as objects (retrieve and list, per spec);
 * otherwise as codes (create and update responses).
 */
export function customer(c: CustomerFieldsFragment, expanded: boolean) {
  const stateObject = c.state ? state(c.state) : c.stateCode ? { id: null, code: c.stateCode, name: null } : null;
  return {
    id: c.id,
    name: c.name,
    address: c.address,
    country: expanded ? country(c.country) : (c.country?.id ?? null),
    state: expanded ? stateObject : c.stateCode,
    currency: c.currency,
    email: c.email,
    phone: c.phone,
    website: c.website,
    tax_id: c.taxId,
    activity: c.activity,
    commune: c.commune,
    city: c.city,
    tax_settings: c.taxSettings,
    contacts: c.contacts,
    aggregations: aggregations(c.aggregations),
    sources: c.sources.map(source),
    metadata: c.metadata,
    test_clock: c.testClock?.id ?? null,
    created: isoTimestamp(c.created),
    updated: isoTimestamp(c.updated),
  };
}

/** Source (spec "Payment", embedded source): ISO 8601 timestamps. */
export function source(s: SourceFieldsFragment) {
  return {
    id: s.id,
    amount: num(s.amount),
    description: s.description,
    return_url: s.returnUrl,
    status: s.status,
    metadata: s.metadata,
    created: isoTimestamp(s.created),
    updated: isoTimestamp(s.updated),
    customer: s.customer?.id ?? null,
    gateway: s.gateway,
    usage: s.usage,
    flow: s.flow,
    data: s.data,
  };
}

export function embeddedCustomer(c: EmbeddedCustomerFieldsFragment) {
  return {
    id: c.id,
    name: c.name,
    address: c.address,
    state: c.stateCode,
    country: c.country?.id ?? null,
    phone: c.phone,
    email: c.email,
    website: c.website,
    tax_settings: c.taxSettings,
    metadata: c.metadata,
    created: plainTimestamp(c.created),
    updated: plainTimestamp(c.updated),
  };
}

/**
 * Spec "Payment": `yyyy-mm-dd hh:mm:ss` timestamps, the embedded source (null until authorize),
 * `return_url` (the pay operation, once a source is attached), and `failure_reason` (ours: why
 * the last charge was declined).
 */
export function payment(p: PaymentFieldsFragment) {
  return {
    id: p.id,
    date: p.date,
    amount: num(p.amount),
    currency: p.currency,
    description: p.description,
    source: p.source ? source(p.source) : null,
    payment_date: plainTimestamp(p.paymentDate),
    customer: p.customer?.id ?? null,
    invoice: p.invoice?.id ?? null,
    status: p.status,
    return_url: p.returnUrl,
    failure_reason: p.failureReason,
    metadata: p.metadata,
    created: plainTimestamp(p.created),
    updated: plainTimestamp(p.updated),
  };
}

export function invoice(i: InvoiceFieldsFragment) {
  return {
    id: i.id,
    customer: embeddedCustomer(i.customer),
    document: { id: i.document.id, name: i.document.name, country: i.document.country, currency: i.currency.id },
    number: i.number,
    numbering: i.numbering,
    test_mode: i.testMode,
    date: i.date,
    due_date: i.dueDate,
    lines: i.lines.map((l) => ({
      id: l.id,
      name: l.name,
      description: l.description,
      quantity: num(l.quantity),
      amount: num(l.amount),
      discount: num(l.discount),
      discount_scheme: restEnumValue("DiscountScheme", l.discountScheme),
      exempt: l.exempt,
      total: num(l.total),
    })),
    collection_method: i.collectionMethod,
    payments: i.payments.map(payment),
    amount: num(i.amount),
    exempt: num(i.exempt),
    tax: num(i.tax),
    tax_percent: num(i.taxPercent),
    subtotal: num(i.subtotal),
    discount: num(i.discount),
    discount_scheme: restEnumValue("DiscountScheme", i.discountScheme),
    total: num(i.total),
    period_start: i.periodStart,
    period_end: i.periodEnd,
    local_file: i.localFile,
    note: i.note,
    fiscal_settings: i.fiscalSettings,
    status: i.status,
    metadata: i.metadata,
    user: i.user,
    created: plainTimestamp(i.created),
    updated: plainTimestamp(i.updated),
  };
}

/** Spec "Order": ISO 8601 timestamps, the embedded customer with aggregations, document.currency as an object. */
export function order(o: OrderFieldsFragment) {
  return {
    id: o.id,
    customer: {
      ...embeddedCustomer(o.customer),
      aggregations: aggregations(o.customer.aggregations),
    },
    number: o.number,
    numbering: o.numbering,
    document: { id: o.document.id, name: o.document.name, country: o.document.country, currency: currency(o.currency) },
    test_mode: o.testMode,
    date: o.date,
    address: o.address,
    carrier_id: o.carrierId,
    carrier_name: o.carrierName,
    state: o.state,
    licence_plate: o.licencePlate,
    shipping_type: restEnumValue("ShippingType", o.shippingType),
    lines: o.lines.map((l) => ({
      id: l.id,
      name: l.name,
      description: l.description,
      quantity: num(l.quantity),
      amount: num(l.amount),
      exempt: l.exempt,
      tax: l.tax === null ? null : num(l.tax),
      tax_percent: num(l.taxPercent),
      total: num(l.total),
      created: isoTimestamp(l.created),
      updated: isoTimestamp(l.updated),
    })),
    amount: num(o.amount),
    exempt: num(o.exempt),
    tax: num(o.tax),
    tax_percent: num(o.taxPercent),
    total: num(o.total),
    local_file: o.localFile,
    tax_agency: o.taxAgency,
    status: o.status,
    created: isoTimestamp(o.created),
    updated: isoTimestamp(o.updated),
  };
}

/**
 * Spec "Credit note": `invoice` is the invoice id, or the invoice object (as GET /v1/invoices/{id}/
 * prints it) when `expandInvoice` (REST `?expand=invoice`); `document` is the type id; ISO 8601
 * timestamps.
 */
export function creditNote(c: CreditNoteFieldsFragment, expandInvoice: boolean) {
  return {
    id: c.id,
    invoice: expandInvoice ? invoice(c.invoice as InvoiceFieldsFragment) : c.invoice.id,
    number: c.number,
    numbering: c.numbering,
    document: c.document.id,
    date: c.date,
    lines: c.lines.map((l) => ({
      id: l.id,
      amount: num(l.amount),
      description: l.description,
      discount: num(l.discount),
      discount_scheme: restEnumValue("DiscountScheme", l.discountScheme),
      exempt: l.exempt,
      name: l.name,
      quantity: num(l.quantity),
      tax: l.tax === null ? null : num(l.tax),
      tax_percent: num(l.taxPercent),
      total: num(l.total),
      created: isoTimestamp(l.created),
      updated: isoTimestamp(l.updated),
    })),
    amount: num(c.amount),
    exempt: num(c.exempt),
    tax: num(c.tax),
    tax_percent: num(c.taxPercent),
    subtotal: num(c.subtotal),
    total: num(c.total),
    discount: num(c.discount),
    discount_scheme: restEnumValue("DiscountScheme", c.discountScheme),
    local_file: c.localFile,
    internal_note: c.internalNote,
    note: c.note,
    credit_note: c.voids?.id ?? null,
    voided_by: c.voidedBy?.id ?? null,
    tax_agency: c.taxAgency,
    status: c.status,
    imported: c.imported,
    user: c.user,
    created: isoTimestamp(c.created),
    updated: isoTimestamp(c.updated),
  };
}

/**
 * Spec "Session" plus `expires` (ISO 8601, when the key stops working). `key` is the plaintext key:
 * in the create response, and echoed by GET /v1/customer_base/sessions/{key}/.
 */
export function customerSession(s: CustomerSessionFieldsFragment) {
  return {
    id: s.id,
    key: s.key,
    return_url: s.returnUrl,
    created: isoTimestamp(s.created),
    expires: isoTimestamp(s.expires),
    customer: s.customer.id,
    settings: {
      business_name: s.settings.businessName,
      color_background: s.settings.colorBackground,
      color_asset: s.settings.colorAsset,
      display_invoices: s.settings.displayInvoices,
      terms_of_service_url: s.settings.termsOfServiceUrl,
      privacy_policy_url: s.settings.privacyPolicyUrl,
      return_url: s.settings.returnUrl,
    },
  };
}

/**
 * Reminder (spec "Reminder"): the spec's fields (`recipient` is the address list) plus `id` and
 * `delivery` (status of the e-mail: pending | sent | failed | kept; docs/reminders.md).
 */
export function reminder(r: ReminderFieldsFragment) {
  return {
    id: r.id,
    subject: r.subject,
    recipient: r.recipients,
    message: r.message,
    created: isoTimestamp(r.created),
    invoice: r.invoice?.id ?? null,
    credit_note: r.creditNote?.id ?? null,
    payment: r.payment?.id ?? null,
    order: r.order?.id ?? null,
    user: r.user,
    delivery: r.delivery
      ? {
          status: r.delivery.status,
          attempts: r.delivery.attempts,
          last_error: r.delivery.lastError,
          next_attempt: isoTimestamp(r.delivery.nextAttempt),
          sent: isoTimestamp(r.delivery.sent),
        }
      : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Catalogue (docs/catalogue.md): ISO 8601 timestamps; `archived` is when it was archived or null.

export function plan(p: PlanFieldsFragment) {
  return {
    id: p.id,
    tiers: p.tiers.map((t) => ({ up_to: num(t.upTo), unit_amount: num(t.unitAmount), flat_amount: num(t.flatAmount) })),
    sku: p.sku,
    name: p.name,
    description: p.description,
    product: p.product.id,
    amount: num(p.amount),
    tiers_mode: p.tiersMode,
    exempt: p.exempt,
    usage_scheme: p.usageScheme,
    usage_aggregation: p.usageAggregation,
    frequency: { id: p.frequency.id, name: p.frequency.name },
    currency: currency(p.currency),
    status: p.status,
    archived: isoTimestamp(p.archived),
    metadata: p.metadata,
    created: isoTimestamp(p.created),
    updated: isoTimestamp(p.updated),
  };
}

export function product(p: ProductFieldsFragment) {
  return {
    id: p.id,
    name: p.name,
    unit_label: p.unitLabel,
    plans: p.plans.map(plan),
    status: p.status,
    test_mode: p.testMode,
    archived: isoTimestamp(p.archived),
    metadata: p.metadata,
    created: isoTimestamp(p.created),
    updated: isoTimestamp(p.updated),
  };
}

export function addon(a: AddonFieldsFragment) {
  return {
    id: a.id,
    apply_scheme: a.applyScheme,
    duration_times: a.durationTimes,
    sku: a.sku,
    name: a.name,
    description: a.description,
    amount: num(a.amount),
    currency: currency(a.currency),
    rates: a.rates.map((r) =>
      r.percent !== null ? { cycle: r.cycle, percent: num(r.percent) } : { cycle: r.cycle, amount: num(r.amount) },
    ),
    metadata: a.metadata,
    archived: isoTimestamp(a.archived),
    status: a.status,
    created: isoTimestamp(a.created),
    updated: isoTimestamp(a.updated),
  };
}

export function coupon(c: CouponFieldsFragment) {
  return {
    id: c.id,
    discount_scheme: restEnumValue("DiscountScheme", c.discountScheme),
    duration_scheme: c.durationScheme,
    duration_times: c.durationTimes,
    name: c.name,
    amount: num(c.amount),
    valid_until: isoTimestamp(c.validUntil),
    apply_on: c.applyOn,
    currency: c.currency ? currency(c.currency) : null,
    metadata: c.metadata,
    archived: isoTimestamp(c.archived),
    status: c.status,
    created: isoTimestamp(c.created),
    updated: isoTimestamp(c.updated),
  };
}

/**
 * Spec "Usage" plus `invoice` (the invoice that billed it, null until then); ISO 8601 timestamps;
 * `transaction_id` (ours) only when it was recorded with one, so a spec client's record prints as the spec's.
 */
export function usage(u: UsageFieldsFragment) {
  return {
    id: u.id,
    subscription_line: u.subscriptionLine.id,
    quantity: num(u.quantity),
    date_time: isoTimestamp(u.dateTime),
    invoice: u.invoice?.id ?? null,
    created: isoTimestamp(u.created),
    ...(u.transactionId === null || u.transactionId === undefined ? {} : { transaction_id: u.transactionId }),
  };
}

/**
 * Spec "Subscription": `document` is the type id, the customer embedded with aggregations (as an
 * order prints it), full plan, addon and coupon objects, ISO 8601 timestamps; plus ours:
 * `cancel_at_period_end` (docs/subscriptions.md).
 */
export function subscription(s: import("../graphql/generated/operations.js").SubscriptionFieldsFragment) {
  return {
    id: s.id,
    document: s.document.id,
    customer: { ...embeddedCustomer(s.customer), aggregations: aggregations(s.customer.aggregations) },
    test_mode: s.testMode,
    date_start: s.dateStart,
    end_date: s.endDate,
    billing_cycles: s.billingCycles,
    next_billing: s.nextBilling,
    next_billing_cycle: s.nextBillingCycle,
    previous_billing: s.previousBilling,
    lines: s.lines.map((l) => ({
      id: l.id,
      plan: plan(l.plan),
      quantity: num(l.quantity),
      coupon: l.coupon ? coupon(l.coupon) : null,
      coupon_redemptions: l.couponRedemptions,
      created: isoTimestamp(l.created),
      updated: isoTimestamp(l.updated),
    })),
    addons: s.addons.map((a) => ({
      addon: addon(a.addon),
      addon_redemptions: a.addonRedemptions,
      quantity: a.quantity,
      rates: a.rates.map((r) =>
        r.percent !== null ? { cycle: r.cycle, percent: num(r.percent) } : { cycle: r.cycle, amount: num(r.amount) },
      ),
    })),
    coupon: s.coupon ? coupon(s.coupon) : null,
    coupon_redemptions: s.couponRedemptions,
    expiration_days: s.expirationDays,
    references: s.references,
    note: s.note,
    metadata: s.metadata,
    tax_settings: s.taxSettings,
    status: s.status,
    paused: isoTimestamp(s.paused),
    paused_reason: s.pausedReason,
    cancelled: isoTimestamp(s.cancelled),
    cancel_reason: s.cancelReason,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    pending_changes: s.pendingChanges
      ? {
          cycle: s.pendingChanges.cycle,
          requested: s.pendingChanges.requested,
          lines: s.pendingChanges.lines.map((l) => ({
            id: l.id,
            plan: l.plan,
            quantity: num(l.quantity),
            coupon: l.coupon,
          })),
        }
      : null,
    pending_invoice_items: s.pendingInvoiceItems.map((i) => ({
      id: i.id,
      name: i.name,
      quantity: num(i.quantity),
      amount: num(i.amount),
      exempt: i.exempt,
      period_start: i.periodStart,
      period_end: i.periodEnd,
      created: isoTimestamp(i.created),
    })),
    created: isoTimestamp(s.created),
    updated: isoTimestamp(s.updated),
  };
}

/** The next cycle's invoice of a subscription (ours; docs/subscriptions.md), snake_case, decimals as numbers. */
export function upcomingInvoice(i: RestUpcomingInvoiceQuery["upcomingInvoice"]) {
  return {
    subscription: i.subscription.id,
    cycle: i.cycle,
    final: i.final,
    date: i.date,
    period_start: i.periodStart,
    period_end: i.periodEnd,
    currency: i.currency,
    document: i.document,
    lines: i.lines.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: num(l.quantity),
      amount: num(l.amount),
      discount: num(l.discount),
      discount_scheme: restEnumValue("DiscountScheme", l.discountScheme),
      exempt: l.exempt,
      total: num(l.total),
      period_start: l.periodStart,
      period_end: l.periodEnd,
      subscription_line: l.subscriptionLine,
      pending_item: l.pendingItem,
    })),
    discount: num(i.discount),
    discount_scheme: restEnumValue("DiscountScheme", i.discountScheme),
    amount: num(i.amount),
    exempt: num(i.exempt),
    subtotal: num(i.subtotal),
    tax_percent: num(i.taxPercent),
    tax: num(i.tax),
    total: num(i.total),
  };
}

/** Test clock (ours, docs/test-clocks.md): ISO 8601 timestamps, `customers` = how many are attached. */
export function testClock(c: import("../graphql/generated/operations.js").TestClockFieldsFragment) {
  return {
    id: c.id,
    name: c.name,
    frozen_time: isoTimestamp(c.frozenTime),
    status: c.status,
    customers: c.customers,
    created: isoTimestamp(c.created),
    updated: isoTimestamp(c.updated),
  };
}

/** Spec "Swap": `purchases` as ids, file URLs, ISO 8601 timestamps (docs/sii-receiving.md). */
export function swap(s: SwapFieldsFragment) {
  return {
    id: s.id,
    purchases: s.purchases.map((p) => p.id),
    local_file: s.localFile,
    receipt: s.receipt,
    reception: s.reception,
    result: s.result,
    reply_to: s.replyTo,
    reply_by: s.replyBy,
    reply_date: isoTimestamp(s.replyDate),
    status: s.status,
    imported: s.imported,
    created: isoTimestamp(s.created),
    verification: s.purchases.map((p) => ({
      purchase: p.id,
      document_type: p.documentType,
      folio: p.folio,
      issuer_tax_id: p.issuerTaxId,
      signature_valid: p.signatureValid,
      ted_valid: p.tedValid,
      reason: p.verificationReason,
    })),
    proposed_status: s.proposedStatus,
    proposed_reason: s.proposedReason,
  };
}

/** A recorded receiver's answer (docs/sii-exchange.md "Inbound"): the file's URL and each document's new receiver status. */
export function receiverAnswer(a: RestRecordReceiverAnswerMutation["recordReceiverAnswer"]) {
  return {
    kind: a.kind,
    file: a.file,
    documents: a.documents.map((d) => ({
      kind: d.kind,
      document: d.document,
      document_type: d.documentType,
      folio: d.folio,
      receiver_status: d.receiverStatus,
    })),
  };
}
