/**
 * The REST adapter's declarations (docs/rest.md "How the REST adapter is declared"; the spec's
 * "Endpoints"): one entry per resource with its standard routes (each a typed GraphQL operation
 * named by convention, `operationName`, and derived by rule in standard.ts) and its special routes
 * (an operation run by rule, derived in standard.ts unless src/rest/operations writes it, or a
 * handler of special.ts, both by name).
 * Bodies (input.ts), filters (filters.ts) and answers (printer.ts) are derived from the operations.
 * The dispatcher (router.ts) and the OpenAPI document (openapi.ts) both read the routes from here
 * (`routesOf`). Plain data: nothing generated is imported, so the operations can be generated from it.
 */
import type { Method, OperationName, ResourceDecl, Route, Shape } from "./types.js";

/** Method, path suffix, success status and the reference's verb of each standard shape (docs/rest.md "Responses"). */
export const SHAPES: Record<Shape, { method: Method; suffix: string; status: number; verb: string }> = {
  create: { method: "POST", suffix: "", status: 201, verb: "Create" },
  retrieve: { method: "GET", suffix: "/:id", status: 200, verb: "Retrieve" },
  update: { method: "PATCH", suffix: "/:id", status: 200, verb: "Update" },
  list: { method: "GET", suffix: "", status: 200, verb: "List" },
  delete: { method: "DELETE", suffix: "/:id", status: 204, verb: "Delete" },
  pdf: { method: "GET", suffix: "/:id/pdf", status: 200, verb: "PDF of" },
  finalize: { method: "GET", suffix: "/:id/finalize", status: 200, verb: "Finalize" },
};

/** `credit note` -> `CreditNote` */
export const pascal = (name: string) =>
  name.toLowerCase().replace(/(^| )(\w)/g, (_m, _s, c: string) => c.toUpperCase());

/**
 * The operation of `shape` on `decl`, by the naming convention: the resource's name in PascalCase
 * after `Rest` and the verb (`RestCreateCreditNote`, `RestUpdateCreditNote`, `RestDeleteCreditNote`,
 * `RestFinalizeCreditNote`), alone for a retrieve (`RestCreditNote`), in the plural for a list
 * (`RestCreditNotes`), before `Pdf` for a pdf.
 */
export function operationName(decl: ResourceDecl, shape: Shape): OperationName {
  const name = pascal(decl.name);
  const verb = shape === "retrieve" || shape === "list" || shape === "pdf" ? "" : SHAPES[shape].verb;
  const noun = shape === "list" ? `${name.replace(/y$/, "ie")}s` : shape === "pdf" ? `${name}Pdf` : name;
  return `Rest${verb}${noun}` as OperationName;
}

/** Every route of `decl`: its standard shapes, then its special routes. */
export function routesOf(decl: ResourceDecl): Route[] {
  const article = /^[aeiou]/i.test(decl.name) ? "an" : "a";
  return [
    ...decl.shapes.map((shape) => ({
      method: SHAPES[shape].method,
      path: SHAPES[shape].suffix,
      summary: `${SHAPES[shape].verb} ${article} ${decl.name}`,
      shape,
      operation: operationName(decl, shape),
      status: SHAPES[shape].status,
      ...(shape === "list" && decl.bareList ? { answers: "array" as const } : {}),
    })),
    ...(decl.special ?? []),
  ];
}

/** A declaration as written: its type and tag by default (`ResourceDecl`). */
type Declared = Omit<ResourceDecl, "typename" | "tag"> & Partial<Pick<ResourceDecl, "typename" | "tag">>;

const declare = (decl: Declared): ResourceDecl => ({
  typename: pascal(decl.name),
  tag: `${decl.name[0].toUpperCase()}${decl.name.slice(1)}s`,
  ...decl,
});

/** Every REST resource, in the reference's order. */
const DECLARED: Declared[] = [
  {
    name: "customer",
    path: "/v1/customers",
    description: "Customers of the organization; `country`/`state` print as objects on retrieve and list.",
    shapes: ["create", "retrieve", "update", "list"],
  },
  {
    name: "invoice",
    path: "/v1/invoices",
    description: "Invoices: drafts update and delete; finalize numbers and issues them (docs/rest.md).",
    shapes: ["create", "retrieve", "update", "delete", "finalize", "pdf"],
  },
  {
    name: "order",
    path: "/v1/orders",
    description: "Orders (docs/orders-and-credit-notes.md): the invoice conventions, ISO 8601 timestamps.",
    shapes: ["create", "retrieve", "update", "delete", "finalize", "pdf"],
  },
  {
    name: "credit note",
    path: "/v1/creditnotes",
    description: "Credit notes of an invoice; `?expand=invoice` prints the invoice object instead of its id.",
    shapes: ["create", "retrieve", "delete", "finalize", "pdf"],
    expand: ["invoice"],
  },
  {
    name: "payment",
    path: "/v1/payments",
    description: "Payments of documents (docs/payments.md); DELETE cancels, the payment stays readable.",
    shapes: ["create", "retrieve", "delete"],
    special: [
      {
        method: "POST",
        path: "/:id/authorize",
        summary: "Attach a source to a payment and charge it",
        operation: "RestAuthorizePayment",
      },
      {
        method: "GET",
        path: "/:id/pay",
        summary: "Pay a payment: the payment plus `redirect_url`",
        answers: { redirect_url: { type: ["string", "null"], format: "uri" } },
        handle: "payPayment",
      },
    ],
  },
  {
    name: "source",
    tag: "Payments",
    path: "/v1/sources",
    description: "Payment sources of a customer (ours; docs/payments.md).",
    shapes: ["create", "retrieve"],
  },
  {
    name: "usage",
    path: "/v1/usages",
    description: "Usage records of metered subscription lines; a body with `usages` is a batch (docs/rest.md).",
    shapes: ["list", "delete"],
    special: [
      {
        method: "POST",
        path: "",
        summary: "Record a usage, or a batch of up to 1,000 (`usages`)",
        operation: "RestCreateUsage",
        handle: "recordUsage",
        status: [201, 200],
      },
    ],
  },
  {
    name: "subscription",
    path: "/v1/subscriptions",
    description: "Subscriptions (docs/subscriptions.md); DELETE cancels and answers the subscription.",
    shapes: ["create", "retrieve", "update", "list"],
    special: [
      {
        method: "DELETE",
        path: "/:id",
        summary: "Cancel a subscription",
        query: {
          cancel_reason: "free text, default requested_by_customer",
          at_period_end: "`true` or `false` (default)",
        },
        operation: "RestCancelSubscription",
        handle: "cancelSubscription",
      },
      {
        method: "GET",
        path: "/:id/upcoming_invoice",
        summary: "Preview the next cycle's invoice (ours)",
        operation: "RestUpcomingInvoice",
      },
    ],
  },
  ...(
    [
      ["document type", "documents", "Document types"],
      ["currency", "currencies", "Currencies"],
      ["state", "states", "States of countries"],
    ] as const
  ).map(([name, path, what]): Declared => ({
    name,
    tag: "Reference lists",
    path: `/v1/generals/${path}`,
    description: `${what} (global, read-only).`,
    shapes: ["list"],
  })),
  {
    name: "customer session",
    path: "/v1/customer_base/sessions",
    description: "Customer portal sessions (docs/customer-sessions.md); read back by their key.",
    shapes: ["create"],
    special: [
      {
        method: "GET",
        path: "/:key",
        summary: "Retrieve a session by its key",
        operation: "RestCustomerSession",
      },
    ],
  },
  {
    name: "reminder",
    path: "/v1/reminders/messages",
    description: "Reminder e-mails of documents (docs/reminders.md); the list is a bare array.",
    shapes: ["create", "list"],
    bareList: true,
    roots: { create: "sendReminder" },
  },
  ...(["product", "plan", "addon", "coupon"] as const).map((name): Declared => ({
    name,
    tag: "Catalogue",
    path: `/v1/${name}s`,
    description:
      `${name[0].toUpperCase()}${name.slice(1)}s of the catalogue; ` +
      "DELETE archives one in use (docs/catalogue.md).",
    shapes: ["create", "retrieve", "update", "delete", "list"],
  })),
  {
    name: "test clock",
    path: "/v1/test_clocks",
    description: "Test clocks (ours, test mode only; docs/test-clocks.md).",
    shapes: ["create", "retrieve", "delete", "list"],
    special: [
      {
        method: "POST",
        path: "/:id/advance",
        summary: "Advance a test clock and bill what came due",
        operation: "RestAdvanceTestClock",
      },
    ],
  },
  {
    name: "tax profile",
    tag: "SII set-up",
    path: "/v1/billers/built_in/tax_profile",
    description: "The organization's tax profile (docs/sii-setup.md).",
    shapes: [],
    special: [
      { method: "GET", path: "", summary: "Retrieve the tax profile", operation: "RestTaxProfile" },
      { method: "PATCH", path: "", summary: "Update the tax profile", operation: "RestUpdateTaxProfile" },
    ],
  },
  {
    name: "certificate",
    tag: "SII set-up",
    path: "/v1/billers/built_in/certificates",
    description: "Signing certificates (PKCS#12 in Base64; docs/sii-setup.md).",
    shapes: ["create"],
    roots: { create: "uploadCertificate" },
    special: [
      {
        method: "GET",
        path: "",
        summary: "List every certificate (a bare array)",
        operation: "RestCertificates",
      },
    ],
  },
  {
    name: "CAF",
    tag: "SII set-up",
    path: "/v1/billers/built_in/cafs",
    description: "SII's folio ranges (CAF XML in Base64; docs/sii-setup.md).",
    shapes: ["create", "list", "retrieve"],
    roots: { create: "uploadCaf" },
  },
  {
    name: "file",
    tag: "SII set-up",
    path: "/v1/files",
    typename: "StoredFile",
    description: "Stored files (a document's `local_file`), only to their organization and mode.",
    shapes: [],
    special: [
      {
        method: "GET",
        path: "/:name",
        summary: "A stored file's bytes",
        answers: "file",
        operation: "RestStoredFile",
      },
    ],
  },
  {
    name: "receiver answer",
    tag: "Swaps",
    path: "/v1/billers/built_in/receiver_answers",
    description: "A receiver's RecepcionDTE, ResultadoDTE or EnvioRecibos (docs/sii-exchange.md).",
    shapes: [],
    special: [
      {
        method: "POST",
        path: "",
        summary: "Record a receiver's answer to our DTEs",
        operation: "RestRecordReceiverAnswer",
        status: 201,
      },
    ],
  },
  {
    name: "purchase",
    tag: "Swaps",
    path: "/v1/billers/built_in/purchases",
    typename: "Swap",
    description: "Imports suppliers' DTEs (an EnvioDTE) as a swap (docs/sii-receiving.md).",
    shapes: ["create"],
    roots: { create: "receivePurchaseDocuments" },
  },
  {
    name: "swap",
    path: "/v1/billers/built_in/swaps",
    description: "Received DTE exchanges (docs/sii-receiving.md); `status` filters take SII codes in any case.",
    shapes: ["list", "retrieve", "update", "pdf"],
    query: (query) =>
      new URLSearchParams(
        [...query].map(([p, v]) => [p, p === "status" || p.startsWith("status__") ? v.toUpperCase() : v]),
      ),
  },
  {
    name: "event",
    tag: "Webhooks",
    path: "/v1/events",
    description: "Events of the organization in the key's mode, newest first; kept 30 days by default.",
    shapes: ["retrieve", "list"],
    special: [
      {
        method: "POST",
        path: "/:id/redeliver",
        summary: "Send an event again to its webhook endpoints (or to `endpoint`)",
        operation: "RestRedeliverEvent",
      },
    ],
  },
  {
    name: "webhook endpoint",
    tag: "Webhooks",
    path: "/v1/webhook_endpoints",
    description: "URLs that receive events as signed Standard Webhooks messages; `secret` only on create and rotate.",
    shapes: ["create", "retrieve", "update", "delete", "list"],
    special: [
      {
        method: "POST",
        path: "/:id/rotate_secret",
        summary: "Give an endpoint a new signing secret (the previous one signs too for 24 hours)",
        operation: "RestRotateWebhookEndpointSecret",
      },
    ],
  },
  {
    name: "webhook delivery",
    tag: "Webhooks",
    path: "/v1/webhook_endpoints/:endpoint/deliveries",
    description: "Every attempt to deliver an event to an endpoint, newest first.",
    shapes: ["list"],
  },
];

export const RESOURCES: ResourceDecl[] = DECLARED.map(declare);
