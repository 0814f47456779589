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
