/**
 * GraphQL results -> the spec's REST shapes (../shared/spec/billing-api.md, "Resources and their
 * fields"): snake_case names, decimals as JSON numbers, timestamps `yyyy-mm-dd hh:mm:ss` (UTC) for
 * invoices, embedded customers and payments and ISO 8601 with offset elsewhere, dates `yyyy-mm-dd`.
 * Pure reshaping: no rule lives here.
 */
import type {
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
  return { id: c.id, name: c.name, name_en: c.nameEn, phone_code: c.phoneCode, has_regulation: c.hasRegulation, tax_percent: num(c.taxPercent) };
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
    tax_settings: c.taxSettings,
    contacts: c.contacts,
    aggregations: { balance: num(c.aggregations.balance), sales: num(c.aggregations.sales), sales_current_period: num(c.aggregations.salesCurrentPeriod) },
    sources: c.sources.map(source),
    metadata: c.metadata,
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
    customer: s.customer,
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

export function payment(p: PaymentFieldsFragment) {
  return {
    id: p.id,
    date: p.date,
    amount: num(p.amount),
    currency: p.currency,
    description: p.description,
    source: null as unknown,
    payment_date: plainTimestamp(p.paymentDate),
    customer: p.customer,
    invoice: p.invoice,
    status: p.status,
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
      discount_scheme: l.discountScheme,
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
    discount_scheme: i.discountScheme,
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
