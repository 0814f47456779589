/**
 * Payments and sources (spec "Payment", "Payment (status)"; docs/payments.md): node types, the
 * `payments` connection and the mutations createPayment, updatePayment, deletePayment,
 * authorizePayment, payPayment and createSource. Rules live in services/payments.ts and
 * domain/payments.ts; gateways in infra/gateways.
 */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { authorizePayment, cancelPayment, createPayment, createSource, payPayment, updatePaymentMetadata } from "../../services/payments.js";

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
    date: t.expose("date", { type: "Date" }),
    amount: t.expose("amount", { type: "Decimal", description: "in the payment currency" }),
    currency: t.exposeString("currencyId", { description: "ISO 4217 code" }),
    description: t.exposeString("description", { nullable: true }),
    source: t.relation("source", { nullable: true, description: "the source attached by authorize" }),
    returnUrl: t.string({
      nullable: true,
      description: "address of the pay operation, once a source is attached (spec Payment.return_url)",
      select: { sourceId: true },
      resolve: (payment, _args, ctx) => (payment.sourceId ? payOperationUrl(ctx.baseUrl, payment.id) : null),
    }),
    paymentDate: t.expose("paymentDate", { type: "DateTime", nullable: true, description: "when it succeeded" }),
    customer: t.exposeString("customerId", { nullable: true, description: "customer id" }),
    invoice: t.exposeString("invoiceId", { nullable: true, description: "invoice id" }),
    status: t.exposeString("status", { description: "requires_payment_method | processing | succeeded | canceled" }),
    failureReason: t.exposeString("failureReason", { nullable: true, description: "why the last charge was declined (`code: message`)" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    user: t.exposeString("userEmail", { description: "e-mail of the user whose key created it" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const Source = builder.prismaNode("Source", {
  id: { field: "id", description: "`sou_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A way to pay at a payment gateway: a test card (reusable) or a redirect checkout (single use).",
  fields: (t) => ({
    amount: t.expose("amount", { type: "Decimal", nullable: true }),
    description: t.exposeString("description", { nullable: true }),
    returnUrl: t.exposeString("returnUrl", { nullable: true, description: "where the checkout sends the customer back" }),
    status: t.exposeString("status", { description: "chargeable | consumed (single use, paid) | failed (single use, rejected)" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    customer: t.exposeString("customerId", { nullable: true, description: "customer id" }),
    gateway: t.exposeString("gateway", { description: "payment gateway name: test | redirect" }),
    usage: t.exposeString("usage", { description: "single_use | reusable" }),
    flow: t.exposeString("flow", { description: "redirect | none" }),
    data: t.expose("data", { type: "JSONObject", description: "gateway data: card brand and last4; redirect_url for a redirect flow" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const PaymentInput = builder.inputType("PaymentInput", {
  description: "A new payment (spec \"Payment\" and \"Limits\").",
  fields: (t) => ({
    amount: t.field({ type: "Decimal", description: "positive, in the currency's unit (whole pesos for CLP) (required)" }),
    currency: t.string({ description: "ISO 4217, chargeable; default the invoice's, else the customer's" }),
    date: t.field({ type: "Date", description: "not before today in the organization's time zone; default today" }),
    description: t.string({ description: "at most 256 characters" }),
    customer: t.id({ description: "customer id (default: the invoice's customer)" }),
    invoice: t.id({ description: "a finalized invoice; the amount must not exceed what is due" }),
    metadata: t.field({ type: "JSONObject" }),
  }),
});

const SourceInput = builder.inputType("SourceInput", {
  description: "A new source. Test card: gateway test, data {token: tok_visa}. Redirect: gateway redirect, returnUrl.",
  fields: (t) => ({
    customer: t.id(),
    gateway: t.string({ description: "test | redirect (required)" }),
    usage: t.string({ description: "reusable (test) | single_use (redirect); default per gateway" }),
    amount: t.field({ type: "Decimal", description: "when set, only a payment of this amount can use it" }),
    description: t.string(),
    returnUrl: t.string({ description: "http(s) URL the checkout returns to" }),
    data: t.field({ type: "JSONObject", description: "gateway data: {token} for test cards" }),
    metadata: t.field({ type: "JSONObject" }),
  }),
});

const PaymentWhere = builder.inputType("PaymentWhere", {
  fields: (t) => ({
    customer: t.field({ type: StringFilter, description: "customer id" }),
    invoice: t.field({ type: StringFilter, description: "invoice id" }),
    status: t.field({ type: StringFilter }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

const PayPaymentResult = builder.objectRef<{ redirectUrl: string | null; paymentId: string }>("PayPaymentResult").implement({
  description: "The pay operation's answer: the payment, and where to send the customer (redirect sources).",
  fields: (t) => ({
    redirectUrl: t.exposeString("redirectUrl", { nullable: true, description: "the gateway checkout address; null when the payment was charged directly" }),
    payment: t.prismaField({
      type: "Payment",
      resolve: (query, parent, _args, ctx) => ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: parent.paymentId } }),
    }),
  }),
});

builder.queryFields((t) => ({
  payments: t.connection({
    type: Payment,
    description: "Payments of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: PaymentWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      return tenantConnection(ctx, info, ctx.prisma.payment, args, [
        ...stringConditions("customerId", w.customer),
        ...stringConditions("invoiceId", w.invoice),
        ...stringConditions("status", w.status),
        ...dateTimeConditions("createdAt", w.created),
      ]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createPayment: t.prismaField({
    type: "Payment",
    description: "Creates a payment in requires_payment_method. Errors: validation_error (limits, currency, invoice).",
    args: { input: t.arg({ type: PaymentInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createPayment(ctx, args.input);
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updatePayment: t.prismaField({
    type: "Payment",
    description: "Merges metadata into a payment (an empty value removes a key). Errors: not_found, validation_error.",
    args: { id: t.arg.id({ required: true }), metadata: t.arg({ type: "JSONObject", required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updatePaymentMetadata(ctx, String(args.id), args.metadata);
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
  deletePayment: t.prismaField({
    type: "Payment",
    description: "Cancels a payment that has not succeeded; it stays readable as canceled. Errors: not_found, invalid_state.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const canceled = await cancelPayment(ctx, String(args.id));
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: canceled.id } });
    },
  }),
  authorizePayment: t.prismaField({
    type: "Payment",
    description:
      "Attaches a source. A reusable source is charged at once (succeeded, or requires_payment_method with failureReason); " +
      "a single-use source is paid through payPayment. Charges at most once, even called concurrently. " +
      "Errors: not_found, invalid_state, validation_error (unknown, foreign or used source).",
    args: { id: t.arg.id({ required: true }), source: t.arg.id({ description: "source id (required)" }) },
    resolve: async (query, _root, args, ctx) => {
      const payment = await authorizePayment(ctx, String(args.id), args.source ? String(args.source) : null);
      return ctx.prisma.payment.findUniqueOrThrow({ ...query, where: { id: payment.id } });
    },
  }),
  payPayment: t.field({
    type: PayPaymentResult,
    description: "The pay operation: for a redirect source, where to send the customer (the payment becomes processing); for a reusable source, a charge. Errors: not_found, invalid_state.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const { payment, redirectUrl } = await payPayment(ctx, String(args.id));
      return { redirectUrl, paymentId: payment.id };
    },
  }),
  createSource: t.prismaField({
    type: "Source",
    description: "Creates a chargeable source at a gateway. Errors: validation_error (gateway, usage, token, customer).",
    args: { input: t.arg({ type: SourceInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createSource(ctx, args.input);
      return ctx.prisma.source.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
}));
