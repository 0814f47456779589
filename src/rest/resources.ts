/**
 * The REST adapter's declarations (docs/rest.md "How the REST adapter is declared"; the spec's
 * "Endpoints"): one entry per resource with its standard routes (each a typed GraphQL operation of
 * src/rest/operations), its body, its printer, its filters, and its special routes (special.ts).
 * The dispatcher (router.ts) and the OpenAPI document (openapi.ts) are both read from here.
 */
import * as ops from "../graphql/generated/operations.js";
import * as bodies from "./bodies.js";
import type { FilterSpec } from "./filters.js";
import * as sii from "./sii.js";
import * as special from "./special.js";
import type { Method, ResourceDecl, Shape } from "./types.js";

const str = (key: string) => ({ key, kind: "string" as const });
const CREATED = { created: { key: "created", kind: "datetime" as const } };
const COUNTRY_NAME: FilterSpec = { country: str("country"), name: str("name") };
/** The catalogue's lists (docs/catalogue.md). */
const ARCHIVABLE: FilterSpec = {
  name: str("name"),
  status: { key: "status", kind: "enum", enum: "CatalogueStatus" },
  ...CREATED,
  archived: { key: "archived", kind: "boolean" },
};

/** Method and path suffix of each standard shape (docs/rest.md "Responses"). */
export const SHAPES: Record<Shape, { method: Method; suffix: string }> = {
  create: { method: "POST", suffix: "" },
  retrieve: { method: "GET", suffix: "/:id" },
  update: { method: "PATCH", suffix: "/:id" },
  list: { method: "GET", suffix: "" },
  delete: { method: "DELETE", suffix: "/:id" },
  pdf: { method: "GET", suffix: "/:id/pdf" },
  finalize: { method: "GET", suffix: "/:id/finalize" },
};

/** Every REST resource, in the reference's order. */
export const RESOURCES: ResourceDecl[] = [
  {
    name: "customer",
    tag: "Customers",
    path: "/v1/customers",
    typename: "Customer",
    description: "Customers of the organization; `country`/`state` print as objects on retrieve and list.",
    ops: {
      create: ops.RestCreateCustomerDocument,
      retrieve: ops.RestCustomerDocument,
      update: ops.RestUpdateCustomerDocument,
      list: ops.RestCustomersDocument,
    },
    body: { schema: bodies.customerBody, input: bodies.customerInput },
    filters: {
      country: str("country"),
      country__name: str("countryName"),
      email: str("email"),
      name: str("name"),
      sources: str("sources"),
      tax_id: str("taxId"),
      ...CREATED,
    },
  },
  {
    name: "invoice",
    tag: "Invoices",
    path: "/v1/invoices",
    typename: "Invoice",
    description: "Invoices: drafts update and delete; finalize numbers and issues them (docs/rest.md).",
    ops: {
      create: ops.RestCreateInvoiceDocument,
      retrieve: ops.RestInvoiceDocument,
      update: ops.RestUpdateInvoiceDocument,
      delete: ops.RestDeleteInvoiceDocument,
      finalize: ops.RestFinalizeInvoiceDocument,
      pdf: ops.RestInvoicePdfDocument,
    },
    body: { schema: bodies.invoiceBody, input: bodies.invoiceInput },
  },
  {
    name: "order",
    tag: "Orders",
    path: "/v1/orders",
    typename: "Order",
    description: "Orders (docs/orders-and-credit-notes.md): the invoice conventions, ISO 8601 timestamps.",
    ops: {
      create: ops.RestCreateOrderDocument,
      retrieve: ops.RestOrderDocument,
      update: ops.RestUpdateOrderDocument,
      delete: ops.RestDeleteOrderDocument,
      finalize: ops.RestFinalizeOrderDocument,
      pdf: ops.RestOrderPdfDocument,
    },
    body: { schema: bodies.orderBody, input: bodies.orderInput },
  },
  {
    name: "credit note",
    tag: "Credit notes",
    path: "/v1/creditnotes",
    typename: "CreditNote",
    description: "Credit notes of an invoice; `?expand=invoice` prints the invoice object instead of its id.",
    ops: {
      create: ops.RestCreateCreditNoteDocument,
      retrieve: ops.RestCreditNoteDocument,
      delete: ops.RestDeleteCreditNoteDocument,
      finalize: ops.RestFinalizeCreditNoteDocument,
      pdf: ops.RestCreditNotePdfDocument,
    },
    expand: ["invoice"],
    body: { schema: bodies.creditNoteBody, input: bodies.creditNoteInput },
  },
  {
    name: "payment",
    tag: "Payments",
    path: "/v1/payments",
    typename: "Payment",
    description: "Payments of documents (docs/payments.md); DELETE cancels, the payment stays readable.",
    ops: {
      create: ops.RestCreatePaymentDocument,
      retrieve: ops.RestPaymentDocument,
      delete: ops.RestDeletePaymentDocument,
    },
    body: { schema: bodies.paymentBody, input: bodies.paymentInput },
    special: [
      {
        method: "POST",
        path: "/:id/authorize",
        summary: "Attach a source to a payment and charge it",
        body: bodies.authorizeBody,
        handle: special.authorizePayment,
      },
      {
        method: "GET",
        path: "/:id/pay",
        summary: "Pay a payment: the payment plus `redirect_url`",
        answers: { status: 200, schema: { redirect_url: { type: ["string", "null"], format: "uri" } } },
        handle: special.payPayment,
      },
    ],
  },
  {
    name: "source",
    tag: "Payments",
    path: "/v1/sources",
    typename: "Source",
    description: "Payment sources of a customer (ours; docs/payments.md).",
    ops: { create: ops.RestCreateSourceDocument, retrieve: ops.RestSourceDocument },
    body: { schema: bodies.sourceBody, input: bodies.sourceInput },
  },
  {
    name: "usage",
    tag: "Usages",
    path: "/v1/usages",
    typename: "Usage",
    description: "Usage records of metered subscription lines; a body with `usages` is a batch (docs/rest.md).",
    ops: { list: ops.RestUsagesDocument, delete: ops.RestDeleteUsageDocument },
    filters: {
      subscription_line: str("subscriptionLine"),
      invoice: str("invoice"),
      date_time: { key: "dateTime", kind: "datetime" },
    },
    special: [
      {
        method: "POST",
        path: "",
        summary: "Record a usage, or a batch of up to 1,000 (`usages`)",
        body: bodies.usageBody,
        answers: { status: 201, schema: "resource" },
        handle: special.recordUsage,
      },
    ],
  },
  {
    name: "subscription",
    tag: "Subscriptions",
    path: "/v1/subscriptions",
    typename: "Subscription",
    description: "Subscriptions (docs/subscriptions.md); DELETE cancels and answers the subscription.",
    ops: {
      create: ops.RestCreateSubscriptionDocument,
      retrieve: ops.RestSubscriptionDocument,
      update: ops.RestUpdateSubscriptionDocument,
      list: ops.RestSubscriptionsDocument,
    },
    body: { schema: bodies.subscriptionBody, input: bodies.subscriptionInput },
    filters: {
      customer: str("customer"),
      status: { key: "status", kind: "enum", enum: "SubscriptionStatus" },
      ...CREATED,
    },
    special: [
      {
        method: "DELETE",
        path: "/:id",
        summary: "Cancel a subscription",
        query: {
          cancel_reason: "free text, default requested_by_customer",
          at_period_end: "`true` or `false` (default)",
        },
        answers: { status: 200, schema: "resource" },
        handle: special.cancelSubscription,
      },
      {
        method: "GET",
        path: "/:id/upcoming_invoice",
        summary: "Preview the next cycle's invoice (ours)",
        answers: { status: 200, schema: {} },
        handle: special.upcomingInvoice,
      },
    ],
  },
  {
    name: "document type",
    tag: "Reference lists",
    path: "/v1/generals/documents",
    typename: "DocumentType",
    description: "Document types (global, read-only).",
    ops: { list: ops.RestDocumentTypesDocument },
    filtersAs: "variables",
    filters: {
      ...COUNTRY_NAME,
      id: str("id"),
      is_sale: { key: "isSale", kind: "boolean" },
      is_purshase: { key: "isPurchase", kind: "boolean" },
      is_order: { key: "isOrder", kind: "boolean" },
    },
  },
  {
    name: "currency",
    tag: "Reference lists",
    path: "/v1/generals/currencies",
    typename: "Currency",
    description: "Currencies (global, read-only).",
    ops: { list: ops.RestCurrenciesDocument },
    filtersAs: "variables",
    filters: { ...COUNTRY_NAME, id: str("id") },
  },
  {
    name: "state",
    tag: "Reference lists",
    path: "/v1/generals/states",
    typename: "State",
    description: "States of countries (global, read-only).",
    ops: { list: ops.RestStatesDocument },
    filtersAs: "variables",
    filters: { ...COUNTRY_NAME, code: str("code") },
  },
  {
    name: "customer session",
    tag: "Customer sessions",
    path: "/v1/customer_base/sessions",
    typename: "CustomerSession",
    description: "Customer portal sessions (docs/customer-sessions.md); read back by their key.",
    ops: { create: ops.RestCreateCustomerSessionDocument },
    body: { schema: bodies.customerSessionBody, input: bodies.customerSessionInput },
    special: [
      {
        method: "GET",
        path: "/:key",
        summary: "Retrieve a session by its key",
        answers: { status: 200, schema: "resource" },
        handle: special.customerSession,
      },
    ],
  },
  {
    name: "reminder",
    tag: "Reminders",
    path: "/v1/reminders/messages",
    typename: "Reminder",
    description: "Reminder e-mails of documents (docs/reminders.md); the list is a bare array.",
    ops: { create: ops.RestSendReminderDocument },
    body: { schema: bodies.reminderBody, input: bodies.reminderInput },
    special: [
      {
        method: "GET",
        path: "",
        summary: "List reminders: a bare array, `X-Total-Count` and `Link` headers",
        query: {
          page: "page number, from 1",
          page_size: "items per page, 1 to 100 (default 20)",
          invoice: "an invoice id",
          credit_note: "a credit note id",
          payment: "a payment id",
          order: "an order id",
          created: "a date or timestamp (also `created__gte`, `created__lte`)",
        },
        answers: { status: 200, schema: "array" },
        handle: special.reminders,
      },
    ],
  },
  ...(["product", "plan", "addon", "coupon"] as const).map((name): ResourceDecl => catalogue(name)),
  {
    name: "test clock",
    tag: "Test clocks",
    path: "/v1/test_clocks",
    typename: "TestClock",
    description: "Test clocks (ours, test mode only; docs/test-clocks.md).",
    ops: {
      create: ops.RestCreateTestClockDocument,
      retrieve: ops.RestTestClockDocument,
      delete: ops.RestDeleteTestClockDocument,
      list: ops.RestTestClocksDocument,
    },
    body: { schema: bodies.testClockBody, input: bodies.testClockInput },
    special: [
      {
        method: "POST",
        path: "/:id/advance",
        summary: "Advance a test clock and bill what came due",
        body: bodies.testClockBody,
        answers: { status: 200, schema: "resource" },
        handle: special.advanceTestClock,
      },
    ],
  },
  {
    name: "tax profile",
    tag: "SII set-up",
    path: "/v1/billers/built_in/tax_profile",
    typename: "TaxProfile",
    description: "The organization's tax profile (docs/sii-setup.md).",
    ops: {},
    print: (p: ops.TaxProfileFieldsFragment) => sii.taxProfile(p),
    special: [
      { method: "GET", path: "", summary: "Retrieve the tax profile", handle: special.taxProfile },
      {
        method: "PATCH",
        path: "",
        summary: "Update the tax profile",
        body: sii.taxProfileBody,
        handle: special.updateTaxProfile,
      },
    ],
  },
  {
    name: "certificate",
    tag: "SII set-up",
    path: "/v1/billers/built_in/certificates",
    typename: "Certificate",
    description: "Signing certificates (PKCS#12 in Base64; docs/sii-setup.md).",
    ops: { create: ops.RestUploadCertificateDocument },
    body: { schema: sii.certificateBody, input: (body: unknown) => body },
    print: (c: ops.CertificateFieldsFragment) => sii.certificate(c),
    special: [
      {
        method: "GET",
        path: "",
        summary: "List every certificate (a bare array)",
        answers: { status: 200, schema: "array" },
        handle: special.certificates,
      },
    ],
  },
  {
    name: "CAF",
    tag: "SII set-up",
    path: "/v1/billers/built_in/cafs",
    typename: "Caf",
    description: "SII's folio ranges (CAF XML in Base64; docs/sii-setup.md).",
    ops: { create: ops.RestUploadCafDocument, list: ops.RestCafsDocument, retrieve: ops.RestCafDocument },
    body: { schema: sii.cafBody, input: (body: unknown) => body },
    print: (c: ops.CafFieldsFragment) => sii.caf(c),
    filters: { document: str("documentType") },
  },
  {
    name: "file",
    tag: "SII set-up",
    path: "/v1/files",
    typename: "StoredFile",
    description: "Stored files (a document's `local_file`), only to their organization and mode.",
    ops: {},
    print: () => null,
    special: [
      {
        method: "GET",
        path: "/:name",
        summary: "A stored file's bytes",
        answers: { status: 200, schema: "pdf" },
        handle: special.storedFile,
      },
    ],
  },
  {
    name: "receiver answer",
    tag: "Swaps",
    path: "/v1/billers/built_in/receiver_answers",
    typename: "ReceiverAnswer",
    description: "A receiver's RecepcionDTE, ResultadoDTE or EnvioRecibos (docs/sii-exchange.md).",
    ops: {},
    print: () => null,
    special: [
      {
        method: "POST",
        path: "",
        summary: "Record a receiver's answer to our DTEs",
        body: bodies.receiverAnswerBody,
        answers: { status: 201, schema: {} },
        handle: special.receiverAnswer,
      },
    ],
  },
  {
    name: "purchase",
    tag: "Swaps",
    path: "/v1/billers/built_in/purchases",
    typename: "Swap",
    description: "Imports suppliers' DTEs (an EnvioDTE) as a swap (docs/sii-receiving.md).",
    ops: { create: ops.RestReceivePurchaseDocumentsDocument },
    body: { schema: bodies.purchasesBody, input: bodies.purchasesInput },
  },
  {
    name: "swap",
    tag: "Swaps",
    path: "/v1/billers/built_in/swaps",
    typename: "Swap",
    description: "Received DTE exchanges (docs/sii-receiving.md); `status` filters take SII codes in any case.",
    ops: {
      list: ops.RestSwapsDocument,
      retrieve: ops.RestSwapDocument,
      update: ops.RestUpdateSwapDocument,
      pdf: ops.RestSwapPdfDocument,
    },
    body: { schema: bodies.swapBody, input: bodies.swapInput },
    filters: {
      status: { key: "status", kind: "enum", enum: "SwapReplyStatus" },
      ...CREATED,
      imported: { key: "imported", kind: "boolean" },
    },
    query: (query) =>
      new URLSearchParams(
        [...query].map(([p, v]) => [p, p === "status" || p.startsWith("status__") ? v.toUpperCase() : v]),
      ),
  },
];

/** A catalogue resource (spec "Products"; plans, addons, coupons are ours: docs/catalogue.md). */
function catalogue(name: "product" | "plan" | "addon" | "coupon"): ResourceDecl {
  const decl = {
    product: {
      typename: "Product",
      ops: [ops.RestCreateProductDocument, ops.RestProductDocument, ops.RestUpdateProductDocument],
      more: [ops.RestDeleteProductDocument, ops.RestProductsDocument],
      body: { schema: bodies.productBody, input: bodies.productInput },
      filters: {},
    },
    plan: {
      typename: "Plan",
      ops: [ops.RestCreatePlanDocument, ops.RestPlanDocument, ops.RestUpdatePlanDocument],
      more: [ops.RestDeletePlanDocument, ops.RestPlansDocument],
      body: { schema: bodies.planBody, input: bodies.planInput },
      filters: {
        product: str("product"),
        currency: str("currency"),
        frequency: { key: "frequency", kind: "enum", enum: "BillingFrequency" },
      },
    },
    addon: {
      typename: "Addon",
      ops: [ops.RestCreateAddonDocument, ops.RestAddonDocument, ops.RestUpdateAddonDocument],
      more: [ops.RestDeleteAddonDocument, ops.RestAddonsDocument],
      body: { schema: bodies.addonBody, input: bodies.addonInput },
      filters: {
        currency: str("currency"),
        apply_scheme: { key: "applyScheme", kind: "enum", enum: "AddonApplyScheme" },
      },
    },
    coupon: {
      typename: "Coupon",
      ops: [ops.RestCreateCouponDocument, ops.RestCouponDocument, ops.RestUpdateCouponDocument],
      more: [ops.RestDeleteCouponDocument, ops.RestCouponsDocument],
      body: { schema: bodies.couponBody, input: bodies.couponInput },
      filters: { discount_scheme: { key: "discountScheme", kind: "enum", enum: "DiscountScheme" } },
    },
  }[name];
  const [create, retrieve, update] = decl.ops;
  const [remove, list] = decl.more;
  return {
    name,
    tag: "Catalogue",
    path: `/v1/${name}s`,
    typename: decl.typename,
    description:
      `${name[0].toUpperCase()}${name.slice(1)}s of the catalogue; ` +
      "DELETE archives one in use (docs/catalogue.md).",
    ops: { create, retrieve, update, delete: remove, list },
    body: decl.body,
    filters: { ...ARCHIVABLE, ...(decl.filters as FilterSpec) },
  };
}
