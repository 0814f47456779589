/**
 * Payments as they embed in invoices (spec "Payment"). Creating and charging payments is the
 * payments issue's; this type reads the payments table.
 */
import { builder } from "../builder.js";
import { tenant } from "../../services/context.js";

export const Payment = builder.prismaNode("Payment", {
  id: { field: "id", description: "`pay_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A charge to a customer's card or other source.",
  fields: (t) => ({
    date: t.expose("date", { type: "Date" }),
    amount: t.expose("amount", { type: "Decimal", description: "in the payment currency" }),
    currency: t.exposeString("currencyId", { description: "ISO 4217 code" }),
    description: t.exposeString("description", { nullable: true }),
    paymentDate: t.expose("paymentDate", { type: "DateTime", nullable: true, description: "when it succeeded" }),
    customer: t.exposeString("customerId", { nullable: true, description: "customer id" }),
    invoice: t.exposeString("invoiceId", { nullable: true, description: "invoice id" }),
    status: t.exposeString("status", { description: "requires_payment_method | processing | succeeded | canceled" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const Source = builder.prismaNode("Source", {
  id: { field: "id", description: "`sou_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A way to pay (card token, redirect checkout) at a payment gateway.",
  fields: (t) => ({
    amount: t.expose("amount", { type: "Decimal", nullable: true }),
    description: t.exposeString("description", { nullable: true }),
    returnUrl: t.exposeString("returnUrl", { nullable: true }),
    status: t.exposeString("status", { description: "chargeable | consumed | failed" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    customer: t.exposeString("customerId", { nullable: true, description: "customer id" }),
    gateway: t.exposeString("gateway", { description: "payment gateway name" }),
    usage: t.exposeString("usage", { description: "single_use | reusable" }),
    flow: t.exposeString("flow", { description: "redirect | none" }),
    data: t.expose("data", { type: "JSONObject", description: "gateway data; a redirect flow has redirect_url" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});
