/**
 * Payments and sources (spec "Payment", "Payment (status)"; docs/payments.md): node types, the
 * `payments` connection and the mutations createPayment, updatePayment, deletePayment,
 * authorizePayment, payPayment and createSource. Rules live in services/payments.ts and
 * domain/payments.ts; gateways in infra/gateways.
 */
import { builder, INVOICE_RELATION, PORTAL_FIELD } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import {
  DateTimeFilter,
  StringFilter,
  dateTimeConditions,
  enumConditions,
  enumFilter,
  stringConditions,
} from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import {
  authorizePayment,
  cancelPayment,
  createPayment,
  createSource,
  payInvoice,
  payPayment,
  updatePaymentMetadata,
} from "../../services/payments.js";
import { detachSource, setDefaultSource } from "../../services/sources.js";
import type { PaymentStatus as PaymentStatusValue } from "../../domain/payments.js";
import type { SourceFlow as SourceFlowValue, SourceUsage as SourceUsageValue } from "../../infra/gateways/types.js";

export const PaymentStatus = builder.enumType("PaymentStatus", {
  description:
    'Where a payment is (spec "Payment (status)"; the moves are in docs/payments.md and domain/payments.ts).',
  values: {
    requires_payment_method: {
      value: "requires_payment_method",
      description:
        "created, or its last charge was declined (failureReason says why): waiting for a source (authorizePayment) " +
        "or for the customer to pay",
    },
    processing: {
      value: "processing",
      description:
        "a charge is under way: the customer is at a redirect checkout, or the gateway is answering a card charge",
    },
    succeeded: {
      value: "succeeded",
      description: "paid (paymentDate says when); counts in the invoice's amountPaid; final",
    },
    canceled: { value: "canceled", description: "canceled by deletePayment before it succeeded; final" },
  } as const satisfies DescribedValues<PaymentStatusValue>,
});

export const PaymentStatusFilter = enumFilter(PaymentStatus, "PaymentStatus");

type SourceStatusValue = "chargeable" | "consumed" | "failed";

export const SourceStatus = builder.enumType("SourceStatus", {
  description: "Whether a source can still pay (docs/payments.md).",
  values: {
    chargeable: {
      value: "chargeable",
      description:
        "usable: a reusable source stays chargeable (but a new card whose first payInvoice charge declined); a " +
        "single-use one until its payment is answered",
    },
    consumed: { value: "consumed", description: "a single-use source whose payment succeeded; cannot be used again" },
    failed: {
      value: "failed",
      description:
        "a single-use source whose payment was declined at the gateway, or a new card whose first charge by " +
        "payInvoice was declined (detached from its customer); cannot be used again",
    },
  } as const satisfies DescribedValues<SourceStatusValue>,
});

export const SourceUsage = builder.enumType("SourceUsage", {
  description: "How many payments a source can pay (the gateway decides; infra/gateways).",
  values: {
    reusable: {
      value: "reusable",
      description: "any number of payments, charged directly (test cards; the billing run charges these)",
    },
    single_use: {
      value: "single_use",
      description: "one payment, paid by the customer at the gateway's checkout (redirect sources)",
    },
  } as const satisfies DescribedValues<SourceUsageValue>,
});

export const SourceFlow = builder.enumType("SourceFlow", {
  description: "How a payment with this source is completed.",
  values: {
    none: { value: "none", description: "charged directly by the service, no customer action" },
    redirect: {
      value: "redirect",
      description: "the customer is sent to `data.redirect_url` (the payPayment answer's redirectUrl) to pay",
    },
  } as const satisfies DescribedValues<SourceFlowValue>,
});

/** The pay operation's address for a payment (spec: a retrieved payment's `return_url`). */
export function payOperationUrl(baseUrl: string, paymentId: string): string {
  return `${baseUrl}/v1/payments/${paymentId}/pay/`;
}

export const Payment = builder.prismaNode("Payment", {
  id: { field: "id", description: "`pay_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A charge to a customer's card or other source (docs/payments.md).",
  fields: (t) => ({
    date: t.expose("date", { type: "Date", description: "the payment's date, yyyy-mm-dd" }),
    amount: t.expose("amount", {
      type: "Decimal",
      description: "positive, in currency units of the payment currency (whole pesos for CLP)",
    }),
    currency: t.exposeString("currencyId", { description: "ISO 4217 code, e.g. CLP" }),
    description: t.exposeString("description", {
      nullable: true,
      description: "at most 256 characters; null when none",
    }),
    source: t.relation("source", { nullable: true, description: "the source attached by authorize; null before" }),
    returnUrl: t.string({
      nullable: true,
      description: "address of the pay operation, once a source is attached (spec Payment.return_url); null before",
      select: { sourceId: true },
      resolve: (payment, _args, ctx) => (payment.sourceId ? payOperationUrl(ctx.baseUrl, payment.id) : null),
    }),
    paymentDate: t.expose("paymentDate", {
      type: "DateTime",
      nullable: true,
      description: "when it succeeded (ISO 8601); null until then",
    }),
    customer: t.relation("customer", {
      nullable: true,
      description: "the customer who pays; null when the payment names none (REST `customer` is its id)",
    }),
    invoice: t.relation("invoice", {
      ...INVOICE_RELATION,
      nullable: true,
      description: "the invoice this payment pays; null when it pays none (REST `invoice` is its id)",
    }),
    status: t.field({
      type: PaymentStatus,
      description: "where the payment is",
      select: { status: true },
      resolve: (payment) => payment.status as PaymentStatusValue,
    }),
    failureReason: t.exposeString("failureReason", {
      nullable: true,
      description: "why the last charge was declined (`code: message`); null when none was",
    }),
    metadata: t.expose("metadata", { type: "JSONObject", description: "your key-value data ({} when none)" }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created (ISO 8601)" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed (ISO 8601)" }),
  }),
});

export const Source = builder.prismaNode("Source", {
  id: { field: "id", description: "`sou_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A way to pay at a payment gateway: a test card (reusable) or a redirect checkout (single use).",
  fields: (t) => ({
    amount: t.expose("amount", {
      type: "Decimal",
      nullable: true,
      description: "when set, the only amount (currency units) a payment using this source may have; null: any",
    }),
    description: t.exposeString("description", {
      nullable: true,
      description: "at most 256 characters; null when none",
    }),
    returnUrl: t.exposeString("returnUrl", {
      nullable: true,
      description: "http(s) URL the checkout sends the customer back to; null when none",
    }),
    status: t.field({
      type: SourceStatus,
      description: "whether the source can still pay",
      select: { status: true },
      resolve: (source) => source.status as SourceStatusValue,
    }),
    metadata: t.expose("metadata", { type: "JSONObject", description: "your key-value data ({} when none)" }),
    customer: t.relation("customer", {
      nullable: true,
      description: "the customer the source belongs to; null when none (REST `customer` is its id)",
    }),
    isDefault: t.boolean({
      description:
        "true when it is its customer's default source, which the billing run charges first (setDefaultSource); " +
        "false otherwise",
      select: { id: true, customer: { select: { defaultSourceId: true } } },
      resolve: (source) => source.customer?.defaultSourceId === source.id,
    }),
    gateway: t.exposeString("gateway", {
      description:
        "name of the payment gateway that made it: `test` (test cards) or `redirect` (hosted checkout) in this " +
        "build. A String, not an enum: the set grows with the gateways a deployment enables (its PAYMENT_GATEWAYS " +
        "setting).",
    }),
    usage: t.field({
      type: SourceUsage,
      description: "how many payments it can pay",
      select: { usage: true },
      resolve: (source) => source.usage as SourceUsageValue,
    }),
    flow: t.field({
      type: SourceFlow,
      description: "how a payment with it completes",
      select: { flow: true },
      resolve: (source) => source.flow as SourceFlowValue,
    }),
    data: t.expose("data", {
      type: "JSONObject",
      description: "gateway data: card brand and last4; redirect_url for a redirect flow",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created (ISO 8601)" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed (ISO 8601)" }),
  }),
});

const PaymentInput = builder.inputType("PaymentInput", {
  description: 'A new payment (spec "Payment" and "Limits").',
  fields: (t) => ({
    amount: t.field({
      type: "Decimal",
      description: "positive, in the currency's unit (whole pesos for CLP) (required)",
    }),
    currency: t.string({ description: "ISO 4217, chargeable; default the invoice's, else the customer's" }),
    date: t.field({ type: "Date", description: "not before today in the organization's time zone; default today" }),
    description: t.string({ description: "at most 256 characters" }),
    customer: t.id({ description: "`cus_` id of the customer who pays (default: the invoice's customer)" }),
    invoice: t.id({ description: "`inv_` id of a finalized invoice; the amount must not exceed its amountDue" }),
    metadata: t.field({ type: "JSONObject", description: "your key-value data (string values)" }),
  }),
});

const SourceInput = builder.inputType("SourceInput", {
  description: "A new source. Test card: gateway test, data {token: tok_visa}. Redirect: gateway redirect, returnUrl.",
  fields: (t) => ({
    customer: t.id({ description: "`cus_` id of the customer the source belongs to" }),
    gateway: t.string({
      description: "an enabled gateway's name: test | redirect (required); test gateways work with test keys only",
    }),
    usage: t.field({
      type: SourceUsage,
      description: "reusable for test, single_use for redirect (the only ones each accepts); default per gateway",
    }),
    amount: t.field({
      type: "Decimal",
      description: "positive; when set, only a payment of this amount (currency units) can use it",
    }),
    description: t.string({ description: "at most 256 characters" }),
    returnUrl: t.string({ description: "http(s) URL the checkout returns to" }),
    data: t.field({ type: "JSONObject", description: "gateway data: {token} for test cards (tok_visa, ...)" }),
    metadata: t.field({ type: "JSONObject", description: "your key-value data (string values)" }),
  }),
});

const PaymentWhere = builder.inputType("PaymentWhere", {
  description: "Filters of the payments list; every given filter must match.",
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id (`cus_`)" }),
    invoice: t.field({ type: StringFilter, description: "invoice id (`inv_`)" }),
    status: t.field({ type: PaymentStatusFilter, description: "payment status" }),
    created: t.field({ type: DateTimeFilter, description: "creation time" }),
  }),
});

const PayPaymentResult = builder
  .objectRef<{ redirectUrl: string | null; paymentId: string }>("PayPaymentResult")
  .implement({
    description: "The pay operation's answer: the payment, and where to send the customer (redirect sources).",
    fields: (t) => ({
      redirectUrl: t.exposeString("redirectUrl", {
        nullable: true,
        description: "the gateway checkout address; null when the payment was charged directly",
      }),
      payment: t.prismaField({
        type: "Payment",
        description: "the payment, as it is after the pay operation",
        resolve: (query, parent, _args, ctx) =>
          ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: parent.paymentId } }),
      }),
    }),
  });

builder.queryFields((t) => ({
  payments: t.connection(
    {
      type: Payment,
      description: "Payments of the caller's organization and mode, newest first.",
      args: { where: t.arg({ type: PaymentWhere, description: "filters; none: every payment" }), offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return tenantConnection(ctx, info, ctx.prisma.payment, args, [
          ...stringConditions("customerId", w.customer),
          ...stringConditions("invoiceId", w.invoice),
          ...enumConditions("status", w.status),
          ...dateTimeConditions("createdAt", w.created),
        ]);
      },
    },
    { description: "A page of payments, newest first (Relay connection)." },
    { description: "A payment in a page, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  createPayment: t.prismaField({
    type: "Payment",
    description:
      "Creates a payment in requires_payment_method. Errors: validation_error with `fields` (amount missing, not " +
      "positive or not in the currency's unit, " +
      "date before today, description over 256 characters, currency unknown or not chargeable, invoice unknown, not " +
      "finalized, in another currency " +
      "or with less due than the amount, customer unknown).",
    args: { input: t.arg({ type: PaymentInput, required: true, description: "the payment; amount is required" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createPayment(ctx, args.input);
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updatePayment: t.prismaField({
    type: "Payment",
    description: "Merges metadata into a payment (an empty value removes a key). Errors: not_found, validation_error.",
    args: {
      id: t.arg.id({ required: true, description: "`pay_` id" }),
      metadata: t.arg({
        type: "JSONObject",
        required: true,
        description: "keys to set (string values); an empty value removes the key",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updatePaymentMetadata(ctx, String(args.id), args.metadata);
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deletePayment: t.prismaField({
    type: "Payment",
    description:
      "Cancels a payment that has not succeeded; it stays readable as canceled. Errors: not_found, invalid_state " +
      "(succeeded, already canceled, or a card charge being answered right now).",
    args: { id: t.arg.id({ required: true, description: "`pay_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const canceled = await cancelPayment(ctx, String(args.id));
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: canceled.id } });
    },
  }),
  authorizePayment: t.prismaField({
    type: "Payment",
    description:
      "Attaches a source. A reusable source is charged at once (succeeded, or requires_payment_method with " +
      "failureReason); " +
      "a single-use source is paid through payPayment. Charges at most once, even called concurrently. " +
      "Errors: not_found, invalid_state, validation_error (unknown, foreign or used source).",
    args: {
      id: t.arg.id({ required: true, description: "`pay_` id" }),
      source: t.arg.id({ description: "`sou_` id of the source (required; validation_error when missing)" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const payment = await authorizePayment(ctx, String(args.id), args.source ? String(args.source) : null);
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: payment.id } });
    },
  }),
  payPayment: t.field({
    type: PayPaymentResult,
    description:
      "The pay operation: for a redirect source, where to send the customer (the payment becomes processing); for a " +
      "reusable source, a charge. " +
      "Errors: not_found, invalid_state (no source attached, succeeded or canceled), validation_error (the source is " +
      "no longer chargeable).",
    args: { id: t.arg.id({ required: true, description: "`pay_` id" }) },
    resolve: async (_root, args, ctx) => {
      const { payment, redirectUrl } = await payPayment(ctx, String(args.id));
      return { redirectUrl, paymentId: payment.id };
    },
  }),
}));

// payment sources (cards) and paying an invoice with one
builder.mutationFields((t) => ({
  createSource: t.prismaField({
    ...PORTAL_FIELD,
    type: "Source",
    description:
      "Creates a chargeable source at a gateway. Customer portal: always a source of the credential's customer " +
      "(another customer is a validation_error on customer). Errors: validation_error with `fields` (gateway " +
      "missing, unknown, disabled or test-only with a live key; " +
      "usage the gateway does not make; unknown test token; customer unknown; amount not positive; return_url not " +
      "http(s); description over 256 characters).",
    args: { input: t.arg({ type: SourceInput, required: true, description: "the source; gateway is required" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createSource(ctx, args.input);
      return ctx.prisma.source.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  payInvoice: t.field({
    ...PORTAL_FIELD,
    type: PayPaymentResult,
    description:
      "Pays what is due on a finalized invoice with a source of its customer (customer portal: only the " +
      "credential's customer's invoices and sources): a payment for the whole amountDue, " +
      "reusing the invoice's newest payment still waiting for a payment method with that amount. A reusable source " +
      "is charged at once (the payment is succeeded, or requires_payment_method with failureReason); " +
      "a single-use (redirect) source answers redirectUrl, the checkout to send the customer to. A reusable source " +
      "whose first charge this is and is declined is detached from its customer and failed (a new card that never " +
      "worked is not kept). Send an Idempotency-Key header to make a retry safe (docs/graphql.md). " +
      "Errors: validation_error (invoice or source missing; source unknown, another customer's or not chargeable), " +
      "not_found (invoice unknown; for a portal credential also another customer's or a draft, which it never " +
      "sees), permission_denied (a portal credential whose session hides invoices), invalid_state (an API key " +
      "paying a draft, nothing due, a payment under way).",
    args: {
      invoice: t.arg.id({ required: true, description: "`inv_` id of the invoice" }),
      source: t.arg.id({ required: true, description: "`sou_` id of a chargeable source of the invoice's customer" }),
    },
    resolve: async (_root, args, ctx) => {
      const { payment, redirectUrl } = await payInvoice(ctx, {
        invoice: String(args.invoice),
        source: String(args.source),
      });
      return { redirectUrl, paymentId: payment.id };
    },
  }),
  detachSource: t.prismaField({
    ...PORTAL_FIELD,
    type: "Source",
    description:
      "Detaches a source from its customer: no longer listed in Customer.sources, no longer charged by the billing " +
      "run, no longer the default. " +
      "Errors: not_found (unknown source; for the customer portal, another customer's).",
    args: { id: t.arg.id({ required: true, description: "`sou_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const source = await detachSource(ctx, String(args.id));
      return ctx.prisma.source.findUniqueOrThrow({ ...query, where: { id: source.id } });
    },
  }),
  setDefaultSource: t.prismaField({
    ...PORTAL_FIELD,
    type: "Source",
    description:
      "Makes a reusable, chargeable source its customer's default: the billing run charges it before the " +
      "customer's other sources. " +
      "Errors: not_found (unknown source; for the customer portal, another customer's), validation_error on source " +
      "(no customer, single-use or not chargeable).",
    args: { id: t.arg.id({ required: true, description: "`sou_` id" }) },
    resolve: async (query, _root, args, ctx) => {
      const source = await setDefaultSource(ctx, String(args.id));
      return ctx.prisma.source.findUniqueOrThrow({ ...query, where: { id: source.id } });
    },
  }),
}));
