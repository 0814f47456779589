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
    description: "Invoices: a draft can be updated and deleted; finalize numbers, issues and locks it.",
    shapes: ["create", "retrieve", "update", "delete", "finalize", "pdf", "list"],
    special: [
      {
        method: "POST",
        path: "/:id/mark_uncollectible",
        summary: "Mark a finalized invoice with an amount due uncollectible (a later payment still counts)",
        operation: "RestMarkInvoiceUncollectible",
      },
    ],
  },
  {
    name: "order",
    path: "/v1/orders",
    description: "Orders: documents with the invoice's rules (drafts, finalize, totals), with ISO 8601 timestamps.",
    shapes: ["create", "retrieve", "update", "delete", "finalize", "pdf", "list"],
  },
  {
    name: "credit note",
    path: "/v1/creditnotes",
    description: "Credit notes of an invoice; `?expand=invoice` prints the invoice object instead of its id.",
    shapes: ["create", "retrieve", "delete", "finalize", "pdf", "list"],
    expand: ["invoice"],
  },
  {
    name: "payment",
    path: "/v1/payments",
    description: "Payments of documents; DELETE cancels a payment, which stays readable.",
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
    description: "Payment sources of a customer: a card of the `test` gateway or the `redirect` gateway's checkout.",
    shapes: ["create", "retrieve"],
  },
  {
    name: "usage",
    path: "/v1/usages",
    description: "Usage records of metered subscription lines; a body with `usages` records a batch at once.",
    shapes: ["list", "delete"],
    special: [
      {
        method: "POST",
        path: "",
        summary: "Record a usage, or a batch of up to 1,000 (`usages`)",
        operation: "RestCreateUsage",
        alsoAnswers: "RestRecordUsages",
        handle: "recordUsage",
        status: [201, 200],
      },
    ],
  },
  {
    name: "subscription",
    path: "/v1/subscriptions",
    description: "Subscriptions of customers to plans; DELETE cancels one and answers the subscription.",
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
    description: "Customer portal sessions: a link that lets one customer into the portal for a time; read by key.",
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
    description: "Reminder e-mails about a document; the list is a bare array.",
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
      "DELETE removes one nothing uses and archives one in use (it stays readable).",
    shapes: ["create", "retrieve", "update", "delete", "list"],
  })),
  {
    name: "dunning campaign",
    tag: "Dunning",
    path: "/v1/dunning_campaigns",
    description:
      "How overdue invoices are recovered: when a campaign acts (a threshold per currency), how often and how many " +
      "times it retries the card and e-mails the customer, and what it does after the last attempt.",
    shapes: ["create", "retrieve", "update", "delete", "list"],
  },
  {
    name: "dunning attempt",
    tag: "Dunning",
    path: "/v1/dunning_attempts",
    description:
      "What the dunning campaigns did (read-only): each attempt on a customer's overdue invoices in a currency, the " +
      "card charge of each invoice, what was still due after, and the final action after the last.",
    shapes: ["retrieve", "list"],
  },
  {
    name: "test clock",
    path: "/v1/test_clocks",
    description: "Test clocks (test mode only): simulated time that runs a year of renewals in seconds.",
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
    description: "The organization's tax profile for issuing Chilean tax documents (DTEs), per mode.",
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
    description: "Certificates that sign the organization's DTEs (PKCS#12 in Base64), per mode.",
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
    description: "SII's folio ranges (CAF XML in Base64) that number the organization's DTEs, per mode.",
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
    description: "A receiver's answer to one of our DTEs: its RecepcionDTE, ResultadoDTE or EnvioRecibos XML.",
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
    description: "Imports a supplier's DTEs (an EnvioDTE) as a swap, with one purchase per DTE.",
    shapes: ["create"],
    roots: { create: "receivePurchaseDocuments" },
  },
  {
    name: "swap",
    path: "/v1/billers/built_in/swaps",
    description: "Received DTE exchanges (a supplier's EnvioDTE); `status` filters take SII codes in any case.",
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
    description:
      "What happened to the organization's resources in the key's mode, newest first: the resource as this API " +
      "prints it at that moment, and for updates the old values of what changed. Kept 30 days by default.",
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
    description:
      "URLs that receive events as signed Standard Webhooks messages. The signing secret is shown only in the answer " +
      "of create and of rotate_secret; keep it where the receiver verifies messages.",
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
    description:
      "Every attempt to deliver an event to an endpoint, newest first: when, the answer's status, how long it took, " +
      "why it failed and the start of the answer's body.",
    shapes: ["list"],
  },
];

export const RESOURCES: ResourceDecl[] = DECLARED.map(declare);

/**
 * What each group of the reference is about (its OpenAPI tag's description), written for a reader
 * of /docs: every tag of RESOURCES has one (openapi.ts throws without it).
 */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Customers: "The people and companies the organization bills: every document, payment and subscription names one.",
  Invoices:
    "Sales invoices. A draft can be changed or deleted; finalizing numbers it, issues it and locks it. The service " +
    "computes every total (line nets, discounts, taxes) in the invoice's currency.",
  Orders: "Orders: documents with the invoice's rules (drafts, finalize, totals, PDF).",
  "Credit notes": "Credit notes of a finalized invoice, which cancel or correct it in full or in part.",
  Payments:
    "Payments of invoices and other documents, and the customers' payment sources that pay them: cards, or a hosted " +
    "checkout the customer is sent to.",
  Usages: "Usage records of metered subscription lines: what the next invoice of the subscription charges for.",
  Subscriptions:
    "Customers' subscriptions to plans: an invoice every billing cycle, prorations when lines change in a cycle, " +
    "and the preview of the next invoice.",
  "Reference lists": "Document types, currencies and states of countries: read-only lists, the same for everyone.",
  "Customer sessions": "Links that let one customer into the customer portal for a limited time.",
  Reminders: "Reminder e-mails to customers about an invoice, credit note, payment or order.",
  Catalogue: "Products, plans, addons and coupons, which subscriptions and invoice lines are made of.",
  Dunning:
    "Dunning campaigns: how the service recovers what customers owe after the due date. A customer uses the " +
    "campaign it names (`dunning_campaign`), else the organization's default campaign (`applied_to_organization`); " +
    "`exclude_from_dunning` keeps a customer out of every campaign.",
  "Test clocks":
    "Simulated time for test mode: customers attached to a clock have their subscriptions renewed as the clock is " +
    "advanced.",
  "SII set-up":
    "What issuing Chilean tax documents (DTEs) with SII needs: the organization's tax profile, its signing " +
    "certificates and folio ranges (CAFs), and the files the service keeps.",
  Swaps:
    "Tax documents received from suppliers (an EnvioDTE makes a swap and one purchase per DTE), the answers to them, " +
    "and receivers' answers to the documents the organization sent.",
  Webhooks:
    "What happened, as events (an invoice finalized, a payment failed, SII's verdict on a DTE...), and the URLs " +
    "that receive them: each event is POSTed to every enabled endpoint that asks for its type, signed as the " +
    "Standard Webhooks specification says (headers webhook-id, webhook-timestamp, webhook-signature), and retried " +
    "until it is answered with a 2xx.",
};
