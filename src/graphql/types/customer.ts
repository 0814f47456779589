/** Customers (spec "Customer"): node type, `customers` connection, create and update mutations. */
import { builder } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import DataLoader from "dataloader";
import { createCustomer, updateCustomer } from "../../services/customers.js";
import { customerAggregations, type CustomerAggregations as Aggregations } from "../../services/aggregations.js";
import type { GraphQLContext } from "../context.js";
import "./reference.js";
import "./payment.js";
import "./test-clock.js";

interface ContactShape {
  name: string | null;
  email: string | null;
  phone: string | null;
  role: string | null;
}

const Contact = builder.objectRef<ContactShape>("Contact").implement({
  description: "A person to reach at the customer.",
  fields: (t) => ({
    name: t.exposeString("name", { nullable: true }),
    email: t.exposeString("email", { nullable: true }),
    phone: t.exposeString("phone", { nullable: true }),
    role: t.exposeString("role", { nullable: true }),
  }),
});

const CustomerAggregations = builder.objectRef<Aggregations>("CustomerAggregations").implement({
  description: "Financial summary in `currency` (the customer's currency, else its country's default): docs/decisions.md.",
  fields: (t) => ({
    currency: t.exposeString("currency", { nullable: true, description: "ISO 4217 code of the amounts" }),
    balance: t.expose("balance", { type: "Decimal", description: "sales - finalized credit notes - succeeded payments" }),
    sales: t.expose("sales", { type: "Decimal", description: "total of finalized invoices" }),
    salesCurrentPeriod: t.expose("salesCurrentPeriod", { type: "Decimal", description: "sales dated in the current calendar month (organization time zone)" }),
  }),
});

/** One aggregation query per request for every customer it shows (no N+1). */
const aggregationLoaders = new WeakMap<GraphQLContext, DataLoader<string, Aggregations>>();
function aggregationsOf(ctx: GraphQLContext, id: string): Promise<Aggregations> {
  let loader = aggregationLoaders.get(ctx);
  if (!loader) aggregationLoaders.set(ctx, (loader = new DataLoader((ids) => customerAggregations(ctx, ids))));
  return loader.load(id);
}

export const Customer = builder.prismaNode("Customer", {
  id: { field: "id", description: "`cus_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "Someone the organization bills.",
  fields: (t) => ({
    testMode: t.exposeBoolean("testMode"),
    name: t.exposeString("name", { nullable: true }),
    address: t.exposeString("address", { nullable: true }),
    country: t.relation("country", { nullable: true, description: "Country object (REST prints the id where the spec asks for a string)" }),
    state: t.relation("state", { nullable: true, description: "State object when the country has seeded states" }),
    stateCode: t.exposeString("stateCode", { nullable: true, description: "state code (at most six characters), e.g. RM" }),
    currency: t.exposeString("currencyId", { nullable: true, description: "ISO 4217 code" }),
    email: t.exposeString("email", { nullable: true, description: "billing e-mail" }),
    phone: t.exposeString("phone", { nullable: true }),
    website: t.exposeString("website", { nullable: true }),
    taxId: t.exposeString("taxId", { nullable: true, description: "tax id; for Chile a RUT normalized as 76042235-5" }),
    contacts: t.field({ type: [Contact], select: { contacts: true }, resolve: (c) => (c.contacts as unknown as ContactShape[]) ?? [] }),
    taxSettings: t.expose("taxSettings", { type: "JSONObject" }),
    metadata: t.expose("metadata", { type: "JSONObject" }),
    aggregations: t.field({ type: CustomerAggregations, select: { id: true }, resolve: (c, _args, ctx) => aggregationsOf(ctx, c.id) }),
    sources: t.relation("sources", { description: "payment sources, oldest first", query: { orderBy: { createdAt: "asc" } } }),
    testClock: t.relation("testClock", { nullable: true, description: "test clock whose frozen time the customer lives on (test mode only)" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const ContactInput = builder.inputType("ContactInput", {
  fields: (t) => ({ name: t.string(), email: t.string(), phone: t.string(), role: t.string() }),
});

const CustomerInput = builder.inputType("CustomerInput", {
  description: "Customer fields. On update only the given fields change; metadata merges (an empty value removes a key).",
  fields: (t) => ({
    name: t.string(),
    address: t.string(),
    country: t.string({ description: "two-letter ISO 3166-1 code of a known country" }),
    state: t.string({ description: "state code, at most six characters (RM or CL-RM)" }),
    currency: t.string({ description: "ISO 4217 code" }),
    email: t.string(),
    phone: t.string(),
    website: t.string({ description: "http(s) URL" }),
    taxId: t.string({ description: "tax id; a valid RUT for Chilean customers" }),
    contacts: t.field({ type: [ContactInput] }),
    taxSettings: t.field({ type: "JSONObject" }),
    metadata: t.field({ type: "JSONObject" }),
    testClock: t.string({ description: "`clk_` id of a test clock to attach the customer to: test mode only, at creation only" }),
  }),
});

const CustomerWhere = builder.inputType("CustomerWhere", {
  description: "Customer list filters (spec: country, email, name, sources, tax_id, created; plus country name).",
  fields: (t) => ({
    country: t.field({ type: StringFilter, description: "country id" }),
    countryName: t.field({ type: StringFilter, description: "country name (Spanish or English)" }),
    email: t.field({ type: StringFilter }),
    name: t.field({ type: StringFilter }),
    taxId: t.field({ type: StringFilter }),
    sources: t.field({ type: StringFilter, description: "customers with a source whose id matches" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

builder.queryFields((t) => ({
  customers: t.connection({
    type: Customer,
    description: "Customers of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: CustomerWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      const countryName = stringConditions("name", w.countryName).map((c) => ({ country: { is: c } }));
      const countryNameEn = stringConditions("nameEn", w.countryName).map((c) => ({ country: { is: c } }));
      return tenantConnection(ctx, info, ctx.prisma.customer, args, [
        ...stringConditions("countryId", w.country, { uppercase: true }),
        ...stringConditions("email", w.email),
        ...stringConditions("name", w.name),
        ...stringConditions("taxId", w.taxId),
        ...dateTimeConditions("createdAt", w.created),
        ...stringConditions("id", w.sources).map((c) => ({ sources: { some: c } })),
        ...(countryName.length ? [{ OR: [{ AND: countryName }, { AND: countryNameEn }] }] : []),
      ]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createCustomer: t.prismaField({
    type: "Customer",
    description: "Creates a customer. Errors: validation_error (field names in extensions.fields).",
    args: { input: t.arg({ type: CustomerInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createCustomer(ctx, args.input);
      return ctx.prisma.customer.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateCustomer: t.prismaField({
    type: "Customer",
    description: "Updates the given fields of a customer. Errors: not_found, validation_error.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: CustomerInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateCustomer(ctx, String(args.id), args.input);
      return ctx.prisma.customer.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
}));
